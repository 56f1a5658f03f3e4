"""The site search, a trap for a URL learner: ``/search/?q=T`` is paginated (``page``, default 1)
and sortable (``sort``, default ``relevance``), and its pager and sort switch spell the defaults
out, so the same result page has several spellings beside the pages that really differ."""

from __future__ import annotations

from scrapy_urlunify.demo.builder import SiteBuilder
from scrapy_urlunify.demo.hosts import SITE
from scrapy_urlunify.demo.model import Link, Page

SEARCH_PATH = "/search/"
#: The terms searched for (a site of any size gets some), the sort orders (the first is the
#: default) and the results per page.
SEARCH_TERMS = ("crawler", "proxy", "sitemap", "cookie")
SEARCH_SORTS = ("relevance", "date")
SEARCH_PER_PAGE = 4


def build_search(
    builder: SiteBuilder, home: Page, pool: list[Page], terms: int, search_pages: int
) -> None:
    """The result pages of the first ``terms`` search terms, ``search_pages`` per sort order
    (every page and order is other content), each term linked from ``home``."""
    b, per = builder, SEARCH_PER_PAGE
    b.param_defaults[(SITE, SEARCH_PATH)] = {"page": "1", "sort": SEARCH_SORTS[0]}
    for term in SEARCH_TERMS[:terms]:
        hits = b.rng.sample(pool, min(len(pool), per * search_pages))
        orders = (hits, sorted(hits, key=lambda p: p.id))  # by date: another order, other pages
        found: dict[tuple[str, int], Page] = {}
        for sort, order in zip(SEARCH_SORTS, orders, strict=True):
            for n in range(1, search_pages + 1):
                query = [("q", term)]
                if n > 1:
                    query.append(("page", str(n)))
                if sort != SEARCH_SORTS[0]:
                    query.append(("sort", sort))
                page = b.add(
                    SITE,
                    SEARCH_PATH,
                    "search",
                    f"Search: {term}, page {n}, by {sort}",
                    tuple(sorted(query)),
                )
                page.links += [
                    b.link(page, hit, hit.heading) for hit in order[(n - 1) * per : n * per]
                ]
                found[(sort, n)] = page
        for (sort, n), page in found.items():
            page.links += [
                Link(f"?q={term}&page={m}&sort={sort}", str(m), found[(sort, m)].id)
                for m in range(1, search_pages + 1)
                if m != n
            ]
            page.links += [
                Link(f"?q={term}&sort={other}", f"Sort by {other}", found[(other, 1)].id)
                for other in SEARCH_SORTS
                if other != sort
            ]
        home.links.append(
            Link(f"{SEARCH_PATH}?q={term}", f"Search: {term}", found[(SEARCH_SORTS[0], 1)].id)
        )
