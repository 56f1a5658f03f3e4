"""Content duplicates: other pages with exactly another page's body text.

``?print=1`` views of some articles (same host, other URL and title) and ``mirror.site.test``,
which serves copies of some docs and articles. No URL rule can tell them from their originals;
only a body signature can.
"""

from __future__ import annotations

from dataclasses import dataclass

from scrapy_urlunify.demo.builder import SiteBuilder, page_id_for
from scrapy_urlunify.demo.hosts import MIRROR, SITE, canonical_origin
from scrapy_urlunify.demo.hrefs import canonical_url
from scrapy_urlunify.demo.model import Link, Page


@dataclass
class Mirror:
    """The mirror host's index and the pages it will copy."""

    index: Page
    originals: list[Page]


def build_mirror(builder: SiteBuilder, home: Page, count: int) -> Mirror:
    """Pick ``count`` pages to mirror and link each to its copy; :func:`copy_mirror` makes the
    copies once all links exist."""
    b = builder
    index = b.add(MIRROR, "/", "mirror-index", "Mirror of Site Test")
    originals = [p for p in b.pages.values() if p.kind in ("doc", "article")]
    mirrored = b.rng.sample(originals, min(count, len(originals)))
    home.links.append(Link(href="http://mirror.site.test/", text="Mirror", target=index.id))
    for original in mirrored:
        mirror_id = page_id_for(MIRROR, original.path)
        original.links.append(
            Link(href=canonical_url(MIRROR, original.path), text="Mirror copy", target=mirror_id)
        )
    return Mirror(index, mirrored)


def build_print_views(builder: SiteBuilder, count: int) -> None:
    """``?print=1`` twins of ``count`` articles: same body, other URL and title."""
    b = builder
    articles = [p for p in b.pages.values() if p.kind == "article"]
    for article in articles[:: max(1, len(articles) // count)][:count]:
        print_id = page_id_for(SITE, article.path, (("print", "1"),))
        article.links.append(
            Link(
                href=article.path.rsplit("/", 1)[1] + "?print=1",
                text="Print this page",
                target=print_id,
            )
        )
        b.param_defaults[(SITE, article.path)] = {"print": "0"}
        twin = b.copy_page(article, SITE, (("print", "1"),), "print", article.title + " (print)")
        twin.links = [Link(link.href, link.text, link.target, link.kind) for link in article.links]
        twin.nav = [Link(link.href, link.text, link.target, link.kind) for link in article.nav]


def copy_mirror(builder: SiteBuilder, mirror: Mirror) -> None:
    """The mirror's copies of its originals, their links and navigation made absolute."""
    b = builder
    for original in mirror.originals:
        twin = b.copy_page(original, MIRROR, (), "mirror", original.title + " (mirror)")
        # Absolute hrefs: the mirror does not serve the original's neighbours.
        for src, dst in ((original.nav, twin.nav), (original.links, twin.links)):
            for link in src:
                href = link.href
                if link.target in b.pages:
                    t = b.pages[link.target]
                    href = canonical_url(t.site, t.path, t.query)
                elif link.target in b.documents:
                    href = canonical_url(SITE, b.documents[link.target].path)
                elif link.kind == "missing":
                    href = canonical_origin(SITE) + href
                dst.append(Link(href, link.text, link.target, link.kind))
        mirror.index.links.append(b.link(mirror.index, twin, twin.heading, "relative"))
    mirror.index.links.append(
        Link(href="https://www.site.test/", text="The original site", target=page_id_for(SITE, "/"))
    )
