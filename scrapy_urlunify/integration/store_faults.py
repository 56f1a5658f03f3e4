"""Where a crawl keeps what it has seen: ``URLUNIFY_STORE``.

``URLUNIFY_STORE = "memory"`` (the default): the seen set, the page signatures and the learned
rules live in the process, and in ``JOBDIR`` files when that is set (a resumed job keeps them).
``URLUNIFY_STORE = "redis://[:password@]host:port/db"`` (also ``rediss://``, ``unix://``): they
live in Redis under ``URLUNIFY_REDIS_KEY`` (default ``urlunify:%(scope)s``), shared by every
crawler process of the scope (:mod:`scrapy_urlunify.integration.redis_dupefilter`,
:mod:`scrapy_urlunify.stores.redis`).

When the store stops answering for longer than ``URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT``, the crawl
closes with the reason ``urlunify_store_unavailable``; nothing is counted as seen or recorded
meanwhile, so a later resume loses nothing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..stores import StoreUnavailable
from .settings import SettingsError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "CLOSE_REASON",
    "UNRECORDED_META",
    "StoreUnavailable",
    "count_outages",
    "store_failed",
    "store_unavailable",
    "uses_redis",
]

logger = logging.getLogger(__name__)

CLOSE_REASON = "urlunify_store_unavailable"
#: meta of a request queued while the store was unavailable: True, or "doubt" when its own store call
#: was cut off (Redis may have recorded it without answering)
UNRECORDED_META = "urlunify_unrecorded"


def uses_redis(settings: Any) -> bool:
    """Whether ``URLUNIFY_STORE`` names Redis; a value that is neither fails at start-up."""
    value = settings.get("URLUNIFY_STORE", "memory")
    if value in (None, "", "memory"):
        return False
    if isinstance(value, str) and value.startswith(("redis://", "rediss://", "unix://")):
        return True
    raise SettingsError("URLUNIFY_STORE", f'expected "memory" or a redis:// URL, got {value!r}')


def store_failed(crawler: Crawler | None) -> bool:
    """Whether the crawl's store gave up (the crawl is closing): components stop calling it, each
    call would wait for a reply timeout again."""
    return bool(getattr(crawler, "_urlunify_store_failed", False))


def count_outages(crawler: Crawler | None, store: Any) -> None:
    """Add a Redis store's ``retries`` and ``outages`` to the crawl's stats (at close)."""
    stats = getattr(crawler, "stats", None)
    if stats is None or not hasattr(store, "retries"):
        return
    stats.inc_value("urlunify/redis/retries", store.retries)
    stats.inc_value("urlunify/redis/outages", store.outages)


def store_unavailable(crawler: Crawler | None, error: Exception) -> None:
    """Close the crawl because its store stopped answering (once, with a clear reason)."""
    if crawler is None or getattr(crawler, "_urlunify_store_failed", False):
        return
    crawler._urlunify_store_failed = True  # type: ignore[attr-defined]
    logger.error("scrapy-urlunify: the store is unavailable (%s); closing the crawl (reason %r). "
                 "Nothing was counted as seen meanwhile: resume the job once the store is back.",
                 error, CLOSE_REASON)
    if crawler.stats is not None:
        crawler.stats.set_value("urlunify/store_unavailable", 1)
    engine = getattr(crawler, "engine", None)
    if engine is not None:
        from scrapy.utils.defer import deferred_from_coro

        deferred_from_coro(engine.close_spider_async(reason=CLOSE_REASON))
