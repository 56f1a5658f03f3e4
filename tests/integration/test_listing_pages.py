"""A list under another pager is one item; short pages that differ in a number stay apart: real
crawls of a small shop (tests/support/listsite.py) with the add-on alone."""

from __future__ import annotations

import logging
from collections import Counter
from urllib.parse import parse_qsl, urlsplit

import listsite
import pytest_twisted
from minicrawl import PageSpider, run


def _page(url: str) -> str | None:
    parts = urlsplit(url)
    return listsite.page_of(parts.path, dict(parse_qsl(parts.query)))


@pytest_twisted.inlineCallbacks
def test_a_list_under_two_pagers_is_one_item_and_pages_a_number_apart_are_two():
    site, crawler, items, dropped = yield run(listsite.start, "/", {}, PageSpider)
    fetched = {_page(url) for url in site.hits if _page(url) is not None}
    shown = Counter(_page(item["url"]) for item in items)
    # the 25th product's list was fetched as ?page=3 and as ?limit=24&page=2: one item
    assert {"/category/1?page=3", "/category/1?limit=24&page=2"} <= set(site.hits)
    assert shown["list [125]"] == 1
    assert [reason for _, reason in dropped if "near-duplicate" in reason] != []
    # every page is an item once: the gallery's photos (a pager, each its own image), and the
    # two products whose one line differs only in a number
    assert set(shown) == fetched
    assert max(shown.values()) == 1
    assert {f"photo {n}" for n in range(1, listsite.PHOTOS + 1)} <= set(shown)
    assert {"/product/101", "/product/102"} <= set(shown)


@pytest_twisted.inlineCallbacks
def test_lists_of_other_rows_are_two_items_however_alike_their_texts(caplog):
    """Two archives of one introduction, whose lists differ in one row: their SimHashes are 2
    bits apart (within the item threshold, 3), but they link to other notes."""
    caplog.set_level(logging.DEBUG, "scrapy_urlunify")
    site, crawler, items, dropped = yield run(listsite.start, "/", {}, PageSpider)
    shown = Counter(_page(item["url"]) for item in items)
    assert shown["/archive/a"] == shown["/archive/b"] == 1
    # they are near-duplicates to the crawl (the second's links followed, evidence for learning)
    assert "it links to other pages, or in another order: its items are kept" in caplog.text
    assert crawler.stats.get_value("signature/dropped_near_duplicate_items", 0) == 0


def _archive_checked(pages, name: str):  # type: ignore[no-untyped-def]
    from lxml import html

    return pages.check("s|a", html.fromstring(listsite.archive(name)), f"s|a/{name}", b"1" * 16)


def test_what_a_page_links_to_is_kept_in_the_jobdir_file_and_the_shared_log(tmp_path):
    """The archives' links survive a resume (the JOBDIR file) and reach another process (the
    shared log's records): the second archive is still a list of other rows there. A file
    without them (an older version's) is read, and its pages are judged by their text."""
    from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages

    first = NearDuplicatePages(1 << 20, 7, 7)
    first.pending = []
    assert _archive_checked(first, "a")[1] is None
    first.save(tmp_path / "f")
    resumed = NearDuplicatePages(1 << 20, 7, 7)
    assert resumed.load(tmp_path / "f")
    found = _archive_checked(resumed, "b")[1]
    assert (found.of, found.distance, found.other_links) == ("s|a/a", 2, True)

    other = NearDuplicatePages(1 << 20, 7, 7)
    # its fingerprint, its digest up to numbers and its links
    assert other.replay(first.pending) == len(first.pending) == 3
    assert _archive_checked(other, "b")[1].other_links

    # the file without its last section, as an older version wrote it
    data = (tmp_path / "f").read_bytes()
    (tmp_path / "old").write_bytes(data[: len(data) - 4 - 16])
    older = NearDuplicatePages(1 << 20, 7, 7)
    assert older.load(tmp_path / "old")
    found = _archive_checked(older, "b")[1]
    assert (found.distance, found.other_links) == (2, False)
