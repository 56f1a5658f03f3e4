"""A real crawl of a generated shop (``tools/sites/dustsite.py``, ``tools/sites/storesite.py``)
through its server, a forward proxy for the shop's host names, with the add-on."""

from __future__ import annotations

from typing import Any

import pytest_twisted
from scrapy import signals
from scrapy.crawler import CrawlerRunner

from scrapy_urlunify.demo.proxy import demo_settings


@pytest_twisted.inlineCallbacks
def crawl_shop(proxy: str, hosts: list[str], spider: type, **settings: Any):  # type: ignore[no-untyped-def]
    """One crawl with the add-on in Scrapy's default order: (stats, items, downloaded URLs)."""
    runner = CrawlerRunner(
        {
            "ADDONS": {"scrapy_urlunify.Addon": 0},
            "ROBOTSTXT_OBEY": False,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "WARNING",
            "CLOSESPIDER_TIMEOUT": 60,
            **demo_settings(proxy, URLUNIFY_DEMO_HOSTS=hosts),
            **settings,
        }
    )
    crawler = runner.create_crawler(spider)
    items: list[dict[str, str]] = []
    downloads: list[str] = []

    def scraped(item, **kw):  # type: ignore[no-untyped-def]
        items.append(item)

    def downloaded(response, **kw):  # type: ignore[no-untyped-def]
        downloads.append(response.url)

    # named functions: the signals hold weak references
    crawler.signals.connect(scraped, signal=signals.item_scraped)
    crawler.signals.connect(downloaded, signal=signals.response_downloaded)
    yield runner.crawl(crawler)
    return crawler.stats.get_stats(), items, downloads
