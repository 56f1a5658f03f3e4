"""The Redis stores other than the seen set (:mod:`.redis_seen`), each on its own key of the
scope (:func:`~.location.redis_keys`), over the crawl's one client:

* :class:`RedisSignatureStore` -- a :class:`~.base.SignatureStore`: a HASH signature ->
  identifier; ``HSETNX`` + ``HGET`` in one ``MULTI``/``EXEC`` transaction (one round trip, no
  other client's command runs in between);
* :class:`RedisRulesStore` -- a HASH of learned rules, name -> JSON text;
* :class:`RedisKeptStore` -- a :class:`~.base.KeptStore`: a HASH entry id -> entry;
* :class:`RedisFetchedStore` -- a SET of the pages fetched under a learned policy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis

from scrapy_urlunify.stores._base import KeptEntry, pack_entry, unpack_entry
from scrapy_urlunify.stores._redis_connection import PIPELINE_CHUNK, RedisStore


def _text(value: bytes | str) -> str:
    # bytes unless the client was made with decode_responses=True
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def _raw(value: bytes | str) -> bytes:
    # str only if the client was made with decode_responses=True
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value


class RedisSignatureStore(RedisStore):
    """A :class:`~.base.SignatureStore` in a Redis HASH signature -> identifier."""

    def get_or_set(self, signature: bytes, identifier: str) -> str | None:
        if not isinstance(signature, bytes):
            raise TypeError(f"signature must be bytes, not {type(signature).__name__}")
        if not isinstance(identifier, str):
            raise TypeError(f"identifier must be str, not {type(identifier).__name__}")
        value = identifier.encode("utf-8", "surrogatepass")

        def hsetnx_hget() -> list[Any]:
            # MULTI/EXEC: both commands run with no other client's command between them
            pipe = self.client.pipeline(transaction=True)
            pipe.hsetnx(self.key, signature, value)
            pipe.hget(self.key, signature)
            return pipe.execute()

        (created, stored), retried = self._call("HSETNX+HGET", hsetnx_hget)
        if created:
            return None
        known = _text(stored)
        # after a retry, our own identifier means our lost HSETNX stored it
        return None if retried and known == identifier else known

    def __len__(self) -> int:
        return int(self._run("HLEN", lambda: self.client.hlen(self.key)))


class RedisRulesStore(RedisStore):
    """Learned rules of a scope, shared by its processes: a HASH name -> JSON text."""

    def get_all(self) -> dict[str, str]:
        raw = self._run("HGETALL", lambda: self.client.hgetall(self.key))
        return {_text(k): _text(v) for k, v in raw.items()}

    def set(self, name: str, value: str) -> None:
        self._run("HSET", lambda: self.client.hset(self.key, name, value))

    def __len__(self) -> int:
        return int(self._run("HLEN", lambda: self.client.hlen(self.key)))

    def set_many(self, fields: dict[str, str]) -> None:
        """Set several fields in one ``HSET``: a reader sees all of them or none."""
        self._run("HSET", lambda: self.client.hset(self.key, mapping=fields))  # type: ignore[arg-type]


class RedisKeptStore(RedisStore):
    """A :class:`~.base.KeptStore` shared by the processes of a scope, so a rule revoked in one
    process reschedules what another kept: a HASH entry id -> rules and pickled request. Read whole only when a rule is revoked,
    a crawl opens, or a crawl goes idle with a rule on probation; one ``HSET`` per kept request,
    one ``HDEL`` per batch forgotten."""

    def entries(self) -> list[KeptEntry]:
        raw = self._run("HGETALL", lambda: self.client.hgetall(self.key))
        where = f"Redis {self.url} key {self.key!r}"
        return [(_raw(k), *unpack_entry(_raw(v), where)) for k, v in raw.items()]

    def add(self, entry_id: bytes, rules: tuple[str, ...], data: bytes) -> None:
        value = pack_entry(rules, data)
        self._run("HSET", lambda: self.client.hset(self.key, entry_id, value))  # type: ignore[arg-type]

    def remove(self, entry_ids: Iterable[bytes]) -> None:
        ids = list(entry_ids)
        for start in range(0, len(ids), PIPELINE_CHUNK):
            chunk = ids[start : start + PIPELINE_CHUNK]
            self._run("HDEL", lambda chunk=chunk: self.client.hdel(self.key, *chunk))  # type: ignore[misc]

    def __len__(self) -> int:
        return int(self._run("HLEN", lambda: self.client.hlen(self.key)))


class RedisFetchedStore(RedisStore):
    """The pages fetched under a learned policy, shared by the processes of a scope: a SET of
    8-byte keys of their identifiers under the policy of the process that fetched them. The
    dequeue re-check asks it for a request queued under another policy; new members wait in
    :attr:`pending` and go with that question (one round trip for both), or by
    :data:`PIPELINE_CHUNK` at most."""

    def __init__(self, client: redis.Redis, key: str, **kwargs: Any) -> None:
        super().__init__(client, key, **kwargs)
        self.pending: list[bytes] = []

    def add(self, member: bytes) -> None:
        """Record ``member`` (sent with the next :meth:`fetched`, or now if many wait)."""
        self.pending.append(member)
        if len(self.pending) >= PIPELINE_CHUNK:
            self.flush()

    def add_many(self, members: Iterable[bytes]) -> None:
        """Record many members now, :data:`PIPELINE_CHUNK` per round trip."""
        self.pending.extend(members)
        self.flush()

    def flush(self) -> None:
        while self.pending:
            chunk, rest = self.pending[:PIPELINE_CHUNK], self.pending[PIPELINE_CHUNK:]
            self._run("SADD", lambda chunk=chunk: self.client.sadd(self.key, *chunk))  # type: ignore[misc]
            self.pending = rest

    def fetched(self, member: bytes) -> bool:
        """Whether any process recorded ``member``; the members waiting go in the same round trip."""
        pending = self.pending[:PIPELINE_CHUNK]

        def ask() -> list[Any]:
            pipe = self.client.pipeline(transaction=False)
            if pending:
                pipe.sadd(self.key, *pending)
            pipe.sismember(self.key, member)  # type: ignore[arg-type]
            return pipe.execute()

        answers = self._run("SADD+SISMEMBER", ask)
        self.pending = self.pending[len(pending) :]
        return bool(answers[-1])

    def close(self) -> None:
        try:
            self.flush()
        finally:
            super().close()

    def __len__(self) -> int:
        return int(self._run("SCARD", lambda: self.client.scard(self.key)))
