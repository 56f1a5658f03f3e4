"""The plugin's stats helper: counts kept locally appear wherever Scrapy's stats are read."""

from __future__ import annotations

from scrapy import Spider
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._summary import format_summary, summarize


class S(Spider):
    name = "s"


def _crawler():  # type: ignore[no-untyped-def]
    crawler = get_crawler(S, {"STATS_CLASS": "scrapy.statscollectors.MemoryStatsCollector"})
    crawler.stats = MemoryStatsCollector(crawler)
    return crawler


def test_counts_appear_when_stats_are_read():
    crawler = _crawler()
    stats = UnifyCrawl.of(crawler).stats
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
    UnifyCrawl.of(crawler).stats.inc("duplicates", 5)
    crawler.stats.close_spider(reason="finished")
    assert crawler.stats.spider_stats["s"]["urlunify/duplicates"] == 5


def test_set_writes_at_once():
    crawler = _crawler()
    UnifyCrawl.of(crawler).stats.set("resume/rescheduled", 7)
    assert crawler.stats._stats["urlunify/resume/rescheduled"] == 7


def test_the_summary_counts_every_dupefilters_duplicates_and_splits_exact_repeats_when_told():
    crawler = _crawler()
    stats = crawler.stats
    for key, value in {
        "urlunify/links": 200,
        "urlunify/filtered/extension:pdf": 10,
        "dupefilter/filtered": 120,
        "urlunify/filtered/anchor": 7,
        "urlunify/filtered/scheme:mailto": 5,
        "downloader/request_count": 40,
    }.items():
        stats.set_value(key, value)
    s = summarize(stats.get_stats())
    # a dupefilter that does not count exact repeats apart (the project's own): all of them
    assert (s["duplicates"], s["same_url"], s["unified"], s["saved"]) == (120, None, None, 130)
    assert "duplicates filtered 120 (exact repeats and other spellings" in format_summary(s)
    stats.set_value("urlunify/duplicates/same_url", 80)
    s = summarize(stats.get_stats())
    # what the add-on saved beyond plain Scrapy: the filtered links plain Scrapy would have
    # requested (not an on-page anchor, not a mailto: link) and the other spellings
    assert (s["duplicates"], s["same_url"], s["unified"], s["saved"]) == (120, 80, 40, 50)
    text = format_summary(s)
    assert (
        "duplicates filtered 120: 80 the same URL again (plain Scrapy drops these too), 40 other spellings"
        in text
    )
    assert "requests saved      50 (55.6% of the requests plain Scrapy would make)" in text
