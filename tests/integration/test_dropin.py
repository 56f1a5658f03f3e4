"""Drop-in compatibility with Scrapy's and scrapy-redis's own components, each in a
real crawl (tests/support/dropin.py) with the add-on."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import pytest
import pytest_twisted
import scrapy
from dropin import recorder, run
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy.linkextractors import LinkExtractor
from twisted.internet import reactor

from scrapy_urlunify import DupeFilter
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.seen._dupefilter import DupeFilter
from scrapy_urlunify.integration.seen._fingerprinter import Fingerprinter


class NamelessSpider(scrapy.Spider):
    """A spider class without a class-level ``name``, as scripts write them."""

    def parse(self, response):  # type: ignore[no-untyped-def]
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url)


# -- 1. spiders without a class-level name -------------------------------------------------------


@pytest_twisted.inlineCallbacks
def test_plain_scrapy_spider_named_by_keyword_crawls():
    """``process.crawl(scrapy.Spider, name="x", start_urls=[...])``: the scope is "x"."""
    site, crawler, _ = yield run(scrapy.Spider, name="x")
    assert site.hits["/"] == 1
    assert crawler.stats.get_value("finish_reason") == "finished"
    assert UnifyCrawl.of(crawler).policies.scope == "x"


@pytest_twisted.inlineCallbacks
def test_nameless_spider_class_named_by_keyword_dedups():
    site, crawler, _ = yield run(NamelessSpider, name="y")
    assert UnifyCrawl.of(crawler).policies.scope == "y"
    assert site.hits["/next"] == 1
    assert site.hits["/list"] == 1
    assert max(site.hits.values()) == 1  # every URL fetched once
    assert crawler.stats.get_value("dupefilter/filtered", 0) > 0


# -- a recording server, and spiders that yield given requests -----------------------------------


class YieldingSpider(scrapy.Spider):
    """Yields ``self.requests(base)`` from its start page."""

    name = "yielding"

    def parse(self, response):  # type: ignore[no-untyped-def]
        base, _, path = response.url.rpartition("/")
        if path == "start":
            yield from self.requests(base)


@pytest_twisted.inlineCallbacks
def run_recorded(make_requests, settings=None, spidercls=YieldingSpider):  # type: ignore[no-untyped-def]
    rec, port, base = recorder()
    cls = type("Spider", (spidercls,), {"requests": staticmethod(make_requests)})
    _, crawler, _ = yield run(cls, settings, site=(rec, port, base), start_urls=[base + "/start"])
    rec.base = base
    return rec, crawler


# -- 2. the crawler's fingerprinter keys the dupefilter ------------------------------------------


class VariantFingerprinter(Fingerprinter):
    """A project fingerprinter: ours, plus a header that selects another variant of a page."""

    def fingerprint(self, request):  # type: ignore[no-untyped-def]
        return super().fingerprint(request) + request.headers.get(b"X-Variant", b"")


@pytest_twisted.inlineCallbacks
def test_project_fingerprinter_decides_what_is_a_duplicate():
    def requests(base):  # type: ignore[no-untyped-def]
        yield scrapy.Request(base + "/p", headers={"X-Variant": "a"})
        yield scrapy.Request(base + "/p", headers={"X-Variant": "b"})
        yield scrapy.Request(
            base + "/p/index.html", headers={"X-Variant": "a"}
        )  # same page, same variant

    rec, crawler = yield run_recorded(
        requests, {"REQUEST_FINGERPRINTER_CLASS": VariantFingerprinter}
    )
    assert rec.paths().count("/p") == 2  # both variants
    assert "/p/index.html" not in rec.paths()  # our unification still applies underneath
    assert crawler.stats.get_value("dupefilter/filtered") == 1


# -- 3. the body of GET and HEAD requests ---------------------------------------------------------


@pytest_twisted.inlineCallbacks
def test_get_requests_with_different_bodies_are_different_requests():
    def requests(base):  # type: ignore[no-untyped-def]
        for q in ("a", "b", "a"):
            yield scrapy.Request(base + "/search", body=json.dumps({"q": q}))

    rec, crawler = yield run_recorded(requests)
    assert sorted(b for m, uri, b in rec.log if uri == "/search") == [b'{"q": "a"}', b'{"q": "b"}']
    assert crawler.stats.get_value("dupefilter/filtered") == 1


# -- 4. meta["verbatim_url"] ----------------------------------------------------------------------


@pytest_twisted.inlineCallbacks
def test_verbatim_url_is_neither_rewritten_nor_unified():
    def requests(base):  # type: ignore[no-untyped-def]
        for url, verbatim in (
            ("/v?utm_source=x", True),
            ("/v?utm_source=y", True),
            ("/v?utm_source=x", True),
            ("/v?utm_source=z", False),
        ):
            yield scrapy.Request(base + url, meta={"verbatim_url": True} if verbatim else {})

    rec, crawler = yield run_recorded(requests)
    # sent as written, each once; the third is a duplicate of the first
    assert sorted(p for p in rec.paths() if p.startswith("/v")) == [
        "/v",
        "/v?utm_source=x",
        "/v?utm_source=y",
    ]
    assert crawler.stats.get_value("dupefilter/filtered") == 1


# -- 5. RFPDupeFilter's API -----------------------------------------------------------------------


class LegacyDupeFilter(DupeFilter):
    """The deprecated way to change keys: override request_fingerprint() (case-insensitive URLs)."""

    def request_fingerprint(self, request):  # type: ignore[no-untyped-def]
        return hashlib.sha1(request.url.lower().encode()).hexdigest()


@pytest_twisted.inlineCallbacks
def test_deprecated_request_fingerprint_override_is_used_with_a_warning():
    def requests(base):  # type: ignore[no-untyped-def]
        yield scrapy.Request(base + "/Case")
        yield scrapy.Request(base + "/case")

    with pytest.warns(
        ScrapyDeprecationWarning, match=r"Overriding RFPDupeFilter\.request_fingerprint"
    ):
        rec, _crawler = yield run_recorded(requests, {"DUPEFILTER_CLASS": LegacyDupeFilter})
    assert [p for p in rec.paths() if p.lower() == "/case"] == ["/Case"]


@pytest_twisted.inlineCallbacks
def test_rfpdupefilter_api_after_a_crawl():
    def requests(base):  # type: ignore[no-untyped-def]
        yield scrapy.Request(base + "/a")

    rec, crawler = yield run_recorded(requests)
    df = DupeFilter(UnifyCrawl.of(crawler).seen_check())  # a view of the crawl's
    assert df.logger is logging.getLogger("scrapy.dupefilters")
    fetched = [scrapy.Request(rec.base + p) for p in rec.paths()]
    with pytest.warns(ScrapyDeprecationWarning, match=r"RFPDupeFilter\.fingerprints is deprecated"):
        fingerprints = df.fingerprints
    assert fingerprints == {df.request_fingerprint(r) for r in fetched}  # /start and /a
    assert all(len(fp) == 16 for fp in fingerprints)  # the 8-byte keys of the seen store


# -- 8. schemes Scrapy can download ---------------------------------------------------------------


class SchemeSpider(scrapy.Spider):
    """Yields ``self.links`` from its (HTTP) start page; scrapes every non-HTTP response."""

    name = "schemes"
    links: list[str] = []

    def parse(self, response):  # type: ignore[no-untyped-def]
        for url in self.links:
            yield scrapy.Request(url, callback=self.fetched)

    def fetched(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url, "body": response.body}


@pytest_twisted.inlineCallbacks
def test_file_ftp_and_data_requests_are_fetched_mailto_and_gopher_are_not(tmp_path):
    from twisted.cred.checkers import AllowAnonymousAccess
    from twisted.cred.portal import Portal
    from twisted.protocols.ftp import FTPFactory, FTPRealm

    (tmp_path / "local.txt").write_bytes(b"from a file")
    ftp_root = tmp_path / "ftp"
    ftp_root.mkdir()
    (ftp_root / "remote.txt").write_bytes(b"from an FTP server")
    ftp = FTPFactory(Portal(FTPRealm(anonymousRoot=str(ftp_root)), [AllowAnonymousAccess()]))
    ftp.allowAnonymous = True
    ftp_port = reactor.listenTCP(0, ftp, interface="127.0.0.1")
    links = [
        (tmp_path / "local.txt").as_uri(),
        f"ftp://127.0.0.1:{ftp_port.getHost().port}/remote.txt",
        # Scrapy's Request refuses "mailto:x" (no "://"); these spellings it takes
        "data:,inline",
        "mailto://someone@site.test",
        "gopher://127.0.0.1/x",
    ]
    try:
        rec, port, base = recorder()
        _, crawler, items = yield run(
            type("S", (SchemeSpider,), {"links": links}),
            site=(rec, port, base),
            start_urls=[base + "/start"],
        )
    finally:
        yield ftp_port.stopListening()
    assert sorted(i["body"] for i in items) == [b"from a file", b"from an FTP server", b"inline"]
    stats = crawler.stats.get_stats()
    assert stats["urlunify/filtered/scheme:mailto"] == 1
    assert stats["urlunify/filtered/scheme:gopher"] == 1  # no download handler
    assert "urlunify/filtered/scheme:ftp" not in stats
    assert "urlunify/filtered/scheme:file" not in stats


@pytest_twisted.inlineCallbacks
def test_a_scheme_whose_handler_is_removed_is_filtered(tmp_path):
    (tmp_path / "local.txt").write_bytes(b"from a file")
    rec, port, base = recorder()
    spider = type("S", (SchemeSpider,), {"links": [(tmp_path / "local.txt").as_uri()]})
    _, crawler, items = yield run(
        spider,
        {"DOWNLOAD_HANDLERS": {"file": None}},
        site=(rec, port, base),
        start_urls=[base + "/start"],
    )
    assert items == []
    assert crawler.stats.get_value("urlunify/filtered/scheme:file") == 1


# -- 7. pipelines and objects that are not items --------------------------------------------------


class Wrapped:
    """Not an item: what an earlier pipeline made of one, for a later pipeline to unwrap."""

    def __init__(self, item: Any) -> None:
        self.item = item


class WrapPipeline:
    def process_item(self, item, spider=None):  # type: ignore[no-untyped-def]
        return Wrapped(item)


class UnwrapPipeline:
    def process_item(self, item, spider=None):  # type: ignore[no-untyped-def]
        return item.item if isinstance(item, Wrapped) else item


@pytest_twisted.inlineCallbacks
def test_pipelines_pass_objects_that_are_not_items():
    from minicrawl import MiniSpider

    pipes = {f"{__name__}.WrapPipeline": 100, f"{__name__}.UnwrapPipeline": 300}
    _, crawler, items = yield run(MiniSpider, {"ITEM_PIPELINES": pipes, "LOG_LEVEL": "INFO"})
    assert items
    assert all(isinstance(i, dict) and i["title"] for i in items)
    assert crawler.stats.get_value("item_scraped_count") == len(items)
    assert not crawler.stats.get_value("log_count/ERROR")


# -- 9. a JOBDIR started with Scrapy's dupefilter -------------------------------------------------


@pytest_twisted.inlineCallbacks
def test_jobdir_of_a_scrapy_crawl_is_reported_at_start(tmp_path, caplog):
    from minicrawl import MiniSpider

    jobdir = str(tmp_path / "job")
    yield run(
        MiniSpider, {"ADDONS": {}, "JOBDIR": jobdir, "LOG_LEVEL": "INFO"}
    )  # Scrapy's own filter
    assert (tmp_path / "job" / "requests.seen").stat().st_size > 0
    with caplog.at_level(logging.WARNING):
        yield run(MiniSpider, {"JOBDIR": jobdir, "LOG_LEVEL": "INFO"})
    warnings = [r.getMessage() for r in caplog.records if "requests.seen" in r.getMessage()]
    assert len(warnings) == 1
    assert "will be fetched again" in warnings[0]


# -- 5 and 6. scrapy-redis: its API, its keys ---------------------------------------------------


def redis_settings(redis_server, **more):  # type: ignore[no-untyped-def]
    return {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_urlunify.RedisDupeFilter",
        "REDIS_URL": redis_server.url,
        "LOG_LEVEL": "INFO",
        **more,
    }


def seen_count(client: Any, key: str) -> int:
    """The keys in the seen set at ``key`` (its buckets: docs/stores.md)."""
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore

    return len(RedisSeenStore(client, key))


@pytest_twisted.inlineCallbacks
def test_instances_of_one_spider_class_have_their_own_seen_sets(redis_server):
    """scrapy-redis keys queues by spider.name: the seen sets must follow, or the second crawl
    (another name, its own empty queue) would find every page seen and fetch nothing."""
    settings = redis_settings(redis_server, SCHEDULER_PERSIST=True)
    first, _, _ = yield run(NamelessSpider, settings, name="one")
    second, _, _ = yield run(NamelessSpider, settings, name="two")
    assert set(second.hits) == set(first.hits)
    assert len(first.hits) > 5
    client = redis_server.client()
    # each crawl's own set: every page it fetched (and the canonicals pages declared)
    assert (
        seen_count(client, "urlunify:one:seen")
        == seen_count(client, "urlunify:two:seen")
        >= len(first.hits)
    )


@pytest_twisted.inlineCallbacks
def test_scheduler_dupefilter_key_names_the_seen_set(redis_server):
    settings = redis_settings(
        redis_server, SCHEDULER_PERSIST=True, SCHEDULER_DUPEFILTER_KEY="jobs:%(spider)s:seen"
    )
    site, _, _ = yield run(NamelessSpider, settings, name="k")
    client = redis_server.client()
    assert seen_count(client, "jobs:k:seen") >= len(site.hits)
    assert not client.exists("urlunify:k:seen")


@pytest_twisted.inlineCallbacks
def test_flush_without_persist_leaves_no_key_behind(redis_server):
    site, _, _ = yield run(NamelessSpider, redis_settings(redis_server), name="flushed")
    assert len(site.hits) > 5
    assert redis_server.client().keys("*") == []  # no seen set, no stamps, no queue


def test_scrapy_redis_constructor_and_from_settings(redis_server):
    from scrapy.settings import Settings

    from scrapy_urlunify.integration.seen._redis_dupefilter import RedisDupeFilter

    client = redis_server.client()
    df = RedisDupeFilter(client, "dupefilter:1")  # scrapy-redis's (server, key, debug=False)
    assert df.server is client
    assert df.key == "dupefilter:1"
    assert not df.debug
    get, post = (
        scrapy.Request("http://example.com"),
        scrapy.Request("http://example.com", method="POST"),
    )
    assert not df.request_seen(get)
    assert df.request_seen(scrapy.Request("http://www.example.com/"))  # the same page, unified
    assert not df.request_seen(post)
    assert seen_count(client, "dupefilter:1") == 2
    df.close()  # a one-time key: deleted, as scrapy-redis does
    assert client.keys("*") == []

    df = RedisDupeFilter.from_settings(
        Settings({"REDIS_URL": redis_server.url, "DUPEFILTER_DEBUG": True})
    )
    assert df.key.startswith("dupefilter:")
    assert df.debug
    assert not df.request_seen(get)
    df.close()
