"""The near-duplicate pages of a scope in Redis: a LIST of page records every process appends to.

A record is one page a crawl put in its near-duplicate index (``integration.near_duplicates``):
its site, fingerprint, key, base identifier and exact signature, packed by the caller. Processes
append their records in batches; a process reads the whole list when it opens, so it knows the
pages every process fetched before it started (not those fetched while it runs: the exact
signature index, a HASH, is the one shared live).
"""

from __future__ import annotations

from .redis_connection import PIPELINE_CHUNK, RedisStore

__all__ = ["RedisNearDuplicateLog"]


class RedisNearDuplicateLog(RedisStore):
    """A Redis LIST of near-duplicate page records (bytes)."""

    def append(self, records: list[bytes]) -> None:
        """Add ``records`` at the end of the list (one round trip per ``PIPELINE_CHUNK``)."""
        for at in range(0, len(records), PIPELINE_CHUNK):
            chunk = records[at : at + PIPELINE_CHUNK]
            self._run("RPUSH", lambda chunk=chunk: self.client.rpush(self.key, *chunk))  # type: ignore[misc]

    def records(self) -> list[bytes]:
        """Every record, oldest first."""
        found: list[bytes] = []
        start = 0
        while True:
            end = start + PIPELINE_CHUNK - 1
            batch = self._run("LRANGE", lambda start=start, end=end: self.client.lrange(self.key, start, end))  # type: ignore[misc]
            found.extend(v if isinstance(v, bytes) else v.encode("utf-8", "surrogatepass") for v in batch)
            if len(batch) < PIPELINE_CHUNK:
                return found
            start += PIPELINE_CHUNK
