"""Each Scrapy component of the add-on built alone, from a crawler that has not crawled
(``scrapy.utils.test.get_crawler``), as Scrapy's own component tests build theirs: what it does
to one request, response or item, and which objects of the crawl it shares with the others
(``UnifyCrawl`` builds them once). Whole crawls are in the scenario tests."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from scrapy_urlunify import (
    DequeueMiddleware,
    DupeFilter,
    DuplicatePageGate,
    Fingerprinter,
    LinkMiddleware,
    ResumeMiddleware,
    SignatureMiddleware,
    SignaturePipeline,
    UnicityPipeline,
)
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.pages._signatures import DUPLICATE_FLAG, DuplicatePage

ADDON = {"ADDONS": {"scrapy_urlunify.Addon": 0}}


class ShopSpider(Spider):
    name = "shop"
    allowed_domains = ["shop.test"]


def crawler_with(settings: dict[str, Any] | None = None) -> Any:
    crawler = get_crawler(ShopSpider, {**ADDON, **(settings or {})})
    crawler.spider = ShopSpider.from_crawler(crawler)
    return crawler


def page(url: str, text: str) -> HtmlResponse:
    body = f"<html><body><h1>{text}</h1><p>{text} {text}</p></body></html>".encode()
    return HtmlResponse(url, body=body, encoding="utf-8", request=Request(url))


def test_the_crawl_is_built_once_and_its_objects_are_shared():
    crawler = crawler_with()
    links = LinkMiddleware.from_crawler(crawler)
    df = DupeFilter.from_crawler(crawler)
    signatures = SignatureMiddleware.from_crawler(crawler)
    crawl = UnifyCrawl.of(crawler)
    assert UnifyCrawl.of(crawler) is crawl
    assert links.seen is df.check  # the early drop asks the scheduler's own check
    assert df.check.probation is crawl.learning.probation  # type: ignore[union-attr]
    assert signatures.pages.learning is crawl.learning
    assert signatures.pages.seen is df.check.seen


def test_the_settings_decide_what_the_crawl_has_not_the_order_components_are_built_in():
    crawler = crawler_with({"DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter"})
    crawl = UnifyCrawl.of(crawler)
    assert crawl.seen is None  # the project's own dupefilter: nothing of ours records pages
    assert LinkMiddleware.from_crawler(crawler).seen is None
    assert crawl.learning is not None  # the page checks still learn
    plain = get_crawler(ShopSpider, {"DOWNLOADER_MIDDLEWARES": {}, "URLUNIFY_LEARN": True})
    assert UnifyCrawl.of(plain).learning is None  # no page checks: nothing to learn from
    with pytest.raises(NotConfigured):
        DequeueMiddleware.from_crawler(plain)
    with pytest.raises(NotConfigured):
        ResumeMiddleware.from_crawler(crawler_with())  # no JOBDIR, no Redis: nothing to resume


def test_the_dupefilter_drops_another_spelling_of_a_page():
    df = DupeFilter.from_crawler(crawler_with())
    assert df.request_seen(Request("https://www.shop.test/p/1/index.html?utm_source=x")) is False
    assert df.request_seen(Request("http://shop.test/p/1/")) is True
    assert df.request_seen(Request("http://shop.test/p/2")) is False
    df.close("finished")


def test_the_fingerprinter_follows_the_rules_learned_during_the_crawl():
    crawler = crawler_with()
    fingerprinter = Fingerprinter.from_crawler(crawler)
    a, b = Request("http://shop.test/p/1?ref=a"), Request("http://shop.test/p/1?ref=b")
    assert fingerprinter.fingerprint(a) != fingerprinter.fingerprint(b)
    UnifyCrawl.of(crawler).policies.set_learned({"shop.test": ["ref"]}, [])
    assert Fingerprinter.from_crawler(crawler).fingerprint(
        Request("http://shop.test/p/1?ref=a")
    ) == fingerprinter.fingerprint(Request("http://shop.test/p/1?ref=b"))


def test_the_link_middleware_filters_standardizes_and_drops_what_was_scheduled():
    crawler = crawler_with()
    links = LinkMiddleware.from_crawler(crawler)
    df = DupeFilter.from_crawler(crawler)
    response = page("http://shop.test/", "home")
    assert links.get_processed_request(Request("http://shop.test/cv.pdf"), response) is None
    out = links.get_processed_request(Request("http://shop.test/a/../b?utm_source=x"), response)
    assert out is not None and out.url == "http://shop.test/b"
    assert df.request_seen(out) is False
    # scheduled once: another spelling of the page is dropped here, counted as the scheduler would
    assert links.get_processed_request(Request("https://www.shop.test/b#top"), response) is None
    assert crawler.stats.get_value("dupefilter/filtered") == 1


def test_a_page_with_the_text_of_another_is_received_then_dropped_by_the_gate():
    crawler = crawler_with()
    signatures = SignatureMiddleware.from_crawler(crawler)
    gate = DuplicatePageGate.from_crawler(crawler)
    first = page("http://shop.test/p/1", "a lamp")
    assert signatures.process_response(first.request, first) is first
    assert DUPLICATE_FLAG not in first.flags
    gate.process_spider_input(first)  # a new page passes
    copy = page("http://shop.test/print/1", "a lamp")
    assert signatures.process_response(copy.request, copy) is copy  # received: budgets count it
    assert DUPLICATE_FLAG in copy.flags
    with pytest.raises(DuplicatePage, match="body text of shop\\|shop.test/p/1"):
        gate.process_spider_input(copy)


def test_the_items_of_a_duplicate_page_are_dropped_and_the_others_get_their_canonical_url():
    crawler = crawler_with({"URLUNIFY_DROP_DUPLICATE_RESPONSES": False})
    signatures = SignatureMiddleware.from_crawler(crawler)
    links = LinkMiddleware.from_crawler(crawler)
    signature_pipeline = SignaturePipeline.from_crawler(crawler)
    unicity = UnicityPipeline.from_crawler(crawler)
    items = []
    for url in ("http://shop.test/p/1", "http://shop.test/print/1"):
        response = page(url, "a lamp")
        response = signatures.process_response(response.request, response)
        response.request.meta.update(response.meta)  # the engine hands the spider its meta
        items.append(links.get_processed_item({"url": url}, response))
    kept = unicity.process_item(signature_pipeline.process_item(items[0]))
    assert kept == {"url": "http://shop.test/p/1", "canonical_url": "http://shop.test/p/1"}
    with pytest.raises(DropItem, match="body text of"):
        signature_pipeline.process_item(items[1])


def test_a_held_request_passes_the_dupefilter_but_its_redirect_does_not():
    """The frontier holds a request back once, scheduling it again: the dupefilter lets its own
    key through, but a redirect of it (which copies its meta) to a page already scheduled is a
    duplicate, as any other request."""
    from scrapy_urlunify.integration.crawl._meta import HELD_META

    df = DupeFilter.from_crawler(crawler_with())
    short, post = Request("http://shop.test/s/7"), Request("http://shop.test/post/7")
    assert df.request_seen(short) is False and df.request_seen(post) is False
    held = short.replace(meta={HELD_META: short.url})
    assert df.request_seen(held) is False  # scheduled again once, on purpose
    # a rule learned between the hold and the rescheduling changes its key, not its URL: it is
    # still let through (its page queued under its old key was this very request)
    noisy = Request("http://shop.test/p/9?ref=side")
    assert df.request_seen(noisy) is False
    df.check.policies.set_learned({"shop.test": ["ref"]}, [])
    assert df.request_seen(noisy.replace(meta={HELD_META: noisy.url})) is False
    redirected = held.replace(url=post.url, meta={**held.meta, "redirect_urls": [short.url]})
    assert df.request_seen(redirected) is True  # the permalink was scheduled already
    assert df.request_seen(Request("http://shop.test/s/7")) is True  # and the short link too


def test_the_link_middleware_remembers_the_verdicts_of_a_bounded_number_of_hosts(monkeypatch):
    import scrapy_urlunify.integration.links._hosts as hosts_module

    monkeypatch.setattr(hosts_module, "MAX_HOSTS", 3)
    crawler = crawler_with()
    links = LinkMiddleware.from_crawler(crawler)
    response = page("http://shop.test/", "home")
    for n in range(6):  # a broad crawl's hosts: the table keeps the last ones only
        assert links.get_processed_request(Request(f"http://h{n}.other.test/"), response)
    assert list(links.hosts.known) == [f"h{n}.other.test" for n in (3, 4, 5)]
    # a host forgotten is judged again when met again
    assert links.get_processed_request(Request("http://h0.other.test/x"), response)
    assert list(links.hosts.known) == [f"h{n}.other.test" for n in (4, 5, 0)]
