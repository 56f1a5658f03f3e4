"""The crawl's seen store: the store of ``URLUNIFY_STORE`` (memory, a JOBDIR log, a Redis set),
or, for a ``RedisDupeFilter``, a Redis set in any case (docs/stores.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from scrapy_urlunify.integration.crawl._stores import crawl_stores
from scrapy_urlunify.integration.settings import SettingsError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_urlunify.stores._base import SeenStore
    from scrapy_urlunify.stores._factory import Stores


def seen_store(settings: Any, stores: Stores, crawler: Crawler) -> SeenStore:
    """The seen store of the crawl's dupefilter: a ``RedisDupeFilter`` keeps it in Redis (under
    ``SCHEDULER_DUPEFILTER_KEY`` when the project set it, as scrapy-redis's filter does), any
    other in the store of ``URLUNIFY_STORE``."""
    if not _redis_dupefilter(settings):
        return stores.seen()
    if not stores.in_redis:  # the seen set alone goes to scrapy-redis's connection
        stores = crawl_stores(settings, stores.scope, redis_fallback=True)
    template = settings.get("SCHEDULER_DUPEFILTER_KEY")
    if not template:
        return stores.seen()
    spider = getattr(getattr(crawler, "spider", None), "name", None) or getattr(
        crawler.spidercls, "name", None
    )
    try:
        key = template % {"spider": spider}
    except (KeyError, ValueError, TypeError) as exc:
        raise SettingsError(
            "SCHEDULER_DUPEFILTER_KEY",
            f"{template!r} is not a key template with %(spider)s only ({exc!r})",
        ) from None
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore

    return RedisSeenStore(
        stores.client(),
        key,
        unavailable_timeout=stores.unavailable_timeout,
        **({"size": stores.seen_size} if stores.seen_size else {}),
    )


def _redis_dupefilter(settings: Any) -> bool:
    try:
        cls = load_object(settings.get("DUPEFILTER_CLASS"))
    except (ImportError, ValueError, NameError, AttributeError, TypeError):
        return False
    return getattr(cls, "urlunify_role", None) == "redis_dupefilter"
