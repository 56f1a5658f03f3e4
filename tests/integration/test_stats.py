"""The plugin's stats helper: counts kept locally appear wherever Scrapy's stats are read."""

from __future__ import annotations

from scrapy import Spider
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_urlunify.integration.context import UnifyContext


class S(Spider):
    name = "s"


def _crawler():  # type: ignore[no-untyped-def]
    crawler = get_crawler(S, {"STATS_CLASS": "scrapy.statscollectors.MemoryStatsCollector"})
    crawler.stats = MemoryStatsCollector(crawler)
    return crawler


def test_counts_appear_when_stats_are_read():
    crawler = _crawler()
    stats = UnifyContext.of(crawler).stats
    stats.inc("links")
    stats.inc("links", 2)
    stats.inc_scrapy("dupefilter/filtered")
    assert crawler.stats.get_value("urlunify/links") == 3
    stats.inc("filtered/anchor")
    assert crawler.stats.get_stats()["urlunify/filtered/anchor"] == 1
    assert crawler.stats.get_stats()["dupefilter/filtered"] == 1
    stats.inc("links")
    assert crawler.stats.get_value("urlunify/links") == 4  # added, not set


def test_counts_are_written_before_the_collector_closes():
    crawler = _crawler()
    crawler.spider = crawler._create_spider()
    crawler.stats.open_spider()
    UnifyContext.of(crawler).stats.inc("duplicates", 5)
    crawler.stats.close_spider(reason="finished")
    assert crawler.stats.spider_stats["s"]["urlunify/duplicates"] == 5


def test_set_writes_at_once():
    crawler = _crawler()
    UnifyContext.of(crawler).stats.set("resume/rescheduled", 7)
    assert crawler.stats._stats["urlunify/resume/rescheduled"] == 7
