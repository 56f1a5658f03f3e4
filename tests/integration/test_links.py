"""The link middleware in a real crawl: opting out, and fetching links as extracted."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from demo_crawl import ADDON, ConfiguredSpider, crawl
from scrapy import FormRequest, Request, signals
from w3lib.url import safe_url_string

from scrapy_urlunify import standardize
from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite
from scrapy_urlunify.integration.crawl._meta import ORIGINAL_URL_META
from scrapy_urlunify.integration.links._middleware import SAFE_URL, LinkMiddleware, rewritten
from scrapy_urlunify.integration.seen._dupefilter import DupeFilter
from scrapy_urlunify.integration.seen._seen import dupes_logger

SIZE = 50


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE, traps=False)


@pytest_twisted.inlineCallbacks
def test_opt_out_and_rewrite_off(site):
    server = DemoServer(site).start()
    try:
        result = yield crawl(server, site, {**ADDON, "URLUNIFY_REWRITE": False}, ConfiguredSpider)
    finally:
        yield server.stop()
    assert result.stats.get("urlunify/rewritten", 0) == 0
    # URLs are fetched as the spider extracted them (not standardized), yet each page once
    assert any(standardize(u) != u for u in result.fetched_urls)
    fetches = result.page_fetches()
    assert set(fetches) == set(site.pages) and max(fetches.values()) == 1


class CountingDupeFilter(DupeFilter):
    """The add-on's dupefilter, counting the requests the scheduler asks it about."""

    asked = 0

    def request_seen(self, request):  # type: ignore[no-untyped-def]
        CountingDupeFilter.asked += 1
        return super().request_seen(request)


class SchedulerOnlyDupeFilter(CountingDupeFilter):
    """Duplicates are left to the scheduler, as before the early drop."""

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.check.early_drop = False


DUPLICATE_LINE = "Filtered duplicate request"


@pytest_twisted.inlineCallbacks
def test_known_duplicates_dropped_early_counted_and_logged_as_the_scheduler_would(site, caplog):
    """A link whose page is already in the seen set is dropped by the middleware: the crawl's
    stats and DUPEFILTER_DEBUG lines are those of a crawl where the scheduler drops it, and
    the scheduler is asked about far fewer requests."""
    results = {}
    for cls in (SchedulerOnlyDupeFilter, CountingDupeFilter):
        CountingDupeFilter.asked = 0
        caplog.clear()
        server = DemoServer(site).start()
        try:
            with caplog.at_level(logging.DEBUG, logger=dupes_logger.name):
                # frontier off: which requests it holds back (each enqueued twice) depends on
                # which of 32 concurrent responses arrive first
                result = yield crawl(
                    server,
                    site,
                    {
                        **ADDON,
                        "DUPEFILTER_DEBUG": True,
                        "URLUNIFY_FRONTIER": False,
                        "DUPEFILTER_CLASS": f"{__name__}.{cls.__name__}",
                    },
                    ConfiguredSpider,
                )
        finally:
            yield server.stop()
        lines = sorted(
            r.getMessage().partition(" (referer")[0]
            for r in caplog.records
            if r.getMessage().startswith(DUPLICATE_LINE)
        )
        results[cls] = (result, lines, CountingDupeFilter.asked)
    (late, late_lines, late_asked), (early, early_lines, early_asked) = results.values()
    keys = (
        "dupefilter/filtered",
        "urlunify/duplicates",
        "urlunify/links",
        "urlunify/rewritten",
        "urlunify/allowed_offsite",
        "downloader/request_count",
        "scheduler/enqueued",
    )
    assert {k: early.stats.get(k) for k in keys} == {k: late.stats.get(k) for k in keys}
    assert early.stats["dupefilter/filtered"] > 100
    assert early_lines == late_lines and len(early_lines) == early.stats["dupefilter/filtered"]
    assert early.page_fetches() == late.page_fetches()
    # each duplicate the middleware dropped is a request the scheduler was not asked about
    assert late_asked - early_asked > early.stats["dupefilter/filtered"] / 2


SAFE_URL_SAMPLES = [
    "http://a.test/",
    "https://a.test:8080/x/y.html",
    "http://a.test/a%2fb?q=%2F&r=1#frag",
    "http://a.test/%zz",
    "http://xn--nxasmq6b.test/",
    "http://[::1]:8080/x",
    "http://1.2.3.4/p",
    "http://a.test/p?q=it's",
    "http://a.test/it's#it's",
    "http://a.test/é",
    "http://A.test/x",
    "http://a.test/p?x=1?y",
    "http://a.test/p#a?b",
    "http://a.test",
    "ftp://a.test/x",
    *(f"http://a.test/p{c}q?x{c}y#f{c}g" for c in map(chr, range(32, 127))),
    *(f"http://a.test/p?x{c}y" for c in map(chr, range(32, 127))),
    *(f"http://a.test/p#f{c}g" for c in map(chr, range(32, 127))),
]


@pytest.mark.parametrize("url", SAFE_URL_SAMPLES)
def test_fast_request_copy_only_for_urls_request_keeps_unchanged(url):
    """The rewritten request skips Request.__init__ only where safe_url_string would return the
    URL as it is; either way it equals what replace() builds."""
    if SAFE_URL(url) is not None:
        assert safe_url_string(url) == url
    request = Request(
        "http://other.test/",
        callback=print,
        errback=print,
        method="POST",
        body=b"x=1",
        headers={"X-A": "1"},
        cookies={"c": "1"},
        meta={"m": 1},
        priority=3,
        dont_filter=False,
        flags=["f"],
        cb_kwargs={"k": 2},
    )
    try:
        expected = request.replace(url=url, meta={**request.meta, ORIGINAL_URL_META: request.url})
    except ValueError:
        return
    built = rewritten(request, url)
    assert type(built) is Request
    for attr in Request.attributes:
        value, wanted = getattr(built, attr), getattr(expected, attr)
        assert (dict(value) if attr == "headers" else value) == (
            dict(wanted) if attr == "headers" else wanted
        ), attr
    assert built.cookies is request.cookies
    for attr in ("meta", "headers", "cb_kwargs", "flags"):
        assert getattr(built, attr) is not getattr(request, attr)


def test_rewritten_subclass_goes_through_replace():
    request = FormRequest("http://a.test/", formdata={"a": "1"})
    built = rewritten(request, "http://a.test/x")
    assert type(built) is FormRequest and built.url == "http://a.test/x" and built.body == b"a=1"


WATCHED_LOGGERS = (
    "scrapy.dupefilters",
    "scrapy.downloadermiddlewares.offsite",
    "scrapy.spidermiddlewares.depth",
    "scrapy.spidermiddlewares.urllength",
)
# what differs between two crawls of the same pages whatever the middlewares do
# Scrapy's LogStats gives a crawl of less than a minute its rates only when its timer fired
UNSTABLE_STATS = (
    "start_time",
    "finish_time",
    "elapsed_time_seconds",
    "memusage/",
    "log_count/",
    "downloader/response_bytes",
    "httpcompression/response_bytes",
    "response_received_count",
    "responses_per_minute",
    "items_per_minute",
    # the frontier counts the links passed on to the scheduler: behind the scheduler's own
    # drops (the middleware at 600) it also counts the duplicates the scheduler then drops
    "urlunify/frontier/deprioritised",
    "urlunify/frontier/variant_spellings",
    "urlunify/frontier/duplicate_links",
)


class NarrowSpider(ConfiguredSpider):
    """The configured demo spider without termomont's hosts: their links are offsite."""

    allowed_domains = ["site.test", "news.acme.test"]


@pytest.mark.parametrize("depth_limit", [0, 3])
@pytest_twisted.inlineCallbacks
def test_links_dropped_first_in_the_chain_leave_the_crawl_as_the_scheduler_would(
    site, caplog, depth_limit
):
    """LinkMiddleware at 950 (before Scrapy's depth, URL length and referer middlewares) drops
    known duplicates and offsite links there; the crawl is the one where it sits at 600 and the
    scheduler drops every duplicate: same stats (depth stats, offsite, dupefilter), same log
    lines (``DUPEFILTER_DEBUG`` with the referer, offsite, depth), same pages."""
    common = {
        **ADDON,
        "CONCURRENT_REQUESTS": 1,
        "DUPEFILTER_DEBUG": True,
        "DEPTH_STATS_VERBOSE": True,
        "DEPTH_LIMIT": depth_limit,
        "URLLENGTH_LIMIT": 60,
    }
    runs = {
        "scheduler": {
            **common,
            "SPIDER_MIDDLEWARES": {"scrapy_urlunify.LinkMiddleware": 600},
            "DUPEFILTER_CLASS": f"{__name__}.SchedulerOnlyDupeFilter",
        },
        "early": {**common, "DUPEFILTER_CLASS": f"{__name__}.CountingDupeFilter"},
    }
    results = {}
    for name, settings in runs.items():
        CountingDupeFilter.asked = 0
        caplog.clear()
        server = DemoServer(site).start()
        try:
            with caplog.at_level(logging.DEBUG):
                result = yield crawl(server, site, settings, NarrowSpider)
        finally:
            yield server.stop()
        lines = sorted(r.getMessage() for r in caplog.records if r.name in WATCHED_LOGGERS)
        stats = {k: v for k, v in result.stats.items() if not k.startswith(UNSTABLE_STATS)}
        results[name] = (result, stats, lines, CountingDupeFilter.asked)
    (late, late_stats, late_lines, late_asked), (early, early_stats, early_lines, early_asked) = (
        results.values()
    )
    assert early_stats == late_stats
    assert early_lines == late_lines
    assert early.page_fetches() == late.page_fetches()
    assert early_stats["dupefilter/filtered"] > 100 and early_stats["offsite/filtered"] > 0
    # the offsite links were dropped by the link middleware (through Scrapy's OffsiteMiddleware)
    assert early.crawler.get_spider_middleware(LinkMiddleware).downstream.offsite is not None
    assert early_stats["urllength/request_ignored_count"] > 0
    assert any("referer: http" in line for line in early_lines)
    if depth_limit:
        assert early_stats["depth/request_ignored_count"] > 0
    # the duplicates and offsite links dropped early were never scheduled
    assert late_asked - early_asked > early_stats["dupefilter/filtered"] / 2


class CountingSpiderMiddleware:
    """A project's spider middleware after LinkMiddleware in the output chain: counts requests."""

    seen = 0

    def process_spider_output(self, response, result, spider=None):  # type: ignore[no-untyped-def]
        for o in result:
            if isinstance(o, Request):
                CountingSpiderMiddleware.seen += 1
            yield o

    async def process_spider_output_async(self, response, result, spider=None):  # type: ignore[no-untyped-def]
        async for o in result:
            if isinstance(o, Request):
                CountingSpiderMiddleware.seen += 1
            yield o


@pytest_twisted.inlineCallbacks
def test_a_middleware_after_the_link_middleware_sees_every_duplicate(site, caplog):
    """A project's middleware after LinkMiddleware would not see the duplicates it drops: known
    duplicates are then left to the scheduler (said once at INFO), so it sees what it would
    without the early drop."""
    seen = {}
    for cls in (SchedulerOnlyDupeFilter, CountingDupeFilter):
        CountingSpiderMiddleware.seen = 0
        caplog.clear()
        server = DemoServer(site).start()
        try:
            with caplog.at_level(logging.INFO):
                result = yield crawl(
                    server,
                    site,
                    {
                        **ADDON,
                        "DUPEFILTER_CLASS": f"{__name__}.{cls.__name__}",
                        "SPIDER_MIDDLEWARES": {f"{__name__}.CountingSpiderMiddleware": 500},
                    },
                    NarrowSpider,
                )
        finally:
            yield server.stop()
        seen[cls] = (CountingSpiderMiddleware.seen, result.stats)
    (late_seen, late_stats), (early_seen, early_stats) = seen.values()
    assert (
        early_seen
        == late_seen
        > early_stats["scheduler/enqueued"] + early_stats["dupefilter/filtered"] / 2
    )
    assert early_stats["dupefilter/filtered"] == late_stats["dupefilter/filtered"] > 100
    assert early_stats["offsite/filtered"] == late_stats["offsite/filtered"] > 0
    assert [
        r.getMessage() for r in caplog.records if "left to the scheduler" in r.getMessage()
    ] == [
        f"Known duplicate and offsite links are left to the scheduler: {__name__}.CountingSpiderMiddleware "
        "would not see them (a spider middleware after LinkMiddleware: give it a priority above "
        "LinkMiddleware's to let LinkMiddleware drop them first)"
    ]


class SchedulingRecorder:
    """A project's extension that records every request the engine gets (request_scheduled)."""

    def __init__(self, crawler):  # type: ignore[no-untyped-def]
        self.requests: list[str] = []
        crawler.signals.connect(self.scheduled, signal=signals.request_scheduled)

    @classmethod
    def from_crawler(cls, crawler):  # type: ignore[no-untyped-def]
        return cls(crawler)

    def scheduled(self, request, spider=None):  # type: ignore[no-untyped-def]
        SchedulingRecorder.seen.append(request.url)

    seen: list[str] = []


@pytest_twisted.inlineCallbacks
def test_a_request_scheduled_receiver_sees_every_request_as_in_plain_scrapy(site):
    """A ``request_scheduled`` receiver of the project's gets every request the spider's output
    hands the engine, duplicates too, as in plain Scrapy (the scheduler drops them after the
    signal): with one, known duplicates are left to the scheduler instead of dropped early."""
    SchedulingRecorder.seen = []
    server = DemoServer(site).start()
    try:
        result = yield crawl(
            server,
            site,
            {**ADDON, "EXTENSIONS": {f"{__name__}.SchedulingRecorder": 0}},
            ConfiguredSpider,
        )
    finally:
        yield server.stop()
    stats = result.stats
    assert stats["dupefilter/filtered"] > 0
    # every request the scheduler was given was seen by the receiver: the duplicates included
    assert (
        len(SchedulingRecorder.seen) == stats["scheduler/enqueued"] + stats["dupefilter/filtered"]
    )
