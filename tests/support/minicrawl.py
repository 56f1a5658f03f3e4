"""Real crawls of the mini site (tests/support/minisite.py) with the add-on: the spider, its settings,
and ``crawl(settings)`` / ``crawl_from(path, settings)`` returning the site, stats, items and drops.
"""

from __future__ import annotations

from collections import Counter

import minisite
import pytest_twisted
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class MiniSpider(CrawlSpider):
    name = "mini"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        for article in response.css("article"):
            yield {
                "url": response.url,
                "title": article.css("h1::text").get(),
                "text": article.css(".text::text").get(),
            }

    def parse_start_url(self, response, **kwargs):  # type: ignore[no-untyped-def]
        return self.parse_page(response)


class PageSpider(CrawlSpider):
    """Every link followed, one item per page: its URL (what a site's ``page_of`` scores)."""

    name = "pages"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url}

    def parse_start_url(self, response, **kwargs):  # type: ignore[no-untyped-def]
        return self.parse_page(response)


SETTINGS = {
    "ADDONS": {"scrapy_urlunify.Addon": 0},
    "ROBOTSTXT_OBEY": False,
    "CONCURRENT_REQUESTS": 1,  # one page at a time, in link order: a deterministic crawl
    "DEPTH_PRIORITY": 1,
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
}


@pytest_twisted.inlineCallbacks
def run(start, path, settings, spidercls=MiniSpider):  # type: ignore[no-untyped-def]
    """Crawl the site ``start()`` serves (``(site, port, base URL)``) from ``path`` with
    ``spidercls``: (site, crawler, items scraped, (item, reason) of the items dropped).
    ``settings`` may be a function of the site's port."""
    site, port, base = start()
    items, dropped = [], []
    try:
        if callable(settings):
            settings = settings(port)
        runner = CrawlerRunner({**SETTINGS, **settings})
        crawler = runner.create_crawler(spidercls)

        def scraped(item, **kw):  # type: ignore[no-untyped-def]
            items.append(item)

        def dropped_item(item, exception, **kw):  # type: ignore[no-untyped-def]
            dropped.append((item, str(exception)))

        # named functions: the signals hold weak references
        crawler.signals.connect(scraped, signal=signals.item_scraped)
        crawler.signals.connect(dropped_item, signal=signals.item_dropped)
        yield runner.crawl(crawler, start_urls=[base + path])
    finally:
        yield port.stopListening()
    return site, crawler, items, dropped


@pytest_twisted.inlineCallbacks
def crawl(settings):  # type: ignore[no-untyped-def]
    """The mini site from ``/``: (site, stats, items, dropped items)."""
    site, crawler, items, dropped = yield run(minisite.start, "/", settings)
    return site, crawler.stats.get_stats(), items, dropped


@pytest_twisted.inlineCallbacks
def crawl_site(start, path, settings):  # type: ignore[no-untyped-def]
    """Crawl the site that ``start()`` serves from ``path``: (site, stats, items)."""
    site, crawler, items, _ = yield run(start, path, settings)
    return site, crawler.stats.get_stats(), items


@pytest_twisted.inlineCallbacks
def crawl_from(path, settings):  # type: ignore[no-untyped-def]
    """The mini site from ``path``: (site, stats)."""
    site, crawler, _, _ = yield run(minisite.start, path, settings)
    return site, crawler.stats.get_stats()


def last_of(fetched: list[str], paths: set[str]) -> int:
    """The position (from 1) in ``fetched`` of the last of ``paths``: the responses a crawl
    took to fetch them all."""
    return max(i for i, path in enumerate(fetched, 1) if path in paths)


def assert_every_page_once(crawler, items, page_of, pages) -> None:  # type: ignore[no-untyped-def]
    """Every page of ``pages`` was scraped once (``page_of``: the page of an item's URL), and
    the crawl finished: nothing lost, nothing twice."""
    shown = Counter(page_of(item["url"]) for item in items)
    assert set(shown) == pages
    assert max(shown.values()) == 1
    assert crawler.stats.get_value("finish_reason") == "finished"
