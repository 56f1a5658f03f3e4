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

from ..stores.redis import (
    DEFAULT_KEY_TEMPLATE,
    RedisRulesStore,
    RedisSeenStore,
    RedisSignatureStore,
    RedisUnavailable,
    connect,
    is_redis_url,
    own_retries,
    ping,
    redis_keys,
)
from .context import UnifyContext, spider_name
from .dupefilter import DupeFilter
from .settings import SettingsError, number

if TYPE_CHECKING:
    import redis
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from typing_extensions import Self

__all__ = ["RedisDupeFilter", "redis_client"]


def redis_client(settings: BaseSettings) -> redis.Redis:
    """The crawl's Redis client: ``URLUNIFY_STORE`` if it is a Redis URL, else scrapy-redis's
    connection settings. PINGed once; ``StoreUnavailable`` if nobody answers."""
    url = settings.get("URLUNIFY_STORE")
    if is_redis_url(url):
        timeout = number(settings, "URLUNIFY_REDIS_TIMEOUT", 10.0, minimum=0.001)
        try:
            return connect(url, timeout=timeout)
        except ValueError as exc:
            raise SettingsError("URLUNIFY_STORE", str(exc)) from None
        except RedisUnavailable as exc:
            raise RedisUnavailable(url, f"{exc.reason} (check the setting URLUNIFY_STORE)") from None
    try:
        from scrapy_redis.connection import get_redis_from_settings
    except ImportError:
        raise SettingsError(
            "URLUNIFY_STORE",
            f"RedisDupeFilter needs a redis:// URL here (got {url!r}), "
            "or scrapy-redis installed to use REDIS_URL",
        ) from None
    # A client of our own (scrapy-redis makes a new one per call), so changing its retry
    # policy affects no one else.
    client = own_retries(get_redis_from_settings(settings))
    ping(client)
    return client


def redis_keys_of(crawler: Crawler) -> dict[str, str]:
    """The crawl's Redis keys (``seen``, ``signatures``, ``rules``) from ``URLUNIFY_REDIS_KEY``."""
    template = crawler.settings.get("URLUNIFY_REDIS_KEY") or DEFAULT_KEY_TEMPLATE
    scope = UnifyContext.of(crawler).scope or spider_name(crawler) or ""
    try:
        return redis_keys(template, scope)
    except ValueError as exc:
        raise SettingsError("URLUNIFY_REDIS_KEY", str(exc)) from None


def shared_client(crawler: Crawler) -> redis.Redis:
    """One Redis client per crawler, for the seen set, the signatures and the learned rules."""
    ctx = UnifyContext.of(crawler)
    if ctx.redis is None:
        ctx.redis = redis_client(crawler.settings)
    return ctx.redis


def unavailable_timeout(crawler: Crawler) -> float:
    return number(crawler.settings, "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT", 60.0)


def redis_seen_store(crawler: Crawler) -> RedisSeenStore:
    """The scope's seen set in Redis."""
    return RedisSeenStore(shared_client(crawler), redis_keys_of(crawler)["seen"],
                          unavailable_timeout=unavailable_timeout(crawler))


def redis_signature_store(crawler: Crawler) -> RedisSignatureStore:
    """The scope's page-source hash index in Redis."""
    return RedisSignatureStore(shared_client(crawler), redis_keys_of(crawler)["signatures"],
                               unavailable_timeout=unavailable_timeout(crawler))


def redis_rules_store(crawler: Crawler) -> RedisRulesStore:
    """The scope's learned rules in Redis."""
    return RedisRulesStore(shared_client(crawler), redis_keys_of(crawler)["rules"],
                           unavailable_timeout=unavailable_timeout(crawler))


class RedisDupeFilter(DupeFilter):
    """:class:`DupeFilter` whose seen set is a Redis SET shared by every process of the scope."""

    store: RedisSeenStore

    @classmethod
    def make_store(cls, crawler: Crawler) -> RedisSeenStore:
        """The scope's shared seen set (called by ``DupeFilter.from_crawler``)."""
        return redis_seen_store(crawler)

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
