"""Declared shortlinks (``URLUNIFY_CANONICALS``): a ``<link rel="shortlink">`` or ``Link: <...>;
rel=shortlink`` names another URL of the page itself (WordPress's ``/?p=17``, Drupal's
``/node/17``). Inside the same site, once the site's shortlinks proved true (``PROBATION``
of them fetched and found the page that declared them, or a redirect to it), the shortlink of
every page fetched counts as seen: a link to it is not fetched again (docs/learning.md,
"Declared shortlinks on probation").

A site's first claims are checked by fetching their shortlink ahead of every request (at most
``PROBES`` per site; a shortlink is seldom linked), like any page: a true one is a duplicate
page or a redirect to a page seen, a false one a page the spider gets (a probe is never held
back by the frontier). Only a fetch checks a site, and only a shortlink's first claim: once a
shortlink was shown to be a page, another page that claims it with other text (WordPress
declares a post's on each of its comment pages) is a conflict, and the shortlink stays the
first page's. Every claim compared with the page a shortlink was shown to be is told to
``checked`` (the learning session: ``/?post_type=product&p={id}`` is ``/?p={id}``, a form rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request

from scrapy_urlunify.core._url import InvalidURL, host_of
from scrapy_urlunify.integration.crawl._meta import PROBE_META
from scrapy_urlunify.integration.pages._declared import SiteVerdicts, declared_href
from scrapy_urlunify.integration.rules._fetched import Recent
from scrapy_urlunify.learning._page_signature import site_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.http import TextResponse

    from scrapy_urlunify.core._unify import Unifier
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.pages._canonicals import Canonicals
    from scrapy_urlunify.integration.rules._session import LearningSession
    from scrapy_urlunify.integration.seen._seen import SeenKeys

#: a claim awaiting its shortlink's fetch: (signature, fingerprint, claimer URL, claimer
#: identifier, site, shortlink URL)
_Claim = tuple[bytes, "int | None", str, str, str, str]
#: shortlinks of a site fetched to check its claims (twice what trusts it: some fail)
PROBES = 10
#: pages that claimed a pending shortlink with its first claim's text, kept per shortlink
AGREEING = 4


class Shortlinks:
    """The declared shortlinks of a crawl's pages: claims awaiting a fetch of their shortlink,
    the verdict of each site, and the page each trusted shortlink was recorded for."""

    def __init__(
        self,
        stats: UnifyStats,
        granularity: str,
        canonicals: Canonicals,
        policies: CrawlPolicies,
        *,
        seen: SeenKeys | None,
        learning: LearningSession | None,
        checked: Callable[[str, str, bool], None] | None = None,
        crawler: Crawler | None = None,
        priority: int = 0,
    ) -> None:
        self.stats = stats
        #: what a site is (``URLUNIFY_SIGNATURE_GRANULARITY``): shortlinks never cross one
        self.granularity = granularity
        #: the pages fetched lately, and what "one page" means (the canonicals' own)
        self.canonicals = canonicals
        self.policies = policies
        self.seen = seen
        self.learning = learning
        #: told ``(page URL, shortlink, same page)`` of every claim compared with a known page
        self.checked = checked
        self.verdicts = SiteVerdicts(stats, "shortlink")
        #: the crawl a shortlink is fetched in, to check it, with this priority
        self.crawler = crawler
        self.priority = priority
        self._probes: dict[str, int] = {}  # site -> its shortlinks fetched to check them
        self._claims: Recent[_Claim] = Recent()  # shortlink identifier -> a claim of it
        # shortlink identifier -> (signature, fingerprint) of the page it was shown to be (a
        # claim found true) or recorded for (a trusted site's claim): later claims of it are
        # compared with that page, a conflict when another (never a verdict on the site)
        self._settled: Recent[tuple[bytes, int | None]] = Recent()
        # shortlink identifier -> the other pages that claimed it, with the same text as its
        # claim: told to ``checked`` with the claim's verdict
        self._agreeing: Recent[list[str]] = Recent()

    def fetched(self, identifier: str, sig: bytes, near_sig: int | None, url: str) -> None:
        """A page was fetched: the claim that named its URL a shortlink, if any, is checked."""
        claim = self._claims.pop(identifier, None)
        if claim is not None:
            claimed, claimed_fp, claimer, _, site, shortlink = claim
            near_sig = self.canonicals.fingerprint(sig, near_sig)
            same = self.canonicals.same(claimed, claimed_fp, sig, near_sig)
            # (a claim whose shortlink redirected waits under its target's identifier)
            target = identifier if url == shortlink else self._identifier(shortlink, identifier)
            self._verify(site, same, shortlink, claimer, target, claim)

    def redirected(self, source: str, target: str) -> None:
        """A request for ``source`` was redirected to ``target`` (WordPress answers a
        shortlink so): the claim that named ``source`` a shortlink is checked, true when
        ``target`` is the claimer's page (or, not fetched yet, when it is fetched)."""
        unifier = self.policies.unifier
        try:
            key = unifier.identify(source)
            claim = self._claims.get(key)
            if claim is None:
                return
            to = unifier.identify(target)
        except InvalidURL:
            return
        del self._claims[key]
        if to == claim[3]:
            same = True
        else:
            known = self.canonicals.page_of(to)
            if known is None:
                self._claims.remember(to, claim)  # checked when the target is fetched
                return
            same = self.canonicals.same(claim[0], claim[1], *known)
        self._verify(claim[4], same, source, claim[2], key, claim)

    def declared(
        self,
        response: TextResponse,
        identifier: str,
        site: str,
        unifier: Unifier,
        sig: bytes,
        near_sig: int | None,
    ) -> None:
        """The shortlink ``response`` declares, if any: a claim to check, or (on a site whose
        shortlinks proved true) a URL of this page, counted as seen."""
        href = declared_href(response, "shortlink")
        if not href:
            return
        try:
            url = unifier.standardize(href, base=response.url)
            target = unifier.identify(url)
        except InvalidURL:
            self.stats.inc("shortlink/invalid")
            return
        if target == identifier:
            # fetched under its shortlink (or a URL a rule merges with it): the page it shows
            if target not in self._settled:
                self._settled.remember(target, (sig, self.canonicals.fingerprint(sig, near_sig)))
            return
        host = host_of(url)
        identity_host = unifier.host_rules(host).identity_host if host else ""
        if not host or site_key(identity_host, self.granularity) != site:
            self.stats.inc("shortlink/other_site")  # never across sites (wp.me)
            return
        if site in self.verdicts.ignored:
            self.stats.inc("shortlink/ignored")
            return
        near_sig = self.canonicals.fingerprint(sig, near_sig)
        settled = self._settled.get(target)
        if settled is not None:
            same = self.canonicals.same(sig, near_sig, *settled)
            if self.checked is not None:
                self.checked(response.url, url, same)
            if not same:
                self.stats.inc("shortlink/conflicts")
            return
        claim = (sig, near_sig, response.url, identifier, site, url)
        fetched = self.canonicals.page_of(target)
        if fetched is not None:  # the shortlink was fetched before: the claim is checked now
            same = self.canonicals.same(sig, near_sig, *fetched)
            self._verify(site, same, url, response.url, target, claim)
            return
        pending = self._claims.get(target)
        if pending is not None:  # checked, with its first claim, by its fetch
            if self.canonicals.same(sig, near_sig, pending[0], pending[1]):
                agreeing = self._agreeing.setdefault(target, [])
                if len(agreeing) < AGREEING:
                    agreeing.append(response.url)
            else:
                self.stats.inc("shortlink/conflicts")
            return
        if not self.verdicts.trusted(site):
            self._claims.remember(target, claim)
            self.stats.inc("shortlink/on_probation")  # a fetch of it checks it
            self._probe(site, url)
            return
        self._record(target, claim)

    def _identifier(self, url: str, default: str) -> str:
        try:
            return self.policies.unifier.identify(url)
        except InvalidURL:
            return default

    def _probe(self, site: str, url: str) -> None:
        """Fetch ``url``, a shortlink claimed on ``site``, next: its check."""
        engine = self.crawler.engine if self.crawler is not None else None
        probes = self._probes.get(site, 0)
        if engine is None or probes >= PROBES:
            return
        self._probes[site] = probes + 1
        self.stats.inc("shortlink/probes")
        engine.crawl(Request(url, priority=self.priority, meta={PROBE_META: True}))

    def _verify(
        self, site: str, same: bool, shortlink: str, claimer: str, target: str, claim: _Claim
    ) -> None:
        """The first claim of ``shortlink`` (``target`` its identifier) was checked."""
        self._told(target, shortlink, same, claimer)
        if same:
            self._settled.remember(target, (claim[0], claim[1]))
        if not self.verdicts.verify(site, same, shortlink, claimer):
            return
        # trusted now: the shortlinks claimed meanwhile are recorded too
        for claimed, claim in list(self._claims.items()):
            if claim[4] == site:
                del self._claims[claimed]
                self._record(claimed, claim)

    def _record(self, target: str, claim: _Claim) -> None:
        """A trusted shortlink (``target`` its identifier) is the page of ``claim``: counted as
        seen and as obtained."""
        sig, near_sig, url = claim[0], claim[1], claim[5]
        self._settled.remember(target, (sig, near_sig))
        self._told(target, url, True)
        if self.seen is not None and self.seen.record_url(url):
            self.stats.inc("shortlink/recorded")
        if self.learning is not None:
            self.learning.obtained(url, target, sig)

    def _told(self, target: str, shortlink: str, same: bool, *claimers: str) -> None:
        """``checked`` hears the verdict on the claims of ``shortlink`` (``target`` its
        identifier): ``claimers``' and those that agreed with the first."""
        agreeing = self._agreeing.pop(target, [])
        if self.checked is not None:
            for claimer in (*claimers, *agreeing):
                self.checked(claimer, shortlink, same)
