"""The demo site's ground truth: which distinct page every URL serves.

``DemoSite`` is pure Python (no Twisted, no Scrapy); :mod:`.server` serves it.

Vocabulary used by the report:

* a **page** is one distinct thing the server answers with, named by a
  stable page id such as ``site:/docs/page-3.html``, ``site:/blog/?page=2``
  or ``news:/servlet/ContentServer?cid=1166000000042``;
* ``page_id(url)`` is how the *server* interprets a URL: host case, www,
  sister domain, http/https, default ports, ``\\``, ``//``, dot segments,
  ``index.html``, fragments, session ids, tracking and other unknown query
  parameters are all ignored; the significant parameters are ``page`` on the
  blog listing, ``print`` on articles, ``lang`` on the guide's chapters,
  ``q``, ``page`` and ``sort`` on the site search and ``cid`` on the news
  ContentServer; a parameter spelled with its default value (``page=1``,
  ``lang=en``, ``sort=relevance``, ``print=0``) is the page without it;
* a **soft 404** is a missing URL under ``/docs/`` or ``/blog/``, answered
  200 with the one "not found" page they all share: not a page;
* a **content duplicate** is a *different* page whose body text equals
  another page's (``?print=1`` views and the mirror host's copies).  A crawl
  that skips them is right to do so; only a body signature can spot them;
* a **variant-only** page is reachable from the start URL only through links
  that are not already canonical (see ``Link.plain``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from urllib.parse import parse_qsl, urlsplit

from scrapy_urlunify.demo.hosts import DEMO_HOSTS, SITE
from scrapy_urlunify.demo.hrefs import canonical_url
from scrapy_urlunify.demo.layout import build_layout
from scrapy_urlunify.demo.model import Document, Page, Redirect, Resolution
from scrapy_urlunify.demo.render import NO_VIEW, body_text, fill, page_template, render_pdf
from scrapy_urlunify.demo.traps import SOFT_404_PREFIXES
from scrapy_urlunify.demo.urls import Target, parse_target

ROBOTS_TXT = b"User-agent: *\nDisallow:\n"


class DemoSite:
    """A generated, deterministic demo web site and its ground truth.

    ``size`` is the approximate number of distinct pages (the exact count is
    ``len(site.pages)``); the same ``(size, seed, traps)`` always yields the same site.
    ``traps=False`` leaves out what a URL learner must survive (the defaults spelled out, the
    search, the German chapters, the 3 MB index, clocks, tokens and soft 404s): a site where a
    configured crawl fetches every page exactly once.
    """

    def __init__(self, size: int = 300, seed: int = 20240601, *, traps: bool = True) -> None:
        self.size = size
        self.seed = seed
        self.traps = traps
        layout = build_layout(size, seed, traps)
        self._pages: dict[str, Page] = layout.pages
        self._documents: dict[str, Document] = layout.documents
        self._redirects: dict[tuple[str, str], Redirect] = layout.redirects
        self._defaults = layout.param_defaults
        # route (site key, normalized path) -> significant params -> page id
        self._routes: dict[tuple[str, str], dict[tuple[tuple[str, str], ...], str]] = {}
        self._route_params: dict[tuple[str, str], set[str]] = {}
        for page in self._pages.values():
            key = (page.site, page.path)
            self._routes.setdefault(key, {})[page.query] = page.id
            self._route_params.setdefault(key, set()).update(k for k, _ in page.query)
        self._doc_routes = {(d.site, d.path): d.id for d in self._documents.values()}

        self.pages: frozenset[str] = frozenset(self._pages)
        self.items: frozenset[str] = frozenset(p.id for p in self._pages.values() if p.is_item)
        self.documents: frozenset[str] = frozenset(self._documents)
        self.content_duplicates: Mapping[str, str] = MappingProxyType(
            {p.id: p.duplicate_of for p in self._pages.values() if p.duplicate_of}
        )
        self.variant_only: frozenset[str] = layout.variant_only
        self.session_pages: frozenset[str] = frozenset(
            p.id for p in self._pages.values() if p.session_style
        )
        #: Pages whose body text changes on every view (a clock), and whose bytes do (a form token).
        self.clock_pages: frozenset[str] = frozenset(p.id for p in self._pages.values() if p.clock)
        self.token_pages: frozenset[str] = frozenset(p.id for p in self._pages.values() if p.token)
        self._templates: dict[str, str] = {}
        #: Pages some link reaches with a parameter spelled at its default value (``?page=1``):
        #: no URL rule can tell those spellings are the page, so even a configured crawl
        #: fetches these pages once per spelling.
        self.default_spelled: frozenset[str] = frozenset(self._default_spelled())
        self.hosts: tuple[str, ...] = DEMO_HOSTS
        self.start_urls: tuple[str, ...] = (self.canonical_url(layout.start_page),)

    # -- ground truth -----------------------------------------------------
    @property
    def unique_pages(self) -> frozenset[str]:
        """Pages minus content duplicates: what a perfect crawl needs to keep."""
        return self.pages - frozenset(self.content_duplicates)

    def page(self, page_id: str) -> Page:
        """The :class:`~.model.Page` record (title, kind, links ...)."""
        return self._pages[page_id]

    def is_item(self, page_id: str) -> bool:
        """True when the page has an ``<article>`` a spider turns into an item."""
        return self._pages[page_id].is_item

    def canonical_url(self, page_id: str) -> str:
        """The canonical absolute URL of a page or document."""
        record = self._pages.get(page_id) or self._documents[page_id]
        query = record.query if isinstance(record, Page) else ()
        return canonical_url(record.site, record.path, query)

    def resolve(self, url: str) -> Resolution:
        """What the server answers for ``url`` (absolute http/https URL)."""
        target = parse_target(url)
        if target is None:
            return Resolution(status=404, known_host=False)
        if target.site is None:
            return Resolution(status=404, known_host=False)
        redirect = self._redirects.get((target.site, target.path))
        if redirect is not None:
            location = self._redirect_location(redirect, target)
            if location is not None:
                return Resolution(status=redirect.status, location=location)
        if target.path == "/robots.txt":
            return Resolution(status=200, text=ROBOTS_TXT, content_type="text/plain; charset=utf-8")
        doc_id = self._doc_routes.get((target.site, target.path))
        if doc_id is not None:
            return Resolution(status=200, document_id=doc_id, content_type="application/pdf")
        page_id = self._route(target)
        if page_id is None:
            if self.traps and target.site == SITE and target.path.startswith(SOFT_404_PREFIXES):
                return Resolution(status=200, soft_404=True)
            return Resolution(status=404)
        return Resolution(status=200, page_id=page_id)

    def page_id(self, url: str, *, follow_redirects: bool = False) -> str | None:
        """The distinct page ``url`` serves; None for 404s, soft 404s, documents,
        robots.txt and (unless ``follow_redirects``) redirects."""
        for _ in range(10):
            res = self.resolve(url)
            if res.location is not None and follow_redirects:
                url = res.location
                continue
            return res.page_id
        raise RuntimeError(f"redirect loop at {url}")

    # -- serving ----------------------------------------------------------
    def render(self, page_id: str, *, session: str | None = None, view: int = NO_VIEW) -> bytes:
        """HTML bytes of a page; ``session`` is put into session-area links, ``view`` (the
        server counts its responses) sets the clock and the form token of the pages with one."""
        template = self._templates.get(page_id)
        if template is None:  # the 3 MB index is rendered once, then only filled in
            template = self._templates[page_id] = page_template(self._pages[page_id])
        return fill(template, session, view)

    def render_document(self, document_id: str) -> bytes:
        return render_pdf(self._documents[document_id])

    def body_text(self, page_id: str) -> str:
        """Normalized ``<body>`` text (equal for a content duplicate and its original)."""
        return body_text(self.render(page_id))

    def session_style(self, page_id: str) -> str | None:
        """``jsessionid`` / ``PHPSESSID`` / ``sid`` for session-area pages."""
        return self._pages[page_id].session_style

    # -- internals --------------------------------------------------------
    def _default_spelled(self) -> Iterator[str]:
        for page in self._pages.values():
            for link in page.all_links:
                target = self._pages.get(link.target or "")
                defaults = self._defaults.get((target.site, target.path)) if target else None
                if (
                    target
                    and defaults
                    and any(defaults.get(k) == v for k, v in parse_qsl(urlsplit(link.href).query))
                ):
                    yield target.id

    def _route(self, target: Target) -> str | None:
        key = (target.site, target.path)
        variants = self._routes.get(key)  # type: ignore[arg-type]
        if variants is None:
            return None
        wanted = self._route_params[key]  # type: ignore[index]
        defaults = self._defaults.get(key, {})  # type: ignore[arg-type]
        significant: dict[str, str] = {}
        for name, value in target.params:
            if name in wanted and name not in significant:
                significant[name] = value
        query = tuple(sorted((k, v) for k, v in significant.items() if defaults.get(k) != v))
        return variants.get(query)

    @staticmethod
    def _redirect_location(redirect: Redirect, target: Target) -> str | None:
        suffix = f"?{target.raw_query}" if target.raw_query else ""
        if redirect.location is not None:
            return redirect.location
        if redirect.to_https:
            if target.scheme != "https":
                return f"https://{target.host}{target.path}{suffix}"
            return None
        if redirect.add_slash:
            return f"{target.scheme}://{target.host}{target.path}/{suffix}"
        if redirect.flip_scheme:
            return (
                f"{'http' if target.scheme == 'https' else 'https'}://"
                f"{target.host}{target.path}{suffix}"
            )
        return None

    def __repr__(self) -> str:
        return (
            f"DemoSite(size={self.size}, seed={self.seed}, traps={self.traps}, "
            f"pages={len(self.pages)})"
        )
