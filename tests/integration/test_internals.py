"""The add-on's reaches into Scrapy's, PyDispatcher's and Twisted's internals
(``scrapy_urlunify/integration/crawl/_internals.py``), pinned on the versions installed here:
when one of them moves, these fail first, naming what moved."""

from __future__ import annotations

import subprocess
import sys

import minisite
import pytest_twisted
from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerRunner
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from scrapy_urlunify.integration.crawl._internals import (
    FAST_REQUEST_COPY,
    downloader_middlewares,
    flush_before_reads,
    has_receivers,
    receiver_owners,
    request_with_url,
    spider_middlewares,
)
from scrapy_urlunify.integration.links._middleware import LinkMiddleware
from scrapy_urlunify.integration.pages._signatures import DuplicatePageGate


class _Looking(Spider):
    name = "looking"
    seen: dict[str, object] = {}

    def parse(self, response):  # type: ignore[no-untyped-def]
        crawler = self.crawler
        _Looking.seen = {
            "spider": spider_middlewares(crawler),
            "downloader": downloader_middlewares(crawler),
            "scheduled": receiver_owners(crawler, signals.request_scheduled),
        }
        return []


@pytest_twisted.inlineCallbacks
def test_the_middleware_lists_and_receivers_of_a_running_crawl() -> None:  # type: ignore[misc]
    site, port, base = minisite.start()
    try:
        runner = CrawlerRunner(
            {
                "ADDONS": {"scrapy_urlunify.Addon": 0},
                "ROBOTSTXT_OBEY": False,
                "TELNETCONSOLE_ENABLED": False,
                "LOG_LEVEL": "WARNING",
            }
        )
        yield runner.crawl(_Looking, start_urls=[base + "/"])
    finally:
        yield port.stopListening()
    seen = _Looking.seen
    assert any(isinstance(mw, LinkMiddleware) for mw in seen["spider"])  # type: ignore[union-attr]
    # SignatureMiddleware looks for its gate there: without it, it drops duplicate pages itself
    assert any(isinstance(mw, DuplicatePageGate) for mw in seen["spider"])  # type: ignore[union-attr]
    assert any(type(mw) is OffsiteMiddleware for mw in seen["downloader"])  # type: ignore[union-attr]
    owners = seen["scheduled"]
    assert any(type(o) is OffsiteMiddleware for o in owners)  # type: ignore[union-attr]


def test_outside_a_crawl_there_are_no_middlewares() -> None:
    crawler = get_crawler(Spider)
    assert spider_middlewares(crawler) is None
    assert downloader_middlewares(crawler) == ()


def test_receivers_of_a_signal_are_seen_once_connected() -> None:
    crawler = get_crawler(Spider)

    class Listener:
        def dropped(self, **kwargs):  # type: ignore[no-untyped-def]
            pass

    listener = Listener()
    assert not has_receivers(crawler, signals.request_dropped)
    crawler.signals.connect(listener.dropped, signal=signals.request_dropped)
    assert has_receivers(crawler, signals.request_dropped)
    assert listener in receiver_owners(crawler, signals.request_dropped)


def test_a_request_copied_with_a_url_is_what_replace_gives() -> None:
    assert FAST_REQUEST_COPY, (
        "Scrapy's Request has other slots or attributes: request_with_url takes replace()"
    )

    def callback(response):  # type: ignore[no-untyped-def]
        pass

    request = Request(
        "https://a.test/x",
        method="POST",
        body=b"q=1",
        headers={"X-A": "1"},
        cookies={"c": "1"},
        priority=3,
        callback=callback,
        dont_filter=True,
        cb_kwargs={"k": 1},
        flags=["f"],
        encoding="latin-1",
    )
    meta = {"depth": 2}
    fast = request_with_url(request, "https://a.test/y", meta)
    slow = request.replace(url="https://a.test/y", meta=meta)
    for attribute in Request.attributes:
        assert getattr(fast, attribute) == getattr(slow, attribute), attribute
    assert fast.headers is not request.headers and fast.cb_kwargs is not request.cb_kwargs


def test_the_stats_collector_flushes_before_it_is_read() -> None:
    stats = MemoryStatsCollector(get_crawler(Spider))
    pending = {"urlunify/links": 3}

    def flush() -> None:
        for key, value in pending.items():
            stats.inc_value(key, value)
        pending.clear()

    flush_before_reads(stats, flush)
    assert stats.get_value("urlunify/links") == 3
    pending["urlunify/links"] = 1
    assert stats.get_stats()["urlunify/links"] == 4


def test_twisted_has_a_stderr_printer_until_logging_begins() -> None:
    script = (
        "from scrapy_urlunify.integration.crawl._internals import twisted_stderr_printer as p\n"
        "printer = p()\nassert printer is not None, 'no temporary observer'\n"
        "class Gate:\n    def __init__(self, o): self.o = o\n    def __call__(self, e): self.o(e)\n"
        "gate = p(replace=Gate)\nassert p() is gate and gate.o is printer\nprint('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "ok", done.stderr
