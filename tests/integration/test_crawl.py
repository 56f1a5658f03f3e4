"""Whole crawls of the demo site (a real server on loopback) with the plugin on.

The demo site knows its ground truth (``DemoSite.page_id(url)``), so "every distinct page
fetched once, none missed" is counted, not guessed.
"""

from __future__ import annotations

import pytest
import pytest_twisted
from demo_crawl import ADDON, ConfiguredSpider, crawl

from scrapy_urlunify import Policy, standardize
from scrapy_urlunify.core._params import is_tracking_param
from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite

SIZE = 50


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE, traps=False)


@pytest_twisted.inlineCallbacks
def test_configured_spider_fetches_every_page_exactly_once(site):
    server = DemoServer(site).start()
    try:
        plain = yield crawl(server, site, {}, ConfiguredSpider)
        result = yield crawl(server, site, ADDON, ConfiguredSpider)
    finally:
        yield server.stop()
    fetches = result.page_fetches()
    assert set(fetches) == set(site.pages), "pages missed or unknown pages fetched"
    assert {p: n for p, n in fetches.items() if n > 1} == {}, "a page was fetched twice"
    assert result.stats["finish_reason"] == "finished"
    # plain Scrapy on the same spider fetches many pages again
    assert sum(plain.page_fetches().values()) > 3 * len(site.pages)
    # every URL we asked for is a standardized one: no session id, tracker, fragment, default port
    for url in result.fetched_urls:
        assert standardize(url, policy=Policy(route_fragments=False)) == url, url
        assert ";jsessionid" not in url.lower() and "phpsessid" not in url.lower()
        assert not any(
            is_tracking_param(p.split("=")[0].lower())
            for p in url.partition("?")[2].split("&")
            if p
        )
    # exactly one URL per distinct page, plus the redirects the site answers with
    redirects = [r for r in result.records if r.method == "GET" and r.status in (301, 302)]
    assert len(result.fetched_urls) == len(site.pages) + len(redirects)
    # items: one per item page, none twice; of a page and its copy (a print view, a mirror:
    # equal body text), only the one fetched first yields items (the other is a duplicate page)
    item_pages = [site.page_id(i["url"]) for i in result.items]
    assert len(item_pages) == len(set(item_pages))
    copies = site.content_duplicates
    assert (
        set(site.items) - set(copies) - set(copies.values()) <= set(item_pages) <= set(site.items)
    )
    groups: dict[str, set[str]] = {}
    for copy, original in copies.items():
        groups.setdefault(original, {original}).add(copy)
    for group in groups.values():
        if group & set(site.items):
            assert len(group & set(item_pages)) == 1, group
    assert result.stats["urlunify/signature/duplicates"] == len(copies)
    stats = result.stats
    assert stats["urlunify/duplicates"] == stats["dupefilter/filtered"] > 0
    assert stats["urlunify/rewritten"] > 0
    # the sister domain is crawlable although only termomont.rs is an allowed domain
    assert stats["urlunify/allowed_offsite"] > 0
    assert any(
        r.url.split("/")[2].endswith("termomont.co.rs") for r in result.records if r.method == "GET"
    )


@pytest_twisted.inlineCallbacks
def test_addon_line_alone_removes_most_redundant_fetches(site):
    server = DemoServer(site).start()
    try:
        plain = yield crawl(server, site, {})
        result = yield crawl(server, site, ADDON)
    finally:
        yield server.stop()
    fetches, plain_fetches = result.page_fetches(), plain.page_fetches()
    assert set(fetches) == set(site.pages)  # nothing missed on defaults
    redundant = sum(fetches.values()) - len(fetches)
    plain_redundant = sum(plain_fetches.values()) - len(plain_fetches)
    assert plain_redundant > 5 * len(site.pages)
    # what remains needs configuration: the sister domain and the news site's parameters
    assert redundant < plain_redundant / 20
    assert {p.split(":")[0] for p, n in fetches.items() if n > 1} <= {"termomont", "news"}
