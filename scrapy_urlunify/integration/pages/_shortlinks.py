"""Declared shortlinks (``URLUNIFY_CANONICALS``): a ``<link rel="shortlink">`` or ``Link: <...>;
rel=shortlink`` names another URL of the page itself (WordPress's ``/?p=17``, Drupal's
``/node/17``). Inside the same site, once the site's shortlinks proved true (``PROBATION``
of them fetched and found the page that declared them, or a redirect to it), the shortlink of
every page fetched counts as seen: a link to it is not fetched again (docs/learning.md,
"Declared shortlinks on probation").

A site's first claims are checked by fetching their shortlink ahead of every request (at most
``PROBES`` per site, no more at once than the verdicts it still wants; a shortlink is seldom
linked), like any page: a true one is a duplicate page or a redirect to a page seen, a false
one a page the spider gets (a probe is never held back by the frontier). Only a fetch checks a
site, and only a shortlink's first claim: once a shortlink was shown to be a page, another page
that claims it with other text (WordPress declares a post's on each of its comment pages) is a
conflict, and the shortlink stays the first page's. Every claim compared with the page a
shortlink was shown to be is told to ``checked`` (the learning session:
``/?post_type=product&p={id}`` is ``/?p={id}``, a form rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from scrapy import Request

from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.integration.crawl._meta import PROBE_META
from scrapy_urlunify.integration.pages._declared import SiteVerdicts, declared_url
from scrapy_urlunify.integration.rules._fetched import Recent

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


class _Claim(NamedTuple):
    """A page's claim that ``url`` (identifier ``key``) shows it."""

    sig: bytes
    near_sig: int | None
    claimer: str
    claimer_id: str
    site: str
    url: str
    key: str


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
        # site -> the shortlinks fetched to check it whose verdict has not come yet
        self._probing: dict[str, set[str]] = {}
        # shortlink identifier (or, once it redirected, its target's) -> its first claim
        self._claims: Recent[_Claim] = Recent()
        # shortlink identifier -> (signature, fingerprint) of the page it was shown to be (a
        # claim found true) or recorded for (a trusted site's claim): later claims of it are
        # compared with that page, a conflict when another (never a verdict on the site)
        self._settled: Recent[tuple[bytes, int | None]] = Recent()
        # shortlink identifier -> the other pages that claimed it, with the same text as its
        # claim: told to ``checked`` with the claim's verdict
        self._agreeing: Recent[list[str]] = Recent()

    def fetched(self, identifier: str, sig: bytes, near_sig: int | None) -> None:
        """A page was fetched: the claim that named its URL a shortlink, if any, is checked."""
        claim = self._claims.pop(identifier, None)
        if claim is not None:
            near_sig = self.canonicals.fingerprint(sig, near_sig)
            self._verify(claim, self.canonicals.same(claim.sig, claim.near_sig, sig, near_sig))

    def redirected(self, source: str, target: str) -> None:
        """A request for ``source`` was redirected to ``target`` (WordPress answers a
        shortlink so): the claim that named ``source`` a shortlink is checked, true when
        ``target`` is the claimer's page (or, not fetched yet, when it is fetched)."""
        if not self._claims:
            return  # (every redirect of the crawl comes here)
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
        if to == claim.claimer_id:
            same = True
        else:
            known = self.canonicals.page_of(to)
            if known is None:
                self._claims.remember(to, claim)  # checked when the target is fetched
                return
            same = self.canonicals.same(claim.sig, claim.near_sig, *known)
        self._verify(claim, same)

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
        try:
            found = declared_url(response, "shortlink", unifier, self.granularity)
        except InvalidURL:
            self.stats.inc("shortlink/invalid")
            return
        if found is None:
            return
        url, target, _, its_site = found
        if target == identifier:
            # fetched under its shortlink (or a URL a rule merges with it): the page it shows
            if target not in self._settled:
                self._settled.remember(target, (sig, self.canonicals.fingerprint(sig, near_sig)))
            return
        if its_site != site:
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
        claim = _Claim(sig, near_sig, response.url, identifier, site, url, target)
        fetched = self.canonicals.page_of(target)
        if fetched is not None:  # the shortlink was fetched before: the claim is checked now
            self._verify(claim, self.canonicals.same(sig, near_sig, *fetched))
            return
        pending = self._claims.get(target)
        if pending is not None:  # checked, with its first claim, by its fetch
            if self.canonicals.same(sig, near_sig, pending.sig, pending.near_sig):
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
        self._record(claim)

    def _probe(self, site: str, url: str) -> None:
        """Fetch ``url``, a shortlink claimed on ``site``, next: its check."""
        engine = self.crawler.engine if self.crawler is not None else None
        probes = self._probes.get(site, 0)
        probing = self._probing.setdefault(site, set())
        # no more at once than verdicts still wanted: the rest would be pages fetched twice
        if engine is None or probes >= PROBES or len(probing) >= self.verdicts.wanted(site):
            return
        self._probes[site] = probes + 1
        probing.add(url)
        self.stats.inc("shortlink/probes")
        engine.crawl(Request(url, priority=self.priority, meta={PROBE_META: True}))

    def _verify(self, claim: _Claim, same: bool) -> None:
        """The first claim of a shortlink was checked."""
        self._probing.get(claim.site, set()).discard(claim.url)
        self._told(claim.key, claim.url, same, claim.claimer)
        if same:
            self._settled.remember(claim.key, (claim.sig, claim.near_sig))
        if not self.verdicts.verify(claim.site, same, claim.url, claim.claimer):
            return
        # trusted now: the shortlinks claimed meanwhile are recorded too
        for waiting, other in list(self._claims.items()):
            if other.site == claim.site:
                del self._claims[waiting]
                self._record(other)

    def _record(self, claim: _Claim) -> None:
        """A trusted shortlink is the page of ``claim``: counted as seen and as obtained."""
        self._settled.remember(claim.key, (claim.sig, claim.near_sig))
        self._told(claim.key, claim.url, True)
        if self.seen is not None and self.seen.record_url(claim.url):
            self.stats.inc("shortlink/recorded")
        if self.learning is not None:
            self.learning.obtained(claim.url, claim.key, claim.sig)

    def _told(self, target: str, shortlink: str, same: bool, *claimers: str) -> None:
        """``checked`` hears the verdict on the claims of ``shortlink`` (``target`` its
        identifier): ``claimers``' and those that agreed with the first."""
        agreeing = self._agreeing.pop(target, [])
        if self.checked is not None:
            for claimer in (*claimers, *agreeing):
                self.checked(claimer, shortlink, same)
