"""The stores of a JOBDIR: in memory, and in a log file each, so a crawl killed at any moment
resumes with exactly the entries it had acknowledged.

Every new entry is appended to its log (:mod:`.log`) with an unbuffered write before the store
acknowledges it. The files:

* :class:`JobdirSeenStore`: ``urlunify-seen.log``, a :class:`~.log.RecordLog` of 8-byte keys;
* :class:`JobdirSignatureStore`: ``urlunify-signatures.log`` (and ``urlunify-items.log``, the
  unicity filter's item identifiers), a :class:`~.log.VarRecordLog`;
* :class:`JobdirKeptStore`: ``urlunify-kept.log``, a :class:`~.log.VarRecordLog`: ``K`` records
  add an entry, ``X`` records forget one, so a kill at any moment leaves exactly the entries
  acknowledged and not yet forgotten. Once no entry is live the log is started afresh (an atomic
  rename), so it never holds more than the live entries and the forgotten ones since the last
  time there were none.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator

from scrapy_urlunify.stores._base import (
    ClosingContext,
    KeptEntry,
    StoreError,
    pack_entry,
    unpack_entry,
)
from scrapy_urlunify.stores._fingerprints import FingerprintSet
from scrapy_urlunify.stores._log import RecordLog, VarRecordLog
from scrapy_urlunify.stores._memory import MemorySignatureStore

#: The plugin's file names inside a JOBDIR (all in one place: ``urlunify store`` lists them).
SEEN_FILENAME = "urlunify-seen.log"
SIGNATURES_FILENAME = "urlunify-signatures.log"
REQUESTS_FILENAME = "urlunify-requests.log"
ITEMS_FILENAME = "urlunify-items.log"
LEARNED_FILENAME = "urlunify-learned.json"
KEPT_FILENAME = "urlunify-kept.log"
#: the near-duplicate indexes, written when the crawl closes, read back when it resumes
NEAR_DUPLICATES_FILENAME = "near_duplicates.bin"
JOBDIR_FILENAMES = (
    SEEN_FILENAME,
    REQUESTS_FILENAME,
    SIGNATURES_FILENAME,
    LEARNED_FILENAME,
    ITEMS_FILENAME,
    KEPT_FILENAME,
    NEAR_DUPLICATES_FILENAME,
)


class JobdirSeenStore(ClosingContext):
    """A :class:`~.base.SeenStore` persisted to a log of 8-byte little-endian keys.

    Opening loads the existing log (pre-sizing the set from the file length, so no
    resize happens while loading); :meth:`add` appends a new key to the log before
    returning True. A crawl killed at any point and resumed therefore has exactly the
    seen set the killed one had acknowledged, at the cost of one ``write`` system call
    per *new* key (duplicates cost a lookup only).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._log = RecordLog(self.path, 8)
        try:
            self._keys = FingerprintSet(capacity=self._log.record_count)
            for block in self._log.replay_blocks():
                keys = array("Q")
                keys.frombytes(block)
                if sys.byteorder == "big":  # pragma: no cover - the file is little-endian
                    keys.byteswap()
                self._keys.update(keys)
        except BaseException:
            self._log.close()
            raise

    def add(self, key: int) -> bool:
        # Look up first and insert last, so a failed write (disk full) leaves both the
        # log and the set without key; the repeated probe is in cache and costs far less
        # than the write.
        keys = self._keys
        if key in keys:
            return False
        try:
            record = key.to_bytes(8, "little")
        except OverflowError:
            raise ValueError(f"key {key!r} is outside [0, 2**64)") from None
        self._log.append(record)
        keys.add(key)
        return True

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys)

    def close(self) -> None:
        self._log.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path!r} len={len(self)}>"


_KEY_LENGTH = struct.Struct("<I")


class JobdirSignatureStore(MemorySignatureStore):
    """A :class:`~.base.SignatureStore` persisted to a variable-length record log: the memory
    store, whose every new signature is appended to the log first.

    Each record is ``u32 len(signature) | signature | identifier (UTF-8)``, framed and
    checksummed by :class:`~.log.VarRecordLog`. Opening replays the log into the dict (the
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
        return (
            _KEY_LENGTH.pack(len(signature))
            + signature
            + identifier.encode("utf-8", "surrogatepass")
        )

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


_KEEP, _FORGET = b"K", b"X"
#: forgotten records a log may hold before it is started afresh, when no entry is live
COMPACT_AFTER = 1000


class JobdirKeptStore:
    """A :class:`~.base.KeptStore` in a JOBDIR: ``K`` and ``X`` records in a
    :class:`~.log.VarRecordLog`."""

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
