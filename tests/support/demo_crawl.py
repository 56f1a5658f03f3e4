"""Running real Scrapy crawls against the demo server inside pytest-twisted tests."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler, CrawlerRunner
from twisted.internet import defer

from scrapy_urlunify.demo.proxy import demo_settings
from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite
from scrapy_urlunify.demo.spider import DemoSpider

BASE_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": False,
    "RETRY_ENABLED": False,
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
    "DOWNLOAD_TIMEOUT": 10,
    "CLOSESPIDER_TIMEOUT": 60,  # a runaway crawl ends with reason "closespider_timeout"
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
}

ADDON = {"ADDONS": {"scrapy_urlunify.Addon": 0}}


class ConfiguredSpider(DemoSpider):
    """The demo spider with the per-site configuration a user would write for the demo site."""

    name = "configured"
    allowed_domains = ["site.test", "news.acme.test", "termomont.rs"]
    custom_settings = {
        "URLUNIFY_SISTER_SUFFIXES": True,
        "URLUNIFY_KEY_PARAMS": {"news.acme.test": ["cid"]},
        "URLUNIFY_REMOVE_PARAMS": {"news.acme.test": ["inifile", "arglink"]},
    }


@dataclass
class CrawlResult:
    crawler: Crawler
    records: list[Any]
    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def stats(self) -> dict[str, Any]:
        return self.crawler.stats.get_stats()

    def page_fetches(self) -> Counter[str]:
        """Page id -> number of 200 responses that served it."""
        return Counter(
            r.page_id for r in self.records if r.page_id and r.method == "GET" and r.status == 200
        )

    @property
    def fetched_urls(self) -> list[str]:
        return [r.url for r in self.records if r.method == "GET"]


@defer.inlineCallbacks
def crawl(
    server: DemoServer,
    site: DemoSite,
    settings: dict[str, Any] | None = None,
    spidercls: type = DemoSpider,
    **spider_kwargs: Any,
):  # type: ignore[no-untyped-def]
    """Crawl the demo site once; returns a :class:`CrawlResult` (a Deferred)."""
    start = len(server.log)
    runner = CrawlerRunner(demo_settings(server.proxy_url, **{**BASE_SETTINGS, **(settings or {})}))
    crawler = runner.create_crawler(spidercls)
    items: list[dict[str, Any]] = []

    def collect(item: dict[str, Any], **kwargs: Any) -> None:
        items.append(item)

    crawler.signals.connect(
        collect, signal=signals.item_scraped
    )  # held weakly: keep `collect` alive
    spider_kwargs.setdefault("start_urls", list(site.start_urls))
    yield runner.crawl(crawler, **spider_kwargs)
    return CrawlResult(crawler, list(server.log[start:]), items)


def fetched(out: Path, site: DemoSite) -> Counter[str]:
    """Page id -> how many times it was fetched, from the ``<status> <url>`` lines a crawl job in its
    own process writes (crawl_job.py's ``recording``)."""
    return Counter(
        site.page_id(line.split()[1])
        for line in out.read_text().splitlines()
        if line.startswith("200")
    )
