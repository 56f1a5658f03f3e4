"""Deterministic generator of the demo site's pages, links and redirects.

:class:`SiteBuilder` lays out four site keys (see :mod:`.hosts`):

``site``       home, contact, docs (+ guide, PDFs), a paginated blog with
               article (item) pages and ``?print=1`` print views, three
               session areas (``;jsessionid=`` / ``PHPSESSID=`` / ``sid=``),
               an https-only ``/secure/`` area and the ``/moved`` redirect;
               and the traps a URL learner must survive: default values spelled
               out (``/blog/?page=1``, ``?lang=en`` on the guide's chapters, which
               also exist in German, ``/search/?q=..&page=1&sort=relevance`` on a
               paginated, sortable site search), a ~3 MB index of every section
               whose links carry a per-view ``;jsessionid=``, a clock in some
               bodies and a per-view form token in others, and soft 404s
               (removed docs and posts answered 200 with one "not found" page);
``news``       a ContentServer news section (``cid`` matters, ``inifile`` and
               ``arglink`` do not);
``termomont``  a product catalogue served identically on ``termomont.rs``
               and its sister ``termomont.co.rs`` (both with and without www);
``mirror``     ``mirror.site.test`` serving copies of some docs and articles.

Links are spelled in every variant style (:mod:`.hrefs`).  The builder then
marks which links are *plain* (already canonical), checks that every page is
reachable from the start page and records which pages are reachable only
through variant links.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass

import ada_url

from .hosts import MIRROR, NEWS, SITE, TERMOMONT, canonical_origin
from .hrefs import (
    CROSS_SITE_STYLES,
    SAME_SITE_STYLES,
    Hrefs,
    canonical_url,
    query_string,
    relative_path,
)
from .model import SID_PLACEHOLDER, Document, Link, Page, Redirect

WORDS = ("crawler", "spider", "request", "response", "scheduler", "frontier", "fingerprint", "canonical", "anchor", "header", "cookie", "session", "proxy", "tunnel", "mirror", "replica", "sitemap", "archive", "index", "listing", "article", "catalogue", "product", "gallery", "review", "summary", "release", "kernel", "module", "plugin", "adapter", "pipeline", "storage", "signature", "checksum", "digest", "domain", "suffix", "subdomain", "redirect", "status", "network", "latency", "bandwidth", "budget", "harvest", "politeness", "robots", "fragment", "query", "parameter", "path", "segment", "slash", "encoding", "charset", "render", "template", "widget", "portal", "report", "ledger", "thermostat")

SESSION_AREAS = (
    # (directory, page stem, session style, item pages?)
    ("/shop/", "item", "jsessionid", True),
    ("/forum/", "thread", "PHPSESSID", False),
    ("/support/", "faq", "sid", False),
)

GERMAN = ("Anfrage", "Antwort", "Seite", "Verzeichnis", "Kapitel", "Sitzung", "Kennung", "Abschnitt",
          "Zeichen", "Vorlage", "Spiegel", "Suche", "Ergebnis", "Sprache", "Adresse", "Pfad", "Parameter",
          "Wert", "Standard", "Schnittstelle", "Speicher", "Warteschlange", "Umleitung", "Inhalt")

#: Site search: its terms, result pages per sort order and results per page.
SEARCH_PATH = "/search/"
SEARCH_TERMS = ("crawler", "proxy", "sitemap", "cookie")
SEARCH_SORTS = ("relevance", "date")  # the first is the default
SEARCH_PER_PAGE = 4
#: The index of every section (~3 MB, like a documentation site's genindex).
TOC_PATH = "/docs/genindex.html"
TOC_BYTES = 3_000_000
#: Paths whose missing pages are answered 200 with one "not found" page (soft 404s).
SOFT_404_PREFIXES = ("/docs/", "/blog/")

NEWS_PATH = "/servlet/ContentServer"
NEWS_INIFILE = "futuretense.ini"
NEWS_FIRST_CID = 1166000000000


def page_id_for(site_key: str, path: str, query: tuple[tuple[str, str], ...] = ()) -> str:
    """Stable page id: ``site:/path`` plus the significant query, e.g. ``site:/blog/?page=2``."""
    qs = "&".join(f"{k}={v}" for k, v in query)
    return f"{site_key}:{path}" + (f"?{qs}" if qs else "")


@dataclass(frozen=True)
class Plan:
    """How many pages of each kind a site of a given size gets."""

    docs: int
    chapters: int
    articles: int
    per_listing: int
    prints: int
    area_pages: tuple[int, int, int]
    news: int
    products: int
    mirrors: int
    pdfs: int
    terms: int
    search_pages: int

    @property
    def searches(self) -> int:
        """Distinct search result pages: terms x pages x sort orders."""
        return self.terms * self.search_pages * len(SEARCH_SORTS)

    @property
    def listings(self) -> int:
        return math.ceil(self.articles / self.per_listing)

    @classmethod
    def for_size(cls, size: int, traps: bool = True) -> Plan:
        """Split roughly ``size`` distinct pages over the sections (minimums keep
        every variant present even for tiny sites)."""
        terms, search_pages = ((2, 2) if size < 150 else (len(SEARCH_TERMS), 2)) if traps else (0, 0)
        # the fixed pages: home, contact, indexes, areas' entries ... the search and the index
        rest = max(size - 16 - (1 if traps else 0) - terms * search_pages * len(SEARCH_SORTS), 24)

        def share(frac: float, minimum: int) -> int:
            return max(minimum, round(rest * frac))

        articles = share(0.21, 5)
        chapters = share(0.05, 2) if traps else share(0.08, 2)  # with traps, each also in German
        return cls(
            docs=share(0.15 if traps else 0.17, 4),
            chapters=chapters,
            articles=articles,
            per_listing=4,
            prints=max(1, articles // 3),
            area_pages=(share(0.06, 2), share(0.05, 2), share(0.03, 1)),
            news=share(0.11, 3),
            products=share(0.08, 3),
            mirrors=share(0.05, 2),
            pdfs=max(1, round(rest * 0.04)),
            terms=terms,
            search_pages=search_pages,
        )


@dataclass
class Layout:
    """Everything the builder produced (consumed by :class:`~.site.DemoSite`)."""

    pages: dict[str, Page]
    documents: dict[str, Document]
    redirects: dict[tuple[str, str], Redirect]
    param_defaults: dict[tuple[str, str], dict[str, str]]
    start_page: str
    variant_only: frozenset[str]


class SiteBuilder:
    """Builds a :class:`Layout` for ``size`` (approximate page count) and ``seed``."""

    def __init__(self, size: int = 300, seed: int = 20240601, traps: bool = True) -> None:
        self.size = size
        self.rng = random.Random(seed)
        self.hrefs = Hrefs(self.rng)
        self.traps = traps
        self.plan = Plan.for_size(size, traps)
        self.pages: dict[str, Page] = {}
        self.documents: dict[str, Document] = {}
        self.redirects: dict[tuple[str, str], Redirect] = {}
        self.param_defaults: dict[tuple[str, str], dict[str, str]] = {}
        self._serial = 0

    # -- text --------------------------------------------------------------
    def words(self, n: int, vocabulary: tuple[str, ...] = WORDS) -> str:
        return " ".join(self.rng.choice(vocabulary) for _ in range(n))

    def paragraphs(self, label: str, count: int = 2, vocabulary: tuple[str, ...] = WORDS) -> tuple[str, ...]:
        """Body paragraphs; the serial number makes every page's text unique."""
        self._serial += 1
        first = f"{label} (reference {self._serial:05d}): {self.words(14, vocabulary).capitalize()}."
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

    def link(self, source: Page, target: Page | Document, text: str, style: str | None = None) -> Link:
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

    def variant_gallery(self, source: Page, pool: list[Page]) -> list[Link]:
        """One link per variant spelling, so every variant exists at any size."""
        hrefs = self.hrefs
        spelled: list[tuple[str, Page]] = []
        for origin in (
            "http://site.test",
            "https://site.test",
            "http://www.site.test",
            "https://www.site.test:443",
            "http://www.site.test:80",
            "http://WWW.Site.TEST",
            "https://Site.TEST:443",
            "//site.test",
        ):
            target = self.other(pool, source)
            spelled.append((origin + target.path + query_string(target.query), target))
        for style in (
            "root",
            "relative",
            "dot",
            "backslash",
            "double_slash",
            "index",
            "fragment",
            "hashbang",
            "protocol_relative",
        ):
            target = self.other(pool, source)
            if style == "index":
                target = self.rng.choice([p for p in pool if p.path.endswith("/") and p.path != "/"])
            if style == "backslash":
                target = self.rng.choice([p for p in pool if p.path.count("/") >= 3])
            spelled.append((hrefs.same_site(source.base, SITE, target.path, target.query, style), target))
        for params in (
            [("utm_source", "newsletter"), ("utm_medium", "email"), ("utm_campaign", "launch")],
            [("fbclid", "IwAR" + hrefs.token(28))],
            [("gclid", "Cj0K" + hrefs.token(24))],
        ):
            target = self.other(pool, source)
            spelled.append((target.path + "?" + "&".join(f"{k}={v}" for k, v in [*target.query, *params]), target))
        return [
            Link(href=href, text=f"Variant {n}: {target.heading}", target=target.id)
            for n, (href, target) in enumerate(spelled, start=1)
        ]

    def build(self) -> Layout:
        home = self.build_site()
        self.build_news(home)
        self.build_termomont(home)
        self.build_mirror(home)
        self.add_nav()
        self.build_print_views()
        self.finish_mirror()
        self.mark_plain_links()
        reachable = self.reachable(home.id, plain_only=False)
        missing = set(self.pages) - reachable
        if missing:
            raise AssertionError(f"unreachable demo pages: {sorted(missing)}")
        variant_only = frozenset(set(self.pages) - self.reachable(home.id, plain_only=True))
        return Layout(
            pages=self.pages,
            documents=self.documents,
            redirects=self.redirects,
            param_defaults=self.param_defaults,
            start_page=home.id,
            variant_only=variant_only,
        )

    # -- the main site -------------------------------------------------------
    def build_site(self) -> Page:
        plan = self.plan
        home = self.add(SITE, "/", "home", "Welcome to Site Test")
        contact = self.add(SITE, "/contact.html", "contact", "Contact us")
        new = self.add(SITE, "/new", "moved", "The page that moved")
        self.redirects[(SITE, "/moved")] = Redirect(location=canonical_url(SITE, "/new"))
        self.redirects[(SITE, "/loop")] = Redirect(flip_scheme=True)

        docs_index = self.add(SITE, "/docs/", "docs-index", "Documentation")
        self.redirects[(SITE, "/docs")] = Redirect(add_slash=True)
        docs = [
            self.add(SITE, f"/docs/page-{i}.html", "doc", f"Docs page {i}: {self.words(2)}")
            for i in range(1, plan.docs + 1)
        ]
        guide = self.add(SITE, "/docs/guide/", "guide-index", "The guide")
        chapters = [
            self.add(SITE, f"/docs/guide/ch-{i}.html", "chapter", f"Guide chapter {i}: {self.words(2)}")
            for i in range(1, plan.chapters + 1)
        ]
        pdfs = []
        for i in range(1, plan.pdfs + 1):
            report = Document(
                id=page_id_for(SITE, f"/files/report-{i}.pdf"),
                site=SITE,
                path=f"/files/report-{i}.pdf",
                title=f"Annual report {i}",
            )
            self.documents[report.id] = report
            pdfs.append(report)

        listings = [
            self.add(SITE, "/blog/", "listing", f"Blog, page {n}", (("page", str(n)),) if n > 1 else ())
            for n in range(1, plan.listings + 1)
        ]
        self.param_defaults[(SITE, "/blog/")] = {"page": "1"}
        self.redirects[(SITE, "/blog")] = Redirect(add_slash=True)
        articles = [
            self.add(SITE, f"/blog/post-{i}.html", "article", f"Post {i}: {self.words(3)}", is_item=True)
            for i in range(1, plan.articles + 1)
        ]

        areas: list[tuple[Page, list[Page], str]] = []
        for (directory, stem, style, items), count in zip(SESSION_AREAS, plan.area_pages, strict=True):
            name = directory.strip("/")
            entry = self.add(SITE, directory, f"{name}-index", f"{name.capitalize()} start", session_style=style)
            members = [
                self.add(
                    SITE,
                    f"{directory}{stem}-{i}.html",
                    name,
                    f"{name.capitalize()} {stem} {i}",
                    is_item=items,
                    session_style=style,
                )
                for i in range(1, count + 1)
            ]
            areas.append((entry, members, style))

        account = self.add(SITE, "/secure/account.html", "secure", "Your account")
        settings = self.add(SITE, "/secure/settings.html", "secure", "Account settings")
        for page in (account, settings):
            self.redirects[(SITE, page.path)] = Redirect(to_https=True)

        public = [home, contact, docs_index, guide, *docs, *chapters, *listings, *articles]
        nav_targets = [
            (home, "Home", "/"),
            (docs_index, "Docs", "/docs/"),
            (listings[0], "Blog", "/blog/index.html"),
            *[(entry, entry.heading.split()[0], entry.path) for entry, _, _ in areas],
            (contact, "Contact", "/contact.html"),
        ]
        self._site_nav = nav_targets

        # Home: a sampler of every special case.
        home.links += [
            self.link(home, docs_index, "Documentation", "relative"),
            Link(href="http://site.test/moved", text="What's new (moved)", target=new.id),
            Link(href="http://www.site.test/secure/account.html", text="Your account", target=account.id),
            self.link(home, pdfs[0], "Annual report (PDF)", "root"),
            self.link(home, listings[0], "Blog front page", "tracking"),
        ]
        if len(listings) > 1:
            home.links.append(self.link(home, listings[1], "Older posts", "tracking"))
        home.links += [self.link(home, self.other(public, home), f"See also {n}") for n in range(3)]
        home.links += self.variant_gallery(home, public)

        contact.links += [
            Link(href="mailto:info@site.test", text="Write to us", target=None, kind="external"),
            Link(href="tel:+15550100", text="Call us", target=None, kind="external"),
            Link(href="javascript:void(0)", text="Open chat", target=None, kind="external"),
            Link(href="javascript:window.print()", text="Print", target=None, kind="external"),
            Link(href=canonical_url(SITE, settings.path), text="Change your settings", target=settings.id),
        ]
        new.links.append(self.link(new, self.other(docs, new), "Read the docs"))
        account.links.append(self.link(account, settings, "Settings", "relative"))
        settings.links.append(self.link(settings, account, "Back to account", "relative"))

        docs_index.links += [self.link(docs_index, d, d.heading) for d in docs]
        docs_index.links.append(self.link(docs_index, guide, "Guide", self.rng.choice(("relative", "dot", "index"))))
        docs_index.links += [self.link(docs_index, pdf, pdf.title) for pdf in pdfs]
        for i, doc in enumerate(docs):
            doc.links.append(
                self.link(doc, docs_index, "Up to the docs", self.rng.choice(("relative", "dot", "index", "root")))
            )
            doc.links.append(self.link(doc, docs[(i + 1) % len(docs)], "Next page"))
            doc.links += [self.link(doc, self.other(public, doc), "Related") for _ in range(2)]
            if i % 3 == 0:
                doc.links.append(self.link(doc, pdfs[i % len(pdfs)], "Download PDF"))

        guide.links.append(self.link(guide, docs_index, "Back to docs", "dot"))
        guide.links += [
            self.link(guide, ch, ch.heading, self.rng.choice(("relative", "backslash", "root"))) for ch in chapters
        ]
        for i, ch in enumerate(chapters):
            ch.links.append(self.link(ch, guide, "Guide contents"))
            ch.links.append(self.link(ch, chapters[(i + 1) % len(chapters)], "Next chapter"))
            ch.links.append(self.link(ch, docs_index, "All docs", "backslash"))
        # Backslash links from the docs index into the guide (a real subdirectory).
        if chapters:
            docs_index.links.append(self.link(docs_index, chapters[0], "First chapter", "backslash"))

        self.build_blog(listings, articles, public)
        for entry, members, style in areas:
            self.build_session_area(entry, members, style, home)
        if self.traps:
            home.clock = True
            contact.token = True
            for listing in listings:
                listing.clock = True
            self.build_languages(guide, chapters)
            self.build_search(home, [*docs, *chapters, *articles])
            self.build_index(docs_index, guide, docs, chapters)
            self.build_soft_404s(docs, listings, articles)
        return home

    # -- the traps -----------------------------------------------------------
    def build_languages(self, guide: Page, chapters: list[Page]) -> None:
        """Every guide chapter also in German (``?lang=de``, other text); ``?lang=en`` is the
        default, and the language switcher spells it out."""
        germans = []
        for n, ch in enumerate(chapters, start=1):
            self.param_defaults[(SITE, ch.path)] = {"lang": "en"}
            germans.append(self.add(SITE, ch.path, "chapter-de", f"Kapitel {n}: {self.words(2, GERMAN)}",
                                    (("lang", "de"),), vocabulary=GERMAN))
        for i, (ch, de) in enumerate(zip(chapters, germans, strict=True)):
            name = ch.path.rsplit("/", 1)[1]
            nxt = germans[(i + 1) % len(germans)]
            ch.links += [Link(f"{name}?lang=en", "English", ch.id), Link(f"{name}?lang=de", "Deutsch", de.id)]
            de.links += [
                Link(f"{name}?lang=en", "English", ch.id),
                Link(f"{nxt.path.rsplit('/', 1)[1]}?lang=de", "Nächstes Kapitel", nxt.id),
                self.link(de, guide, "Inhaltsverzeichnis", "relative"),
            ]

    def build_search(self, home: Page, pool: list[Page]) -> None:
        """``/search/?q=T``: paginated (``page``, default 1) and sortable (``sort``, default
        ``relevance``); every page and order is other content, and the pager and the sort
        switch spell the defaults out."""
        plan, per = self.plan, SEARCH_PER_PAGE
        self.param_defaults[(SITE, SEARCH_PATH)] = {"page": "1", "sort": SEARCH_SORTS[0]}
        for term in SEARCH_TERMS[: plan.terms]:
            hits = self.rng.sample(pool, min(len(pool), per * plan.search_pages))
            orders = (hits, sorted(hits, key=lambda p: p.id))  # by date: another order, other pages
            found: dict[tuple[str, int], Page] = {}
            for sort, order in zip(SEARCH_SORTS, orders, strict=True):
                for n in range(1, plan.search_pages + 1):
                    query = [("q", term)]
                    if n > 1:
                        query.append(("page", str(n)))
                    if sort != SEARCH_SORTS[0]:
                        query.append(("sort", sort))
                    page = self.add(SITE, SEARCH_PATH, "search", f"Search: {term}, page {n}, by {sort}",
                                    tuple(sorted(query)))
                    page.links += [self.link(page, hit, hit.heading) for hit in order[(n - 1) * per : n * per]]
                    found[(sort, n)] = page
            for (sort, n), page in found.items():
                page.links += [Link(f"?q={term}&page={m}&sort={sort}", str(m), found[(sort, m)].id)
                               for m in range(1, plan.search_pages + 1) if m != n]
                page.links += [Link(f"?q={term}&sort={other}", f"Sort by {other}", found[(other, 1)].id)
                               for other in SEARCH_SORTS if other != sort]
            home.links.append(Link(f"{SEARCH_PATH}?q={term}", f"Search: {term}", found[(SEARCH_SORTS[0], 1)].id))

    def build_index(self, docs_index: Page, guide: Page, docs: list[Page], chapters: list[Page]) -> None:
        """The index of every section of the docs (~3 MB): each link carries the session id of
        the view (``;jsessionid=``), so its bytes differ on every view while its text does not."""
        toc = self.add(SITE, TOC_PATH, "index", "Index of all sections", session_style="jsessionid")
        targets = [*docs, *chapters]
        # a summary of ~110 words per section: 3 MB in a few thousand links, as in a real index
        per_target = max(1, TOC_BYTES // (1000 * len(targets)))
        n = len(WORDS)
        for a, target in enumerate(targets):
            href = f"{relative_path(toc.base, target.path)};jsessionid={SID_PLACEHOLDER}"
            toc.links.append(Link(href, target.heading, target.id))
            for b in range(1, per_target + 1):
                summary = " ".join(WORDS[(a * 31 + b * 17 + j * 7) % n] for j in range(110))
                toc.links.append(Link(f"{href}#s-{b}", f"{a + 1}.{b} {WORDS[(a + b) % n]}", target.id,
                                      note=f": {summary}."))
        # absolute, as a site's header spells it: even a plain crawler fetches the 3 MB once
        docs_index.links.append(Link(canonical_url(SITE, TOC_PATH), "Index of all sections", toc.id))
        guide.links.append(Link(canonical_url(SITE, TOC_PATH), "Full index", toc.id))

    def build_soft_404s(self, docs: list[Page], listings: list[Page], articles: list[Page]) -> None:
        """Links to removed docs and posts, and past the blog's last page: the site answers them
        200 with one "not found" page (see :data:`SOFT_404_PREFIXES`)."""
        for i, doc in enumerate(docs[::5]):
            doc.links.append(Link(f"/docs/page-{len(docs) + 1 + i}.html", "Previous edition (removed)",
                                  None, "missing"))
        for i, article in enumerate(articles[::7]):
            article.links.append(Link(f"/blog/post-{len(articles) + 1 + i}.html", "An older post (removed)",
                                      None, "missing"))
        listings[-1].links.append(Link(f"/blog/?page={len(listings) + 1}", "Next page", None, "missing"))

    def build_blog(self, listings: list[Page], articles: list[Page], public: list[Page]) -> None:
        """Paginated listing: every ``?page=N`` is a distinct page, each listing
        is the only place its articles are linked from (besides siblings)."""
        per = self.plan.per_listing
        for n, listing in enumerate(listings):
            chunk = articles[n * per : (n + 1) * per]
            listing.links += [self.link(listing, a, a.heading) for a in chunk]
            if n + 1 < len(listings):
                listing.links.append(self.link(listing, listings[n + 1], "Next page", "relative"))
            if n > 0:
                listing.links.append(self.link(listing, listings[n - 1], "Previous page"))
            for m in self.rng.sample(range(len(listings)), min(3, len(listings))):
                if m == 0 and self.traps:  # the pager spells the default out: /blog/?page=1 is /blog/
                    listing.links.append(Link("?page=1", "1", listings[0].id))
                else:
                    listing.links.append(self.link(listing, listings[m], f"{m + 1}"))
            for a in chunk:
                a.links.append(self.link(a, listing, "Back to the listing"))
                a.links += [
                    self.link(a, sib, "Related post")
                    for sib in self.rng.sample(chunk, min(2, len(chunk)))
                    if sib is not a
                ]
                a.links.append(self.link(a, self.other(public, a), "You may also like"))

    def build_session_area(self, entry: Page, members: list[Page], style: str, home: Page) -> None:
        """Links inside an area carry the session id (``{sid}``) of the current view."""

        def with_sid(href: str) -> str:
            if style == "jsessionid":
                path, _, query = href.partition("?")
                return f"{path};jsessionid={SID_PLACEHOLDER}" + (f"?{query}" if query else "")
            sep = "&" if "?" in href else "?"
            return f"{href}{sep}{style}={SID_PLACEHOLDER}"

        area = [entry, *members]
        for page in area:
            targets = [entry, *self.rng.sample(members, min(3, len(members)))]
            if page is entry:
                targets = list(members)
            for target in targets:
                if target is page:
                    continue
                href = relative_path(page.base, target.path)
                if self.rng.random() < 0.3:
                    href = target.path
                page.links.append(Link(href=with_sid(href), text=target.heading, target=target.id))
            page.links.append(self.link(page, home, "Leave", "root"))

    # -- news.acme.test ------------------------------------------------------
    def news_href(self, base: str, cid: int, source: str) -> str:
        """ContentServer URL: ``cid`` identifies the article, the rest is noise."""
        params = [("inifile", NEWS_INIFILE), ("cid", str(cid)), ("arglink", f"{source}-{self.hrefs.token(6)}")]
        if self.rng.random() < 0.3:
            self.rng.shuffle(params)
        prefix = NEWS_PATH if self.rng.random() < 0.5 else relative_path(base, NEWS_PATH)
        return prefix + "?" + "&".join(f"{k}={v}" for k, v in params)

    def build_news(self, home: Page) -> None:
        index = self.add(NEWS, "/", "news-index", "ACME News")
        index.clock = self.traps
        articles: list[tuple[int, Page]] = []
        for i in range(self.plan.news):
            cid = NEWS_FIRST_CID + 37 * i + 5
            page = self.add(
                NEWS, NEWS_PATH, "news", f"News {i + 1}: {self.words(3)}", (("cid", str(cid)),), is_item=True
            )
            page.token = self.traps
            articles.append((cid, page))
        index.links += [
            Link(href=self.news_href(index.base, cid, "index"), text=p.heading, target=p.id) for cid, p in articles
        ]
        index.links.append(self.link(index, home, "Back to Site Test"))
        for _cid, page in articles:
            page.links.append(Link(href="/", text="News home", target=index.id))
            for other_cid, other in self.rng.sample(articles, min(2, len(articles))):
                if other is not page:
                    page.links.append(
                        Link(href=self.news_href(page.base, other_cid, "related"), text=other.heading, target=other.id)
                    )
            page.links.append(
                self.link(
                    page, self.rng.choice([p for p in self.pages.values() if p.kind == "article"]), "From our partner"
                )
            )
        home.links.append(Link(href="http://news.acme.test/", text="ACME News", target=index.id))
        self._news_index = index

    # -- termomont.rs / termomont.co.rs --------------------------------------
    def build_termomont(self, home: Page) -> None:
        t_home = self.add(TERMOMONT, "/", "tm-home", "Termomont d.o.o.")
        catalogue = self.add(TERMOMONT, "/proizvodi/", "tm-catalogue", "Proizvodi")
        contact = self.add(TERMOMONT, "/kontakt.html", "tm-contact", "Kontakt")
        products = [
            self.add(TERMOMONT, f"/proizvodi/p-{i}.html", "product", f"Proizvod {i}: {self.words(2)}", is_item=True)
            for i in range(1, self.plan.products + 1)
        ]
        t_home.links += [
            self.link(t_home, catalogue, "Proizvodi", "relative"),
            self.link(t_home, contact, "Kontakt", "relative"),
            Link(href="http://termomont.co.rs/", text="termomont.co.rs", target=t_home.id),
            self.link(t_home, home, "Partner: Site Test"),
        ]
        contact.links += [
            Link(href="tel:+381111234567", text="Pozovite nas", target=None, kind="external"),
            Link(href="mailto:prodaja@termomont.rs", text="Pišite nam", target=None, kind="external"),
            self.link(contact, t_home, "Početna", "root"),
        ]
        for i, product in enumerate(products):
            if i % 2 == 0:
                href = self.hrefs.same_site(catalogue.base, TERMOMONT, product.path, (), "relative")
            else:
                # Only ever linked on the sister domain: reachable through a variant only.
                host = self.rng.choice(("termomont.co.rs", "www.termomont.co.rs"))
                href = f"{self.rng.choice(('http', 'https'))}://{host}{product.path}"
            catalogue.links.append(Link(href=href, text=product.heading, target=product.id))
            product.links.append(
                self.link(product, catalogue, "Svi proizvodi", self.rng.choice(("relative", "index", "dot")))
            )
            product.links.append(self.link(product, products[(i + 1) % len(products)], "Sledeći", "absolute"))
        home.links.append(Link(href="https://termomont.rs/", text="Termomont", target=t_home.id))
        home.links.append(Link(href="http://www.termomont.co.rs/", text="Termomont (co.rs)", target=t_home.id))

    # -- mirror.site.test ----------------------------------------------------
    def build_mirror(self, home: Page) -> None:
        """Pick pages to mirror; the copies are made after all links exist."""
        index = self.add(MIRROR, "/", "mirror-index", "Mirror of Site Test")
        originals = [p for p in self.pages.values() if p.kind in ("doc", "article")]
        self._mirrored = self.rng.sample(originals, min(self.plan.mirrors, len(originals)))
        self._mirror_index = index
        home.links.append(Link(href="http://mirror.site.test/", text="Mirror", target=index.id))
        for original in self._mirrored:
            mirror_id = page_id_for(MIRROR, original.path)
            original.links.append(Link(href=canonical_url(MIRROR, original.path), text="Mirror copy", target=mirror_id))

    def build_print_views(self) -> None:
        """``?print=1`` twins of some articles: same body, other URL and title."""
        articles = [p for p in self.pages.values() if p.kind == "article"]
        for article in articles[:: max(1, len(articles) // self.plan.prints)][: self.plan.prints]:
            print_id = page_id_for(SITE, article.path, (("print", "1"),))
            article.links.append(
                Link(href=article.path.rsplit("/", 1)[1] + "?print=1", text="Print this page", target=print_id)
            )
            self.param_defaults[(SITE, article.path)] = {"print": "0"}
            twin = self.copy_page(article, SITE, (("print", "1"),), "print", article.title + " (print)")
            twin.links = [Link(link.href, link.text, link.target, link.kind) for link in article.links]
            twin.nav = [Link(link.href, link.text, link.target, link.kind) for link in article.nav]

    def finish_mirror(self) -> None:
        for original in self._mirrored:
            twin = self.copy_page(original, MIRROR, (), "mirror", original.title + " (mirror)")
            # Absolute hrefs: the mirror does not serve the original's neighbours.
            for src, dst in ((original.nav, twin.nav), (original.links, twin.links)):
                for link in src:
                    href = link.href
                    if link.target in self.pages:
                        t = self.pages[link.target]
                        href = canonical_url(t.site, t.path, t.query)
                    elif link.target in self.documents:
                        href = canonical_url(SITE, self.documents[link.target].path)
                    elif link.kind == "missing":
                        href = canonical_origin(SITE) + href
                    dst.append(Link(href, link.text, link.target, link.kind))
            self._mirror_index.links.append(self.link(self._mirror_index, twin, twin.heading, "relative"))
        self._mirror_index.links.append(
            Link(href="https://www.site.test/", text="The original site", target=page_id_for(SITE, "/"))
        )

    def copy_page(
        self, original: Page, site_key: str, query: tuple[tuple[str, str], ...], kind: str, title: str
    ) -> Page:
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

    # -- graph ---------------------------------------------------------------
    def add_nav(self) -> None:
        """Every page of the main site shares the same navigation bar."""
        for page in self.pages.values():
            if page.site == SITE and page.kind != "print":
                page.nav = [Link(href=href, text=text, target=target.id) for target, text, href in self._site_nav]
                page.nav.append(Link(href="http://news.acme.test/", text="News", target=self._news_index.id))

    def mark_plain_links(self) -> None:
        """Flag links whose WHATWG-resolved href is exactly the target's canonical URL."""
        for page in self.pages.values():
            base = canonical_origin(page.site) + page.base
            for link in page.all_links:
                if link.kind in ("external", "missing") or SID_PLACEHOLDER in link.href:
                    continue
                target = self.pages.get(link.target) or self.documents.get(link.target)  # type: ignore[arg-type]
                if target is None:
                    raise AssertionError(f"dangling link {link} on {page.id}")
                query = target.query if isinstance(target, Page) else ()
                link.plain = ada_url.join_url(base, link.href) == canonical_url(target.site, target.path, query)

    def reachable(self, start: str, *, plain_only: bool) -> set[str]:
        seen = {start}
        todo = deque([start])
        while todo:
            for link in self.pages[todo.popleft()].all_links:
                if link.kind != "page" or (plain_only and not link.plain):
                    continue
                if link.target not in seen:
                    seen.add(link.target)  # type: ignore[arg-type]
                    todo.append(link.target)  # type: ignore[arg-type]
        return seen
