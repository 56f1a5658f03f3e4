"""``RedisDupeFilter``: :class:`~scrapy_urlunify.DupeFilter` with its seen set in Redis, shared by
every crawler process of a scope, under scrapy-redis's scheduler or Scrapy's own, and a drop-in
for scrapy-redis's ``RFPDupeFilter`` (docs/stores.md, "In a crawl: the fingerprinter and the
dupefilters"; the seen set itself, its outages and its keys on a Redis Cluster: docs/stores.md,
"Redis").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scrapy import signals

from scrapy_urlunify.integration.seen._dupefilter import DupeFilter
from scrapy_urlunify.integration.seen._keys import foreign_key
from scrapy_urlunify.integration.seen._seen import SeenCheck
from scrapy_urlunify.stores._redis_seen import RedisSeenStore

if TYPE_CHECKING:
    import redis
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from typing_extensions import Self


class RedisDupeFilter(DupeFilter):
    """:class:`DupeFilter` whose seen set is in Redis, shared by every process of the scope."""

    urlunify_role = "redis_dupefilter"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "server" in kwargs or (args and not isinstance(args[0], SeenCheck)):
            # scrapy-redis's RFPDupeFilter(server, key, debug=False)
            server, key, debug = _scrapy_redis_args(*args, **kwargs)
            super().__init__(SeenCheck.standalone(RedisSeenStore(server, key), debug=debug))
            self._clears_on_close = True
        else:
            super().__init__(*args, **kwargs)
            self._clears_on_close = False
        if not isinstance(self.store, RedisSeenStore):
            self.store.close()
            raise TypeError(
                "RedisDupeFilter needs its seen set in Redis: set DUPEFILTER_CLASS to it, "
                "or URLUNIFY_STORE to a Redis URL"
            )
        self._closed = False

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "request_fingerprint":  # replaced on the instance, as scrapy-redis allows
            self.check.seen.use_fingerprints(lambda r: _hex_key(self.request_fingerprint(r)))

    @property
    def server(self) -> redis.Redis:
        """The Redis client (scrapy-redis's name)."""
        return self.store.client  # type: ignore[attr-defined,no-any-return]

    @property
    def key(self) -> str:
        """The Redis key of the seen set (scrapy-redis's name; :meth:`request_key` keys
        requests)."""
        return self.store.key  # type: ignore[attr-defined,no-any-return]

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Self:
        """scrapy-redis's standalone filter: its connection settings, a one-time key."""
        from scrapy_redis import defaults, dupefilter

        key = defaults.DUPEFILTER_KEY % {"timestamp": int(time.time())}
        return cls(
            dupefilter.get_redis_from_settings(settings), key, settings.getbool("DUPEFILTER_DEBUG")
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        df = super().from_crawler(crawler)
        # scrapy-redis's scheduler never calls close(): release the client at the end anyway
        crawler.signals.connect(df._spider_closed, signal=signals.spider_closed)
        return df

    @classmethod
    def from_spider(cls, spider: Spider) -> Self:
        """What scrapy-redis's scheduler calls (at ``open``), instead of ``from_crawler``."""
        return cls.from_crawler(spider.crawler)

    def clear(self) -> None:
        """Forget every seen request of the scope, for every process (scrapy-redis calls this
        at close unless ``SCHEDULER_PERSIST``, and at open with ``SCHEDULER_FLUSH_ON_START``)."""
        self.store.clear()  # type: ignore[attr-defined]
        first_url = self.check.seen.first_url
        if first_url is not None:
            first_url.clear()

    def close(self, reason: str = "") -> None:
        if self._clears_on_close:  # scrapy-redis's one-time key
            self.clear()
        # Scrapy's scheduler calls this and then spider_closed fires: close once
        if self._closed:
            return
        self._closed = True
        super().close(reason)

    def _spider_closed(self, spider: Spider | None = None, reason: str = "") -> None:
        self.close(reason)


def _scrapy_redis_args(server: Any, key: str, debug: bool = False) -> tuple[Any, str, bool]:
    return server, key, debug


def _hex_key(fingerprint: str) -> int:
    return foreign_key(bytes.fromhex(fingerprint))
