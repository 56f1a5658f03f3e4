"""The item pipelines: one signature per page or per item text, and the seed's unicity filter."""

from __future__ import annotations

import dataclasses
import logging

import pytest
import pytest_twisted
import scrapy
from minicrawl import MiniSpider, crawl
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from scrapy_urlunify.integration.pages._pipelines import UnicityPipeline


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
    _, stats, items, dropped = yield crawl(
        {"URLUNIFY_DROP_DUPLICATE_RESPONSES": False, "URLUNIFY_SIGNATURE_FIELD": "text"}
    )
    assert [i["text"] for i in items].count("The text of A.") == 1
    assert any("'text' text was already seen on" in r for _, r in dropped)


class ArticleItem(scrapy.Item):
    url = scrapy.Field()
    identifier = scrapy.Field()


@dataclasses.dataclass
class DataItem:
    url: str | None = None
    identifier: str | None = None


def unicity(settings=None):  # type: ignore[no-untyped-def]
    crawler = get_crawler(
        MiniSpider, {"URLUNIFY_SCOPE": "acme", "URLUNIFY_KEY_PARAMS": ["cid"], **(settings or {})}
    )
    return UnicityPipeline.from_crawler(crawler)


@pytest.mark.parametrize(
    "make",
    [dict, lambda **kw: ArticleItem(**kw), lambda **kw: DataItem(**kw)],
    ids=["dict", "Item", "dataclass"],
)
def test_unicity_pipeline_standardizes_identifies_and_drops_repeats(make):
    p = unicity({"URLUNIFY_UNICITY_OUTPUT_FIELD": "identifier"})
    first = p.process_item(make(url="HTTP://News.acme.com:80/s?inifile=x&cid=7&utm_source=y#top"))
    assert dict(first) if isinstance(first, dict) else True
    got = (
        first
        if isinstance(first, dict)
        else dataclasses.asdict(first)
        if dataclasses.is_dataclass(first)
        else dict(first)
    )
    assert got["url"] == "http://news.acme.com/s?inifile=x&cid=7"
    assert got["identifier"] == "acme|news.acme.com/s?cid=7"
    with pytest.raises(DropItem, match="acme\\|news.acme.com/s\\?cid=7"):
        p.process_item(make(url="https://www.news.acme.com/s?cid=7&arglink=z"))
    assert p.process_item(make(url="https://news.acme.com/s?cid=8")) is not None


def test_by_default_the_items_keep_the_fields_the_spider_gave_them(caplog):
    """The feed's columns are the spider's and the canonical URL: no identifier column unless
    asked for, and no warning about typed items that declare neither."""
    p = unicity()
    with caplog.at_level(logging.DEBUG):
        item = p.process_item({"url": "http://www.news.acme.com/s?cid=7&utm_source=x"})
        typed = p.process_item(ArticleItem(url="http://news.acme.com/s?cid=9"))
    assert item == {
        "url": "http://www.news.acme.com/s?cid=7",
        "canonical_url": "http://news.acme.com/s?cid=7",
    }
    assert "identifier" not in typed and "canonical_url" not in typed
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    with pytest.raises(DropItem):  # the unicity filter works all the same
        p.process_item({"url": "https://www.news.acme.com/s?cid=7"})


def test_unicity_pipeline_missing_field_and_bad_urls():
    p = unicity()
    item = {"title": "no url"}
    assert p.process_item(item) is item
    with pytest.raises(DropItem, match="no 'url' field"):
        unicity({"URLUNIFY_UNICITY_DISCARD_MISSING": True}).process_item({"title": "no url"})
    bad = {"url": "http://exa mple.com/"}
    assert p.process_item(bad) == {"url": "http://exa mple.com/"}  # passes unchanged, counted
    q = unicity(
        {
            "URLUNIFY_UNICITY_INPUT_FIELD": "link",
            "URLUNIFY_UNICITY_OUTPUT_FIELD": "key",
            "URLUNIFY_STANDARDIZE_OUTPUT_FIELD": "clean",
            "URLUNIFY_CANONICAL_URL_FIELD": "cite",
        }
    )
    out = q.process_item({"link": "http://www.x.test/a/index.html"})
    assert out == {
        "link": "http://www.x.test/a/index.html",
        "clean": "http://www.x.test/a/index.html",
        "key": "acme|x.test/a",
        "cite": "http://x.test/a/",
    }
