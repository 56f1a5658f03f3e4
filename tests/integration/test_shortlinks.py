"""Declared shortlinks in a real crawl of a small WordPress-like blog
(tests/support/shortlinksite.py), with the add-on alone: once a site's shortlinks proved true
(a shortlink fetched, redirected to the page that declared it), a link to the shortlink of a
page fetched is not fetched; a query form that names the same id is learned as a form rule; a
site whose shortlinks are false is asked every one of them, and loses nothing."""

from __future__ import annotations

from functools import partial
from urllib.parse import parse_qsl, urlsplit

import pytest_twisted
import shortlinksite
from minicrawl import PageSpider, assert_every_page_once, run
from scrapy.http import HtmlResponse

from scrapy_urlunify.integration.pages._declared import PROBATION, declared_href
from scrapy_urlunify.integration.pages._shortlinks import PROBES

ONLY_BY_SHORTLINK = shortlinksite.POSTS - shortlinksite.LISTED


def _page(url: str) -> str | None:
    parts = urlsplit(url)
    return shortlinksite.page_of(parts.path, dict(parse_qsl(parts.query)))


def _all_pages() -> set[str]:
    pages = {"/"}
    for i in range(shortlinksite.POSTS):
        pages.add(f"/post/{shortlinksite.slug(i)}/")
        if i % 5 == 0:
            pages.add(f"/post/{shortlinksite.slug(i)}/comment-page-2/")
    return pages


def _hits(site, query: str) -> int:  # type: ignore[no-untyped-def]
    return sum(n for url, n in site.hits.items() if url.startswith("/?" + query))


def _query_forms_again(site) -> int:  # type: ignore[no-untyped-def]
    """The query-form requests of a post whose page was requested before (permalink or query
    form): fetched again."""
    shown, again = set(), 0
    for url in site.order:
        page = _page(url)
        again += page in shown and "post_type=" in url
        if page is not None:
            shown.add(page)
    return again


def _every_page_once(crawler, items) -> None:  # type: ignore[no-untyped-def]
    assert_every_page_once(crawler, items, _page, _all_pages())


@pytest_twisted.inlineCallbacks
def test_shortlinks_that_proved_true_are_not_fetched_again():
    plain, _, _, _ = yield run(shortlinksite.start, "/", {"URLUNIFY_CANONICALS": False}, PageSpider)
    site, crawler, items, _ = yield run(shortlinksite.start, "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    # without: every post's shortlink is asked (a redirect each), and its query form fetched
    assert _hits(plain, "p=") == _hits(plain, "post_type=") == shortlinksite.POSTS
    # with: PROBATION redirects to the page that declared them make the site's shortlinks
    # trusted; after that only the posts linked by nothing else are asked by shortlink
    assert stats["urlunify/shortlink/verified"] >= PROBATION
    assert _hits(site, "p=") <= PROBATION + ONLY_BY_SHORTLINK
    # the query form names the same id: six of its pages declaring a known shortlink make a
    # form rule, checked by three samples; plain fetches each post's query form after the post
    assert stats["urlunify/learned/form/127.0.0.1//?p={q0}&post_type=post"] == 6
    assert _query_forms_again(plain) == shortlinksite.POSTS
    assert _query_forms_again(site) <= shortlinksite.POSTS // 2
    # a post's second comment page declares the post's shortlink: another page, a conflict,
    # fetched and scraped like every page
    assert stats["urlunify/shortlink/conflicts"] >= 1
    _every_page_once(crawler, items)


@pytest_twisted.inlineCallbacks
def test_false_shortlinks_are_ignored_and_lose_nothing():
    """Each post declares the next post's shortlink: the redirects show other pages, the
    site's shortlinks are ignored, and the posts linked only by shortlink are all fetched
    (trusted unchecked, the claims would have marked them seen)."""
    site, crawler, items, _ = yield run(
        partial(shortlinksite.start, lying=True), "/", {}, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert stats["urlunify/shortlink/counter_examples"] >= PROBATION
    assert "urlunify/shortlink/verified" not in stats
    assert "urlunify/shortlink/recorded" not in stats
    assert _hits(site, "p=") == shortlinksite.POSTS
    _every_page_once(crawler, items)


def test_a_shortlink_is_read_from_the_link_header_or_the_head():
    head = b"<html><head><link rel='shortlink' href='/?p=7'></head><body>"
    assert declared_href(HtmlResponse("http://a.test/x", body=head), "shortlink") == "/?p=7"
    header = HtmlResponse(
        "http://a.test/x",
        body=b"<html><head></head></html>",
        headers={
            "Link": '<https://a.test/wp-json/>; rel="https://api.w.org/", <https://a.test/?p=9>; rel=shortlink'
        },
    )
    assert declared_href(header, "shortlink") == "https://a.test/?p=9"
    assert declared_href(header, "canonical") is None
    # only the head: a shortlink in the body is no declaration
    body = b"<html><head></head><body><link rel='shortlink' href='/?p=8'></body></html>"
    assert declared_href(HtmlResponse("http://a.test/x", body=body), "shortlink") is None


@pytest_twisted.inlineCallbacks
def test_shortlinks_that_nothing_links_are_checked_by_probes():
    """No page links a shortlink (the related posts by their query form): the site's first
    claims are checked by fetching their shortlink, then the query form is learned from the
    posts' claims and not fetched for a post fetched before."""
    site, crawler, items, _ = yield run(
        partial(shortlinksite.start, linked=False), "/", {}, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert PROBATION <= stats["urlunify/shortlink/probes"] <= PROBES
    assert stats["urlunify/shortlink/verified"] >= PROBATION
    assert _hits(site, "p=") == stats["urlunify/shortlink/probes"]
    assert stats["urlunify/learned/form/127.0.0.1//?p={q0}&post_type=post"] == 6
    # the query forms of posts fetched before: six pairs, three samples of the form, and those
    # queued before it (plain: every post's, 30)
    assert _query_forms_again(site) <= shortlinksite.POSTS // 2
    _every_page_once(crawler, items)


@pytest_twisted.inlineCallbacks
def test_no_more_probes_go_at_once_than_verdicts_a_site_still_wants():
    """Sixteen requests at a time, every claim true: five probes trust the site, where the
    claims parsed before their verdicts came used to send ten."""
    site, crawler, items, _ = yield run(
        partial(shortlinksite.start, linked=False),
        "/",
        {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16},
        PageSpider,
    )
    stats = crawler.stats.get_stats()
    assert stats["urlunify/shortlink/probes"] == PROBATION
    assert stats["urlunify/shortlink/verified"] >= PROBATION
    assert "urlunify/shortlink/counter_examples" not in stats
    _every_page_once(crawler, items)
