"""The plugin's stats: every ``urlunify/...`` key goes through one object per crawler, counted
locally and written to Scrapy's stats collector in batches (docs/stats.md lists them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals

from scrapy_urlunify.integration.crawl._internals import flush_before_reads

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


STATS_PREFIX = "urlunify/"


class UnifyStats:
    """The plugin's stats: every ``urlunify/...`` key (and the Scrapy keys the plugin counts in
    Scrapy's place, such as ``dupefilter/filtered``) is written through here.

    Counters are kept in a local dict and added to the crawler's stats collector in batches:
    a collector call is costly in Scrapy 2.19 (its ``__getattribute__`` hook), and the link
    middleware counts two or three things per link. The batch is written whenever anybody
    reads the stats (``get_value``, ``get_stats``: ``LOGSTATS`` ticks, the close summary, a
    test), at ``spider_closed`` and before the collector closes, so every key still appears
    wherever Scrapy's stats are looked at.
    """

    def __init__(self, crawler: Crawler | None) -> None:
        self.crawler = crawler
        self._pending: dict[str, int] = {}
        self._hooked: Any = None

    def inc(self, key: str, count: int = 1) -> None:
        """Add ``count`` to ``urlunify/<key>``."""
        key = STATS_PREFIX + key
        pending = self._pending
        pending[key] = pending.get(key, 0) + count

    def inc_scrapy(self, key: str, count: int = 1) -> None:
        """Add ``count`` to a key of Scrapy's own (``dupefilter/filtered``), counted here for a
        component the plugin stands in for."""
        pending = self._pending
        pending[key] = pending.get(key, 0) + count

    def set(self, key: str, value: Any) -> None:
        """Set ``urlunify/<key>`` to ``value`` now."""
        stats = self._collector()
        if stats is not None:
            stats.set_value(STATS_PREFIX + key, value)

    def flush(self) -> None:
        """Add the pending counts to the crawler's stats collector."""
        stats = self._collector()
        pending = self._pending
        if not pending or stats is None:
            return
        self._pending = {}
        for key, count in pending.items():
            stats.inc_value(key, count)

    def _collector(self) -> Any:
        crawler = self.crawler
        try:
            stats = crawler.stats if crawler is not None else None
        except RuntimeError:  # a crawler whose crawl has not started: no collector yet
            return None
        if stats is not None and self._hooked is not stats:
            self._hook(stats)
        return stats

    def _hook(self, stats: Any) -> None:
        """Make the collector write the pending counts before it is read or closed."""
        self._hooked = stats
        flush_before_reads(stats, self.flush)
        self.crawler.signals.connect(  # type: ignore[union-attr]
            self.flush,
            signal=signals.spider_closed,
        )
