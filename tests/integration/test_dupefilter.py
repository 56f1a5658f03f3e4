"""The dupefilter in real crawls of the demo site: redirects, start URLs, scopes, debug logging."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from demo_crawl import ADDON, ConfiguredSpider, crawl

from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite
from scrapy_urlunify.demo.spider import DemoSpider

SIZE = 50


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE)


class FilteredStartSpider(DemoSpider):
    """Start requests that go through the dupefilter (Scrapy's are ``dont_filter=True``, and a
    redirect inherits that flag), as links found on a page do."""

    name = "filtered-start"

    async def start(self):  # type: ignore[override]
        from scrapy import Request

        for url in self.start_urls:
            yield Request(url, dont_filter=False)


@pytest_twisted.inlineCallbacks
def test_redirect_to_the_same_page_is_followed_not_filtered(site):
    """scrapy#1225: http://www.site.test/secure/... answers 301 to https://; unified, the target
    has the identifier of its source, and Scrapy's own filter would drop it."""
    secure = [p for p in site.pages if "/secure/" in p]
    assert secure
    path = secure[0].split(":", 1)[1]
    server = DemoServer(site).start()
    try:
        result = yield crawl(
            server,
            site,
            {**ADDON, "DEPTH_LIMIT": 1},
            FilteredStartSpider,
            start_urls=[f"http://www.site.test{path}"],
        )
    finally:
        yield server.stop()
    statuses = [(r.url, r.status) for r in result.records if r.method == "GET"]
    assert statuses[0] == (f"http://www.site.test{path}", 301)
    assert (f"https://www.site.test{path}", 200) in statuses
    assert result.page_fetches()[secure[0]] == 1
    assert result.stats["urlunify/redirects/same_page"] == 1


@pytest_twisted.inlineCallbacks
def test_redirect_loop_still_ends(site):
    # a redirect chain that returns to its own page is allowed through, so REDIRECT_MAX_TIMES must end it
    server = DemoServer(site).start()
    try:
        result = yield crawl(
            server,
            site,
            {**ADDON, "REDIRECT_MAX_TIMES": 3},
            FilteredStartSpider,
            start_urls=["http://site.test/loop"],
        )
    finally:
        yield server.stop()
    assert result.stats["finish_reason"] == "finished"
    loop = [r for r in result.records if r.method == "GET" and r.url.endswith("/loop")]
    assert [r.status for r in loop] == [
        301
    ] * 4  # the first request and 3 redirects, then Scrapy gives up
    assert result.stats["urlunify/redirects/same_page"] == 3


@pytest_twisted.inlineCallbacks
def test_start_url_is_recorded_so_links_back_to_it_are_not_fetched(site):
    server = DemoServer(site).start()
    try:
        result = yield crawl(server, site, ADDON, ConfiguredSpider)
    finally:
        yield server.stop()
    assert result.page_fetches()["site:/"] == 1
    assert result.stats["urlunify/recorded_unfiltered"] >= 1


@pytest_twisted.inlineCallbacks
def test_scopes_never_filter_each_other_and_a_scope_resumes(site, tmp_path):
    jobdir = str(tmp_path / "job")
    server = DemoServer(site).start()
    try:
        first = yield crawl(
            server, site, {**ADDON, "JOBDIR": jobdir, "URLUNIFY_SCOPE": "a"}, ConfiguredSpider
        )
        other = yield crawl(
            server, site, {**ADDON, "JOBDIR": jobdir, "URLUNIFY_SCOPE": "b"}, ConfiguredSpider
        )
        again = yield crawl(
            server, site, {**ADDON, "JOBDIR": jobdir, "URLUNIFY_SCOPE": "a"}, ConfiguredSpider
        )
    finally:
        yield server.stop()
    assert set(first.page_fetches()) == set(site.pages)
    # another scope in the same store: every page again
    assert set(other.page_fetches()) == set(site.pages)
    # the same scope again: the job resumes, finds everything crawled, fetches nothing (even
    # the start URL, which Scrapy schedules again on every run, bypassing the dupefilter)
    assert sum(again.page_fetches().values()) == 0
    assert again.stats["urlunify/resume/start_skipped"] == 1


@pytest_twisted.inlineCallbacks
def test_dupefilter_debug_names_the_earlier_url(site, caplog):
    server = DemoServer(site).start()
    try:
        with caplog.at_level(logging.DEBUG, logger="scrapy.dupefilters"):
            result = yield crawl(
                server,
                site,
                {**ADDON, "DUPEFILTER_DEBUG": True, "LOG_LEVEL": "DEBUG"},
                ConfiguredSpider,
            )
    finally:
        yield server.stop()
    # Scrapy's logger and wording (a project's log filters for them keep working) ...
    lines = [r.getMessage() for r in caplog.records if r.name == "scrapy.dupefilters"]
    assert (
        len(lines) == result.stats["urlunify/duplicates"] > 0
    )  # every duplicate, not only the first
    assert all(line.startswith("Filtered duplicate request: <GET http") for line in lines)
    # ... then, when the URL differs from the one first seen (the unification merged them), which
    merged = [line for line in lines if " - same page as " in line]
    assert merged
    for line in merged:
        url = line.split("<GET ", 1)[1].split(">", 1)[0]
        earlier = line.split(" - same page as ", 1)[1].split(" (identifier ", 1)[0]
        assert url != earlier and earlier.startswith("http")


def _dupefilter():  # type: ignore[no-untyped-def]
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from scrapy_urlunify.integration.seen._dupefilter import DupeFilter

    class S(Spider):
        name = "urls"

    crawler = get_crawler(S, {"ADDONS": {"scrapy_urlunify.Addon": 0}})
    crawler.spider = S()
    return DupeFilter.from_crawler(crawler)


def test_a_url_scheduled_before_is_a_duplicate_only_where_its_url_decides():
    """A URL scheduled before is a duplicate (so is another URL of its page); a request whose
    key the URL alone does not give (as written, another method, a body, a redirect) is keyed
    as such."""
    from scrapy import Request

    df = _dupefilter()
    url = "https://www.a.test/docs/index.html?utm_source=x&b=2&a=1#top"
    assert df.request_seen(Request(url)) is False
    assert df.request_seen(Request(url)) is True
    assert df.request_seen(Request(url, meta={"depth": 3})) is True  # meta of other components
    assert df.request_seen(Request("http://a.test/docs/?a=1&b=2")) is True  # unified: the same page
    # the same URL, another page to the fingerprint: as written, another method, a body
    assert df.request_seen(Request(url, meta={"verbatim_url": True})) is False
    assert df.request_seen(Request(url, method="POST")) is False
    assert df.request_seen(Request(url, body=b"q=1")) is False
    # a redirect whose chain is the same page is let through (the chain decides, not the URL)
    assert (
        df.request_seen(Request(url, meta={"redirect_urls": ["http://a.test/docs/?b=2&a=1"]}))
        is False
    )
    df.close("finished")


def test_a_url_scheduled_before_a_rule_was_learned_is_a_duplicate_after_it():
    """``?ref=`` learned as noise: the same URL met again is new under the rule's key, but it is
    queued already (before the rule, under the settings' key); both copies dequeued before
    either was fetched made one page two downloads and its items twice."""
    from scrapy import Request

    df = _dupefilter()
    url = "http://shop.test/product/513?ref=p239"
    assert df.request_seen(Request(url)) is False
    df.check.policies.set_learned({"shop.test": ["ref"]}, [])
    assert df.request_seen(Request(url)) is True
    assert (
        df.request_seen(Request("http://shop.test/product/513?ref=p1")) is True
    )  # the rule's merge
    assert df.request_seen(Request("http://shop.test/product/514?ref=p239")) is False
    assert df.request_seen(Request("http://shop.test/product/514?ref=p239")) is True
    df.close("finished")


def test_the_dupefilter_keeps_nothing_per_url_beyond_its_seen_set():
    """The whole dupefilter costs what its seen set costs (9.5-11.9 bytes a URL),
    measured through request_seen: no second table per URL. The unifier's result cache is
    emptied before each reading: it is bounded, and not the dupefilter's."""
    import gc
    import tracemalloc

    from scrapy import Request

    df = _dupefilter()
    unifier = df.check.policies.unifier
    url = "https://example.test/p?page={}"
    n = 20_000  # under tracemalloc: a few seconds
    tracemalloc.start()
    try:
        for i in range(1, 1001):  # the first calls' own allocations
            df.request_seen(Request(url.format(-i)))
        unifier.cache_clear()
        gc.collect()
        before, table_before = tracemalloc.get_traced_memory()[0], df.store.nbytes
        for i in range(n):
            assert df.request_seen(Request(url.format(i))) is False
        unifier.cache_clear()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(df.store) == n + 1000
    beyond = grown - (df.store.nbytes - table_before)
    assert beyond / n <= 4, (
        f"the dupefilter keeps {beyond / n:.1f} bytes per URL beyond its seen set"
    )
    assert grown / n <= 16, f"the dupefilter keeps {grown / n:.1f} bytes per URL"
    df.close("finished")


class _UnstartedCrawler:
    """Scrapy's scheduler tests' crawler (tests/test_scheduler.py's MockCrawler): a Crawler
    built, with a stats collector, but not started (no ``request_fingerprinter`` yet)."""

    def __new__(cls, settings):  # type: ignore[no-untyped-def]
        from scrapy import Spider
        from scrapy.crawler import Crawler
        from scrapy.utils.misc import load_object

        crawler = Crawler(Spider, {"DUPEFILTER_CLASS": "scrapy_urlunify.DupeFilter", **settings})
        crawler.stats = load_object(crawler.settings["STATS_CLASS"])(crawler)
        return crawler


@pytest.mark.parametrize(
    ("fingerprinter", "unifies"),
    [
        (None, True),  # Scrapy's default, unchosen: ours
        ("scrapy_urlunify.Fingerprinter", True),
        ("scrapy.utils.request.RequestFingerprinter", False),  # chosen by the project: it decides
    ],
)
def test_a_dupefilter_built_before_the_crawl_starts(fingerprinter, unifies):
    from scrapy import Request
    from scrapy.core.scheduler import Scheduler

    from scrapy_urlunify import DupeFilter

    settings = {"REQUEST_FINGERPRINTER_CLASS": fingerprinter} if fingerprinter else {}
    scheduler = Scheduler.from_crawler(_UnstartedCrawler(settings))
    assert isinstance(scheduler.df, DupeFilter)
    scheduler.df.close("finished")
    df = DupeFilter.from_crawler(_UnstartedCrawler(settings))
    assert df.request_seen(Request("http://www.a.test/x/")) is False
    assert df.request_seen(Request("http://www.a.test/x/")) is True
    assert df.request_seen(Request("https://a.test/x")) is unifies
    df.close("finished")


def test_a_fingerprinter_built_before_the_crawl_starts():
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    from scrapy_urlunify import Fingerprinter

    fingerprinter = Fingerprinter.from_crawler(Crawler(Spider, {}))  # not even a stats collector
    assert fingerprinter.fingerprint(Request("http://www.a.test/x/")) == fingerprinter.fingerprint(
        Request("https://a.test/x")
    )


@pytest.mark.parametrize(
    "fingerprinter",
    [None, "scrapy_urlunify.Fingerprinter", "scrapy.utils.request.RequestFingerprinter"],
)
@pytest.mark.parametrize("debug", [False, True])
def test_duplicates_are_logged_as_scrapy_logs_them(caplog, fingerprinter, debug):
    """Scrapy's tests/test_dupefilters.py (test_log, test_log_debug): the dupefilter built by
    the scheduler of a crawler not started yet, its lines on the ``scrapy.dupefilters`` logger
    in Scrapy's words, whichever fingerprinter the crawl uses."""
    from scrapy import Request, Spider
    from scrapy.core.scheduler import Scheduler
    from scrapy.utils.misc import build_from_crawler
    from scrapy.utils.test import get_crawler

    class SimpleSpider(Spider):
        name = "simple"

    settings = {"DUPEFILTER_DEBUG": debug, "DUPEFILTER_CLASS": "scrapy_urlunify.DupeFilter"}
    if fingerprinter:
        settings["REQUEST_FINGERPRINTER_CLASS"] = fingerprinter
    crawler = get_crawler(SimpleSpider, settings_dict=settings)
    spider = SimpleSpider.from_crawler(crawler)
    dupefilter = build_from_crawler(Scheduler, crawler).df
    dupefilter.open()
    assert dupefilter.logger.name == "scrapy.dupefilters"
    r1 = Request("http://scrapytest.org/index.html")
    r2 = Request(
        "http://scrapytest.org/index.html", headers={"Referer": "http://scrapytest.org/INDEX.html"}
    )
    with caplog.at_level(logging.DEBUG):
        dupefilter.log(r1, spider)
        dupefilter.log(r2, spider)
    assert crawler.stats.get_value("dupefilter/filtered") == 2
    url = "http://scrapytest.org/index.html"
    if debug:
        expected = [
            f"Filtered duplicate request: <GET {url}> (referer: None)",
            f"Filtered duplicate request: <GET {url}> (referer: http://scrapytest.org/INDEX.html)",
        ]
    else:
        expected = [
            (
                f"Filtered duplicate request: <GET {url}> - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)"
            )
        ]
    for line in expected:
        assert ("scrapy.dupefilters", logging.DEBUG, line) in caplog.record_tuples
    dupefilter.close("finished")
