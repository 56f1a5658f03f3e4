"""What a page declares about its URL in a ``<link rel>`` of its head or a ``Link`` header
(``canonical``, ``shortlink``), and the per-site verdict on such claims: trusted once
``PROBATION`` of them proved true, ignored once more than ``MAX_CONTRADICTED`` of those checked
were other pages (docs/learning.md, "Declared canonicals on probation").
"""

from __future__ import annotations

import logging
import re
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from scrapy.selector import Selector

from scrapy_urlunify.core._url import host_of
from scrapy_urlunify.learning._page_signature import site_key

if TYPE_CHECKING:
    from scrapy.http import TextResponse

    from scrapy_urlunify.core._unify import Unifier
    from scrapy_urlunify.integration.crawl._stats import UnifyStats

logger = logging.getLogger(__name__)

#: bytes of a page searched for its ``<head>``'s end (what a page declares is in the head)
HEAD_LIMIT = 256 * 1024
_HEAD_END = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
#: claims of a site verified (their target fetched, the same page) before its claims are trusted
PROBATION = 5
#: the share of a site's checked claims that may be counter-examples (at least PROBATION
#: checked) before its claims are ignored
MAX_CONTRADICTED = 0.2
#: the stats of each kind of claim: (verified, counter-examples)
_STATS = {
    "canonical": ("canonical/verified", "canonical/counter_examples"),
    "shortlink": ("shortlink/verified", "shortlink/counter_examples"),
}


@cache
def _link_header(rel: str) -> re.Pattern[str]:
    return re.compile(rf'<\s*([^>]*)>\s*;[^,]*\brel\s*=\s*"?{rel}\b', re.IGNORECASE)


def declared_href(response: TextResponse, rel: str) -> str | None:
    """The URL a response declares as ``rel``: a ``Link: <...>; rel="<rel>"`` header, or a
    ``<link rel="<rel>">`` of its ``<head>``. Only the head is parsed (at most ``HEAD_LIMIT``
    bytes): the whole of a 50 MB page would cost hundreds of MB."""
    pattern = _link_header(rel)
    for header in response.headers.getlist(b"Link"):
        m = pattern.search(header.decode("latin-1"))
        if m:
            return m.group(1).strip()
    body = response.body
    end = _HEAD_END.search(body, 0, HEAD_LIMIT)
    head = body[: end.start() if end else HEAD_LIMIT]
    if rel.encode() not in head.lower():
        return None
    try:
        href = (
            Selector(text=head.decode(response.encoding, "replace"), type="html")
            .xpath(f"//link[contains(concat(' ', normalize-space(@rel), ' '), ' {rel} ')]/@href")
            .get()
        )
    except ValueError:  # not a document lxml can parse
        return None
    return href.strip() if href else None


class DeclaredURL(NamedTuple):
    """A URL a page declares, standardized, with its identifier, identity host and site ("" for
    a URL without a host)."""

    url: str
    identifier: str
    identity_host: str
    site: str


def declared_url(
    response: TextResponse, rel: str, unifier: Unifier, granularity: str
) -> DeclaredURL | None:
    """The URL ``response`` declares as ``rel`` (:func:`declared_href`), read against its URL;
    None without one. Raises ``InvalidURL`` for one that is no URL."""
    href = declared_href(response, rel)
    if not href:
        return None
    url = unifier.standardize(href, base=response.url)
    identifier = unifier.identify(url)
    host = host_of(url)
    if not host:
        return DeclaredURL(url, identifier, "", "")
    identity_host = unifier.host_rules(host).identity_host
    return DeclaredURL(url, identifier, identity_host, site_key(identity_host, granularity))


class SiteVerdicts:
    """The verdict on each site's claims of one kind (``name``: ``canonical``, ``shortlink``)."""

    def __init__(self, stats: UnifyStats, name: str) -> None:
        self.stats = stats
        self.name = name
        self._stats = _STATS[name]
        self._verified: dict[str, int] = {}  # site -> claims found true
        self._contradicted: dict[str, int] = {}  # site -> claims found false
        self.ignored: set[str] = set()  # sites with too many claims found false

    def trusted(self, site: str) -> bool:
        """Whether the site's claims proved true (and were not found false too often)."""
        return site not in self.ignored and self._verified.get(site, 0) >= PROBATION

    def wanted(self, site: str) -> int:
        """Claims still to be found true before the site is trusted (0: judged already)."""
        if site in self.ignored:
            return 0
        return max(0, PROBATION - self._verified.get(site, 0))

    def verify(self, site: str, same: bool, target: str, claimer: str) -> bool:
        """A claim of ``claimer`` about ``target`` was checked; True when it made the site's
        claims trusted."""
        verified, contradicted = self._verified.get(site, 0), self._contradicted.get(site, 0)
        if same:
            self.stats.inc(self._stats[0])
            verified = self._verified[site] = verified + 1
        else:
            self.stats.inc(self._stats[1])
            contradicted = self._contradicted[site] = contradicted + 1
            logger.debug(
                "Declared %s %s of %s has other content: not the same page (%d of %d checked "
                "on %s)",
                self.name,
                target,
                claimer,
                contradicted,
                verified + contradicted,
                site,
            )
        if site in self.ignored:
            return False
        checked = verified + contradicted
        # judged on every verdict: four wrong then five true claims are not a trusted site
        if checked >= PROBATION and contradicted > MAX_CONTRADICTED * checked:
            self.ignored.add(site)
            logger.info(
                "The declared %ss of %s are ignored for the rest of the crawl: %d of %d checked "
                "were other pages",
                self.name,
                site,
                contradicted,
                checked,
            )
        elif same and verified == PROBATION:
            logger.info(
                "Declared %ss of %s verified %d times: trusted from now on",
                self.name,
                site,
                verified,
            )
            return True
        return False
