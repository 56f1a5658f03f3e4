"""One place that turns a store location (``"memory"`` or a Redis URL, and a JOBDIR) into the
stores of a crawl.

Pure Python, no Scrapy and no ``redis`` import until a Redis store is opened.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy_urlunify.stores._base import KeptStore, SeenStore, SignatureStore, StoreError
from scrapy_urlunify.stores._jobdir import (
    ITEMS_FILENAME,
    KEPT_FILENAME,
    LEARNED_FILENAME,
    SEEN_FILENAME,
    SIGNATURES_FILENAME,
    JobdirKeptStore,
    JobdirSeenStore,
    JobdirSignatureStore,
)
from scrapy_urlunify.stores._location import (
    DEFAULT_KEY_TEMPLATE,
    MEMORY,
    is_redis_url,
    mask_url,
    redis_keys,
    redis_missing,
)
from scrapy_urlunify.stores._memory import MemoryKeptStore, MemorySeenStore, MemorySignatureStore

if TYPE_CHECKING:
    import redis

    from scrapy_urlunify.stores._redis_tables import RedisFetchedStore, RedisRulesStore


class Stores:
    """The stores of one crawl, built from where they live.

    ``location`` is ``"memory"`` (the process, and ``jobdir`` files when given) or a Redis URL
    (shared by every process of ``scope``, under the keys of ``key_template``). ``client``, when
    given, is the Redis client to use instead of connecting to ``location`` (scrapy-redis's
    connection). One Redis client serves every store of the crawl; it is made on first use.
    """

    def __init__(
        self,
        location: str = MEMORY,
        *,
        jobdir: str | os.PathLike[str] | None = None,
        scope: str | None = None,
        key_template: str = DEFAULT_KEY_TEMPLATE,
        timeout: float = 10.0,
        unavailable_timeout: float = 60.0,
        client: Callable[[], redis.Redis] | None = None,
        seen_size: int | None = None,
    ) -> None:
        location = MEMORY if location in (None, "") else location
        if location != MEMORY and not is_redis_url(location):
            raise ValueError(
                f'expected "memory" or a redis://, rediss://, unix:// or redis+cluster:// URL, '
                f"got {mask_url(location)!r}"
            )
        missing = redis_missing(location) if location != MEMORY and client is None else None
        if missing:
            raise StoreError(missing)
        self.location = location
        self.jobdir = Path(jobdir) if jobdir else None
        self.scope = scope
        self.key_template = key_template
        self.timeout = timeout
        self.unavailable_timeout = unavailable_timeout
        self._client_factory = client
        #: URLs a new Redis seen set is sized for (URLUNIFY_REDIS_SEEN_SIZE; None: the default)
        self.seen_size = seen_size
        self._client: redis.Redis | None = None

    @property
    def in_redis(self) -> bool:
        """Whether the stores live in Redis."""
        return self.location != MEMORY or self._client_factory is not None

    def client(self) -> redis.Redis:
        """The crawl's Redis client (connected and PINGed on first use)."""
        if self._client is None:
            if self._client_factory is not None:
                self._client = self._client_factory()
            else:
                from scrapy_urlunify.stores._redis_connection import connect

                self._client = connect(self.location, timeout=self.timeout)
        return self._client

    def keys(self) -> dict[str, str]:
        if not self.scope:
            raise ValueError("a Redis store needs a scope (URLUNIFY_SCOPE or the spider's name)")
        return redis_keys(self.key_template, self.scope)

    def _redis_kwargs(self) -> dict[str, Any]:
        return {"unavailable_timeout": self.unavailable_timeout}

    def seen(self) -> SeenStore:
        """The keys of the requests already scheduled."""
        if self.in_redis:
            from scrapy_urlunify.stores._redis_seen import RedisSeenStore

            kwargs = self._redis_kwargs()
            if self.seen_size is not None:
                kwargs["size"] = self.seen_size
            return RedisSeenStore(self.client(), self.keys()["seen"], **kwargs)
        if self.jobdir is not None:
            return JobdirSeenStore(self.jobdir / SEEN_FILENAME)
        return MemorySeenStore()

    def signatures(self) -> SignatureStore:
        """The page-source hash index: signature -> first page with it."""
        if self.in_redis:
            from scrapy_urlunify.stores._redis_tables import RedisSignatureStore

            return RedisSignatureStore(
                self.client(), self.keys()["signatures"], **self._redis_kwargs()
            )
        if self.jobdir is not None:
            return JobdirSignatureStore(self.jobdir / SIGNATURES_FILENAME)
        return MemorySignatureStore()

    def rules(self) -> RedisRulesStore | Path | None:
        """Where learned rules are kept between runs: a Redis hash, a JOBDIR file, or nowhere."""
        if self.in_redis:
            from scrapy_urlunify.stores._redis_tables import RedisRulesStore

            return RedisRulesStore(self.client(), self.keys()["rules"], **self._redis_kwargs())
        return self.jobdir / LEARNED_FILENAME if self.jobdir is not None else None

    def kept(self) -> KeptStore:
        """Requests merged by learned rules on probation, kept until the rules are confirmed or
        revoked: a Redis hash of the scope, a JOBDIR log, or nowhere (the crawl's memory)."""
        if self.in_redis:
            from scrapy_urlunify.stores._redis_tables import RedisKeptStore

            return RedisKeptStore(self.client(), self.keys()["kept"], **self._redis_kwargs())
        if self.jobdir is not None:
            return JobdirKeptStore(self.jobdir / KEPT_FILENAME)
        return MemoryKeptStore()

    def fetched(self) -> RedisFetchedStore | None:
        """The identifiers fetched under the learned policy, shared by the processes of a scope
        (Redis only: in one process the signature middleware knows its own fetches)."""
        if not self.in_redis:
            return None
        from scrapy_urlunify.stores._redis_tables import RedisFetchedStore

        return RedisFetchedStore(self.client(), self.keys()["fetched"], **self._redis_kwargs())

    def items(self) -> SignatureStore:
        """Item identifier -> the page it first came from (the unicity filter); never shared."""
        if self.jobdir is not None:
            return JobdirSignatureStore(self.jobdir / ITEMS_FILENAME)
        return MemorySignatureStore()

    def __repr__(self) -> str:
        return f"<Stores {mask_url(self.location)} jobdir={self.jobdir} scope={self.scope!r}>"
