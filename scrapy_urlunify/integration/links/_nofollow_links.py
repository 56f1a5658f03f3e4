"""``NofollowLinks``: the links a page marks ``rel="nofollow"``, for the frontier (docs/frontier.md,
"Links a page marks nofollow").

A site marks a link ``nofollow`` when it asks robots not to follow it: Redmine's exports (PDF,
Atom, CSV, plain text and HTML of every issue, list and wiki page), a blog's reply and log-in
links. Scrapy follows them (its ``LinkExtractor`` keeps them; ``Link.nofollow`` says so, but the
request a spider makes of a link no longer does), and so does the add-on: a hint is no reason
to lose a page. The frontier schedules them one penalty down, after the links the page offers
robots, as it does the links that look like another spelling of a page.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from lxml import etree
from scrapy.http import HtmlResponse
from w3lib.url import safe_url_string

if TYPE_CHECKING:
    from scrapy.http import Response

#: the page's anchors with a ``rel`` (few: the ``nofollow`` test is a Python one, faster than
#: XPath's string functions on every anchor)
_WITH_REL = etree.XPath("//a[@href][@rel]", smart_strings=False)
#: the ``href`` of every anchor of the page
_HREFS = etree.XPath("//a/@href", smart_strings=False)


def nofollow_urls(response: Response) -> frozenset[str]:
    """The absolute URLs (no fragment) that ``response`` links only with ``rel="nofollow"``:
    a URL it also links without it, spelled alike, is not one. Read from the page's tree, which
    Scrapy parses once for the spider too; a page without such links costs one XPath."""
    if not isinstance(response, HtmlResponse):
        return frozenset()
    try:
        root = response.selector.root
        marked = Counter(
            a.get("href")
            for a in _WITH_REL(root)
            if "nofollow" in (a.get("rel") or "").lower().split()
        )
        if not marked:
            return frozenset()
        # a URL also linked without nofollow, spelled alike (a page's menu and its footer)
        linked = Counter(_HREFS(root))
        urls = {_absolute(response, href) for href, n in marked.items() if linked[href] == n}
    except (ValueError, etree.LxmlError):  # a document lxml cannot read
        return frozenset()
    urls.discard("")
    return frozenset(urls)


def _absolute(response: Response, href: str) -> str:
    """``href`` as a ``LinkExtractor`` makes it a request's URL, without its fragment."""
    try:
        return safe_url_string(response.urljoin(href.strip())).partition("#")[0]
    except ValueError:
        return ""


class NofollowLinks:
    """Whether a link of a page is one the page marks ``nofollow``; each page's links are read
    once (its links ask in a row)."""

    def __init__(self) -> None:
        #: (response, its nofollow URLs) of the last page asked about
        self._page: tuple[object, frozenset[str]] = (None, frozenset())

    def marked(self, url: str, response: Response) -> bool:
        """Whether ``response`` links ``url`` only with ``rel="nofollow"``."""
        page = self._page
        if page[0] is not response:
            page = self._page = (response, nofollow_urls(response))
        return bool(page[1]) and url.partition("#")[0] in page[1]
