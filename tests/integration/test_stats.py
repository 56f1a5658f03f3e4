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


def test_the_summary_says_what_was_dropped_and_saved_by_kind():
    crawler = _crawler()
    stats = crawler.stats
    for key, value in {
        "urlunify/links": 200,
        "urlunify/filtered/extension:pdf": 10,
        "dupefilter/filtered": 120,
        "urlunify/filtered/anchor": 7,
        "urlunify/signature/duplicates": 6,
        "urlunify/signature/near_duplicates": 9,
        "urlunify/signature/dropped_items": 5,
        "urlunify/signature/dropped_near_duplicate_items": 4,
        "downloader/request_count": 40,
    }.items():
        stats.set_value(key, value)
    s = summarize(stats.get_stats())
    assert (s["duplicates"], s["plain"], s["saved"]) == (120, None, None)  # no links met
    text = format_summary(s)
    assert "requests saved" not in text
    assert "items dropped       9 (5 of duplicate pages, 4 of near-duplicate pages" in text
    assert "near-duplicates     9 pages" in text
    assert "in any spelling)" in text
    stats.set_value("urlunify/plain_requests", 130)
    s = summarize(stats.get_stats())
    assert s["saved"] == 90  # plain Scrapy's requests for the links met, less the ones made
    assert "requests saved      at least about 90 beyond plain Scrapy" in format_summary(s)
    # a queued request a rule learned meanwhile drops is a duplicate filtered too
    stats.set_value("urlunify/dropped_at_dequeue", 31)
    s = summarize(stats.get_stats())
    assert (
        "duplicates filtered 151 (requests: the same page again, in any spelling; 31 as they "
        "left the queue)" in format_summary(s)
    )


def test_the_distinct_count_is_near_the_truth_in_16_kib():
    from scrapy_urlunify.integration.crawl._distinct import DistinctCount

    for n in (0, 1, 37, 3_000, 200_000):
        count = DistinctCount()
        for i in range(n):
            count.add(f"https://shop.test/p/{i}")
            count.add(f"https://shop.test/p/{i}")  # twice: counted once
        assert abs(len(count) - n) <= max(1, 0.03 * n), (n, len(count))


def test_the_hints_name_each_parameter_and_what_it_cost():
    from scrapy_urlunify.integration.rules._session import hints_text

    assert hints_text([]) is None
    text = hints_text([("site.com", "ref", 29), ("site.com", "from", 4)], limit=1)
    assert text is not None
    assert "'ref' on site.com: 29 fetches of a page already fetched" in text
    assert "'from'" not in text and "... and 1 more" in text
    assert "URLUNIFY_IGNORE_PARAMS" in text
