"""The frontier (``URLUNIFY_FRONTIER``, docs/frontier.md) in real crawls of a loopback site whose
every page links a chain of near-duplicate log-in pages (tests/support/loginsite.py): the real
pages come first when it is on, in Scrapy's default order and breadth-first, and nothing is
dropped; and a pattern's levels, from the counts the middlewares give it."""

from __future__ import annotations

import logging

import chainsite
import chartsite
import loginsite
import minicrawl
import pytest_twisted
from minicrawl import last_of
from scrapy import Request
from scrapy.http import HtmlResponse

from scrapy_urlunify.integration.crawl._stats import UnifyStats
from scrapy_urlunify.integration.queue._frontier import Frontier, spelling_of

#: Scrapy's default order: priority 0 everywhere, last in first out
DFS = {"DEPTH_PRIORITY": 0, "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue"}
#: breadth-first (priority -depth, first in first out): minicrawl's settings
BFS: dict[str, object] = {}
#: responses within which every real page is fetched with the frontier on (the site has a home
#: page, 15 real pages and 96 log-in pages; the URL pattern of the log-in pages is known after 9
#: of their returnto values, and penalised 5 of its responses later). When this was written: 41
#: in Scrapy's default order and 39 breadth-first, 101 and 85 without the frontier.
WITHIN = 60


@pytest_twisted.inlineCallbacks
def crawl(order, frontier):  # type: ignore[no-untyped-def]
    """The log-in site crawled from / in ``order``: the paths fetched in order, and the stats.
    Learning off: its rule of the log-in page's context (returnto does not matter there) would
    spare the log-in chains with or without the frontier, and the test is of the reordering."""
    site, crawler, _, _ = yield minicrawl.run(
        loginsite.start, "/", {**order, "URLUNIFY_FRONTIER": frontier, "URLUNIFY_LEARN": False}
    )
    assert set(site.hits.values()) == {1}  # each page fetched once
    return list(site.hits), crawler.stats.get_stats()


def covered_at(fetched: list[str]) -> int:
    """How many responses it took to fetch every real page."""
    return last_of(fetched, loginsite.real_pages())


@pytest_twisted.inlineCallbacks
def test_real_pages_first_in_scrapy_default_order(caplog):  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO, logger="scrapy_urlunify.integration.queue._frontier")
    fetched, stats = yield crawl(DFS, True)
    without, stats_without = yield crawl(DFS, False)
    assert covered_at(fetched) <= WITHIN < covered_at(without), (fetched, without)
    # reordered, not dropped: the same pages (each real page and home, and their log-in chains)
    assert sorted(fetched) == sorted(without)
    assert len(fetched) == (1 + loginsite.PAGES) * (1 + loginsite.CHAIN)
    assert stats["urlunify/frontier/penalised"] >= 1
    assert stats["urlunify/frontier/deprioritised"] >= 1
    assert not any(k.startswith("urlunify/frontier/") for k in stats_without)
    logged = [r.getMessage() for r in caplog.records if "URL pattern" in r.getMessage()]
    assert any("/login?returnto=*" in m and "brings little new" in m for m in logged), logged


@pytest_twisted.inlineCallbacks
def test_real_pages_first_breadth_first():  # type: ignore[no-untyped-def]
    fetched, _ = yield crawl(BFS, True)
    without, _ = yield crawl(BFS, False)
    assert covered_at(fetched) <= WITHIN < covered_at(without), (
        covered_at(fetched),
        covered_at(without),
    )
    assert sorted(fetched) == sorted(without)


def page(url: str) -> HtmlResponse:
    return HtmlResponse(url, body=b"<html></html>", request=Request(url))


def test_a_penalised_pattern_recovers_when_its_pages_are_new_again():
    frontier = Frontier(UnifyStats(None), 100)
    home = page("http://s.test/")
    logins = [f"http://s.test/login?returnto=p{i}" for i in range(60)]
    for url in logins[:9]:  # nine returnto values: the pattern is login?returnto=*
        frontier.schedule(Request(url), home)
    for url in logins[:5]:
        frontier.fetched(Request(url), new=False)
    late = Request(logins[10])
    frontier.schedule(late, home)
    assert late.priority == -200  # nothing new: level 2
    for url in logins[10:20]:
        frontier.fetched(Request(url), new=True)
    again = Request(logins[31], priority=5)
    frontier.schedule(again, home)
    # new pages now, even if they link to nothing new: recovered; its own priority is kept
    assert again.priority == 5
    # a start request is never penalised
    for url in logins[40:50]:
        frontier.fetched(Request(url), new=False)
    start = Request(logins[51])
    frontier.schedule(start, None)
    assert start.priority == 0


def test_a_redirected_response_counts_for_the_pattern_it_was_scheduled_with():
    frontier = Frontier(UnifyStats(None), 100)
    home = page("http://s.test/")
    for i in range(5):
        redirected = Request(
            f"http://s.test/article/{i}", meta={"redirect_urls": [f"http://s.test/random?n={i}"]}
        )
        frontier.fetched(redirected, new=False)
    random_page, article = Request("http://s.test/random?n=9"), Request("http://s.test/article/9")
    frontier.schedule(random_page, home)
    frontier.schedule(article, home)
    assert (random_page.priority, article.priority) == (-200, 0)


def test_new_content_is_never_pushed_back_and_a_listing_is_worth_what_it_leads_to():
    """Novelty is new content: a pattern whose pages are new is never pushed back, whatever its
    links; a pattern whose pages repeat each other (a pager's twins) keeps its place while its
    links lead to new pages, and goes back once they do not."""
    frontier = Frontier(UnifyStats(None), 100)
    home = page("http://s.test/")
    for n in range(6):  # articles: new pages that link nowhere new
        frontier.fetched(Request(f"http://s.test/wiki/A{n}"), new=True)
    article = Request("http://s.test/wiki/A99")
    frontier.schedule(article, home)
    assert article.priority == 0
    for n in range(6):  # listing twins (one text), each leading to a new article
        listing = f"http://s.test/list?page={n}"
        frontier.fetched(Request(listing), new=False)
        linked = Request(f"http://s.test/post/{n}", headers={"Referer": listing})
        frontier.fetched(linked, new=True)
    listing = Request("http://s.test/list?page=99")
    frontier.schedule(listing, home)
    assert listing.priority == 0  # worth the posts it led to
    for n in range(6, 40):  # twins whose links lead to nothing new
        frontier.fetched(Request(f"http://s.test/list?page={n}"), new=False)
    later = Request("http://s.test/list?page=100")
    frontier.schedule(later, home)
    assert later.priority == -200


def test_a_pattern_without_evidence_of_its_own_takes_its_coarser_patterns_level():
    frontier = Frontier(UnifyStats(None), 100)
    home = page("http://s.test/")
    views = ("login", "join", "help")
    for i, view in enumerate(views):  # a few values: each view is a pattern of its own
        frontier.fetched(Request(f"http://s.test/special?view={view}&back=1{i}"), new=False)
        frontier.fetched(Request(f"http://s.test/special?view={view}&back=2{i}"), new=False)
    first_of_its_kind = Request("http://s.test/special?view=search&back=3")
    frontier.schedule(first_of_its_kind, home)
    assert first_of_its_kind.priority == -200  # special?back=*&view=* had 6 duplicates
    # a pattern's own evidence wins over its coarser pattern's
    for n in range(5):
        frontier.fetched(Request(f"http://s.test/special?view=search&back={n}"), new=True)
        frontier.schedule(
            Request(f"http://s.test/found/{n}"), page(f"http://s.test/special?view=search&back={n}")
        )
    search = Request("http://s.test/special?view=search&back=9")
    frontier.schedule(search, home)
    assert search.priority == 100  # five new pages of its own: content, first


@pytest_twisted.inlineCallbacks
def chart_crawl(settings):  # type: ignore[no-untyped-def]
    site, crawler, _, _ = yield minicrawl.run(chartsite.start, "/", settings)
    return site, list(site.hits), crawler.stats.get_stats()


#: responses within which every issue of the chart site is fetched breadth-first with the
#: add-on: the home page, 8 lists, 40 issues, and the charts fetched before their path's every
#: query had 5 responses. When this was written: 55; 110 when each set of options waited for
#: responses of its own (it never has 5), as many as plain Scrapy.
CHART_WITHIN = 70


@pytest_twisted.inlineCallbacks
def test_a_new_set_of_options_is_judged_by_its_paths_other_sets():
    """A chart in 15 sets of options, 4 URLs each: no set has the 5 responses that judge a
    pattern, but together they are one path's queries, which bring nothing new: the sets not
    fetched by then go after the issues, breadth-first too (their level is looked at again as
    they leave the scheduler). Nothing is lost."""
    site, fetched, stats = yield chart_crawl({})
    _, plain_fetched, _ = yield chart_crawl({"ADDONS": {}})
    issues = {f"/issues/{n}" for n in range(1, chartsite.ISSUES + 1)}
    last, plain_last = last_of(fetched, issues), last_of(plain_fetched, issues)
    assert last <= CHART_WITHIN < plain_last, (fetched, plain_fetched)
    assert set(chartsite.charts()) <= set(site.hits)  # reordered, not dropped
    assert set(site.hits.values()) == {1}
    assert stats["finish_reason"] == "finished"
    assert stats["urlunify/frontier/requeued"] >= 20


def test_a_set_of_options_too_new_to_be_judged_takes_its_paths_level_unless_pages_are_new():
    frontier = Frontier(UnifyStats(None), 100)
    home = page("http://s.test/")
    for i in range(10):
        for v in range(2):  # two URLs each: no set, nor its coarser pattern, is judged
            frontier.fetched(Request(f"http://s.test/chart?month={v}&option{i}=1"), new=False)
    eleventh = Request("http://s.test/chart?months=6&zoom=2")
    frontier.schedule(eleventh, home)
    assert eleventh.priority == -200  # /chart?* had 20 responses, none new
    # a set whose own page was new is not judged by the others
    frontier.fetched(Request("http://s.test/chart?project=7"), new=True)
    project = Request("http://s.test/chart?project=8")
    frontier.schedule(project, home)
    assert project.priority == 0
    # nor is a set whose coarser pattern has responses of its own (it decides first)
    for n in range(5):
        frontier.fetched(Request(f"http://s.test/chart?route=product&id={n}"), new=True)
    route = Request("http://s.test/chart?route=cart&id=99")  # a pattern of its own
    frontier.schedule(route, home)
    assert route.priority == 100  # its coarser pattern's five new pages: content, first
    assert frontier.level("http://s.test/chart?months=7&zoom=3") == 2  # still
    # a path whose queries are copies of pages (a page's spellings, which the learner learns
    # rules from and the hold paces) judges no new set of names
    for n in range(6):
        frontier.fetched(Request(f"http://s.test/product/{n}?ref={n}"), new=False, spelling=True)
    spelling = Request("http://s.test/product/9?print=1")
    frontier.schedule(spelling, home)
    assert spelling.priority == 0
    # a path without a query is not one of its queries
    plain = Request("http://s.test/chart")
    frontier.schedule(plain, home)
    assert plain.priority == 0


def test_a_copy_is_another_spelling_of_a_page_unless_it_repeats_its_paths_other_queries():
    assert spelling_of("shop.test/product/5?view=print", "shop.test/product/5")
    assert spelling_of("shop.test/?id=5&route=product%2Fview", "shop.test/product/5")
    assert spelling_of("shop.test/?id=5&route=product%2Fview", "shop.test/p?id=5")
    # two months of an empty calendar: a tool's repeats, not a page's spellings
    assert not spelling_of("t.test/calendar?month=3", "t.test/calendar?month=2")
    assert not spelling_of("t.test/calendar?month=3", "t.test/calendar?month=3")  # itself


@pytest_twisted.inlineCallbacks
def test_a_penalised_walk_goes_after_the_other_penalised_requests():
    """Scrapy's default order: a calendar of empty periods (penalised) links its neighbours,
    always the newest penalised requests, and archives of old text (penalised: one in six leads
    to a post nothing else links) waited among its steps. A penalised pattern's link from one of
    its own pages goes one level further: the posts come before the calendar's walk, which is
    still crawled whole after them."""
    for concurrency in (1, 16):
        settings = {**DFS, "CONCURRENT_REQUESTS": concurrency}
        site, crawler, _, _ = yield minicrawl.run(chainsite.start, "/", settings)
        fetched = list(site.hits)
        last_post = last_of(fetched, chainsite.posts())
        walked = [u for u in fetched[:last_post] if u.startswith("/calendar")]
        stats = crawler.stats.get_stats()
        # the calendar's first steps (each topic links its month, five before it was judged),
        # not its walk: 50 and more steps of it when a walk's next step was the newest request
        assert len(walked) <= chainsite.TOPICS + 12, (concurrency, len(walked))
        assert stats["urlunify/frontier/chain_links"] > 0
        assert chainsite.posts() <= set(fetched) and stats["finish_reason"] == "finished"
        assert len([u for u in fetched if u.startswith("/calendar")]) > 200  # walked after
