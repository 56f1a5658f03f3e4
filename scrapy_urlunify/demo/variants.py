"""The variant gallery: one link per way of spelling a URL of the main site.

Links across the site are spelled in randomly drawn styles (:mod:`.hrefs`); the home page also
carries one link per style, origin spelling and tracking parameter, so every variant a URL
unifier has to see through exists on a site of any size.
"""

from __future__ import annotations

from scrapy_urlunify.demo.builder import SiteBuilder
from scrapy_urlunify.demo.hosts import SITE
from scrapy_urlunify.demo.hrefs import query_string
from scrapy_urlunify.demo.model import Link, Page

#: Every spelling of the main site's origin the gallery links through.
ORIGIN_SPELLINGS = (
    "http://site.test",
    "https://site.test",
    "http://www.site.test",
    "https://www.site.test:443",
    "http://www.site.test:80",
    "http://WWW.Site.TEST",
    "https://Site.TEST:443",
    "//site.test",
)
#: The same-site href styles of :meth:`.hrefs.Hrefs.same_site` the gallery shows.
GALLERY_STYLES = (
    "root",
    "relative",
    "dot",
    "backslash",
    "double_slash",
    "index",
    "fragment",
    "hashbang",
    "protocol_relative",
)


def variant_gallery(builder: SiteBuilder, source: Page, pool: list[Page]) -> list[Link]:
    """One link per variant spelling from ``source`` to pages of ``pool``."""
    hrefs, rng = builder.hrefs, builder.rng
    spelled: list[tuple[str, Page]] = []
    for origin in ORIGIN_SPELLINGS:
        target = builder.other(pool, source)
        spelled.append((origin + target.path + query_string(target.query), target))
    for style in GALLERY_STYLES:
        target = builder.other(pool, source)
        if style == "index":
            target = rng.choice([p for p in pool if p.path.endswith("/") and p.path != "/"])
        if style == "backslash":
            target = rng.choice([p for p in pool if p.path.count("/") >= 3])
        spelled.append(
            (hrefs.same_site(source.base, SITE, target.path, target.query, style), target)
        )
    for params in (
        [("utm_source", "newsletter"), ("utm_medium", "email"), ("utm_campaign", "launch")],
        [("fbclid", "IwAR" + hrefs.token(28))],
        [("gclid", "Cj0K" + hrefs.token(24))],
    ):
        target = builder.other(pool, source)
        spelled.append(
            (target.path + "?" + "&".join(f"{k}={v}" for k, v in [*target.query, *params]), target)
        )
    return [
        Link(href=href, text=f"Variant {n}: {target.heading}", target=target.id)
        for n, (href, target) in enumerate(spelled, start=1)
    ]
