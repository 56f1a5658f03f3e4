"""The link middleware in a real crawl: opting out, and fetching links as extracted."""


from __future__ import annotations

import pytest
import pytest_twisted
from _crawl import ADDON, ConfiguredSpider, crawl

from scrapy_urlunify import standardize
from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite

SIZE = 50


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE)


@pytest_twisted.inlineCallbacks
def test_opt_out_and_rewrite_off(site):
    server = DemoServer(site).start()
    try:
        result = yield crawl(server, site, {**ADDON, "URLUNIFY_REWRITE": False}, ConfiguredSpider)
    finally:
        yield server.stop()
    assert result.stats.get("urlunify/rewritten", 0) == 0
    # URLs are fetched as the spider extracted them (not standardized), yet each page once
    assert any(standardize(u) != u for u in result.fetched_urls)
    fetches = result.page_fetches()
    assert set(fetches) == set(site.pages) and max(fetches.values()) == 1
