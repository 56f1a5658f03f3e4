"""The closing summary of a crawl: what the add-on filtered, rewrote and saved, logged once at
INFO when the spider closes (docs/stats.md); and, when it opens, what the store knew already."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals

from scrapy_urlunify.integration.crawl._stats import STATS_PREFIX
from scrapy_urlunify.stores.location import MEMORY, mask_url

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.rules._session import LearningSession
    from scrapy_urlunify.stores import SeenStore
    from scrapy_urlunify.stores.factory import Stores

logger = logging.getLogger("scrapy_urlunify")


class Summary:
    """The crawl's closing summary, from its stats (and the learned rules, as settings)."""

    def __init__(
        self,
        crawler: Crawler,
        stats: UnifyStats,
        scope: str | None,
        stores: Callable[[], Stores],
        seen_store: Callable[[], SeenStore | None],
        learning: Callable[[], LearningSession | None],
    ) -> None:
        self.crawler = crawler
        self.stats = stats
        self.scope = scope
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
        learning = self._learning()
        snippet = learning.settings_snippet() if learning is not None else None
        if snippet:
            logger.info(
                "scrapy-urlunify learned these rules; to keep them, add to the spider's "
                "settings:\n%s",
                snippet,
            )
        logger.info(
            "scrapy-urlunify summary (scope %r):\n%s", self.scope, format_summary(self.summary())
        )


def summarize(stats: dict[str, Any]) -> dict[str, Any]:
    """The numbers of the closing summary, from the crawl's stats. ``duplicates``: requests
    dropped as duplicates, whichever dupefilter dropped them (``dupefilter/filtered``); of those,
    ``same_url``: the URL the spider asked for had been requested already, what Scrapy's own
    dupefilter drops too (``urlunify/duplicates/same_url``; None when the dupefilter does not
    count it), and ``unified``: other spellings of a page, dropped only thanks to the
    unification. ``saved``: requests the add-on saved beyond plain Scrapy (filtered links plain
    Scrapy would have requested, and other spellings; exact repeats included when the dupefilter
    does not tell them apart)."""
    filtered = {
        k[len(STATS_PREFIX + "filtered/") :]: v
        for k, v in stats.items()
        if k.startswith(STATS_PREFIX + "filtered/")
    }
    duplicates = max(stats.get("dupefilter/filtered", 0), stats.get(STATS_PREFIX + "duplicates", 0))
    same_url = stats.get(STATS_PREFIX + "duplicates/same_url")
    unified = max(duplicates - same_url, 0) if same_url is not None else None
    fetched = stats.get("downloader/request_count", 0)
    # plain Scrapy never requests an on-page anchor (the page's own fingerprint) nor a
    # mailto: link (it refuses them): not saved by the add-on. The links of a nofollow page
    # are dropped before the seen check, so most are repeats plain Scrapy drops too: not
    # counted as saved either (the filtered line shows them)
    avoided = sum(
        n
        for reason, n in filtered.items()
        if reason not in ("anchor", "nofollow") and not reason.startswith("scheme:")
    )
    saved = avoided + (unified if unified is not None else duplicates)
    return {
        "links": stats.get(STATS_PREFIX + "links", 0),
        "filtered": filtered,
        "rewritten": stats.get(STATS_PREFIX + "rewritten", 0),
        "duplicates": duplicates,
        "same_url": same_url,
        "unified": unified,
        "signature_duplicates": stats.get(STATS_PREFIX + "signature/duplicates", 0),
        "seen_before": stats.get(STATS_PREFIX + "seen_before", 0),
        "fetched": fetched,
        "saved": saved,
        "saved_share": saved / (saved + fetched) if saved + fetched else 0.0,
    }


def format_summary(s: dict[str, Any]) -> str:
    """The closing summary's lines, from :meth:`Summary.summary`."""
    per_reason = ", ".join(f"{k} {v}" for k, v in sorted(s["filtered"].items())) or "none"
    if s["unified"] is not None:
        duplicates = (
            f"{s['duplicates']}: {s['same_url']} the same URL again (plain Scrapy drops these "
            f"too), {s['unified']} other spellings of a page"
        )
        saved = (
            f"{s['saved']} ({100 * s['saved_share']:.1f}% of the requests plain Scrapy would "
            "make): "
            "filtered links and other spellings of a page"
        )
    else:
        duplicates = (
            f"{s['duplicates']} (exact repeats and other spellings: the dupefilter does not count "
            "them apart)"
        )
        saved = (
            f"{s['saved']} ({100 * s['saved_share']:.1f}% of all requests), counting the exact "
            "repeats "
            "plain Scrapy drops too"
        )
    lines = [
        f"  links seen          {s['links']}",
        f"  filtered            {sum(s['filtered'].values())} ({per_reason})",
        f"  rewritten           {s['rewritten']}",
        f"  duplicates filtered {duplicates}",
        (
            f"  duplicate pages     {s['signature_duplicates']} (fetched, the page signature of "
            "another page)"
        ),
        f"  requests fetched    {s['fetched']}",
        f"  requests saved      {saved}",
    ]
    if s["seen_before"]:
        lines.append(
            f"  seen before this run {s['seen_before']} (in the store when the crawl started: not "
            "fetched again)"
        )
    return "\n".join(lines)
