"""Pages that declare ``nofollow`` for all robots (``URLUNIFY_ROBOTS_NOFOLLOW``): their links are
not followed, except a start page's and those of a host whose start page declares it
(docs/rules.md, "Pages that declare nofollow": what is honoured, what is not, and why). Pages
that declare ``noindex``: their items are dropped (docs/rules.md, "Pages that declare
noindex"), and those that do not declare ``nofollow`` too are pages to pass through, no content
of their own to the frontier (docs/frontier.md, "Pages to pass through").
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from lxml import etree
from scrapy.http import HtmlResponse

from scrapy_urlunify.core._url import host_of

if TYPE_CHECKING:
    from scrapy.http import Response


logger = logging.getLogger(__name__)

#: the directive that stops a page's links, and the stat reason of a link dropped for it
NOFOLLOW = "nofollow"
SETTING = "URLUNIFY_ROBOTS_NOFOLLOW"

#: the robots meta tags of a page's head: one small XPath, compiled once
_META = etree.XPath("/html/head/meta[@name][@content]")
#: the separators of directives in a meta content or a header value
_SPLIT = re.compile(r"[\s,]+")
#: ``name: rest`` at the start of one comma-separated part of an X-Robots-Tag value
_PREFIX = re.compile(r"\s*([A-Za-z0-9_.-]+)\s*:\s*(.*)", re.S)
#: directives written ``name: value`` in an X-Robots-Tag header: not a user-agent prefix
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})


def robots_directives(response: Response) -> frozenset[str]:
    """The robots directives ``response`` declares for all robots, lower-cased: the content of
    its ``<meta name="robots">`` tags (the name in any case; ``none`` is ``noindex`` and
    ``nofollow``) and of its ``X-Robots-Tag`` headers, but the directives of a header after a
    user-agent prefix (``googlebot: nofollow``), which are for that robot only.

    Empty for a response that is not HTML. The tags are read from the tree of Scrapy's
    selector (``response.selector.root``), which the spider's ``response.css()`` and the
    add-on's signatures share: the page is parsed once."""
    if not isinstance(response, HtmlResponse):
        return frozenset()
    found: set[str] = set()
    for value in response.headers.getlist(b"X-Robots-Tag"):
        found.update(_header_directives(value.decode("latin-1")))
    try:
        metas = _META(response.selector.root)
    except (ValueError, etree.LxmlError):  # not a document lxml can parse: no tags in it
        metas = []
    for meta in metas:
        if meta.get("name", "").strip().lower() == "robots":
            found.update(d for d in _SPLIT.split(meta.get("content", "").lower()) if d)
    if "none" in found:
        found.update(("noindex", NOFOLLOW))
    return frozenset(found)


def _header_directives(value: str) -> list[str]:
    """The directives of one ``X-Robots-Tag`` value that apply to every robot: those before
    the first user-agent prefix (after one, the rest of the value is that agent's)."""
    found: list[str] = []
    for part in value.split(","):
        m = _PREFIX.match(part)
        if m is None:
            found.extend(d for d in _SPLIT.split(part.strip().lower()) if d)
        elif (name := m.group(1).lower()) in _VALUED:
            found.append(name + ":" + "".join(m.group(2).split()).lower())  # "max-snippet: 20"
        else:
            break  # "googlebot: noindex, nofollow": the rest is googlebot's
    return found


def _start_page(meta: dict[str, Any], depth_tracked: bool) -> bool:
    """Whether the response of request meta ``meta`` is a start page: a start request's, or of
    depth 0 when Scrapy's ``DepthMiddleware`` is on (``depth_tracked``: a request given to the
    engine directly, as scrapy-redis does, has no ``is_start_request``)."""
    return bool(meta.get("is_start_request") or (depth_tracked and not meta.get("depth")))


class RobotsMeta:
    """Which pages' links ``LinkMiddleware`` drops for their robots ``nofollow``, with its
    safeguards (a start page, a host whose start page declares it); the verdict is computed once
    per page (its links ask in a row)."""

    def __init__(self) -> None:
        #: hosts whose start page declared nofollow: their robots directives are ignored
        self.ignored_hosts: set[str] = set()
        #: hosts whose first page not followed was logged
        self._reported: set[str] = set()
        #: (response, verdict) of the last page asked about
        self._page: tuple[object, bool] = (None, False)

    def nofollow(self, response: Response, depth_tracked: bool) -> bool:
        """The links of ``response`` must not be followed. ``depth_tracked``: Scrapy's
        ``DepthMiddleware`` is on (a response without a depth, or depth 0, is a start page)."""
        page = self._page
        if page[0] is response:
            return page[1]
        verdict = self._verdict(response, depth_tracked)
        self._page = (response, verdict)
        return verdict

    def _verdict(self, response: Response, depth_tracked: bool) -> bool:
        if not isinstance(response, HtmlResponse):
            return False
        host = host_of(response.url).lower()
        if host in self.ignored_hosts or NOFOLLOW not in robots_directives(response):
            return False
        if _start_page(response.meta, depth_tracked):
            self.ignored_hosts.add(host)
            logger.info(
                "The start page %s declares nofollow: the robots meta of the pages of %s is "
                "ignored for this crawl, all their links are followed (%s = False ignores it "
                "everywhere)",
                response.url,
                host,
                SETTING,
            )
            return False
        if host not in self._reported:
            self._reported.add(host)
            logger.info(
                "Links of pages that declare nofollow are not followed (first: %s); %s = False "
                "follows them",
                response.url,
                SETTING,
            )
        return True


class Noindex:
    """Which pages declare ``noindex`` for all robots: pages a site asks robots not to keep
    (Redmine's and Trac's old wiki versions, MediaWiki's old revisions and special pages, many
    blogs' paginated archives and search results, shops' filtered lists). Their items are not
    content (``URLUNIFY_DROP_NOINDEX_ITEMS``); those that declare ``noindex`` but not
    ``nofollow`` are pages to pass through, no content of their own to the frontier
    (``noindex, nofollow`` is not: MediaWiki's special pages say it and share ``/wiki/*`` with
    the articles, whose pattern must not be judged on them; their links are not followed
    anyway). A start page that declares ``noindex`` (a staging site, an intranet, crawled on
    purpose) has its host's directives ignored: no page of it is noindex to the add-on.

    The items of a noindex page are dropped only on a host that has shown an indexable HTML page
    to this process (:meth:`indexed`): a staging site reached by a link, or whose start page
    another process of a fleet fetched, asks every robot to keep out of every page (a header or
    a CMS's switch for the whole site), and its pages are all the content it has.
    """

    #: hosts remembered at most (a broad crawl's): a host beyond them is never indexed here,
    #: its items all kept
    MAX_HOSTS = 100_000

    def __init__(self) -> None:
        #: hosts whose start page declared noindex: no page of theirs is noindex here
        self.ignored_hosts: set[str] = set()
        #: hosts that have shown a page without noindex
        self._indexed: set[str] = set()

    def indexed(self, url: str) -> bool:
        """Whether ``url``'s host has shown an HTML page that does not declare noindex."""
        return host_of(url).lower() in self._indexed

    def directives(self, response: Response, meta: dict[str, Any]) -> frozenset[str]:
        """The robots directives of ``response`` (of request meta ``meta``: a downloader
        middleware's response has no ``meta`` yet) when it declares ``noindex`` and its host's
        start page did not, else nothing. A request without a ``depth`` counts as a start
        request (with Scrapy's ``DepthMiddleware`` off, every one does, and no page is
        noindex)."""
        if not isinstance(response, HtmlResponse):
            return frozenset()
        directives = robots_directives(response)
        host = host_of(response.url).lower()
        if "noindex" not in directives:
            if len(self._indexed) < self.MAX_HOSTS:
                self._indexed.add(host)
            return frozenset()
        if host in self.ignored_hosts:
            return frozenset()
        if _start_page(meta, True):
            self.ignored_hosts.add(host)
            logger.debug(
                "The start page %s declares noindex: the pages of %s are not taken as noindex "
                "for this crawl (their items are kept, none is a page to pass through)",
                response.url,
                host,
            )
            return frozenset()
        return directives


def passes_through(directives: frozenset[str]) -> bool:
    """Whether a page of these :meth:`Noindex.directives` is a page to pass through."""
    return "noindex" in directives and NOFOLLOW not in directives
