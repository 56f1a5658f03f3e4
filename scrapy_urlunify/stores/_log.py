"""Append-only record logs that survive the crawl process being killed.

Layout of a log file::

    header  16 bytes  magic b"URLUNIFY", format version (u16), kind (u8), 0 (u8),
                      record size (u32, 0 for variable-length logs), all little-endian
    records ...       RecordLog:     each record as is, ``record_size`` bytes
                      VarRecordLog:  u32 payload length, u32 CRC-32 of (length field +
                                     payload), payload

Crash model: every append is one unbuffered ``os.write`` straight into the kernel page
cache, so once :meth:`append` returns the record survives a SIGKILL or an unhandled
exception of the crawl process (not a power loss or kernel crash: that needs an
``fsync`` per record, which costs milliseconds; :meth:`close` does one).
A process killed *during* a write can leave a prefix of the record at the end of the
file; that torn tail is ignored on reading, and cut off (with a warning on the
``scrapy_urlunify.stores`` logger) when the log is next opened for appending. So is a tail of
zeros in a variable-length log (blocks a power loss left allocated but unwritten: zeros never
frame a record). Anything else that fails its checksum, a zero block among intact records
included, raises :class:`StoreError` naming the file and the offset. (A fixed-size log has no
checksum: a zero record there reads as key 0.)

Both log kinds share the machinery (header, locking, appends, chunked replay, torn-tail
handling) in :class:`_LogFile`; they differ only in how a record is framed and parsed.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from collections.abc import Iterator
from typing import ClassVar

from scrapy_urlunify.stores._base import ClosingContext, StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, single writer assumed
    fcntl = None  # type: ignore[assignment]


logger = logging.getLogger("scrapy_urlunify.stores")

MAGIC = b"URLUNIFY"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sHBxI")
HEADER_SIZE = _HEADER.size  # 16

_KIND_FIXED = 1
_KIND_VARIABLE = 2
_KIND_NAMES = {_KIND_FIXED: "fixed-size", _KIND_VARIABLE: "variable-length"}

_FRAME = struct.Struct("<II")  # payload length, CRC-32
#: Refuse payloads above this: a length field beyond it can only be corruption, and
#: believing it would make a reader buffer the rest of the file looking for the end.
MAX_PAYLOAD = 1 << 26

_CHUNK = 1 << 20  # bytes read per system call when replaying


def _read_at(fd: int, size: int, offset: int) -> bytes:
    # Not os.pread: Windows lacks it. Moving the file position is harmless because
    # O_APPEND makes every write go to the end regardless.
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


class _LogFile(ClosingContext):
    """An open log file: header check or creation, exclusive lock, appends, replay.

    Subclasses set ``_kind`` and implement :meth:`_parse`, which splits a buffer into
    complete records and says how many bytes those use; everything else is here.
    """

    _kind: ClassVar[int]

    def __init__(self, path: str | os.PathLike[str], record_size: int, *, readonly: bool) -> None:
        self.path = os.fspath(path)
        self.record_size = record_size
        self._readonly = readonly
        #: File offset where the last intact record ends; None until known (a
        #: variable-length log has to be replayed to find it).
        self._end: int | None = None
        flags = os.O_RDONLY if readonly else os.O_RDWR | os.O_CREAT | os.O_APPEND
        flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        self._fd = os.open(self.path, flags, 0o666)
        try:
            if not readonly:
                self._lock()
            self._open_header()
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            raise

    # -- opening --------------------------------------------------------------------

    def _lock(self) -> None:
        # Two writers appending to one log would interleave records; a second crawl on
        # the same JOBDIR must fail loudly instead. The kernel drops the lock when the
        # process dies, so a killed crawl never leaves a stale lock behind.
        if fcntl is None:  # pragma: no cover
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(
                f"{self.path}: already open for appending (by another process or store)"
            ) from None

    def _open_header(self) -> None:
        expected = _HEADER.pack(MAGIC, FORMAT_VERSION, self._kind, self.record_size)
        head = _read_at(self._fd, HEADER_SIZE, 0)
        if len(head) < HEADER_SIZE:
            if not expected.startswith(head):
                raise StoreError(
                    f"{self.path}: not a scrapy_urlunify record log ({len(head)}-byte file starting with {head[:8]!r})"
                )
            # Empty, or a header cut short by a kill right after creation: an empty log.
            if head:
                logger.warning(
                    "%s: incomplete header (%d bytes), treating as an empty log",
                    self.path,
                    len(head),
                )
            if not self._readonly:
                os.ftruncate(self._fd, 0)
                os.write(self._fd, expected)
                self._end = HEADER_SIZE
            return
        magic, version, kind, record_size = _HEADER.unpack(head)
        if magic != MAGIC:
            raise StoreError(
                f"{self.path}: not a scrapy_urlunify record log (starts with {magic!r}, expected {MAGIC!r})"
            )
        if version != FORMAT_VERSION:
            raise StoreError(
                f"{self.path}: record log format version {version}; this code reads version {FORMAT_VERSION}"
            )
        if kind != self._kind:
            found = _KIND_NAMES.get(kind, f"unknown kind {kind}")
            raise StoreError(
                f"{self.path}: holds {found} records, expected {_KIND_NAMES[self._kind]} records"
            )
        if record_size != self.record_size:
            raise StoreError(
                f"{self.path}: holds {record_size}-byte records, expected {self.record_size}-byte records"
            )

    # -- appending ------------------------------------------------------------------

    def _append(self, data: bytes) -> None:
        """Write framed ``data`` at the end of the file, unbuffered; all or nothing."""
        end = self._end
        if end is None or self._readonly:
            if self._fd < 0:
                raise ValueError(f"{self.path}: log is closed")
            if self._readonly:
                raise ValueError(f"{self.path}: log is open read-only")
            end = self._recover()
        try:
            written = os.write(self._fd, data)
            while written < len(data):  # short write (signal, nearly full disk): finish it
                written += os.write(self._fd, data[written:])
        except BaseException:
            # Never leave a partial record in the middle of the file: later appends would
            # land after it and be misread. Cut back to the last intact record.
            os.ftruncate(self._fd, end)
            raise
        self._end = end + len(data)

    def close(self) -> None:
        """Sync and close; idempotent."""
        fd, self._fd = self._fd, -1
        self._end = None  # makes _append() check, and refuse, a closed log
        if fd < 0:
            return
        try:
            if not self._readonly:
                os.fsync(fd)
        finally:
            os.close(fd)

    # -- reading --------------------------------------------------------------------

    def _scan(self) -> Iterator[bytes]:
        """Yield the parsed units (see :meth:`_parse`) of every intact record, in order.

        Reads ``_CHUNK`` bytes at a time up to the known end of intact data, or up to the
        end of the file if that is not yet known; in the latter case, once the scan
        completes, a torn tail is reported and (if writable) truncated away.
        """
        if self._fd < 0:
            raise ValueError(f"{self.path}: log is closed")
        limit = self._end
        offset = HEADER_SIZE  # file offset of buf[0]
        buf = b""
        while True:
            want = _CHUNK if limit is None else min(_CHUNK, limit - offset - len(buf))
            chunk = _read_at(self._fd, want, offset + len(buf)) if want > 0 else b""
            if chunk:
                buf = buf + chunk if buf else chunk
            units, used = self._parse(buf, offset)
            if used:
                buf = buf[used:]
                offset += used
            yield from units
            if not chunk:  # end of file: whatever is left in buf is a torn tail
                break
        if limit is None:
            if buf:
                self._check_tail(buf, offset)
            self._settle_tail(offset, len(buf))

    def _check_tail(self, tail: bytes, offset: int) -> None:
        """Raise :class:`StoreError` if ``tail`` (at file offset ``offset``, after the last
        intact record) is not what a crash leaves at the end of a log."""

    def _settle_tail(self, end: int, torn: int) -> None:
        """Record where intact data ends; deal with ``torn`` bytes after it."""
        if torn:
            if self._readonly:
                logger.warning(
                    "%s: ignoring an incomplete last record (%d bytes) at offset %d, left by a crash "
                    "mid-write",
                    self.path,
                    torn,
                    end,
                )
            else:
                os.ftruncate(self._fd, end)
                logger.warning(
                    "%s: truncated an incomplete last record (%d bytes) at offset %d, left by a crash "
                    "mid-write",
                    self.path,
                    torn,
                    end,
                )
        self._end = end

    def _recover(self) -> int:
        """Find the end of intact data by replaying the whole log; return it."""
        for _ in self._scan():
            pass
        assert self._end is not None
        return self._end

    def _parse(self, buf: bytes, offset: int) -> tuple[list[bytes], int]:
        """Split the complete records off the front of ``buf``, which starts at file
        offset ``offset``.

        Return the parsed units and the number of bytes they span; the rest of ``buf``
        is either the start of a record continued in the next chunk or, at the end of
        the file, a torn tail. Raise :class:`StoreError` on damage a crash cannot
        explain.
        """
        raise NotImplementedError


class RecordLog(_LogFile):
    """A log of fixed-size binary records (e.g. 8-byte keys)."""

    _kind = _KIND_FIXED

    def __init__(
        self, path: str | os.PathLike[str], record_size: int, *, readonly: bool = False
    ) -> None:
        """Open (creating if needed) the log at ``path`` for appending, or for reading only.

        A torn tail (file length not a whole number of records) is truncated right away
        when opening for appending; it only takes the file size to see.
        """
        if not 0 < record_size < 2**32:
            raise ValueError(f"record_size must be in [1, 2**32), not {record_size}")
        super().__init__(path, record_size, readonly=readonly)
        size = os.fstat(self._fd).st_size
        intact = HEADER_SIZE + max(0, size - HEADER_SIZE) // record_size * record_size
        self._settle_tail(intact, max(0, size - intact))

    @property
    def record_count(self) -> int:
        """Number of intact records in the log."""
        assert self._end is not None
        return (self._end - HEADER_SIZE) // self.record_size

    def append(self, record: bytes) -> None:
        """Append one record; when this returns it survives the process being killed."""
        if len(record) != self.record_size:
            raise ValueError(
                f"{self.path}: record of {len(record)} bytes, this log holds {self.record_size}-byte records"
            )
        self._append(record)

    def replay(self) -> Iterator[bytes]:
        """Yield every intact record, oldest first."""
        size = self.record_size
        for block in self._scan():
            for start in range(0, len(block), size):
                yield block[start : start + size]

    def replay_blocks(self) -> Iterator[bytes]:
        """Yield the intact records as blocks of whole records (faster to bulk-decode,
        e.g. with ``array.frombytes``)."""
        return self._scan()

    @classmethod
    def read(cls, path: str | os.PathLike[str], record_size: int) -> Iterator[bytes]:
        """Yield the intact records of the log at ``path`` without modifying it.

        A generator: a missing, foreign or mismatched file raises on first iteration.
        """
        with cls(path, record_size, readonly=True) as log:
            yield from log.replay()

    def _parse(self, buf: bytes, offset: int) -> tuple[list[bytes], int]:
        # _scan never reads past _end, which is a whole number of records, so a
        # partial record here is only a chunk boundary.
        usable = len(buf) - len(buf) % self.record_size
        if not usable:
            return [], 0
        return [buf if usable == len(buf) else buf[:usable]], usable


class VarRecordLog(_LogFile):
    """A log of variable-length binary records, each with a length and a CRC-32."""

    _kind = _KIND_VARIABLE

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False) -> None:
        """Open (creating if needed) the log at ``path`` for appending, or reading only.

        Finding a torn tail needs a full pass over the records, so it is deferred to the
        first complete :meth:`replay` (which a store does at open anyway) or, failing
        that, the first :meth:`append`: opening then replaying reads the file once.
        """
        super().__init__(path, 0, readonly=readonly)

    def append(self, payload: bytes) -> None:
        """Append one record; when this returns it survives the process being killed."""
        if len(payload) > MAX_PAYLOAD:
            raise ValueError(
                f"{self.path}: record of {len(payload)} bytes exceeds the {MAX_PAYLOAD}-byte limit"
            )
        length = struct.pack("<I", len(payload))
        crc = zlib.crc32(payload, zlib.crc32(length))
        self._append(length + struct.pack("<I", crc) + payload)

    def replay(self) -> Iterator[bytes]:
        """Yield every intact record's payload, oldest first."""
        return self._scan()

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Iterator[bytes]:
        """Yield the intact payloads of the log at ``path`` without modifying it.

        A generator: a missing, foreign or mismatched file raises on first iteration.
        """
        with cls(path, readonly=True) as log:
            yield from log.replay()

    def _parse(self, buf: bytes, offset: int) -> tuple[list[bytes], int]:
        payloads = []
        pos = 0
        size = len(buf)
        frame = _FRAME.size
        while size - pos >= frame:
            length, crc = _FRAME.unpack_from(buf, pos)
            if length > MAX_PAYLOAD:
                # A kill leaves a prefix of what was written, never a wrong length.
                raise StoreError(
                    f"{self.path}: corrupted record log: record at offset {offset + pos} "
                    f"claims {length} bytes (limit {MAX_PAYLOAD})"
                )
            end = pos + frame + length
            if end > size:
                break  # continued in the next chunk, or torn
            payload = buf[pos + frame : end]
            if zlib.crc32(payload, zlib.crc32(buf[pos : pos + 4])) != crc:
                if end < size and any(buf[pos:]):
                    # Intact records follow: not a torn write but damage to acknowledged
                    # data. Refuse rather than silently drop it and what comes after.
                    raise StoreError(
                        f"{self.path}: corrupted record log: record at offset {offset + pos} fails its checksum"
                    )
                # Ends exactly where the buffer ends, or only zeros follow: if the next
                # chunk brings more data, the next call raises above; if not, it is a torn
                # tail (e.g. zero-filled blocks after a power loss), cut off with a warning
                # (tests/stores/test_jobdir_stores.py has both).
                break
            payloads.append(payload)
            pos = end
        return payloads, pos

    def _check_tail(self, tail: bytes, offset: int) -> None:
        # A torn tail is a prefix of one record: no intact record can start inside it. Damage
        # whose length field points past the end of the file would otherwise pass for one, and
        # the intact records after it be cut off with the tail. Zeros never frame a record
        # (the CRC-32 of a zero length is not 0), so a zero-filled tail is still cut off.
        frame = _FRAME.size
        for pos in range(1, len(tail) - frame + 1):
            length, crc = _FRAME.unpack_from(tail, pos)
            end = pos + frame + length
            if (
                end <= len(tail)
                and zlib.crc32(tail[pos + frame : end], zlib.crc32(tail[pos : pos + 4])) == crc
            ):
                raise StoreError(
                    f"{self.path}: corrupted record log: record at offset {offset} is damaged "
                    f"(intact records follow at offset {offset + pos})"
                )
