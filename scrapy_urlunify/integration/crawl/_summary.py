"""The closing summary of a crawl: what the add-on filtered, rewrote and saved, logged once at
INFO when the spider closes (docs/stats.md); and, when it opens, what the store knew already."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals

from scrapy_urlunify.integration.crawl._stats import STATS_PREFIX
from scrapy_urlunify.stores._location import MEMORY, mask_url

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._distinct import DistinctCount
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.rules._session import LearningSession
    from scrapy_urlunify.stores._base import SeenStore
    from scrapy_urlunify.stores._factory import Stores

logger = logging.getLogger("scrapy_urlunify")


class Summary:
    """The crawl's closing summary, from its stats (and the learned rules, as settings)."""

    def __init__(
        self,
        crawler: Crawler,
        stats: UnifyStats,
        scope: str | None,
        plain: DistinctCount,
        stores: Callable[[], Stores],
        seen_store: Callable[[], SeenStore | None],
        learning: Callable[[], LearningSession | None],
    ) -> None:
        self.crawler = crawler
        self.stats = stats
        self.scope = scope
        self.plain = plain
        # read when the spider opens and closes: built by then, or never needed
        self._stores = stores
        self._seen_store = seen_store
        self._learning = learning
        crawler.signals.connect(self._log_seen_before, signal=signals.spider_opened)
        crawler.signals.connect(self._log_summary, signal=signals.spider_closed)

    def _log_seen_before(self, spider: Any = None) -> None:
        """A run on a store that already holds the site fetches little: say so, once, at open."""
        store = self._seen_store()
        if store is None:
            return
        try:
            known = len(store)
        except Exception:  # a store that does not answer: its own errors say so
            return
        self.stats.set("seen_before", known)
        if known:
            stores = self._stores()
            location = "Redis" if stores is not None and stores.location == MEMORY else None
            where = (
                f"{location or mask_url(stores.location)}, scope {stores.scope!r}"
                if stores is not None and stores.in_redis
                else f"JOBDIR {stores.jobdir}"
                if stores is not None and stores.jobdir is not None
                else "the seen store"
            )
            logger.info(
                "scrapy-urlunify: the store (%s) already knew %d requests from earlier runs: those "
                "are not fetched again (`scrapy urlunify store clear` forgets them)",
                where,
                known,
            )

    def summary(self) -> dict[str, Any]:
        """The numbers of the closing summary (:func:`summarize`)."""
        return summarize(self.crawler.stats.get_stats() if self.crawler.stats is not None else {})

    def _log_summary(self, spider: Any = None, reason: str = "") -> None:
        if len(self.plain):  # the links met (none without the link middleware)
            self.stats.set("plain_requests", len(self.plain))
        learning = self._learning()
        snippet = learning.settings_snippet() if learning is not None else None
        if snippet:
            logger.info(
                "scrapy-urlunify learned these rules; to keep them, add to the spider's "
                "settings:\n%s",
                snippet,
            )
        hints = learning.hints_text() if learning is not None else None
        if hints:
            logger.info("scrapy-urlunify: %s", hints)
        logger.info(
            "scrapy-urlunify summary (scope %r):\n%s", self.scope, format_summary(self.summary())
        )


def summarize(stats: dict[str, Any]) -> dict[str, Any]:
    """The numbers of the closing summary, from the crawl's stats. ``duplicates``: requests
    dropped as duplicates, whichever dupefilter dropped them (``dupefilter/filtered``), and the
    queued requests dropped as they left the queue (``dequeued``: a rule learned meanwhile, or a
    trusted declared canonical, says their page was fetched; ``urlunify/dropped_at_dequeue``);
    ``plain``: the requests plain Scrapy would have made for the links the crawl met (an
    estimate, ``urlunify/plain_requests``; None without it), and ``saved`` what the add-on saved
    beyond it: those requests less the ones it made."""
    prefix = STATS_PREFIX + "filtered/"
    filtered = {k[len(prefix) :]: v for k, v in stats.items() if k.startswith(prefix)}
    fetched = stats.get("downloader/request_count", 0)
    plain = stats.get(STATS_PREFIX + "plain_requests") or None
    saved = max(plain - fetched, 0) if plain is not None else None

    def stat(key: str) -> int:
        return int(stats.get(STATS_PREFIX + key, 0))

    return {
        "links": stat("links"),
        "filtered": filtered,
        "rewritten": stat("rewritten"),
        "duplicates": max(stats.get("dupefilter/filtered", 0), stat("duplicates"))
        + stat("dropped_at_dequeue"),
        "dequeued": stat("dropped_at_dequeue"),
        "duplicate_pages": stat("signature/duplicates"),
        "duplicates_followed": stat("signature/duplicates_followed"),
        "near_duplicate_pages": stat("signature/near_duplicates"),
        "dropped_items": stat("signature/dropped_items"),
        "dropped_near_duplicate_items": stat("signature/dropped_near_duplicate_items"),
        "dropped_noindex_items": stat("signature/dropped_noindex_items"),
        "repeated_items": stat("unicity/duplicates"),
        "seen_before": stat("seen_before"),
        "fetched": fetched,
        "plain": plain,
        "saved": saved,
    }


def format_summary(s: dict[str, Any]) -> str:
    """The closing summary's lines, from :func:`summarize`."""
    per_reason = ", ".join(f"{k} {v}" for k, v in sorted(s["filtered"].items())) or "none"
    items = (
        s["dropped_items"]
        + s["dropped_near_duplicate_items"]
        + s["dropped_noindex_items"]
        + s["repeated_items"]
    )
    dequeued = f"; {s['dequeued']} as they left the queue" if s["dequeued"] else ""
    lines = [
        f"  links seen          {s['links']}",
        f"  filtered            {sum(s['filtered'].values())} ({per_reason})",
        f"  rewritten           {s['rewritten']}",
        (
            f"  duplicates filtered {s['duplicates']} (requests: the same page again, in any "
            f"spelling{dequeued})"
        ),
        (
            f"  duplicate pages     {s['duplicate_pages']} (fetched: the body text of another page"
            + (
                f"; {s['duplicates_followed']} of them linking other pages: their links followed)"
                if s["duplicates_followed"]
                else ")"
            )
        ),
        f"  near-duplicates     {s['near_duplicate_pages']} pages (fetched, their links followed)",
        (
            f"  items dropped       {items} ({s['dropped_items']} of duplicate pages, "
            f"{s['dropped_near_duplicate_items']} of near-duplicate pages, "
            f"{s['dropped_noindex_items']} of noindex pages, "
            f"{s['repeated_items']} repeating an item's URL)"
        ),
        f"  requests fetched    {s['fetched']}",
    ]
    if s["saved"] is not None:
        lines.append(
            f"  requests saved      at least about {s['saved']} beyond plain Scrapy: the "
            "distinct links this crawl met and did not fetch (plain Scrapy fetches them, and "
            "follows their own links too)"
        )
    if s["seen_before"]:
        lines.append(
            f"  seen before         {s['seen_before']} requests (in the store when the crawl "
            "started: not fetched again)"
        )
    return "\n".join(lines)
