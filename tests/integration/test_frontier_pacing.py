"""The frontier's pacing (docs/frontier.md, "A pattern's first five"): the requests of a URL
pattern not judged yet leave the scheduler five at a time until five have landed, and those of a
pattern that brings nothing new five at a time; nothing is lost. A real crawl of a loopback
catalogue whose every category is linked a second time in a query form, in Scrapy's default
order with 16 requests at a time, and the frontier's part on its own."""

from __future__ import annotations

from collections import Counter

import minicrawl
import pytest_twisted
from minisite import CountingSite, declared_page, listen
from scrapy import Request
from wikisite import article_text

from scrapy_urlunify.integration.crawl._stats import UnifyStats
from scrapy_urlunify.integration.queue._frontier import FLOOR, Frontier

#: Scrapy's default order (priority 0, last in first out), 16 requests at a time
DFS = {
    "DEPTH_PRIORITY": 0,
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue",
    "CONCURRENT_REQUESTS": 16,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
}
CATEGORIES = 24


class QueryFormSite(CountingSite):
    """``/`` links ``/more/``, then :data:`CATEGORIES` categories ``/cat/<c>/`` (last in, first
    out: the categories go first). ``/more/`` links every category again as ``/?cat=<c>``, a
    query form answered with the category itself, declaring ``/cat/<c>/`` canonical: one
    new URL pattern of 24 spellings, all in the queue at once."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/" and not params:
            links = "<a href='/more/'>more</a>" + "".join(
                f"<a href='/cat/{c}/'>category {c}</a>" for c in range(CATEGORIES)
            )
            return declared_page("Shop", f"<p>{article_text('shop')}</p>{links}")
        if base == "/more/":
            links = "".join(f"<a href='/?cat={c}'>category {c}</a>" for c in range(CATEGORIES))
            return declared_page("More", f"<p>{article_text('more')}</p>{links}")
        c = params.get("cat") if base == "/" else base.removeprefix("/cat/").rstrip("/")
        if c is None or not c.isdigit() or int(c) >= CATEGORIES:
            request.setResponseCode(404)
            return b"not found"
        return declared_page(
            f"Category {c}", f"<p>{article_text(f'category {c}')}</p>", f"/cat/{c}/"
        )


def start() -> tuple[QueryFormSite, object, str]:
    site = QueryFormSite()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def crawl(frontier):  # type: ignore[no-untyped-def]
    site, crawler, items, _ = yield minicrawl.run(
        start, "/", {**DFS, "URLUNIFY_FRONTIER": frontier}, minicrawl.PageSpider
    )
    return site, crawler.stats.get_stats(), items


@pytest_twisted.inlineCallbacks
def test_a_new_pattern_of_spellings_goes_five_at_a_time_until_it_is_judged():
    site, stats, items = yield crawl(True)
    site_without, stats_without, _ = yield crawl(False)
    for s in (stats, stats_without):
        assert s["finish_reason"] == "finished"
    # nothing lost, nothing twice: the start, /more/ and every category, one item each
    pages = Counter(item["url"].partition("//")[2].partition("/")[2] for item in items)
    assert set(pages) == {"", "more/"} | {f"cat/{c}/" for c in range(CATEGORIES)}, pages
    assert max(pages.values()) == 1
    assert all(site.hits[f"/cat/{c}/"] == 1 for c in range(CATEGORIES))
    query_form = sum(n for path, n in site.hits.items() if path.startswith("/?cat="))
    query_form_without = sum(
        n for path, n in site_without.hits.items() if path.startswith("/?cat=")
    )
    # without the frontier, 16 leave the scheduler at once, before any has landed
    assert query_form_without >= 16, site_without.hits
    # five first; once they showed nothing new, five at a time until the form rule
    # /?cat={q0} -> /cat/{q0} (six canonicals found true) and its three probation samples
    assert query_form <= 6 + 3 + FLOOR, site.hits
    assert stats["urlunify/learned/form/127.0.0.1//?cat={q0}"] >= 6
    assert stats["urlunify/frontier/paced"] >= 1


def test_a_pattern_goes_five_at_a_time_until_five_landed():
    frontier = Frontier(UnifyStats(None), 100)
    first = [Request(f"http://s.test/list?cat={n}") for n in range(FLOOR)]
    for request in first:
        assert frontier.may_go(request)
        frontier.going(request)
    sixth = Request("http://s.test/list?cat=99")
    assert not frontier.may_go(sixth)  # five in flight, none landed
    assert frontier.may_go(Request("http://s.test/item?id=1"))  # another pattern
    frontier.landed(id(first[0]))
    assert not frontier.may_go(sixth)  # one landed, four in flight: five still
    for request in first[1:]:
        frontier.landed(id(request))
    assert frontier.may_go(sixth)  # five landed: judged by them from now on
    frontier.going(sixth)
    assert frontier.may_go(Request("http://s.test/list?cat=100"))


def test_a_pattern_that_brings_nothing_new_goes_five_at_a_time():
    frontier = Frontier(UnifyStats(None), 100)
    for n in range(FLOOR):
        request = Request(f"http://s.test/list?cat={n}")
        frontier.going(request)
        frontier.landed(id(request))
        frontier.fetched(request, new=False, spelling=True)
    assert frontier.level("http://s.test/list?cat=9") == 2
    flying = [Request(f"http://s.test/list?cat={n}") for n in range(10, 10 + FLOOR)]
    for request in flying:
        assert frontier.may_go(request)
        frontier.going(request)
    assert not frontier.may_go(Request("http://s.test/list?cat=20"))
    frontier.landed(id(flying[0]))
    assert frontier.may_go(Request("http://s.test/list?cat=20"))
    # a pattern of new pages is never paced once judged
    for n in range(FLOOR + 3):
        request = Request(f"http://s.test/item/{n}")
        assert frontier.may_go(request)
        frontier.going(request)
        if n < FLOOR:
            frontier.landed(id(request))
            frontier.fetched(request, new=True)
