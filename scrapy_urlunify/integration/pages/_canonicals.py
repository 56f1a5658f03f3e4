"""Declared canonicals (``URLUNIFY_CANONICALS``): a ``<link rel="canonical">`` or ``Link: <...>;
rel="canonical"`` inside the same site is trusted only once the site's canonicals proved true:
``PROBATION`` (5) verified by fetching their target (the same signature, or a near-duplicate),
and a site's canonicals are ignored once more than ``MAX_CONTRADICTED`` (a fifth) of at least
five checked were other pages (``_declared.SiteVerdicts``; docs/learning.md, "Declared
canonicals on probation"). Every claim checked is told to ``checked`` (the learning session: pairs of one
shape teach a form rule, ``learning/_url_forms.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.integration.pages._declared import SiteVerdicts, declared_href, declared_url
from scrapy_urlunify.integration.rules._fetched import Recent
from scrapy_urlunify.learning._near_duplicates import distance

#: claims of one canonical kept besides its last, for the pages that claimed it first (a page,
#: then its duplicate spellings, each claiming it again)
EARLIER_CLAIMS = 4

#: a claim on probation as it is released: ``(URL, identifier, identity host, learner's
#: signature, evidence, claimer)``
Released = tuple[str, str, str, bytes, bool, str]

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.http import TextResponse

    from scrapy_urlunify.core._unify import Unifier
    from scrapy_urlunify.integration.crawl._stats import UnifyStats


class Canonicals:
    """The declared canonicals of a crawl's pages: claims awaiting their target, and the
    verdict of each site."""

    def __init__(
        self,
        stats: UnifyStats,
        granularity: str,
        near_distance: int | None = None,
        checked: Callable[[str, str, bool], None] | None = None,
    ) -> None:
        self.stats = stats
        #: told ``(page URL, canonical URL, same page)`` of every claim checked
        self.checked = checked
        #: what a site is (``URLUNIFY_SIGNATURE_GRANULARITY``): canonicals never cross one
        self.granularity = granularity
        #: fingerprints at most this many bits apart are the same page (None: signatures only)
        self.near_distance = near_distance
        #: identifier of a page -> the canonical it declares, shown to be the same page (its
        #: target fetched before it, or the site's canonicals trusted)
        self.true_claims: Recent[str] = Recent()
        self._recent: Recent[tuple[bytes, int | None]] = (
            Recent()
        )  # identifier -> signature, fingerprint
        # signature -> fingerprint: an exact duplicate gets none of its own (nothing nearer to
        # find), and is its original's page, fingerprint included
        self._fingerprints: Recent[int] = Recent()
        # canonical id -> (signature, fingerprint, claimer, site, what it is released as, the
        # claimer's identifier)
        self._claims: Recent[tuple[bytes, int | None, str, str, Released, str]] = Recent()
        # canonical id -> the claims it replaced there, (signature, fingerprint, claimer's
        # identifier, canonical): a duplicate page claiming it again must not leave the first
        # claimer's items unchecked (at most EARLIER_CLAIMS a canonical)
        self._earlier: Recent[list[tuple[bytes, int | None, str, str]]] = Recent()
        # canonical id -> (signature, fingerprint) of the first page that declared it once its
        # site was trusted: the page it obtained, never fetched under its own URL
        self._obtained: Recent[tuple[bytes, int | None]] = Recent()
        self.verdicts = SiteVerdicts(stats, "canonical")
        #: claims made before their site was trusted, released when it was (:meth:`release`)
        self._released: list[Released] = []
        #: whether the page :meth:`declared` was last asked about named no other page canonical
        self.names_itself = True
        #: the canonical that page declared when the rules in force make it that page (its own
        #: URL, ``/index.php?id=7`` as ``/?id=7``, a form's target): its citation, no claim
        self.one_with: str | None = None

    def fetched(self, identifier: str, sig: bytes, url: str, near_sig: int | None = None) -> None:
        """A page was fetched (``near_sig``: its near-duplicate signature, if any): the claims that
        named it canonical are checked."""
        near_sig = self.fingerprint(sig, near_sig)
        self._recent.remember(identifier, (sig, near_sig))
        for claimed, claimed_fp, claimer_id, canonical in self._earlier.pop(identifier, ()):
            if self.same(claimed, claimed_fp, sig, near_sig):
                self.true_claims.remember(claimer_id, canonical)
        claim = self._claims.pop(identifier, None)
        if claim is not None:
            claimed, claimed_fp, claimer, site, released, claimer_id = claim
            same = self.same(claimed, claimed_fp, sig, near_sig)
            if same:  # the citation of the claimer's items (integration/pages/_citation_hold.py)
                self.true_claims.remember(claimer_id, released[0])
            self._verify(site, same, url, claimer)

    def awaits(self, target: str) -> bool:
        """Whether a claim on probation awaits the fetch of ``target`` (an identifier)."""
        return target in self._claims

    def declared(
        self, response: TextResponse, identifier: str, site: str, unifier: Unifier
    ) -> tuple[str, str, str] | None:
        """The canonical ``response`` declares, as ``(URL, identifier, identity host)``: another
        page of its site (proved or not); None without one. :attr:`names_itself` then says
        whether the page named no canonical, or itself (not a page a form rule may take)."""
        self.names_itself = True
        self.one_with = None
        try:
            found = declared_url(response, "canonical", unifier, self.granularity)
        except InvalidURL:
            self.stats.inc("canonical/invalid")
            return None
        if found is None:
            return None
        url, target, identity_host, its_site = found
        # (the same identifier under a rule in force is another page named: not itself)
        self.names_itself = url == unifier.standardize(response.url)
        if target == identifier:
            self.one_with = url
            return None
        if its_site != site:
            self.stats.inc("canonical/other_site")  # never across sites
            return None
        return url, target, identity_host

    def trusted(
        self,
        response: TextResponse,
        declared: tuple[str, str, str],
        identifier: str,
        site: str,
        sig: bytes,
        near_sig: int | None,
        learn: tuple[bytes, bool],
    ) -> tuple[str, str, str] | None:
        """The canonical ``response`` declares (:meth:`declared`), as ``(URL, identifier,
        identity host)``, once the site's canonicals have proven true (it is then the same page
        as ``response``); None before. The first ``PROBATION`` are checked by
        fetching their target, and too many targets with other content make the crawl ignore
        that site's canonicals. ``learn``: the signature the learner knows the page by, and
        whether it is evidence (kept with a claim on probation, for :meth:`release`)."""
        url, target, _ = declared
        if site in self.verdicts.ignored:
            self.stats.inc("canonical/ignored")
            return None
        near_sig = self.fingerprint(sig, near_sig)
        known = self._recent.get(target)
        if known is not None:  # the target was fetched already: the claim is checked now
            same = self.same(sig, near_sig, *known)
            self._verify(site, same, url, response.url)
            if same:
                self.true_claims.remember(identifier, url)
            return None
        obtained = self._obtained.get(target)
        if obtained is not None and self.same(sig, near_sig, *obtained):
            # a second page with the text of the one that obtained it: both are that page
            # (``/shop/hats/cap`` after ``/?p=17``, both naming ``/product/cap``), a pair for
            # the form learner though the target itself is never fetched; with another text
            # one of the two is wrong, and which is not known: no pair, no verdict
            if self.checked is not None:
                self.checked(response.url, url, True)
            self.true_claims.remember(identifier, url)
            return declared
        released = (url, target, declared[2], *learn, response.url)
        replaced = self._claims.get(target)
        if replaced is not None and replaced[5] != identifier:
            earlier = self._earlier.get(target) or []
            earlier = [*earlier, (replaced[0], replaced[1], replaced[5], replaced[4][0])]
            self._earlier.remember(target, earlier[-EARLIER_CLAIMS:])
        self._claims.remember(target, (sig, near_sig, response.url, site, released, identifier))
        if not self.verdicts.trusted(site):
            self.stats.inc("canonical/on_probation")  # its target is fetched, and checks it
            return None
        if obtained is None:
            self._obtained.remember(target, (sig, near_sig))
        self.true_claims.remember(identifier, url)
        return declared

    def fingerprint(self, sig: bytes, near_sig: int | None) -> int | None:
        """``near_sig``, remembered for ``sig``; for a page without one (an exact duplicate), the
        fingerprint of the page it duplicates, if known."""
        key = sig.hex()
        if near_sig is None:
            return self._fingerprints.get(key)
        self._fingerprints.remember(key, near_sig)
        return near_sig

    def page_of(self, identifier: str) -> tuple[bytes, int | None] | None:
        """The signature and fingerprint of the page fetched lately under ``identifier``."""
        return self._recent.get(identifier)

    def same(
        self, sig: bytes, near_sig: int | None, other_sig: bytes, other_near_sig: int | None
    ) -> bool:
        """Whether two pages are one: the same signature, or near-duplicates."""
        if sig == other_sig:
            return True
        if self.near_distance is None or near_sig is None or other_near_sig is None:
            return False
        if distance(near_sig, other_near_sig) > self.near_distance:
            return False
        self.stats.inc("canonical/near_duplicates")
        return True

    def _verify(self, site: str, same: bool, canonical: str, claimer: str) -> None:
        if self.checked is not None:
            self.checked(claimer, canonical, same)
        if self.verdicts.verify(site, same, canonical, claimer):
            # the claims that waited for their target are as true as the next ones: their
            # targets count as obtained now, not fetched when their links come out of the queue
            for target, claim in self._claims.items():
                if claim[3] == site:
                    self._released.append(claim[4])
                    if target not in self._obtained:
                        self._obtained.remember(target, claim[:2])

    def release(self) -> list[Released]:
        """The claims on probation of the sites trusted since the last call, as ``(URL,
        identifier, identity host, learner's signature, evidence, claimer)``: their targets
        are obtained, as those of the claims made once a site is trusted."""
        released, self._released = self._released, []
        return released


def canonical_href(response: TextResponse) -> str | None:
    """The canonical URL a response declares (``_declared.declared_href``)."""
    return declared_href(response, "canonical")
