"""Items whose page declares a canonical still on probation wait for that claim to be checked
before they are cited (docs/rules.md, "Canonical URLs"): a page fetched before its site's
canonicals were trusted would otherwise keep the spelling it was fetched under.

A claim is settled when its target is fetched (the same page or not), when its site's canonicals
become trusted (its claims are then as true as the next ones) or ignored, or when another page's
fetch of the target checked another claimer's claim (this one is then not shown true). Nothing
waits forever: an item is let go with the citation of its time when more pages wait than
:data:`HOLD_PAGES` (or their bodies weigh more than :data:`HOLD_SHARE` of the scraper's
``SCRAPER_SLOT_MAX_ACTIVE_SIZE``), and every item when the downloader has had nothing in flight
for a while (nothing still to come can settle a claim; a closing crawl waits for its items).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scrapy import signals
from twisted.internet import defer, task

from scrapy_urlunify.integration.crawl._internals import downloading

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs
    from scrapy_urlunify.integration.pages._canonicals import Canonicals

logger = logging.getLogger(__name__)

#: pages whose items wait at most (a site's canonicals may take a hundred pages to be trusted,
#: depth-first)
HOLD_PAGES = 128
#: the share of ``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` (5 MB by default) their bodies weigh at most: a
#: waiting item keeps its response in Scrapy's scraper, which stops downloading above it
HOLD_SHARE = 0.2
#: claims on probation remembered for items still to come (the oldest go first)
PENDING_LIMIT = 1_000
#: seconds between two looks at the downloader; items go on when it was idle at two looks in
#: a row (a gap between two requests is not a stall)
WATCH_SECONDS = 0.5


@dataclass
class _Pending:
    """A page's claim on probation: the page's identifier, the canonical it declares (its URL
    and identifier), its site, the page's body size, the policy the claim was last looked at
    under, and the items waiting."""

    identifier: str
    canonical: str
    target: str
    site: str
    size: int
    policy: object
    waiting: list[defer.Deferred[str]] = field(default_factory=list)


class CitationHold:
    """The items waiting for their page's claim (keyed by the page's URL)."""

    def __init__(
        self,
        crawler: Crawler | None,
        stats: UnifyStats,
        canonicals: Canonicals,
        canonical_urls: CanonicalURLs,
    ) -> None:
        self.crawler = crawler
        self.stats = stats
        self.canonicals = canonicals
        self.canonical_urls = canonical_urls
        self._pending: OrderedDict[str, _Pending] = OrderedDict()
        #: pages with items waiting (a subset of ``_pending``), and their bytes
        self._held: OrderedDict[str, None] = OrderedDict()
        self._held_bytes = 0
        self.hold_bytes = int(
            HOLD_SHARE
            * (crawler.settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE") if crawler else 5_000_000)
        )
        self._watch: task.LoopingCall | None = None
        #: whether the downloader was idle at the last look
        self._idle = False
        if crawler is not None:
            crawler.signals.connect(self._start, signal=signals.spider_opened)
            crawler.signals.connect(self._stop, signal=signals.spider_closed)

    def on_probation(
        self, url: str, identifier: str, declared: tuple[str, str, str], site: str, size: int
    ) -> None:
        """The page fetched as ``url`` declares a canonical on probation (``declared``: its URL,
        identifier and identity host)."""
        earlier = self._pending.get(url)
        if earlier is not None and earlier.waiting:  # fetched again while its items wait
            return
        policy = self.canonical_urls.policies.policy
        self._pending[url] = _Pending(identifier, declared[0], declared[1], site, size, policy)
        self._pending.move_to_end(url)
        while len(self._pending) > PENDING_LIMIT:
            old, entry = next(iter(self._pending.items()))
            if entry.waiting:
                self._let_go(old)
            else:
                del self._pending[old]

    def wait(self, url: str) -> defer.Deferred[str] | None:
        """A Deferred firing with the citation of the page fetched as ``url`` once its claim is
        settled (fired already when it is settled now); None when it is not on probation."""
        entry = self._pending.get(url)
        if entry is None:
            return None
        cited = self._settles(url, entry)
        if cited is not None:
            return defer.succeed(cited)
        waiting: defer.Deferred[str] = defer.Deferred()
        entry.waiting.append(waiting)
        self.stats.inc("canonical/held_items")
        if url not in self._held:
            self._held[url] = None
            self._held_bytes += entry.size
            while len(self._held) > HOLD_PAGES or (
                self._held_bytes > self.hold_bytes and len(self._held) > 1
            ):
                self._let_go(next(iter(self._held)))
        return waiting

    def settle(self) -> None:
        """Settle the claims of the pages with items waiting whose check came (after each page
        checked)."""
        for url in list(self._held):
            self._settles(url, self._pending[url])

    def _settles(self, url: str, entry: _Pending) -> str | None:
        """The citation of the page of ``entry`` when its claim is settled, its items released;
        None while it is not. A claim is true once the canonical was fetched with the page's
        text, or the site's canonicals trusted; not shown true once the site's canonicals are
        ignored, or the canonical was fetched for another page's claim."""
        canonicals = self.canonicals
        verdicts = canonicals.verdicts
        if canonicals.true_claims.get(entry.identifier) == entry.canonical:
            true = True
        elif entry.site in verdicts.ignored:
            true = False
        elif verdicts.trusted(entry.site):
            true = True
        elif (cited := self._made_one(url, entry)) is not None:
            return self._release(url, cited)
        elif not canonicals.awaits(entry.target):
            true = False
        else:
            return None
        if true:
            self.canonical_urls.declared(entry.identifier, entry.canonical)
        return self._release(url, entry.canonical if true else None)

    def _made_one(self, url: str, entry: _Pending) -> str | None:
        """The declared canonical as the site spells it, when a rule learned since the claim was
        made (by the page itself, or later) makes it the page: its target, one identifier with
        the page now, is never fetched to check it. Looked at once per change of the rules."""
        policy = self.canonical_urls.policies.policy
        if entry.policy is policy:
            return None
        entry.policy = policy
        return self.canonical_urls.made_one(url, entry.canonical)

    def _let_go(self, url: str) -> None:
        """Items let go before their claim was settled: cited as of their time."""
        entry = self._pending.get(url)
        if entry is None:
            return
        cited = self._made_one(url, entry)
        if cited is not None:
            self._release(url, cited)
            return
        if entry.waiting:
            self.stats.inc("canonical/held_items_unsettled", len(entry.waiting))
            logger.debug(
                "Items of %s go on before its declared canonical %s was checked: cited by the "
                "crawl's rules",
                url,
                entry.canonical,
            )
        self._release(url, None)

    def _release(self, url: str, canonical: str | None) -> str:
        """Fire the items of ``url``'s page with its citation (``canonical``, else the
        spelling the crawl's rules make now), which is returned."""
        entry = self._pending.pop(url)
        if url in self._held:
            del self._held[url]
            self._held_bytes -= entry.size
        cited = canonical or self.canonical_urls.of(url) or url
        for waiting in entry.waiting:
            _fire_later(waiting.callback, cited)
        return cited

    def _start(self, spider: object = None) -> None:
        self._watch = task.LoopingCall(self._look)
        self._watch.start(WATCH_SECONDS, now=False)

    def _stop(self, spider: object = None, reason: str = "") -> None:
        if self._watch is not None and self._watch.running:
            self._watch.stop()
        for url in list(self._held):
            self._let_go(url)

    def _look(self) -> None:
        """Nothing in flight at two looks in a row: nothing still to come can settle a claim."""
        idle, self._idle = self._idle, self.crawler is not None and not downloading(self.crawler)
        if self._held and idle and self._idle:
            self.settle()
            for url in list(self._held):
                self._let_go(url)


def _fire_later(fire: Callable[[str], object], value: str) -> None:
    """Resume the item's pipelines in a reactor turn of their own, not inside the page check
    that settled its claim."""
    from twisted.internet import reactor

    task.deferLater(reactor, 0, fire, value)
