"""The traps a URL learner must survive, laid over the main site's sections.

Default values spelled out (``/blog/?page=1``, ``?lang=en`` on the guide's chapters, which also
exist in German, ``/search/?q=..&page=1&sort=relevance`` on a paginated, sortable site search),
a ~3 MB index of every section whose links carry a per-view ``;jsessionid=``, a clock in some
bodies and a per-view form token in others, and soft 404s (removed docs and posts answered 200
with one "not found" page). The site search is :mod:`.search`. A site built with
``traps=False`` has none of them.
"""

from __future__ import annotations

from scrapy_urlunify.demo.builder import WORDS, SiteBuilder
from scrapy_urlunify.demo.hosts import SITE
from scrapy_urlunify.demo.hrefs import canonical_url, relative_path
from scrapy_urlunify.demo.model import SID_PLACEHOLDER, Link, Page
from scrapy_urlunify.demo.plan import Plan
from scrapy_urlunify.demo.search import build_search
from scrapy_urlunify.demo.sections import Sections

GERMAN = (
    "Anfrage",
    "Antwort",
    "Seite",
    "Verzeichnis",
    "Kapitel",
    "Sitzung",
    "Kennung",
    "Abschnitt",
    "Zeichen",
    "Vorlage",
    "Spiegel",
    "Suche",
    "Ergebnis",
    "Sprache",
    "Adresse",
    "Pfad",
    "Parameter",
    "Wert",
    "Standard",
    "Schnittstelle",
    "Speicher",
    "Warteschlange",
    "Umleitung",
    "Inhalt",
)

#: The index of every section (~3 MB, like a documentation site's genindex).
TOC_PATH = "/docs/genindex.html"
TOC_BYTES = 3_000_000
#: Paths whose missing pages are answered 200 with one "not found" page (soft 404s).
SOFT_404_PREFIXES = ("/docs/", "/blog/")


def build_traps(builder: SiteBuilder, sections: Sections, plan: Plan) -> None:
    """Lay every trap over ``sections``."""
    s = sections
    s.home.clock = True
    s.contact.token = True
    for listing in s.listings:
        listing.clock = True
    build_languages(builder, s.guide, s.chapters)
    build_search(
        builder, s.home, [*s.docs, *s.chapters, *s.articles], plan.terms, plan.search_pages
    )
    build_index(builder, s.docs_index, s.guide, s.docs, s.chapters)
    build_soft_404s(s.docs, s.listings, s.articles)


def build_languages(builder: SiteBuilder, guide: Page, chapters: list[Page]) -> None:
    """Every guide chapter also in German (``?lang=de``, other text); ``?lang=en`` is the
    default, and the language switcher spells it out."""
    b = builder
    germans = []
    for n, ch in enumerate(chapters, start=1):
        b.param_defaults[(SITE, ch.path)] = {"lang": "en"}
        germans.append(
            b.add(
                SITE,
                ch.path,
                "chapter-de",
                f"Kapitel {n}: {b.words(2, GERMAN)}",
                (("lang", "de"),),
                vocabulary=GERMAN,
            )
        )
    for i, (ch, de) in enumerate(zip(chapters, germans, strict=True)):
        name = ch.path.rsplit("/", 1)[1]
        nxt = germans[(i + 1) % len(germans)]
        ch.links += [
            Link(f"{name}?lang=en", "English", ch.id),
            Link(f"{name}?lang=de", "Deutsch", de.id),
        ]
        de.links += [
            Link(f"{name}?lang=en", "English", ch.id),
            Link(f"{nxt.path.rsplit('/', 1)[1]}?lang=de", "Nächstes Kapitel", nxt.id),
            b.link(de, guide, "Inhaltsverzeichnis", "relative"),
        ]


def build_index(
    builder: SiteBuilder, docs_index: Page, guide: Page, docs: list[Page], chapters: list[Page]
) -> None:
    """The index of every section of the docs (~3 MB): each link carries the session id of
    the view (``;jsessionid=``), so its bytes differ on every view while its text does not."""
    toc = builder.add(SITE, TOC_PATH, "index", "Index of all sections", session_style="jsessionid")
    targets = [*docs, *chapters]
    # a summary of ~110 words per section: 3 MB in a few thousand links, as in a real index
    per_target = max(1, TOC_BYTES // (1000 * len(targets)))
    n = len(WORDS)
    for a, target in enumerate(targets):
        href = f"{relative_path(toc.base, target.path)};jsessionid={SID_PLACEHOLDER}"
        toc.links.append(Link(href, target.heading, target.id))
        for b in range(1, per_target + 1):
            summary = " ".join(WORDS[(a * 31 + b * 17 + j * 7) % n] for j in range(110))
            toc.links.append(
                Link(
                    f"{href}#s-{b}",
                    f"{a + 1}.{b} {WORDS[(a + b) % n]}",
                    target.id,
                    note=f": {summary}.",
                )
            )
    # absolute, as a site's header spells it: even a plain crawler fetches the 3 MB once
    docs_index.links.append(Link(canonical_url(SITE, TOC_PATH), "Index of all sections", toc.id))
    guide.links.append(Link(canonical_url(SITE, TOC_PATH), "Full index", toc.id))


def build_soft_404s(docs: list[Page], listings: list[Page], articles: list[Page]) -> None:
    """Links to removed docs and posts, and past the blog's last page: the site answers them
    200 with one "not found" page (see :data:`SOFT_404_PREFIXES`)."""
    for i, doc in enumerate(docs[::5]):
        doc.links.append(
            Link(
                f"/docs/page-{len(docs) + 1 + i}.html",
                "Previous edition (removed)",
                None,
                "missing",
            )
        )
    for i, article in enumerate(articles[::7]):
        article.links.append(
            Link(
                f"/blog/post-{len(articles) + 1 + i}.html",
                "An older post (removed)",
                None,
                "missing",
            )
        )
    listings[-1].links.append(
        Link(f"/blog/?page={len(listings) + 1}", "Next page", None, "missing")
    )
