"""One parse per page: the signature middleware reads the page's text from the tree of Scrapy's
selector, which it builds when the spider has not, and which the spider's callback then reuses."""

from __future__ import annotations

import pytest
import pytest_twisted
from demo_crawl import ADDON, ConfiguredSpider, crawl

from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite


class SelectorWatchingSpider(ConfiguredSpider):
    """Records, for each page, whether its selector existed when the callback got the response,
    and whether the callback's own selector is that one."""

    name = "selector_watching"
    built_before: list[bool] = []
    reused: list[bool] = []

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        before = response._cached_selector
        SelectorWatchingSpider.built_before.append(before is not None)
        items = list(super().parse_page(response))  # response.css(...): the selector's tree
        SelectorWatchingSpider.reused.append(before is None or response.selector is before)
        yield from items


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=40)


@pytest.mark.parametrize("signatures", [True, False])
@pytest_twisted.inlineCallbacks
def test_the_spider_gets_the_tree_the_signature_was_read_from(site, signatures):
    SelectorWatchingSpider.built_before, SelectorWatchingSpider.reused = [], []
    server = DemoServer(site).start()
    try:
        result = yield crawl(
            server, site, {**ADDON, "URLUNIFY_SIGNATURES": signatures}, SelectorWatchingSpider
        )
    finally:
        yield server.stop()
    built = SelectorWatchingSpider.built_before
    assert len(built) > 20 and all(SelectorWatchingSpider.reused)
    # with signatures every HTML page reaches the callback parsed once already; without, none does
    assert all(built) if signatures else not any(built)
    if signatures:
        assert result.stats["urlunify/signature/duplicates"] > 0
