"""Drop-in compatibility with Scrapy's and scrapy-redis's own components (issue 11), each in a
real crawl of the mini site (tests/_minisite.py) with the add-on."""

from __future__ import annotations

import _minisite
import pytest_twisted
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.linkextractors import LinkExtractor

from scrapy_urlunify.integration.context import UnifyContext

SETTINGS = {
    "ADDONS": {"scrapy_urlunify.Addon": 0},
    "ROBOTSTXT_OBEY": False,
    "CONCURRENT_REQUESTS": 1,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "DEBUG",
}


class NamelessSpider(scrapy.Spider):
    """A spider class without a class-level ``name``, as scripts write them."""

    def parse(self, response):  # type: ignore[no-untyped-def]
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url)


@pytest_twisted.inlineCallbacks
def run(spidercls, settings=None, site=None, **kwargs):  # type: ignore[no-untyped-def]
    """Crawl the mini site (or start_urls given in kwargs); returns (site, crawler, items)."""
    site, port, base = _minisite.start() if site is None else site
    items: list = []
    try:
        runner = CrawlerRunner({**SETTINGS, **(settings or {})})
        crawler = runner.create_crawler(spidercls)

        def scraped(item, **kw):  # type: ignore[no-untyped-def]
            items.append(item)

        crawler.signals.connect(scraped, signal=signals.item_scraped)
        kwargs.setdefault("start_urls", [base + "/"])
        yield runner.crawl(crawler, **kwargs)
    finally:
        yield port.stopListening()
    return site, crawler, items


# -- 1. spiders without a class-level name -------------------------------------------------------

@pytest_twisted.inlineCallbacks
def test_plain_scrapy_spider_named_by_keyword_crawls():
    """``process.crawl(scrapy.Spider, name="x", start_urls=[...])``: the scope is "x"."""
    site, crawler, _ = yield run(scrapy.Spider, name="x")
    assert site.hits["/"] == 1
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert UnifyContext.of(crawler).scope == "x"


@pytest_twisted.inlineCallbacks
def test_nameless_spider_class_named_by_keyword_dedups():
    site, crawler, _ = yield run(NamelessSpider, name="y")
    assert UnifyContext.of(crawler).scope == "y"
    assert site.hits["/next"] == 1 and site.hits["/list"] == 1
    assert max(site.hits.values()) == 1  # every URL fetched once
    assert crawler.stats.get_value("dupefilter/filtered", 0) > 0
