"""``RedisDupeFilter``: :class:`~scrapy_urlunify.DupeFilter` with its seen set in Redis.

Every crawler process of a scope shares one "already seen" set, so a page is fetched once by
the whole fleet. It works under scrapy-redis's scheduler::

    SCHEDULER = "scrapy_redis.scheduler.Scheduler"
    DUPEFILTER_CLASS = "scrapy_urlunify.integration.redis_dupefilter.RedisDupeFilter"

and under Scrapy's own scheduler (each process keeps its own queue, and skips what any
process has scheduled).

Settings:

* ``URLUNIFY_STORE``: a ``redis://[:password@]host:port/db`` (``rediss://``, ``unix://``) URL;
  otherwise the connection is scrapy-redis's (``REDIS_URL``, ``REDIS_HOST``/``REDIS_PORT``,
  ``REDIS_PARAMS``).
* ``URLUNIFY_REDIS_KEY`` (default ``"urlunify:%(scope)s"``): the seen set is
  ``<key>:seen``; the scope is ``URLUNIFY_SCOPE``, by default the spider's name.
* ``URLUNIFY_REDIS_TIMEOUT`` (default 10 s): connect/reply timeout of a ``URLUNIFY_STORE`` URL.
* ``URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT`` (default 60 s): how long a call waits through an
  outage (blocking the crawl) before the crawl fails with ``StoreUnavailable``; see
  :mod:`scrapy_urlunify.stores.redis`.

With scrapy-redis's scheduler, ``SCHEDULER_PERSIST = False`` (its default) deletes the seen set
when the crawl closes, and ``SCHEDULER_FLUSH_ON_START`` when it opens: both call
:meth:`~RedisDupeFilter.clear`. :meth:`close` never deletes it (Scrapy's scheduler calls
``close`` at the end of every crawl, and the set is shared). Stats: ``urlunify/redis/retries``
and ``urlunify/redis/outages``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals

from ..stores.redis import RedisSeenStore
from .dupefilter import DupeFilter
from .store_faults import crawl_stores

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RedisDupeFilter"]


class RedisDupeFilter(DupeFilter):
    """:class:`DupeFilter` whose seen set is a Redis SET shared by every process of the scope."""

    store: RedisSeenStore

    @classmethod
    def make_store(cls, crawler: Crawler) -> RedisSeenStore:
        """The scope's shared seen set (called by ``DupeFilter.from_crawler``)."""
        store = crawl_stores(crawler, redis_fallback=True).seen()
        assert isinstance(store, RedisSeenStore)
        return store

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        df = super().from_crawler(crawler)
        if not isinstance(df.store, RedisSeenStore):
            # DupeFilter.from_crawler must build its store with cls.make_store
            df.store.close()
            raise TypeError("DupeFilter.from_crawler did not call make_store(); "
                            "RedisDupeFilter cannot put its seen set in Redis")
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
        self.store.clear()
        if self._first_url is not None:
            self._first_url.clear()

    def close(self, reason: str = "") -> None:
        # Scrapy's scheduler calls this and then spider_closed fires: close once
        if getattr(self, "_closed", False):
            return
        self._closed = True
        super().close(reason)

    def _spider_closed(self, spider: Spider | None = None, reason: str = "") -> None:
        self.close(reason)
