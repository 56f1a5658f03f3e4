"""What the plugin's Scrapy components of one crawler share: settings read once, the policy and
its unifier, and the summary logged when the crawl closes."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy import signals

from ..core.unify import Unifier, unifier_for
from . import settings as urlunify_settings
from .internals import flush_before_reads

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..core.policy import Policy

__all__ = ["STATS_PREFIX", "ItemOrigin", "ItemOrigins", "UnifyContext", "UnifyStats", "spider_name"]

logger = logging.getLogger("scrapy_urlunify")

STATS_PREFIX = "urlunify/"


def spider_name(crawler: Crawler) -> str | None:
    """The crawl's spider name: the instance's (``process.crawl(Spider, name="x")`` gives a
    name only to the instance), else the class's, else ``None`` (no spider created yet)."""
    name = getattr(getattr(crawler, "spider", None), "name", None)
    return name or getattr(crawler.spidercls, "name", None)


class ItemOrigin(NamedTuple):
    """The page an item came from: its identifier, and the page it duplicates (or None)."""

    identifier: str
    duplicate_of: str | None


class ItemOrigins(OrderedDict):  # type: ignore[type-arg]
    """``id(item) -> ItemOrigin``, bounded: an item dropped before the pipelines (by another
    component) must not leak its entry forever, so the oldest entries go first."""

    LIMIT = 100_000

    def add(self, item: Any, origin: ItemOrigin) -> None:
        self[id(item)] = origin
        if len(self) > self.LIMIT:
            self.popitem(last=False)


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
        self.crawler.signals.connect(self.flush, signal=signals.spider_closed)  # type: ignore[union-attr]


class UnifyContext:
    """Per-crawler state of scrapy-urlunify, created by the first component that needs it.

    The middleware, the fingerprinter, the dupefilter and the pipelines all call
    :meth:`of`, so settings are read (and validated) once, and every component agrees on one
    policy. ``unifier`` may be replaced during the crawl (learned rules); components read it
    from here on every call instead of keeping their own reference.
    """

    _ATTR = "_urlunify_context"

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        settings = crawler.settings
        #: every integration setting, checked (a bad one stops the crawl here, named)
        self.settings: dict[str, Any] = urlunify_settings.validate(settings)
        self.enabled: bool = self.settings["URLUNIFY_ENABLED"]
        self.rewrite: bool = self.settings["URLUNIFY_REWRITE"]
        spider = getattr(crawler, "spider", None)
        self.policy: Policy = urlunify_settings.policy_from_settings(settings, spider,
                                                                     spider_name=spider_name(crawler))
        #: the policy from the settings, before learned rules
        self.base_policy: Policy = self.policy
        self.unifier: Unifier = unifier_for(self.policy)
        #: the crawl's SignatureMiddleware, when enabled
        self.signatures: Any = None
        #: the crawl's stores (built on first use, see store_faults.crawl_stores)
        self.stores: Any = None
        #: id(item) -> ItemOrigin, from LinkMiddleware to SignaturePipeline (pipelines are
        #: not given the response an item came from)
        self.item_origins: ItemOrigins = ItemOrigins()
        #: the crawl's DupeFilter, once the scheduler has built it
        self.dupefilter: Any = None
        #: LinkMiddleware marks responses done for resumes (else the dupefilter does, earlier)
        self.marks_done = False
        self._summary_connected = False
        #: the plugin's stats (one place for every ``urlunify/...`` key)
        self.stats = UnifyStats(crawler)
        self.stats.flush()  # hooks the collector now, before anything reads it

    @classmethod
    def of(cls, crawler: Crawler) -> UnifyContext:
        ctx = getattr(crawler, cls._ATTR, None)
        if ctx is None:
            ctx = cls(crawler)
            setattr(crawler, cls._ATTR, ctx)
        else:
            ctx.stats.flush()  # hooks the collector if it did not exist yet
        return ctx

    @property
    def scope(self) -> str | None:
        return self.policy.scope

    def set_learned(self, ignore_params: dict[str, list[str]], aliases: list[list[str]],
                    path_prefixes: dict[str, list[str]] | None = None) -> None:
        """Apply learned rules on top of the settings' policy: parameters go to ``ignore_params``
        (identity only: fetched URLs keep them), mirror hosts to ``domain_aliases``, leading
        path segments to ``ignore_path_prefixes``."""
        base = self.base_policy
        prefixes: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_path_prefixes}
        for host, names in (path_prefixes or {}).items():
            prefixes.setdefault(host, []).extend(names)
        ignore: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_params}
        for host, names in ignore_params.items():
            ignore.setdefault(host, []).extend(names)
        groups = [list(g) for g in base.domain_aliases]
        for group in aliases:
            for alias in group[1:]:
                _add_alias(groups, canonical=group[0], alias=alias)
        self.policy = base.replace(ignore_params=ignore, domain_aliases=groups, ignore_path_prefixes=prefixes)
        self.unifier = unifier_for(self.policy)

    def inc(self, key: str, count: int = 1) -> None:
        """Add ``count`` to the stat ``urlunify/<key>`` (through :attr:`stats`)."""
        self.stats.inc(key, count)

    def connect_summary(self) -> None:
        """Log the crawl's summary at close (once, whichever component asks first)."""
        if not self._summary_connected:
            self.crawler.signals.connect(self._log_summary, signal=signals.spider_closed)
            self._summary_connected = True

    def summary(self) -> dict[str, Any]:
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        filtered = {k[len(STATS_PREFIX + "filtered/"):]: v for k, v in stats.items()
                    if k.startswith(STATS_PREFIX + "filtered/")}
        duplicates = stats.get(STATS_PREFIX + "duplicates", 0)
        signature_duplicates = stats.get(STATS_PREFIX + "signature/duplicates", 0)
        fetched = stats.get("downloader/request_count", 0)
        saved = sum(filtered.values()) + duplicates
        return {
            "links": stats.get(STATS_PREFIX + "links", 0),
            "filtered": filtered,
            "rewritten": stats.get(STATS_PREFIX + "rewritten", 0),
            "duplicates": duplicates,
            "signature_duplicates": signature_duplicates,
            "fetched": fetched,
            "saved": saved,
            "saved_share": saved / (saved + fetched) if saved + fetched else 0.0,
        }

    def _log_summary(self, spider: Any = None, reason: str = "") -> None:
        snippet = self.signatures.learned_snippet() if self.signatures is not None else None
        if snippet:
            logger.info("scrapy-urlunify learned these rules; to keep them, add to the spider's settings:\n%s", snippet)
        s = self.summary()
        per_reason = ", ".join(f"{k} {v}" for k, v in sorted(s["filtered"].items())) or "none"
        logger.info(
            "scrapy-urlunify summary (scope %r):\n"
            "  links seen          %d\n"
            "  filtered            %d (%s)\n"
            "  rewritten           %d\n"
            "  duplicates filtered %d (same identifier) + %d (same page signature)\n"
            "  requests fetched    %d\n"
            "  requests saved      %d (%.1f%% of all requests)",
            self.scope, s["links"], sum(s["filtered"].values()), per_reason, s["rewritten"],
            s["duplicates"], s["signature_duplicates"], s["fetched"], s["saved"], 100 * s["saved_share"],
        )


def _add_alias(groups: list[list[str]], canonical: str, alias: str) -> None:
    for group in groups:
        if alias in group:
            return  # already unified, one way or the other
    for group in groups:
        if canonical in group:
            group.append(alias)
            return
    groups.append([canonical, alias])
