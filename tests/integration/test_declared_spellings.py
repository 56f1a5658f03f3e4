"""A page the site declares under two paths is evidence for learning, as a page on one path is: a
real crawl of a small shop (tests/support/routesite.py) whose products have a CMS route and a
pretty URL, with the add-on alone."""

from __future__ import annotations

from collections import Counter
from urllib.parse import parse_qsl, urlsplit

import pytest_twisted
import routesite
from minicrawl import run
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class ShopSpider(CrawlSpider):
    name = "shop"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url}

    def parse_start_url(self, response, **kwargs):  # type: ignore[no-untyped-def]
        return self.parse_page(response)


def _page(url: str) -> str | None:
    parts = urlsplit(url)
    return routesite.page_of(parts.path, dict(parse_qsl(parts.query)))


@pytest_twisted.inlineCallbacks
def test_views_of_a_page_on_two_declared_paths_teach_their_parameter():
    site, crawler, items, dropped = yield run(routesite.start, "/", {}, ShopSpider)
    stats = crawler.stats.get_stats()
    # each product's text is on its route and its pretty path; the route declares the pretty URL
    # canonical, so the text is no soft 404 and its views' pairs are evidence
    assert stats.get("urlunify/learned/param/127.0.0.1/view") == 3
    views = sum(n for url, n in site.hits.items() if "view=" in url)
    assert views <= 10  # three products' two views, three probation samples (of 24)
    # nothing lost, nothing twice
    shown = Counter(_page(item["url"]) for item in items)
    products = {f"/product/{n}" for n in range(1, routesite.PRODUCTS + 1)}
    assert set(shown) == {"/", "/category", *products}
    assert max(shown.values()) == 1
