"""Where a crawl keeps what it has seen (``URLUNIFY_STORE``), and what happens when that fails.

``URLUNIFY_STORE = "memory"`` (the default): the seen set, the page signatures and the learned
rules live in the process, and in ``JOBDIR`` files when that is set (a resumed job keeps them).
``URLUNIFY_STORE = "redis://[:password@]host:port/db"`` (also ``rediss://``, ``unix://``): they
live in Redis under ``URLUNIFY_REDIS_KEY`` (default ``urlunify:%(scope)s``), shared by every
crawler process of the scope. :func:`crawl_stores` builds them (through the one factory,
:class:`scrapy_urlunify.stores.factory.Stores`).

A store that fails closes the crawl, with a reason naming the cause, and nothing is counted as
seen or recorded from then on, so a later resume loses nothing:

* ``urlunify_store_unavailable``: Redis stopped answering for longer than
  ``URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT``;
* ``urlunify_store_error``: a store answered with an error waiting does not cure: a JOBDIR file
  that cannot be written (disk full), Redis out of memory (``maxmemory`` with ``noeviction``), a
  key of another type at the plugin's key.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy.core.scheduler import Scheduler
from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object

from ..stores import StoreError, StoreUnavailable
from ..stores.factory import Stores
from . import settings as urlunify_settings
from .context import UnifyContext, spider_name
from .settings import SettingsError
from .stats import UnifyStats

if TYPE_CHECKING:
    from collections.abc import Callable

    import redis
    from scrapy.crawler import Crawler

__all__ = [
    "CLOSE_REASON",
    "ERROR_REASON",
    "STORE_FAULTS",
    "StoreError",
    "StoreUnavailable",
    "count_outages",
    "crawl_stores",
    "guarded",
    "queue_losses",
    "scrapy_scheduler",
    "store_failed",
    "store_unavailable",
    "uses_redis",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: what a store call may raise that must close the crawl (OSError: a JOBDIR write, disk full)
STORE_FAULTS: tuple[type[Exception], ...] = (StoreError, OSError)

CLOSE_REASON = "urlunify_store_unavailable"
ERROR_REASON = "urlunify_store_error"


def uses_redis(settings: Any) -> bool:
    """Whether ``URLUNIFY_STORE`` names Redis; a value that is neither fails at start-up."""
    return urlunify_settings.get(settings, "URLUNIFY_STORE") != "memory"


def crawl_stores(crawler: Crawler, *, redis_fallback: bool = False) -> Stores:
    """The crawl's :class:`Stores` (one per crawler, one Redis client for all its stores).

    ``redis_fallback``: a ``RedisDupeFilter`` whose ``URLUNIFY_STORE`` is not a Redis URL uses
    scrapy-redis's connection settings (``REDIS_URL``, ``REDIS_HOST``...) for its seen set."""
    ctx = UnifyContext.of(crawler)
    if ctx.stores is None or (redis_fallback and not ctx.stores.in_redis):
        s = crawler.settings
        location = urlunify_settings.get(s, "URLUNIFY_STORE")
        if location != "memory":
            timeout = urlunify_settings.get(s, "URLUNIFY_REDIS_TIMEOUT")

            def client() -> redis.Redis:
                return _connect(location, timeout)
        elif redis_fallback:

            def client() -> redis.Redis:
                return scrapy_redis_client(s)
        else:
            client = None  # type: ignore[assignment]
        ctx.stores = Stores(
            location,
            jobdir=job_dir(s),
            scope=ctx.scope or spider_name(crawler),
            key_template=urlunify_settings.get(s, "URLUNIFY_REDIS_KEY"),
            timeout=urlunify_settings.get(s, "URLUNIFY_REDIS_TIMEOUT"),
            unavailable_timeout=urlunify_settings.get(s, "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT"),
            client=client,
            seen_size=urlunify_settings.get(s, "URLUNIFY_REDIS_SEEN_SIZE"),
        )
    return ctx.stores


def _connect(url: str, timeout: float) -> redis.Redis:
    from ..stores.redis_connection import RedisUnavailable, connect

    try:
        return connect(url, timeout=timeout)
    except ValueError as exc:  # a malformed port, db or query (the message is password-free)
        raise SettingsError("URLUNIFY_STORE", str(exc)) from None
    except RedisUnavailable as exc:
        raise RedisUnavailable(url, f"{exc.reason} (check the setting URLUNIFY_STORE)") from None


def scrapy_redis_client(settings: Any) -> redis.Redis:
    """A Redis client from scrapy-redis's connection settings, PINGed once."""
    from ..stores.redis_connection import own_retries, ping

    try:
        from scrapy_redis.connection import get_redis_from_settings
    except ImportError:
        raise SettingsError(
            "URLUNIFY_STORE",
            "RedisDupeFilter needs a redis:// URL here, or scrapy-redis installed to use REDIS_URL",
        ) from None
    # A client of our own (scrapy-redis makes a new one per call), so changing its retry
    # policy affects no one else.
    client = own_retries(get_redis_from_settings(settings))
    ping(client)
    return client


def store_failed(crawler: Crawler | None) -> bool:
    """Whether the crawl's store gave up (the crawl is closing): components stop calling it, each
    call would wait for a reply timeout again, and nothing more is recorded as done."""
    return bool(getattr(crawler, "_urlunify_store_failed", False))


def count_outages(crawler: Crawler | None, store: Any) -> None:
    """Add a Redis store's ``retries`` and ``outages`` to the crawl's stats (at close)."""
    if crawler is None or not hasattr(store, "retries"):
        return
    stats = _stats(crawler)
    stats.inc("redis/retries", store.retries)
    stats.inc("redis/outages", store.outages)
    if getattr(store, "data_lost", 0):
        stats.inc("redis/data_lost", store.data_lost)
    if hasattr(store, "round_trips"):
        stats.inc("redis/seen_round_trips", store.round_trips)
    if getattr(store, "converted", 0):
        stats.inc("redis/seen_hashtables", store.converted)


def store_unavailable(crawler: Crawler | None, error: Exception) -> None:
    """Close the crawl because its store stopped answering, or failed (once, with a clear reason):
    :class:`StoreUnavailable` closes with ``urlunify_store_unavailable``, any other store error
    (:class:`StoreError`, an ``OSError`` writing a JOBDIR file) with ``urlunify_store_error``."""
    if crawler is None or getattr(crawler, "_urlunify_store_failed", False):
        return
    crawler._urlunify_store_failed = True  # type: ignore[attr-defined]
    if isinstance(error, StoreUnavailable):
        reason, what, stat = CLOSE_REASON, "is unavailable", "store_unavailable"
    else:
        reason, what, stat = ERROR_REASON, "failed", "store_error"
    logger.error(
        "scrapy-urlunify: the store %s (%s); closing the crawl (reason %r). Nothing was "
        "counted as seen from then on: resume the job once the store is fixed.",
        what,
        error,
        reason,
    )
    _stats(crawler).set(stat, 1)
    engine = getattr(crawler, "engine", None)
    if engine is not None:
        from scrapy.utils.defer import deferred_from_coro

        deferred_from_coro(engine.close_spider_async(reason=reason))


def guarded(
    crawler: Crawler | None,
    call: Callable[[], T],
    default: T,
    failed: Callable[[Exception], None] | None = None,
) -> T:
    """``call()``'s answer; ``default`` when the crawl's store has failed already (no call is
    made: each would wait for a reply timeout again) or fails now, which closes the crawl with
    a reason naming the cause (:func:`store_unavailable`, or ``failed``, a caller's handler that
    calls it). The one guard of every store call whose failure the crawl survives until it
    closes."""
    if store_failed(crawler):
        return default
    try:
        return call()
    except STORE_FAULTS as e:
        if failed is None:
            store_unavailable(crawler, e)
        else:
            failed(e)
        return default


def scrapy_scheduler(crawler: Crawler) -> bool:
    """Whether the crawl's ``SCHEDULER`` is Scrapy's (or a subclass): its stats count what its
    queues took and gave back (``scheduler/enqueued``, ``scheduler/dequeued``)."""
    scheduler = load_object(crawler.settings["SCHEDULER"])
    return isinstance(scheduler, type) and issubclass(scheduler, Scheduler)


def queue_losses(crawler: Crawler, admitted: int, *, emptied: bool) -> int:
    """Requests Scrapy's scheduler lost of the ``admitted`` ones the dupefilter let into it in
    this run. Its disk queue (``JOBDIR/requests.queue``) writes through a buffer: a full disk
    fails a later push, or a pop that flushes it, and the request is gone, its error only in the
    asyncio log ("Task exception was never retrieved"), while the crawl goes on to "finished".
    A request it took is counted ``scheduler/enqueued``, one it gave back ``scheduler/dequeued``;
    ``emptied``: the scheduler has given back everything it held, and held nothing at the start
    (no saved queue was resumed), so every admitted request was given back."""
    stats = crawler.stats
    if stats is None:
        return 0
    counted = stats.get_value("scheduler/dequeued" if emptied else "scheduler/enqueued", 0)
    return max(0, admitted - int(counted or 0))


def _stats(crawler: Crawler) -> UnifyStats:
    return UnifyContext.of(crawler).stats
