"""The frontier's idea of new content (docs/frontier.md, "What a pattern yields"): a page is new
when a quarter of its text is in blocks no page showed before, so an issue list sorted by
another column, a new page of old text, goes after the issues. A real crawl of a loopback
tracker's sortable list (tests/support/sortsite.py) in Scrapy's default order."""

from __future__ import annotations

import minicrawl
import pytest_twisted
import revisionsite
import sortsite
import tabsite
from lxml import etree, html
from minicrawl import last_of

from scrapy_urlunify.integration.queue._novelty import SeenText, markup_blocks, plain_blocks

#: Scrapy's default order: priority 0 everywhere, last in first out
DFS = {"DEPTH_PRIORITY": 0, "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue"}


@pytest_twisted.inlineCallbacks
def crawl(settings):  # type: ignore[no-untyped-def]
    site, crawler, _, _ = yield minicrawl.run(sortsite.start, "/", {**DFS, **settings})
    return site, list(site.hits), crawler.stats.get_stats()


#: responses within which every issue is fetched with the add-on: the home page, the issues,
#: and the lists sorted in other orders that go before the list's pattern is judged (five
#: responses, the first of them new text) or that a penalised pattern's coarser pattern let
#: through. When this was written: 36; 125 when only a new page counted (a near-duplicate
#: signature does not catch re-sorted rows), 162 for plain Scrapy.
WITHIN = 45


@pytest_twisted.inlineCallbacks
def test_issues_go_before_the_lists_sorted_in_other_orders():
    site, fetched, stats = yield crawl({})
    plain, plain_fetched, _ = yield crawl({"ADDONS": {}})
    issues = {f"/issues/{n}" for n in range(1, sortsite.ISSUES + 1)}
    last, plain_last = last_of(fetched, issues), last_of(plain_fetched, issues)
    assert last <= WITHIN < plain_last, (fetched, plain_fetched)
    assert all(site.hits[path] == 1 for path in issues)  # reordered: every issue, once
    assert stats["finish_reason"] == "finished"
    # the lists were new pages (their signatures differ) of old text
    assert stats["urlunify/frontier/old_text"] >= 5
    assert stats["urlunify/frontier/penalised"] >= 1


def test_a_page_is_new_text_when_a_quarter_of_its_text_is_in_blocks_not_shown_before():
    seen = SeenText()
    rows = [sortsite.issue(n)["subject"] for n in range(1, 11)]
    footer = "Powered by a tracker of issues, version 5.0 (c) its authors"
    assert seen.new_text([*rows, footer]) is True
    assert seen.new_text([*reversed(rows), footer]) is False  # the same rows sorted otherwise
    # an issue whose subject was in the list: its description is more than a quarter
    assert seen.new_text([rows[0], sortsite.description(1), footer]) is True
    # a page that adds one short block to a long old text is old text
    assert seen.new_text([*rows[:6], "A note added to the chart of March"]) is False
    assert seen.new_text([]) is None  # no text to judge: the page's signature decides


def test_blocks_are_the_text_a_reader_sees_outside_code_and_form_controls():
    root = html.fromstring(
        "<html><head><title>A title that is long enough</title></head><body>"
        "<h1>An issue with a subject long enough</h1><p>Short</p>"
        "<script>var text = 'a script that is long enough to count';</script>"
        "<textarea>the page's own source text, long enough to count</textarea>"
        "<select><option>an option of a long menu of options</option></select>"
        "<p>A   paragraph\n with its   white space\tcollapsed</p></body></html>"
    )
    assert markup_blocks(root) == [
        "An issue with a subject long enough",
        "A paragraph with its white space collapsed",
    ]
    feed = etree.fromstring(
        b"<feed><entry><title>An entry of a feed with a title</title></entry></feed>"
    )
    assert markup_blocks(feed) == ["An entry of a feed with a title"]
    assert plain_blocks("id,subject\n12,A subject of an issue in a CSV export\n") == [
        "A subject of an issue in a CSV export"
    ]


def test_a_huge_page_is_judged_by_its_first_blocks_only():
    # a 50 MiB page's every paragraph as a string cost the crawl 17% more peak memory than
    # plain Scrapy's (tests/integration/test_bigpage_memory.py)
    paragraphs = "".join(f"<p>Paragraph {i} of a page that never ends</p>" for i in range(50))
    root = html.fromstring(f"<html><body>{paragraphs}</body></html>")
    assert len(markup_blocks(root)) == 50
    first = markup_blocks(root, max_chars=100)
    assert first == [f"Paragraph {i} of a page that never ends" for i in range(3)]
    assert (
        plain_blocks("A first line of a long text export\n" * 10, max_chars=70)
        == ["A first line of a long text export"] * 2
    )


@pytest_twisted.inlineCallbacks
def crawl_whole(start, pages):  # type: ignore[no-untyped-def]
    """The site ``start()`` serves crawled breadth-first from ``/``: the paths in the order
    fetched, and the stats, once it is checked that its ``pages`` pages were fetched once each
    and the crawl finished."""
    site, crawler, _, _ = yield minicrawl.run(start, "/", {})
    stats = crawler.stats.get_stats()
    assert len(site.hits) == pages
    assert set(site.hits.values()) == {1}
    assert stats["finish_reason"] == "finished"
    return list(site.hits), stats


@pytest_twisted.inlineCallbacks
def test_a_level_scheduled_before_its_pattern_was_judged_goes_after_the_new_pages():
    # breadth-first: the related issues and every issue's two tab views are one level, queued
    # before any tab view was fetched; once five tab views were old text, the others go back
    # to the scheduler behind the related issues. When this was written the last issue came
    # 36th (the home page, 30 issues, 5 tab views), 51st when a request kept the level it was
    # scheduled at
    issues = {f"/issues/{n}" for n in range(1, tabsite.LISTED + tabsite.RELATED + 1)}
    # nothing dropped: every issue and every tab view, once
    fetched, stats = yield crawl_whole(tabsite.start, 1 + 3 * len(issues))
    assert last_of(fetched, issues) <= 40, fetched
    assert stats["urlunify/frontier/requeued"] >= 10


@pytest_twisted.inlineCallbacks
def test_a_page_its_site_asks_to_pass_through_is_no_new_content():
    # breadth-first: the old revisions (noindex,follow; new wordings) and the related articles
    # are one level, the revisions first; once five revisions were fetched their pattern goes
    # after the related articles. When this was written the last article came 42nd; 61st when
    # an old revision counted as new content
    articles = {f"/articles/{n}" for n in range(1, revisionsite.LISTED + revisionsite.RELATED + 1)}
    # nothing dropped: every article and every revision, once
    total = 1 + len(articles) * (1 + revisionsite.REVISIONS)
    fetched, stats = yield crawl_whole(revisionsite.start, total)
    assert last_of(fetched, articles) <= 50, fetched
    assert stats["urlunify/frontier/pass_through"] >= 5


@pytest_twisted.inlineCallbacks
def test_special_pages_among_the_articles_do_not_push_the_articles_back():
    # MediaWiki's special pages say noindex,nofollow and share /wiki/* with the articles: the
    # six of them fetched first must not make /wiki/* a pattern of no new content, or the news
    # (listed after the articles, one level) would go first
    site, crawler, _, _ = yield minicrawl.run(revisionsite.start, "/wiki/", {})
    stats = crawler.stats.get_stats()
    fetched = list(site.hits)
    pages = [i for i, path in enumerate(fetched, 1) if path.startswith("/wiki/Page_")]
    news = [i for i, path in enumerate(fetched, 1) if path.startswith("/news/")]
    assert len(pages) == len(news) == revisionsite.LISTED
    assert max(pages) < min(news), fetched
    assert "urlunify/frontier/pass_through" not in stats
    assert stats["finish_reason"] == "finished"
