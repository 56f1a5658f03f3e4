"""Links a page marks ``rel="nofollow"`` (docs/frontier.md, "Links a page marks nofollow"), in real
crawls of a tracker-like loopback site whose issues link their exports that way
(tests/support/exportsite.py: an HTML export and a "watch" view of each issue): the frontier schedules them after the links the page offers
robots, in Scrapy's default order too, and fetches every one of them all the same."""

from __future__ import annotations

import exportsite
import minicrawl
import pytest_twisted
from minicrawl import last_of
from scrapy.http import HtmlResponse

from scrapy_urlunify.integration.links._nofollow_links import NofollowLinks, nofollow_urls

#: Scrapy's default order: priority 0 everywhere, last in first out
DFS = {"DEPTH_PRIORITY": 0, "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue"}


@pytest_twisted.inlineCallbacks
def crawl(frontier):  # type: ignore[no-untyped-def]
    """The export site crawled from / in Scrapy's default order: the paths fetched, in order,
    and the stats."""
    site, crawler, _, _ = yield minicrawl.run(
        exportsite.start, "/", {**DFS, "URLUNIFY_FRONTIER": frontier}, minicrawl.PageSpider
    )
    assert set(site.hits.values()) == {1}  # each page fetched once
    return list(site.hits), crawler.stats.get_stats()


@pytest_twisted.inlineCallbacks
def test_issues_come_before_the_links_their_pages_mark_nofollow():  # type: ignore[no-untyped-def]
    fetched, stats = yield crawl(True)
    without, _ = yield crawl(False)
    issues = exportsite.issue_pages()
    first = {"/", "/about", *issues}
    # the home page, /about and every issue first; the pages marked nofollow after them
    assert set(fetched[: len(first)]) == first, fetched
    # Scrapy's order takes an issue's marked links (its last, so the first out) before the
    # next issue
    assert last_of(without, issues) > 2 * len(issues), without
    # reordered, nothing dropped: every page marked nofollow is fetched
    assert sorted(fetched) == sorted(without)
    assert exportsite.marked_pages() <= set(fetched)
    # those, and not /about, which the home page also links without nofollow
    assert stats["urlunify/frontier/nofollow_links"] == len(exportsite.marked_pages())


def page(body: str, url: str = "http://site.test/issues/5") -> HtmlResponse:
    return HtmlResponse(url, body=body.encode(), encoding="utf-8")


def test_the_links_a_page_marks_nofollow_whatever_the_case_and_other_tokens():
    response = page(
        "<a rel='NoFollow' href='5.pdf'>PDF</a><a rel='external nofollow ugc' "
        "href='https://else.test/x#top'>x</a><a rel='noopener' href='/kept'>kept</a>"
        "<a href='/plain'>plain</a><a rel='nofollow'>no href</a>"
    )
    assert nofollow_urls(response) == {
        "http://site.test/issues/5.pdf",
        "https://else.test/x",
    }


def test_a_url_also_linked_without_nofollow_is_not_marked():
    response = page(
        "<a href='/about'>About</a><footer><a rel='nofollow' href='/about'>about</a>"
        "<a rel='nofollow' href='/login'>log in</a></footer>"
    )
    assert nofollow_urls(response) == {"http://site.test/login"}


def test_what_is_not_an_html_page_marks_nothing():
    from scrapy.http import TextResponse

    response = TextResponse(
        "http://site.test/feed", body=b"<a rel='nofollow' href='/x'>x</a>", encoding="utf-8"
    )
    assert nofollow_urls(response) == frozenset()


def test_a_page_is_read_once_for_its_links():
    links = NofollowLinks()
    response = page("<a rel='nofollow' href='/login?next=%2F'>log in</a><a href='/a'>a</a>")
    assert links.marked("http://site.test/login?next=%2F#form", response)
    assert not links.marked("http://site.test/a", response)
    other = page("<a href='/login?next=%2F'>log in</a>")
    assert not links.marked("http://site.test/login?next=%2F", other)
