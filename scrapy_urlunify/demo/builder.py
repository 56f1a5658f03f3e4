"""The demo site under construction, and what every part of it is built with.

A :class:`SiteBuilder` holds the records the parts (:mod:`.sections`, :mod:`.traps`,
:mod:`.partners`, :mod:`.duplicates`) add to it and the one seeded random stream they all draw
from, in the order :func:`~.layout.build_layout` calls them: that order is what makes a seed
always give the same site.
"""

from __future__ import annotations

import random

from scrapy_urlunify.demo.hrefs import CROSS_SITE_STYLES, SAME_SITE_STYLES, Hrefs
from scrapy_urlunify.demo.model import Document, Link, Page, Redirect

#: The vocabulary of the pages' text.
WORDS = (
    "crawler",
    "spider",
    "request",
    "response",
    "scheduler",
    "frontier",
    "fingerprint",
    "canonical",
    "anchor",
    "header",
    "cookie",
    "session",
    "proxy",
    "tunnel",
    "mirror",
    "replica",
    "sitemap",
    "archive",
    "index",
    "listing",
    "article",
    "catalogue",
    "product",
    "gallery",
    "review",
    "summary",
    "release",
    "kernel",
    "module",
    "plugin",
    "adapter",
    "pipeline",
    "storage",
    "signature",
    "checksum",
    "digest",
    "domain",
    "suffix",
    "subdomain",
    "redirect",
    "status",
    "network",
    "latency",
    "bandwidth",
    "budget",
    "harvest",
    "politeness",
    "robots",
    "fragment",
    "query",
    "parameter",
    "path",
    "segment",
    "slash",
    "encoding",
    "charset",
    "render",
    "template",
    "widget",
    "portal",
    "report",
    "ledger",
    "thermostat",
)


def page_id_for(site_key: str, path: str, query: tuple[tuple[str, str], ...] = ()) -> str:
    """Stable page id: ``site:/path`` plus the significant query, e.g. ``site:/blog/?page=2``."""
    qs = "&".join(f"{k}={v}" for k, v in query)
    return f"{site_key}:{path}" + (f"?{qs}" if qs else "")


class SiteBuilder:
    """The pages, documents, redirects and parameter defaults built so far, and the seeded
    random stream (``rng``, also behind ``hrefs``) they are built from."""

    def __init__(self, seed: int, traps: bool) -> None:
        self.rng = random.Random(seed)
        self.hrefs = Hrefs(self.rng)
        self.traps = traps
        self.pages: dict[str, Page] = {}
        self.documents: dict[str, Document] = {}
        self.redirects: dict[tuple[str, str], Redirect] = {}
        self.param_defaults: dict[tuple[str, str], dict[str, str]] = {}
        self._serial = 0

    # -- text --------------------------------------------------------------
    def words(self, n: int, vocabulary: tuple[str, ...] = WORDS) -> str:
        return " ".join(self.rng.choice(vocabulary) for _ in range(n))

    def paragraphs(
        self, label: str, count: int = 2, vocabulary: tuple[str, ...] = WORDS
    ) -> tuple[str, ...]:
        """Body paragraphs; the serial number makes every page's text unique."""
        self._serial += 1
        first = (
            f"{label} (reference {self._serial:05d}): {self.words(14, vocabulary).capitalize()}."
        )
        return (first, *(self.words(18, vocabulary).capitalize() + "." for _ in range(count - 1)))

    # -- pages -------------------------------------------------------------
    def add(
        self,
        site_key: str,
        path: str,
        kind: str,
        heading: str,
        query: tuple[tuple[str, str], ...] = (),
        *,
        is_item: bool = False,
        session_style: str | None = None,
        vocabulary: tuple[str, ...] = WORDS,
    ) -> Page:
        page = Page(
            id=page_id_for(site_key, path, query),
            site=site_key,
            path=path,
            query=query,
            kind=kind,
            title=heading,
            heading=heading,
            paragraphs=self.paragraphs(heading, 3 if is_item else 2, vocabulary),
            is_item=is_item,
            session_style=session_style,
        )
        if page.id in self.pages:
            raise AssertionError(f"duplicate page id {page.id}")
        self.pages[page.id] = page
        return page

    def copy_page(
        self,
        original: Page,
        site_key: str,
        query: tuple[tuple[str, str], ...],
        kind: str,
        title: str,
    ) -> Page:
        """A content duplicate of ``original``: its heading and text under another URL."""
        twin = Page(
            id=page_id_for(site_key, original.path, query),
            site=site_key,
            path=original.path,
            query=query,
            kind=kind,
            title=title,
            heading=original.heading,
            paragraphs=original.paragraphs,
            is_item=original.is_item,
            duplicate_of=original.id,
        )
        self.pages[twin.id] = twin
        return twin

    def link(
        self, source: Page, target: Page | Document, text: str, style: str | None = None
    ) -> Link:
        """A link from ``source`` to ``target`` in ``style`` (random when None)."""
        query = target.query if isinstance(target, Page) else ()
        kind = "page" if isinstance(target, Page) else "document"
        if target.site == source.site:
            style = style or self.hrefs.pick(SAME_SITE_STYLES)
            href = self.hrefs.same_site(source.base, target.site, target.path, query, style)
        else:
            style = style or self.hrefs.pick(CROSS_SITE_STYLES)
            href = self.hrefs.cross_site(target.site, target.path, query, style)
        return Link(href=href, text=text, target=target.id, kind=kind)

    def other(self, pool: list[Page], page: Page) -> Page:
        """A random page of ``pool`` that is not ``page`` (no self links)."""
        choice = self.rng.choice(pool)
        while choice is page and len(pool) > 1:
            choice = self.rng.choice(pool)
        return choice
