"""What a store is: the three store interfaces every backend implements, and how a store fails.

* :class:`SeenStore` -- a set of 64-bit keys with one atomic "seen? and record" step,
  :meth:`SeenStore.add`;
* :class:`SignatureStore` -- page signature -> identifier of the first page that had it,
  with one atomic "known? else record" step, :meth:`SignatureStore.get_or_set`;
* :class:`KeptStore` -- the requests a learned rule on probation merged, kept until the rule
  is confirmed or revoked.

Each has an in-memory (:mod:`.memory`), a JOBDIR (:mod:`.jobdir`) and a Redis
(:mod:`.redis_seen`, :mod:`.redis_tables`) implementation. None of the stores is thread-safe;
Scrapy calls them from its reactor thread only.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable
from types import TracebackType
from typing import Protocol, runtime_checkable

from typing_extensions import Self


class StoreError(Exception):
    """A store cannot be used: a file that is foreign, from another format version, corrupted
    or locked by another writer; a write that failed (disk full); a Redis error that waiting
    does not cure (out of memory, a key of the wrong type). The message names the file or key."""


class StoreUnavailable(StoreError):
    """A shared store (Redis) does not answer: nothing may be counted as seen or new meanwhile;
    the Scrapy layer closes the crawl with the reason ``urlunify_store_unavailable``."""


class ClosingContext:
    """``with store: ...`` closes the store."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


@runtime_checkable
class SeenStore(Protocol):
    """The set of keys of the requests a crawl has already scheduled."""

    def add(self, key: int) -> bool:
        """Record ``key`` (an int in ``[0, 2**64)``); return True if it was new. One
        atomic step, so a dupefilter needs no separate lookup."""
        ...

    def __contains__(self, key: object) -> bool: ...

    def __len__(self) -> int: ...

    def close(self) -> None:
        """Release resources; JOBDIR stores sync their file."""
        ...


@runtime_checkable
class SignatureStore(Protocol):
    """Page signature -> identifier of the first page seen with that signature."""

    def get_or_set(self, signature: bytes, identifier: str) -> str | None:
        """If ``signature`` is known, return the identifier stored with it first;
        otherwise store ``identifier`` with it and return None. One atomic step."""
        ...

    def __len__(self) -> int: ...

    def close(self) -> None:
        """Release resources; JOBDIR stores sync their file."""
        ...


#: A kept request: an 8-byte id (the same request kept twice is one entry), the names of the
#: rules that merged it (text, opaque here), and the pickled request.
KeptEntry = tuple[bytes, tuple[str, ...], bytes]


@runtime_checkable
class KeptStore(Protocol):
    """Where requests merged by rules on probation are kept.

    A rule just learned merges requests the settings' policy would have fetched. Until its
    probation ends, each such request is *kept* (its pickled form, and the rules that merged
    it): if one of those rules is revoked, the request is scheduled again; once they are all
    confirmed, it is forgotten; once fetched (a sample, as when the crawl goes idle with its
    rule still on probation), it is forgotten too. A store only keeps the entries; what they
    mean is :mod:`scrapy_urlunify.integration.pages._signatures`'s business.
    """

    def entries(self) -> list[KeptEntry]:
        """Every live entry (for a shared store: every process's)."""
        ...

    def add(self, entry_id: bytes, rules: tuple[str, ...], data: bytes) -> None:
        """Keep an entry; once this returns it survives a kill of the process."""
        ...

    def remove(self, entry_ids: Iterable[bytes]) -> None:
        """Forget entries (scheduled again, or their rules confirmed)."""
        ...

    def close(self) -> None: ...


_RULES_LENGTH = struct.Struct("<H")


def pack_entry(rules: Iterable[str], data: bytes) -> bytes:
    """A kept entry's ``rules`` and ``data`` as one value (what a JOBDIR record and a Redis
    hash field hold): a u16 length, the rules as JSON, then ``data``."""
    text = json.dumps(list(rules), separators=(",", ":")).encode("utf-8", "surrogatepass")
    return _RULES_LENGTH.pack(len(text)) + text + data


def unpack_entry(value: bytes, where: str) -> tuple[tuple[str, ...], bytes]:
    """The rules and data :func:`pack_entry` packed; :class:`StoreError` naming ``where``."""
    try:
        (length,) = _RULES_LENGTH.unpack_from(value)
        end = _RULES_LENGTH.size + length
        rules = json.loads(value[_RULES_LENGTH.size : end].decode("utf-8", "surrogatepass"))
        if (
            end > len(value)
            or not isinstance(rules, list)
            or not all(isinstance(r, str) for r in rules)
        ):
            raise ValueError("not a list of rule names")
    except (struct.error, ValueError) as exc:
        raise StoreError(f"{where}: malformed kept-request record ({exc})") from None
    return tuple(rules), value[end:]
