"""Requests a learned rule on probation merged, kept until the rule is confirmed or revoked.

A rule just learned merges requests the settings' policy would have fetched. Until its probation
ends, each such request is *kept* (its pickled form, and the rules that merged it): if one of
those rules is revoked, the request is scheduled again; once they are all confirmed, it is
forgotten; once fetched (a sample, as when the crawl goes idle with its rule still on
probation), it is forgotten too. This module only keeps the entries; what they mean is
:mod:`scrapy_urlunify.integration.probation`'s business.

* :class:`MemoryKeptStore`: nowhere (a crawl without JOBDIR nor Redis: the middleware's own list
  is the only copy, and a kill loses it with everything else).
* :class:`JobdirKeptStore`: ``<JOBDIR>/urlunify-kept.log``, a :class:`VarRecordLog` (append-only,
  checksummed, a torn tail cut off at open): ``K`` records add an entry, ``X`` records forget
  one, so a kill at any moment leaves exactly the entries acknowledged and not yet forgotten.
  Once no entry is live the log is started afresh (an atomic rename), so it never holds more
  than the live entries and the forgotten ones since the last time there were none.
* ``stores.redis.RedisKeptStore``: a Redis HASH per scope (entry id -> entry), shared by
  every process of the scope, so a rule revoked in one process reschedules what another kept.

An entry is ``(entry id, rules, data)``: an 8-byte id (the same request kept twice is one
entry), the names of the rules that merged it (text, opaque here), and the pickled request.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from .errors import StoreError
from .log import VarRecordLog

__all__ = ["JobdirKeptStore", "KeptEntry", "KeptStore", "MemoryKeptStore", "pack_entry", "unpack_entry"]

#: an entry: id, rule names, pickled request
KeptEntry = tuple[bytes, tuple[str, ...], bytes]

_KEEP, _FORGET = b"K", b"X"
_RULES_LENGTH = struct.Struct("<H")
#: forgotten records a log may hold before it is started afresh, when no entry is live
COMPACT_AFTER = 1000


def pack_entry(rules: Iterable[str], data: bytes) -> bytes:
    """``rules`` and ``data`` as one value: a u16 length, the rules as JSON, then ``data``."""
    text = json.dumps(list(rules), separators=(",", ":")).encode("utf-8", "surrogatepass")
    return _RULES_LENGTH.pack(len(text)) + text + data


def unpack_entry(value: bytes, where: str) -> tuple[tuple[str, ...], bytes]:
    """The rules and data :func:`pack_entry` packed; :class:`StoreError` naming ``where``."""
    try:
        (length,) = _RULES_LENGTH.unpack_from(value)
        end = _RULES_LENGTH.size + length
        rules = json.loads(value[_RULES_LENGTH.size : end].decode("utf-8", "surrogatepass"))
        if end > len(value) or not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            raise ValueError("not a list of rule names")
    except (struct.error, ValueError) as exc:
        raise StoreError(f"{where}: malformed kept-request record ({exc})") from None
    return tuple(rules), value[end:]


@runtime_checkable
class KeptStore(Protocol):
    """Where requests merged by rules on probation are kept."""

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


class MemoryKeptStore:
    """Keeps nothing: without JOBDIR nor Redis the crawl's memory is the only copy."""

    def entries(self) -> list[KeptEntry]:
        return []

    def add(self, entry_id: bytes, rules: tuple[str, ...], data: bytes) -> None:
        pass

    def remove(self, entry_ids: Iterable[bytes]) -> None:
        pass

    def close(self) -> None:
        pass

    def __str__(self) -> str:
        return "memory"


class JobdirKeptStore:
    """The kept requests of a JOBDIR: ``K`` and ``X`` records in a :class:`VarRecordLog`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._log = VarRecordLog(self.path)
        self._live: dict[bytes, tuple[tuple[str, ...], bytes]] = {}
        self._forgotten = 0
        try:
            for payload in self._log.replay():
                kind, entry_id = payload[:1], payload[1:9]
                if len(entry_id) != 8 or kind not in (_KEEP, _FORGET):
                    raise StoreError(f"{self.path}: malformed kept-request record (kind {kind!r})")
                if kind == _KEEP:
                    self._live[entry_id] = unpack_entry(payload[9:], self.path)
                elif self._live.pop(entry_id, None) is not None:
                    self._forgotten += 1
        except BaseException:
            self._log.close()
            raise

    def entries(self) -> list[KeptEntry]:
        return [(i, rules, data) for i, (rules, data) in self._live.items()]

    def add(self, entry_id: bytes, rules: tuple[str, ...], data: bytes) -> None:
        if entry_id in self._live:
            return
        self._log.append(_KEEP + entry_id + pack_entry(rules, data))
        self._live[entry_id] = (rules, data)

    def remove(self, entry_ids: Iterable[bytes]) -> None:
        for entry_id in entry_ids:
            if entry_id in self._live:
                self._log.append(_FORGET + entry_id)
                del self._live[entry_id]
                self._forgotten += 1
        if not self._live and self._forgotten >= COMPACT_AFTER:
            self._restart()

    def _restart(self) -> None:
        """Nothing is live: replace the log by an empty one (a rename: a kill leaves the old
        log, whose entries are all forgotten, or the new one)."""
        tmp = self.path + ".tmp"
        with contextlib.suppress(FileNotFoundError):  # a kill left it
            os.unlink(tmp)
        fresh = VarRecordLog(tmp)
        os.replace(tmp, self.path)
        fresh.path = self.path
        self._log.close()
        self._log = fresh
        self._forgotten = 0

    def __len__(self) -> int:
        return len(self._live)

    def close(self) -> None:
        self._log.close()

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path!r} len={len(self)}>"
