"""Page signatures: the MD5 of the body text, duplicate pages, and the two pipelines."""

from __future__ import annotations

import dataclasses

import pytest
import pytest_twisted
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import DropItem
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule
from scrapy.utils.test import get_crawler

import _minisite
from scrapy_urlunify.pipelines import UnicityPipeline
from scrapy_urlunify.signatures import body_text, signature, site_key

# -- pure functions ------------------------------------------------------------------------------


def test_body_text_ignores_scripts_styles_comments_and_spacing():
    a = b"<html><head><title>T</title><style>p{}</style></head><body><p>Hello\n  <b>world</b></p>" \
        b"<script>var x=1</script><noscript>enable js</noscript><!-- 12:00 --></body></html>"
    assert body_text(a) == "Hello world"
    b = b"<html><body><p>Hello world</p><!-- 13:00 --><a href='/x;jsessionid=2'></a></body></html>"
    assert signature(a, "text/html") == signature(b, "text/html")
    assert signature(a, "text/html") != signature(b.replace(b"world", b"there"), "text/html")


def test_non_html_empty_text_and_large_bodies_hash_the_raw_bytes():
    import hashlib

    pdf = b"%PDF-1.4 binary"
    assert signature(pdf, "application/pdf") == hashlib.md5(pdf).digest()
    gallery = b"<html><body><img src='a.png'></body></html>"
    assert signature(gallery, "text/html") == hashlib.md5(gallery).digest()
    big = b"<html><body>" + b"x" * 100 + b"</body></html>"
    assert signature(big, "text/html", max_bytes=50) == hashlib.md5(big).digest()
    assert signature(big, "text/html") != hashlib.md5(big).digest()


def test_decoded_text_gives_the_same_signature_whatever_the_encoding():
    text = "<html><body>Čačak é</body></html>"
    assert signature(text.encode("cp1250", "replace"), "text/html", text) == signature(text.encode(), "text/html", text)


def test_site_keys():
    assert site_key("shop.termomont.rs") == "termomont.rs"
    assert site_key("mirror.site.test") == site_key("site.test") == "site.test"
    assert site_key("127.0.0.1") == "127.0.0.1"
    assert site_key("a.b.example.co.uk", "host") == "a.b.example.co.uk"
    assert site_key("a.example.com", "scope") == ""


# -- a real crawl of the mini site -----------------------------------------------------------------


class MiniSpider(CrawlSpider):
    name = "mini"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        for article in response.css("article"):
            yield {"url": response.url, "title": article.css("h1::text").get(),
                   "text": article.css(".text::text").get()}

    def parse_start_url(self, response, **kwargs):  # type: ignore[no-untyped-def]
        return self.parse_page(response)


SETTINGS = {
    "ADDONS": {"scrapy_urlunify.Addon": 0},
    "ROBOTSTXT_OBEY": False,
    "CONCURRENT_REQUESTS": 1,  # one page at a time, in link order: a deterministic crawl
    "DEPTH_PRIORITY": 1,
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
}


@pytest_twisted.inlineCallbacks
def crawl(settings):  # type: ignore[no-untyped-def]
    site, port, base = _minisite.start()
    items, dropped = [], []
    try:
        runner = CrawlerRunner({**SETTINGS, **settings})
        crawler = runner.create_crawler(MiniSpider)

        def scraped(item, **kw):  # type: ignore[no-untyped-def]
            items.append(item)

        def dropped_item(item, exception, **kw):  # type: ignore[no-untyped-def]
            dropped.append((item, str(exception)))

        crawler.signals.connect(scraped, signal=signals.item_scraped)
        crawler.signals.connect(dropped_item, signal=signals.item_dropped)
        yield runner.crawl(crawler, start_urls=[base + "/"])
    finally:
        yield port.stopListening()
    return site, crawler.stats.get_stats(), items, dropped


@pytest_twisted.inlineCallbacks
def test_duplicate_pages_never_reach_the_callback():
    site, stats, items, _ = yield crawl({})
    # ?ref=2 and ?ref=3 and the print view are fetched (no rule predicts them) ...
    assert site.hits["/a?ref=2"] == 1 and site.hits["/doc?print=1"] == 1
    # ... recognized by their body text, and yield nothing: one item for A, one for Doc
    titles = sorted(i["title"] for i in items)
    assert titles.count("Article A") == 1 and titles.count("Doc") == 1
    # a listing page yields all its items
    assert sum(1 for t in titles if t.startswith("Item ")) == 5
    # distinct pages with equal text collide, by design: the second empty search result and
    # the second soft 404 are duplicates of the first (documented in signatures.py)
    assert stats["urlunify/signature/duplicates"] >= 2 + 2 + 1
    # the links of a duplicate page are not followed: /a?ref=x variants on /next still are
    # (from /next), but nothing is reached through a duplicate page
    assert stats["finish_reason"] == "finished"


@pytest_twisted.inlineCallbacks
def test_declared_canonical_marks_its_target_seen():
    site, stats, items, _ = yield crawl({})
    # /c declares /a as its canonical: /a counts as seen (its content was obtained), so the
    # link to /a on /c is not followed
    assert stats["urlunify/canonical/recorded"] == 1
    assert site.hits["/a"] == 0


@pytest_twisted.inlineCallbacks
def test_signature_pipeline_when_duplicate_responses_reach_the_callback():
    _, stats, items, dropped = yield crawl({"URLUNIFY_DROP_DUPLICATE_RESPONSES": False})
    titles = [i["title"] for i in items]
    assert titles.count("Article A") == 1 and titles.count("Doc") == 1
    assert sum(1 for t in titles if t.startswith("Item ")) == 5  # all items of one page pass
    reasons = [r for _, r in dropped]
    assert any("its page has the body text of" in r for r in reasons)
    assert stats["urlunify/signature/dropped_items"] == len(dropped)


@pytest_twisted.inlineCallbacks
def test_signature_field_hashes_the_items_own_text():
    _, stats, items, dropped = yield crawl({"URLUNIFY_DROP_DUPLICATE_RESPONSES": False,
                                            "URLUNIFY_SIGNATURE_FIELD": "text"})
    assert [i["text"] for i in items].count("The text of A.") == 1
    assert any("'text' text was already seen on" in r for _, r in dropped)


# -- UnicityPipeline (the seed's tuple filters) ----------------------------------------------------


class ArticleItem(scrapy.Item):
    url = scrapy.Field()
    identifier = scrapy.Field()


@dataclasses.dataclass
class DataItem:
    url: str | None = None
    identifier: str | None = None


def unicity(settings=None):  # type: ignore[no-untyped-def]
    crawler = get_crawler(MiniSpider, {"URLUNIFY_SCOPE": "acme", "URLUNIFY_KEY_PARAMS": ["cid"], **(settings or {})})
    return UnicityPipeline.from_crawler(crawler)


@pytest.mark.parametrize("make", [dict, lambda **kw: ArticleItem(**kw), lambda **kw: DataItem(**kw)],
                         ids=["dict", "Item", "dataclass"])
def test_unicity_pipeline_standardizes_identifies_and_drops_repeats(make):
    p = unicity()
    first = p.process_item(make(url="HTTP://News.acme.com:80/s?inifile=x&cid=7&utm_source=y#top"))
    assert dict(first) if isinstance(first, dict) else True
    got = first if isinstance(first, dict) else dataclasses.asdict(first) if dataclasses.is_dataclass(first) else dict(first)
    assert got["url"] == "http://news.acme.com/s?inifile=x&cid=7"
    assert got["identifier"] == "acme|news.acme.com/s?cid=7"
    with pytest.raises(DropItem, match="acme\\|news.acme.com/s\\?cid=7"):
        p.process_item(make(url="https://www.news.acme.com/s?cid=7&arglink=z"))
    assert p.process_item(make(url="https://news.acme.com/s?cid=8")) is not None


def test_unicity_pipeline_missing_field_and_bad_urls():
    p = unicity()
    item = {"title": "no url"}
    assert p.process_item(item) is item
    with pytest.raises(DropItem, match="no 'url' field"):
        unicity({"URLUNIFY_UNICITY_DISCARD_MISSING": True}).process_item({"title": "no url"})
    bad = {"url": "http://exa mple.com/"}
    assert p.process_item(bad) == {"url": "http://exa mple.com/"}  # passes unchanged, counted
    q = unicity({"URLUNIFY_UNICITY_INPUT_FIELD": "link", "URLUNIFY_UNICITY_OUTPUT_FIELD": "key",
                 "URLUNIFY_STANDARDIZE_OUTPUT_FIELD": "clean"})
    out = q.process_item({"link": "http://www.x.test/a/index.html"})
    assert out == {"link": "http://www.x.test/a/index.html", "clean": "http://www.x.test/a/index.html",
                   "key": "acme|x.test/a"}


# -- learning --------------------------------------------------------------------------------------


@pytest_twisted.inlineCallbacks
def crawl_from(path, settings):  # type: ignore[no-untyped-def]
    site, port, base = _minisite.start()
    try:
        runner = CrawlerRunner({**SETTINGS, **settings})
        crawler = runner.create_crawler(MiniSpider)
        yield runner.crawl(crawler, start_urls=[base + path])
    finally:
        yield port.stopListening()
    return site, crawler.stats.get_stats()


@pytest_twisted.inlineCallbacks
def test_learning_an_irrelevant_parameter_stops_later_fetches(tmp_path):
    site, stats = yield crawl_from("/learn", {"URLUNIFY_LEARN": True, "JOBDIR": str(tmp_path / "job")})
    host = "127.0.0.1"
    assert stats[f"urlunify/learned/param/{host}/ref"] >= 3
    # before the rule: /b, /e, /f were each fetched with ?ref=1 and ?ref=2 (their signatures
    # taught the rule); after it, the ?ref=3..5 links on /later (deeper, so crawled later with
    # DEPTH_PRIORITY) need no fetch, and /g, new, is fetched once
    for x in "bef":
        assert site.hits[f"/{x}?ref=1"] == site.hits[f"/{x}?ref=2"] == 1
        assert sum(site.hits[f"/{x}?ref={i}"] for i in (3, 4, 5)) == 0
    assert sum(site.hits[f"/g?ref={i}"] for i in (3, 4, 5)) == 1
    # ?page= changes the text: never learned, every listing page fetched
    assert all(site.hits[f"/p?page={i}"] == 1 for i in (1, 2, 3, 4))
    assert not any("/page" in k for k in stats if k.startswith("urlunify/learned/param/"))
    # kept with the job: a resumed run starts with the rule
    assert "ref" in (tmp_path / "job" / "urlunify-learned.json").read_text()


@pytest_twisted.inlineCallbacks
def test_without_learning_every_ref_variant_is_fetched():
    site, stats = yield crawl_from("/learn", {})
    assert sum(site.hits[f"/b?ref={i}"] for i in range(1, 6)) == 5
    assert not any(k.startswith("urlunify/learned/") for k in stats)


@pytest_twisted.inlineCallbacks
def test_a_canonical_whose_page_differs_is_a_counter_example(caplog):
    with caplog.at_level("WARNING", logger="scrapy_urlunify.pages"):
        site, stats = yield crawl_from("/learn", {})
    # /claim names /home its canonical; /home was fetched before, with another text
    assert site.hits["/claim"] == 1
    assert stats["urlunify/canonical/counter_examples"] == 1
    assert "not the same page" in caplog.text
    assert stats["urlunify/canonical/recorded"] == 1  # /hdr's; not /claim's


@pytest_twisted.inlineCallbacks
def test_a_canonical_link_header_counts_too():
    site, stats = yield crawl_from("/learn", {})
    # /hdr (depth 2) sends `Link: </doc>; rel="canonical"` and links to /doc: /doc is not fetched
    assert site.hits["/hdr"] == 1 and site.hits["/doc"] == 0
    assert stats["urlunify/canonical/recorded"] == 1


@pytest_twisted.inlineCallbacks
def test_learning_a_leading_path_segment():
    site, stats = yield crawl_from("/plearn", {"URLUNIFY_LEARN": True})
    assert stats["urlunify/learned/path/127.0.0.1/print"] >= 3
    # after the rule: of /print/docs/x and /docs/x on /pnext, one fetch each, not two
    for x in "def":
        assert site.hits[f"/print/docs/{x}"] + site.hits[f"/docs/{x}"] == 1
