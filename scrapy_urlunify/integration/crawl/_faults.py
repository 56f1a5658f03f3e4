"""What a store that fails does: it closes the crawl once, with a reason naming the cause
(``urlunify_store_unavailable``: Redis stopped answering for longer than
``URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT``; ``urlunify_store_error``: any other store error), and
nothing is counted as seen or recorded from then on, so a later resume loses nothing
(docs/reliability.md, "Stores that fail").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

from scrapy_urlunify.stores._base import StoreError, StoreUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._stats import UnifyStats

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: what a store call may raise that must close the crawl (OSError: a JOBDIR write, disk full)
STORE_FAULTS: tuple[type[Exception], ...] = (StoreError, OSError)

CLOSE_REASON = "urlunify_store_unavailable"
ERROR_REASON = "urlunify_store_error"


class StoreFaults:
    """Whether the crawl's stores gave up, and what a store that fails does: it closes the crawl,
    once, with a reason naming the cause."""

    def __init__(self, crawler: Crawler | None, stats: UnifyStats) -> None:
        self.crawler = crawler
        self.stats = stats
        #: a store failed: the crawl is closing, and components stop calling the stores (each
        #: call would wait for a reply timeout again); nothing more is recorded as done
        self.failed = False
        #: a JOBDIR file could not be written (a full disk), whichever store's: the job is not
        #: closed cleanly, and no request is marked done from then on, so the next run fetches
        #: again every page whose links, kept requests or records may be missing
        self.jobdir_failed = False

    def unavailable(self, error: Exception) -> None:
        """Close the crawl because a store stopped answering, or failed (once, with a clear
        reason): :class:`StoreUnavailable` closes with ``urlunify_store_unavailable``, any other
        store error (:class:`StoreError`, an ``OSError`` writing a JOBDIR file) with
        ``urlunify_store_error``."""
        if isinstance(error, OSError):
            self.jobdir_failed = True
        if self.failed:
            return
        self.failed = True
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
        self.stats.set(stat, 1)
        try:
            engine = getattr(self.crawler, "engine", None)
        except RuntimeError:  # Scrapy 2.13+: no engine before the crawl starts
            engine = None
        if engine is not None:
            from scrapy.utils.defer import deferred_from_coro

            deferred_from_coro(engine.close_spider_async(reason=reason))

    def guarded(
        self,
        call: Callable[[], T],
        default: T,
        failed: Callable[[Exception], None] | None = None,
    ) -> T:
        """``call()``'s answer; ``default`` when a store has failed already (no call is made) or
        fails now, which closes the crawl (:meth:`unavailable`, or ``failed``, a caller's handler
        that calls it). The one guard of every store call whose failure the crawl survives until
        it closes."""
        if self.failed:
            return default
        try:
            return call()
        except STORE_FAULTS as e:
            if failed is None:
                self.unavailable(e)
            else:
                failed(e)
            return default

    def count_outages(self, store: Any) -> None:
        """Add a Redis store's ``retries`` and ``outages`` to the crawl's stats (at close)."""
        if not hasattr(store, "retries"):
            return
        stats = self.stats
        stats.inc("redis/retries", store.retries)
        stats.inc("redis/outages", store.outages)
        if getattr(store, "data_lost", 0):
            stats.inc("redis/data_lost", store.data_lost)
        if hasattr(store, "round_trips"):
            stats.inc("redis/seen_round_trips", store.round_trips)
        if getattr(store, "converted", 0):
            stats.inc("redis/seen_hashtables", store.converted)
