"""Storage behind the dupefilter ("seen" fingerprints) and the page-signature index.

Pure Python, no Scrapy import. Two interfaces, each with an in-memory and a JOBDIR
(file-backed, resumable) implementation; a Redis backend is meant to implement the same
Protocols:

* :class:`SeenStore` -- a set of 64-bit request fingerprints with one atomic
  "seen? and record" step, :meth:`SeenStore.add`;
* :class:`SignatureStore` -- page signature -> identifier of the first page that had it,
  with one atomic "known? else record" step, :meth:`SignatureStore.get_or_set`.

JOBDIR stores append every new entry to a log (:mod:`.log`) with an unbuffered write
before acknowledging it, so a crawl killed at any moment resumes with exactly the entries
it had acknowledged. None of the stores is thread-safe; Scrapy calls them from its
reactor thread only.
"""

from __future__ import annotations

import os
import struct
import sys
from array import array
from collections.abc import Iterator
from types import TracebackType
from typing import Protocol, runtime_checkable

from typing_extensions import Self

from .errors import StoreError, StoreUnavailable
from .fingerprints import FingerprintSet
from .log import RecordLog, VarRecordLog

__all__ = [
    "ITEMS_FILENAME",
    "JOBDIR_FILENAMES",
    "KEPT_FILENAME",
    "LEARNED_FILENAME",
    "REQUESTS_FILENAME",
    "SEEN_FILENAME",
    "SIGNATURES_FILENAME",
    "FingerprintSet",
    "JobdirSeenStore",
    "JobdirSignatureStore",
    "MemorySeenStore",
    "MemorySignatureStore",
    "RecordLog",
    "SeenStore",
    "SignatureStore",
    "StoreError",
    "StoreUnavailable",
    "VarRecordLog",
]


#: The plugin's file names inside a JOBDIR (all in one place: ``urlunify store`` lists them).
SEEN_FILENAME = "urlunify-seen.log"
SIGNATURES_FILENAME = "urlunify-signatures.log"
REQUESTS_FILENAME = "urlunify-requests.log"
ITEMS_FILENAME = "urlunify-items.log"
LEARNED_FILENAME = "urlunify-learned.json"
KEPT_FILENAME = "urlunify-kept.log"
JOBDIR_FILENAMES = (SEEN_FILENAME, REQUESTS_FILENAME, SIGNATURES_FILENAME, LEARNED_FILENAME, ITEMS_FILENAME,
                    KEPT_FILENAME)

@runtime_checkable
class SeenStore(Protocol):
    """The set of request fingerprints a crawl has already scheduled."""

    def add(self, fp: int) -> bool:
        """Record the fingerprint ``fp`` (an int in ``[0, 2**64)``); return True if it
        was new. One atomic step, so a dupefilter needs no separate lookup."""
        ...

    def __contains__(self, fp: object) -> bool: ...

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



class _ClosingContext:
    """``with store: ...`` closes the store."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class MemorySeenStore(FingerprintSet, _ClosingContext):
    """A :class:`SeenStore` in memory only (a crawl without JOBDIR).

    A subclass rather than a wrapper so ``add`` is FingerprintSet's own method: no
    extra call per request.
    """

    __slots__ = ()

    def close(self) -> None:
        pass


class JobdirSeenStore(_ClosingContext):
    """A :class:`SeenStore` persisted to a log of 8-byte little-endian fingerprints.

    Opening loads the existing log (pre-sizing the set from the file length, so no
    resize happens while loading); :meth:`add` appends a new fingerprint to the log before
    returning True. A crawl killed at any point and resumed therefore has exactly the
    seen set the killed one had acknowledged, at the cost of one ``write`` system call
    per *new* fingerprint (duplicates cost a lookup only).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._log = RecordLog(self.path, 8)
        try:
            self._fps = FingerprintSet(capacity=self._log.record_count)
            for block in self._log.replay_blocks():
                fps = array("Q")
                fps.frombytes(block)
                if sys.byteorder == "big":  # pragma: no cover - the file is little-endian
                    fps.byteswap()
                self._fps.update(fps)
        except BaseException:
            self._log.close()
            raise

    def add(self, fp: int) -> bool:
        # Look up first and insert last, so a failed write (disk full) leaves both the
        # log and the set without fp; the repeated probe is in cache and costs far less
        # than the write.
        fps = self._fps
        if fp in fps:
            return False
        try:
            record = fp.to_bytes(8, "little")
        except OverflowError:
            raise ValueError(f"fingerprint {fp!r} is outside [0, 2**64)") from None
        self._log.append(record)
        fps.add(fp)
        return True

    def __contains__(self, fp: object) -> bool:
        return fp in self._fps

    def __len__(self) -> int:
        return len(self._fps)

    def __iter__(self) -> Iterator[int]:
        return iter(self._fps)

    def close(self) -> None:
        self._log.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path!r} len={len(self)}>"


class _DictSignatures(_ClosingContext):
    """The dict both signature stores answer from."""

    def __init__(self) -> None:
        self._ids: dict[bytes, str] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def items(self) -> Iterator[tuple[bytes, str]]:
        """Every ``(signature, identifier)`` pair (a resumed crawl rebuilds what it fetched)."""
        return iter(self._ids.items())


class MemorySignatureStore(_DictSignatures):
    """A :class:`SignatureStore` in memory only: a dict."""

    def get_or_set(self, signature: bytes, identifier: str) -> str | None:
        known = self._ids.get(signature)
        if known is None:
            self._ids[signature] = identifier
        return known

    def close(self) -> None:
        pass


_KEY_LENGTH = struct.Struct("<I")


class JobdirSignatureStore(_DictSignatures):
    """A :class:`SignatureStore` persisted to a variable-length record log.

    Each record is ``u32 len(signature) | signature | identifier (UTF-8)``, framed and
    checksummed by :class:`VarRecordLog`. Opening replays the log into the dict (the
    first record of a signature wins, as :meth:`get_or_set` promises); a new signature is
    appended to the log before :meth:`get_or_set` returns None.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self._log = VarRecordLog(self.path)
        try:
            ids = self._ids
            for payload in self._log.replay():
                signature, identifier = self._unpack(payload)
                ids.setdefault(signature, identifier)
        except BaseException:
            self._log.close()
            raise

    def get_or_set(self, signature: bytes, identifier: str) -> str | None:
        known = self._ids.get(signature)
        if known is not None:
            return known
        self._log.append(self._pack(signature, identifier))
        self._ids[signature] = identifier
        return None

    def close(self) -> None:
        self._log.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path!r} len={len(self)}>"

    @staticmethod
    def _pack(signature: bytes, identifier: str) -> bytes:
        if not isinstance(signature, bytes):
            raise TypeError(f"signature must be bytes, not {type(signature).__name__}")
        if not isinstance(identifier, str):
            raise TypeError(f"identifier must be str, not {type(identifier).__name__}")
        # surrogatepass: any str round-trips, even one holding lone surrogates.
        return _KEY_LENGTH.pack(len(signature)) + signature + identifier.encode("utf-8", "surrogatepass")

    def _unpack(self, payload: bytes) -> tuple[bytes, str]:
        try:
            (length,) = _KEY_LENGTH.unpack_from(payload)
            end = _KEY_LENGTH.size + length
            if end > len(payload):
                raise ValueError("signature length exceeds the record")
            return payload[_KEY_LENGTH.size : end], payload[end:].decode("utf-8", "surrogatepass")
        except (struct.error, ValueError) as exc:
            # The record passed its checksum, so it was written like this: not our format.
            raise StoreError(f"{self.path}: malformed signature record ({exc})") from None
