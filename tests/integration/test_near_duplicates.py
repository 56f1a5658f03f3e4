"""Near-duplicate pages in real crawls of a small MediaWiki-like site (tests/_wikisite.py)."""

from __future__ import annotations

import _wikisite
import pytest
import pytest_twisted
from _minicrawl import SETTINGS
from scrapy import Spider, signals
from scrapy.crawler import CrawlerRunner
from scrapy.linkextractors import LinkExtractor

from scrapy_urlunify.integration.near_duplicates import distance_for
from scrapy_urlunify.learning.near_duplicates import ITEM_DISTANCE, PAGE_DISTANCE


class WikiSpider(Spider):
    name = "wiki"

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.seen: dict[str, tuple[str | None, float | None]] = {}

    def parse(self, response):  # type: ignore[no-untyped-def]
        path = response.url.split("/", 3)[3]
        self.seen["/" + path] = (response.meta.get("urlunify_near_duplicate_of"),
                                 response.meta.get("urlunify_resemblance"))
        yield {"url": response.url, "title": response.css("h1::text").get()}
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url, self.parse)


@pytest_twisted.inlineCallbacks
def crawl(settings, wrong=()):  # type: ignore[no-untyped-def]
    site, port, base = _wikisite.start(wrong)
    items, dropped = [], []
    try:
        runner = CrawlerRunner({**SETTINGS, **settings})
        crawler = runner.create_crawler(WikiSpider)
        crawler.signals.connect(lambda item, **kw: items.append(item), signal=signals.item_scraped)
        crawler.signals.connect(lambda item, exception, **kw: dropped.append((item, str(exception))),
                                signal=signals.item_dropped)
        yield runner.crawl(crawler, start_urls=[base + "/"])
    finally:
        yield port.stopListening()
    return site, crawler.stats.get_stats(), crawler.spider.seen, items, dropped


def test_resemblance_settings_map_to_the_calibrated_distances():
    assert distance_for(0.94) == PAGE_DISTANCE
    assert distance_for(0.985) == ITEM_DISTANCE
    assert distance_for(1.0) == 0


VIEWS = ("/index.php?title=A0&oldid=1234", "/index.php?title=A1&oldid=1234",
         "/index.php?title=A2&printable=yes", "/wiki/Old_A3")


@pytest_twisted.inlineCallbacks
def test_views_of_an_article_are_near_duplicates_and_their_links_followed():
    site, stats, seen, items, dropped = yield crawl({"URLUNIFY_DROP_NEAR_DUPLICATE_ITEMS": False})
    # every view has its own body text (banner, no navigation, "Redirected from"): no exact
    # duplicate; each is a near-duplicate of its article, and reaches the callback
    assert "urlunify/signature/duplicates" not in stats
    for view, article in zip(VIEWS, ("A0", "A1", "A2", "A3")):
        of, alike = seen[view]
        assert of is not None and of.endswith(f"/wiki/{article}"), (view, of)
        assert alike is not None and 0.94 <= alike <= 1.0
    # the articles themselves are not
    for article in _wikisite.ARTICLES:
        assert seen[f"/wiki/{article}"] == (None, None)
    assert seen["/"] == (None, None) and seen["/claims"] == (None, None)
    # the links of a near-duplicate page are followed: /wiki/Only_in_print is linked only there
    assert site.hits["/wiki/Only_in_print"] == 1
    # the four views, and the ten /claims/N pages (articles with a banner)
    assert stats["urlunify/signature/near_duplicates"] == 4 + 10
    assert not dropped


@pytest_twisted.inlineCallbacks
def test_near_duplicates_can_be_switched_off():
    site, stats, seen, items, dropped = yield crawl({"URLUNIFY_NEAR_DUPLICATES": False})
    assert "urlunify/signature/near_duplicates" not in stats
    assert all(v == (None, None) for v in seen.values())
    assert not dropped


@pytest.mark.parametrize("value", [0.5, "x"])
def test_a_resemblance_below_the_reach_of_the_index_is_refused(value):
    from scrapy.settings import Settings

    from scrapy_urlunify.integration.settings import SettingsError, validate

    with pytest.raises(SettingsError, match="URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE"):
        validate(Settings({"URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE": value}))
