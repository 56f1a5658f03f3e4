"""The near-duplicate pages of a scope in Redis: a LIST of page records its processes share live.

A record is one page a crawl put in its near-duplicate index (``integration.near_duplicates``):
its site, near-duplicate signature, key, base identifier and exact signature, packed by the
caller. A process reads the whole list when it opens, then each
:meth:`RedisNearDuplicateLog.exchange` appends its own new records and reads those the other
processes appended since its last read, in one round trip: a ``MULTI``/``EXEC`` of ``LRANGE key
<offset> ...`` and ``RPUSH``. The list only grows, and the transaction runs with no other
client's command inside it, so RPUSH's reply (the list's length) is where the next read starts:
this process's own records are never read back, and nothing another process appended is skipped.

A retried exchange (a reply lost in an outage: :class:`~.redis_connection.RedisStore`'s retry
loop) may have pushed its records twice; the retry's read then holds the first push, which is
dropped from what it answers. A record twice in the list is harmless: replayed again, the same
key and near-duplicate signature add nothing to an index. A list found shorter than the offset
(deleted, or a failover that lost the master's last writes) is read again from its start, for
the same reason. A LIST is one key, so one slot on a Redis Cluster, where the transaction runs
as on one server.
"""

from __future__ import annotations

from typing import Any

from scrapy_urlunify.stores._redis_connection import PIPELINE_CHUNK, RedisStore


def _raw(value: bytes | str) -> bytes:
    # str only if the client was made with decode_responses=True
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")


class RedisNearDuplicateLog(RedisStore):
    """A Redis LIST of near-duplicate page records (bytes), and where this process read up to."""

    #: records of the list this process has read or written: the next exchange reads from here
    offset = 0

    def exchange(self, records: list[bytes]) -> list[bytes]:
        """Append ``records``; answer the records the other processes appended since the last
        exchange (every record, at the first), oldest first. One round trip, and one more per
        :data:`PIPELINE_CHUNK` records read past the first chunk."""
        start = self.offset

        def transaction() -> list[Any]:
            pipe = self.client.pipeline(transaction=True)
            pipe.lrange(self.key, start, start + PIPELINE_CHUNK - 1)
            for at in range(0, len(records), PIPELINE_CHUNK):
                pipe.rpush(self.key, *records[at : at + PIPELINE_CHUNK])
            if not records:
                pipe.llen(self.key)
            return pipe.execute()

        replies, retried = self._call("LRANGE+RPUSH" if records else "LRANGE+LLEN", transaction)
        read = [_raw(v) for v in replies[0]]
        length = int(replies[-1])
        others_end = length - len(
            records
        )  # the list before this push: the others' records end here
        if others_end < start:  # the list lost records: what it holds now is read whole
            start, read = 0, []
        if start + len(read) < others_end:
            read += self._range(start + len(read), others_end)
        if retried and records:  # a lost reply: the first try's push may be in what was read
            own = set(records)
            read = [r for r in read if r not in own]
        self.offset = length
        return read

    def append(self, records: list[bytes]) -> None:
        """Add ``records`` at the end of the list, reading nothing (one round trip per
        ``PIPELINE_CHUNK``): a process's last write, at close."""
        for at in range(0, len(records), PIPELINE_CHUNK):
            chunk = records[at : at + PIPELINE_CHUNK]
            self._run("RPUSH", lambda chunk=chunk: self.client.rpush(self.key, *chunk))  # type: ignore[misc]

    def records(self) -> list[bytes]:
        """Every record, oldest first (the offset is left as it is)."""
        return self._range(0, None)

    def _range(self, start: int, end: int | None) -> list[bytes]:
        """The records from ``start`` to ``end`` (excluded; None: the list's end), a chunk a round trip."""
        found: list[bytes] = []
        while end is None or start < end:
            last = (
                start + PIPELINE_CHUNK - 1 if end is None else min(start + PIPELINE_CHUNK, end) - 1
            )
            batch = self._run(
                "LRANGE",
                lambda start=start, last=last: self.client.lrange(self.key, start, last),  # type: ignore[misc]
            )
            found.extend(map(_raw, batch))
            if len(batch) < last - start + 1:
                break
            start += len(batch)
        return found
