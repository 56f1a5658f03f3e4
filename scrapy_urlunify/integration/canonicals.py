"""Declared canonicals (``URLUNIFY_CANONICALS``): a ``<link rel="canonical">`` or ``Link: <...>;
rel="canonical"`` inside the same site is trusted only once the site's canonicals proved true.

The first ``CANONICAL_PROBATION`` (5) declared canonicals of a site are checked by fetching their
target; once all were the same page, the site's canonicals are trusted (the canonical URL is
marked seen, its content was obtained, and is evidence for learning). A canonical whose own page
turns out different is a counter-example, logged at WARNING with both URLs, and the site's
canonicals are ignored for the rest of the crawl (a template declaring the section page
canonical for every article would otherwise hide the articles).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from scrapy.selector import Selector

from ..core.url import InvalidURL, host_of
from ..learning.page_signature import site_key
from .fetched import Recent

if TYPE_CHECKING:
    from scrapy.http import TextResponse

    from ..core.unify import Unifier
    from .stats import UnifyStats

__all__ = ["CANONICAL_PROBATION", "HEAD_LIMIT", "Canonicals", "canonical_href"]

logger = logging.getLogger(__name__)

#: bytes of a page searched for its ``<head>``'s end (a declared canonical is in the head)
HEAD_LIMIT = 256 * 1024
_HEAD_END = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
_CANONICAL_LINK = re.compile(r'<\s*([^>]*)>\s*;[^,]*\brel\s*=\s*"?canonical\b', re.IGNORECASE)
#: declared canonicals of a site verified (target fetched, same signature) before they are trusted
CANONICAL_PROBATION = 5


class Canonicals:
    """The declared canonicals of a crawl's pages: claims awaiting their target, and the
    verdict of each site."""

    def __init__(self, stats: UnifyStats, granularity: str) -> None:
        self.stats = stats
        #: what a site is (``URLUNIFY_SIGNATURE_GRANULARITY``): canonicals never cross one
        self.granularity = granularity
        self._recent: Recent[bytes] = Recent()  # identifier -> signature
        self._claims: Recent[tuple[bytes, str, str]] = Recent()  # canonical id -> (sig, claimer, site)
        self._verified: dict[str, int] = {}  # site -> declared canonicals found true
        self._ignored: set[str] = set()  # sites with a declared canonical found false

    def fetched(self, identifier: str, sig: bytes, url: str) -> None:
        """A page was fetched: the claims that named it canonical are checked."""
        self._recent.remember(identifier, sig)
        claim = self._claims.pop(identifier, None)
        if claim is not None:
            claimed, claimer, site = claim
            self._verify(site, claimed == sig, url, claimer)

    def trusted(self, response: TextResponse, identifier: str, site: str, sig: bytes,
                unifier: Unifier) -> tuple[str, str] | None:
        """The canonical ``response`` declares, as ``(URL, identity host)``, once the site's
        canonicals have proven true (it is then the same page as ``response``); None before, or
        without one. The first ``CANONICAL_PROBATION`` are checked by fetching their target, and
        one target with other content makes the crawl ignore that site's canonicals."""
        href = canonical_href(response)
        if not href:
            return None
        try:
            url = unifier.standardize(href, base=response.url)
            target = unifier.identify(url)
        except InvalidURL:
            self.stats.inc("canonical/invalid")
            return None
        if target == identifier:
            return None
        host = host_of(url)
        if not host or site_key(unifier.host_rules(host).identity_host, self.granularity) != site:
            self.stats.inc("canonical/other_site")  # never across sites
            return None
        if site in self._ignored:
            self.stats.inc("canonical/ignored")
            return None
        known = self._recent.get(target)
        if known is not None:  # the target was fetched already: the claim is checked now
            self._verify(site, known == sig, url, response.url)
            return None
        self._claims.remember(target, (sig, response.url, site))
        if self._verified.get(site, 0) < CANONICAL_PROBATION:
            self.stats.inc("canonical/on_probation")  # its target is fetched, and checks it
            return None
        return url, unifier.host_rules(host).identity_host

    def _verify(self, site: str, same: bool, canonical: str, claimer: str) -> None:
        if same:
            self.stats.inc("canonical/verified")
            n = self._verified[site] = self._verified.get(site, 0) + 1
            if n == CANONICAL_PROBATION:
                logger.info("Declared canonicals of %s verified %d times: trusted from now on", site, n)
            return
        self.stats.inc("canonical/counter_examples")
        if site in self._ignored:
            return
        self._ignored.add(site)
        logger.warning("Declared canonical %s of %s has other content: not the same page; the declared "
                       "canonicals of %s are ignored for the rest of the crawl", canonical, claimer, site)


def canonical_href(response: TextResponse) -> str | None:
    """The canonical URL a response declares: a ``Link: <...>; rel="canonical"`` header, or a
    ``<link rel="canonical">`` of its ``<head>``. Only the head is parsed (at most
    ``HEAD_LIMIT`` bytes): the whole of a 50 MB page would cost hundreds of MB."""
    for header in response.headers.getlist(b"Link"):
        m = _CANONICAL_LINK.search(header.decode("latin-1"))
        if m:
            return m.group(1).strip()
    body = response.body
    end = _HEAD_END.search(body, 0, HEAD_LIMIT)
    head = body[: end.start() if end else HEAD_LIMIT]
    if b"canonical" not in head.lower():
        return None
    try:
        href = Selector(text=head.decode(response.encoding, "replace"), type="html").xpath(
            "//link[contains(concat(' ', normalize-space(@rel), ' '), ' canonical ')]/@href").get()
    except ValueError:  # not a document lxml can parse
        return None
    return href.strip() if href else None
