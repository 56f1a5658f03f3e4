"""The frontier's hold (docs/frontier.md, "Evidence a page at a time"): a request showing a third
value of an undecided parameter on its page, or starting a page of a candidate rule while another
page of it is being fetched, goes back to the scheduler, lower; nothing is lost. A real crawl of a
loopback catalogue (tests/support/optionsite.py) in Scrapy's default order with 8 requests at a
time, and the frontier's and the learner's parts on their own."""

from __future__ import annotations

from collections import Counter

import minicrawl
import optionsite
import pytest_twisted
from scrapy import Request

from scrapy_urlunify.integration.crawl._stats import UnifyStats
from scrapy_urlunify.integration.queue._frontier import Frontier
from scrapy_urlunify.learning._learner import Learner

#: Scrapy's default order (priority 0, last in first out), 8 requests at a time
DFS = {
    "DEPTH_PRIORITY": 0,
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue",
    "CONCURRENT_REQUESTS": 8,
}


@pytest_twisted.inlineCallbacks
def crawl(frontier):  # type: ignore[no-untyped-def]
    site, crawler, _, _ = yield minicrawl.run(
        optionsite.start, "/", {**DFS, "URLUNIFY_FRONTIER": frontier}
    )
    stats = crawler.stats.get_stats()
    views = Counter(
        path.partition("?")[0] for path, n in site.hits.items() for _ in range(n) if "view=" in path
    )
    return site, stats, views


@pytest_twisted.inlineCallbacks
def test_views_of_a_page_wait_while_their_parameter_is_undecided():  # type: ignore[no-untyped-def]
    site, stats, views = yield crawl(True)
    _, stats_without, views_without = yield crawl(False)
    for s in (stats, stats_without):
        assert s["finish_reason"] == "finished"
        assert s["urlunify/learned/param/127.0.0.1/view"] >= 3
    # nothing lost: every page with a text of its own (the parts, a parameter that matters) fetched
    assert optionsite.distinct_pages() <= set(site.hits)
    assert stats["urlunify/frontier/held"] >= 1
    assert "urlunify/frontier/held" not in stats_without
    # without the hold the first pages' four views are all fetched before the rule is learned
    assert max(views_without.values()) == len(optionsite.VIEWS)
    assert max(views.values()) < len(optionsite.VIEWS)
    assert sum(views.values()) < sum(views_without.values()), (views, views_without)


def test_a_third_value_waits_and_a_second_page_waits_for_the_first():
    frontier = Frontier(UnifyStats(None), 100)
    a, b, c = (Request(f"http://s.test/item/1?view={v}") for v in "abc")
    assert frontier.admit(a, [("view s.test/item/1?", "view s.test", 0)])  # starts item 1
    assert frontier.admit(b, [("view s.test/item/1?", "view s.test", 0)])  # its second value
    assert not frontier.admit(c, [("view s.test/item/1?", "view s.test", 0)])  # a third: held
    other = Request("http://s.test/item/2?view=a")
    assert not frontier.admit(
        other, [("view s.test/item/2?", "view s.test", 0)]
    )  # item 1 is under way
    assert frontier.admit(Request("http://s.test/x"), [])  # asks nothing
    frontier.landed(id(a))
    frontier.landed(id(b))
    assert frontier.admit(other, [("view s.test/item/2?", "view s.test", 0)])
    # two values observed on item 1 (whatever is in flight): a third adds nothing
    assert not frontier.admit(c, [("view s.test/item/1?", "view s.test", 2)])


def test_a_page_out_of_the_downloader_is_in_flight_until_its_response_is_judged(monkeypatch):
    """``request_left_downloader`` comes before the middlewares' ``process_response``, where the
    learner observes the page: until then (or ``LANDING_SECONDS``, for a response turned into a
    redirect) the next page of its candidate waits."""
    import scrapy_urlunify.integration.queue._frontier as frontier_module

    clock = [100.0]
    monkeypatch.setattr(frontier_module.time, "monotonic", lambda: clock[0])
    frontier = Frontier(UnifyStats(None), 100)
    a = Request("http://s.test/item/1?view=a")
    assert frontier.admit(a, [("view s.test/item/1?", "view s.test", 0)])  # starts item 1
    other = Request("http://s.test/item/2?view=a")
    frontier.left_downloader(id(a))
    assert not frontier.admit(other, [("view s.test/item/2?", "view s.test", 0)])
    frontier.landed(id(a))  # judged
    assert frontier.admit(other, [("view s.test/item/2?", "view s.test", 0)])
    third = Request("http://s.test/item/3?view=a")
    frontier.left_downloader(id(other))
    clock[0] += frontier_module.LANDING_SECONDS + 0.1  # never judged: a redirect
    assert frontier.admit(third, [("view s.test/item/3?", "view s.test", 0)])


def test_open_questions_are_those_of_undecided_parameters_with_a_page_observed():
    learner = Learner(min_pairs=3)
    sig = {f"/item/{n}": f"text{n}".encode() for n in range(8)}
    for path, s in sig.items():
        learner.observe(f"http://s.test{path}", "s.test", s)
    learner.observe("http://s.test/item/0?view=a", "s.test", sig["/item/0"])
    questions = learner.open_questions("http://s.test/item/0?view=b", "s.test")
    assert questions == [("view s.test/item/0?", "view s.test", 1)]
    assert (
        learner.open_questions("http://s.test/other?view=b", "s.test") == []
    )  # no page of it observed
    # a parameter that changes the text is ruled out: not a question any more
    learner.observe("http://s.test/item/1?part=2", "s.test", b"part 2")
    assert learner.open_questions("http://s.test/item/1?part=3", "s.test") == []
    # once adopted, neither
    for n in (1, 2, 3):
        learner.observe(f"http://s.test/item/{n}?view=a", "s.test", sig[f"/item/{n}"])
        learner.observe(f"http://s.test/item/{n}?view=b", "s.test", sig[f"/item/{n}"])
    assert [r.name for r in learner.rules] == ["view"]
    assert learner.open_questions("http://s.test/item/5?view=b", "s.test") == []


def test_a_page_seen_on_a_related_host_asks_whether_the_hosts_are_aliases():
    learner = Learner(min_pairs=3, sites=["site.test"])
    learner.observe("http://site.test/a", "site.test", b"page a")
    assert learner.open_questions("http://m.site.test/a", "m.site.test") == [
        ("alias m.site.test/a?", "alias m.site.test site.test", 0)
    ]
    assert learner.open_questions("http://other.test/a", "other.test") == []  # not related
    assert (
        learner.open_questions("http://m.site.test/b", "m.site.test") == []
    )  # nothing to pair with
    learner.observe("http://site.test/", "site.test", b"home")
    learner.observe("http://m.site.test/", "m.site.test", b"another home")  # a counter-example
    assert learner.open_questions("http://m.site.test/a", "m.site.test") == []
