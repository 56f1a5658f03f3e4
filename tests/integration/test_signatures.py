"""The signature middleware in real crawls: duplicate pages, declared canonicals, learning."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import pytest
import pytest_twisted
import shortlinksite
import textviewsite
from minicrawl import PageSpider, crawl, crawl_from, run

from scrapy_urlunify.integration.crawl._summary import format_summary, summarize
from scrapy_urlunify.integration.pages._shortlinks import Shortlinks
from scrapy_urlunify.integration.rules._probation import RULE_PROBATION

#: Scrapy's default order (priority 0, last in first out), and breadth-first (minicrawl's)
ORDERS = (
    {"DEPTH_PRIORITY": 0, "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue"},
    {},
)


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
    # the second soft 404 are duplicates of the first (documented in learning/_page_signature.py)
    assert stats["urlunify/signature/duplicates"] >= 2 + 2 + 1
    # the links of a duplicate page are not followed: /a?ref=x variants on /next still are
    # (from /next), but nothing is reached through a duplicate page
    assert stats["finish_reason"] == "finished"


@pytest_twisted.inlineCallbacks
def test_a_declared_canonical_is_not_trusted_before_it_is_checked():
    site, stats, items, _ = yield crawl({})
    # /c declares /a as its canonical: one of the site's first canonicals, it is on probation
    # and does not mark /a seen (tests/learning/test_traps.py shows the claims checked, then
    # trusted). /c has the text of /a?ref=1: a duplicate page, one item for A
    assert stats["urlunify/canonical/on_probation"] == 1
    assert "urlunify/canonical/recorded" not in stats
    assert sorted(i["title"] for i in items).count("Article A") == 1


@pytest_twisted.inlineCallbacks
def test_a_canonical_whose_page_differs_is_a_counter_example(caplog):
    with caplog.at_level("DEBUG", logger="scrapy_urlunify.integration.pages._declared"):
        site, stats = yield crawl_from("/learn", {})
    # /claim names /home its canonical; /home was fetched before, with another text: logged
    # with both URLs, and never trusted (the site's canonicals are ignored once more than a
    # fifth of at least five checked were false: tests/integration/test_near_duplicates.py)
    assert site.hits["/claim"] == 1
    assert stats["urlunify/canonical/counter_examples"] >= 1
    assert (
        "/home of http://127.0.0.1" in caplog.text
        and "/claim has other content: not the same page" in caplog.text
    )
    assert "urlunify/canonical/recorded" not in stats


@pytest_twisted.inlineCallbacks
def test_a_canonical_link_header_counts_too():
    site, stats = yield crawl_from("/learn", {})
    # /hdr (depth 2) sends `Link: </doc>; rel="canonical"` and links to /doc: the claim is
    # read and checked by fetching /doc, whose text differs (a counter-example)
    assert site.hits["/hdr"] == 1 and site.hits["/doc"] == 1
    assert stats["urlunify/canonical/on_probation"] == 1
    assert stats["urlunify/canonical/counter_examples"] == 2  # /hdr's and /claim's


@pytest_twisted.inlineCallbacks
def test_learning_an_irrelevant_parameter_stops_later_fetches(tmp_path):
    site, stats = yield crawl_from(
        "/learn", {"URLUNIFY_LEARN": True, "JOBDIR": str(tmp_path / "job")}
    )
    host = "127.0.0.1"
    assert stats[f"urlunify/learned/param/{host}/ref"] >= 3
    # before the rule: /b, /e, /f were each fetched with ?ref=1 and ?ref=2 (their signatures
    # taught the rule); after it, of the ?ref=3..5 links on /later (deeper, so crawled later with
    # DEPTH_PRIORITY) only the rule's probation samples are fetched, and found the same pages:
    # one per path while the crawl runs, then (the crawl gone idle with the rule still on
    # probation) as many of the kept ones as it lacked to be confirmed; /g, new, is fetched once
    for x in "bef":
        assert site.hits[f"/{x}?ref=1"] == site.hits[f"/{x}?ref=2"] == 1
    samples = stats["urlunify/learned/probation/samples"]
    verified = stats.get("urlunify/learned/probation/verified_at_idle", 0)
    assert (
        sum(site.hits[f"/{x}?ref={i}"] for x in "befg" for i in (3, 4, 5)) == 1 + samples + verified
    )
    assert samples + verified <= RULE_PROBATION
    assert stats["urlunify/learned/confirmed"] == 1
    assert "urlunify/learned/revoked" not in stats
    # ?page= changes the text: never learned, every listing page fetched
    assert all(site.hits[f"/p?page={i}"] == 1 for i in (1, 2, 3, 4))
    assert not any("/page" in k for k in stats if k.startswith("urlunify/learned/param/"))
    # kept with the job: a resumed run starts with the rule
    assert "ref" in (tmp_path / "job" / "urlunify-learned.json").read_text()


@pytest_twisted.inlineCallbacks
def test_the_number_of_probation_samples_is_a_setting():
    site, stats = yield crawl_from(
        "/learn", {"URLUNIFY_LEARN": True, "URLUNIFY_LEARN_PROBATION_SAMPLES": 1}
    )
    # one sample that agrees confirms the rule: the ?ref=3..5 links cost /g's one fetch (new) and it
    samples = stats["urlunify/learned/probation/samples"] + stats.get(
        "urlunify/learned/probation/verified_at_idle", 0
    )
    assert samples == 1
    assert sum(site.hits[f"/{x}?ref={i}"] for x in "befg" for i in (3, 4, 5)) == 1 + samples
    assert stats["urlunify/learned/confirmed"] == 1


@pytest_twisted.inlineCallbacks
def test_without_learning_every_ref_variant_is_fetched():
    # the add-on turns learning on; a spider turns it off
    site, stats = yield crawl_from("/learn", {"URLUNIFY_LEARN": False})
    assert sum(site.hits[f"/b?ref={i}"] for i in range(1, 6)) == 5
    assert not any(k.startswith("urlunify/learned/") for k in stats)


@pytest_twisted.inlineCallbacks
def test_learning_a_leading_path_segment():
    # in link order: the frontier would fetch every /print/ view after the plain pages, so the
    # rule would be learned at the end of this small site (docs/frontier.md)
    site, stats = yield crawl_from("/plearn", {"URLUNIFY_LEARN": True, "URLUNIFY_FRONTIER": False})
    assert stats["urlunify/learned/path/127.0.0.1/print"] >= 3
    # after the rule: of /print/docs/x and /docs/x on /pnext, one fetch each, not two
    for x in "def":
        assert site.hits[f"/print/docs/{x}"] + site.hits[f"/docs/{x}"] == 1


def test_the_canonical_of_a_huge_page_is_read_from_its_head_only():
    """A 20 MB page: the declared canonical is found without decoding or parsing the body
    (before: the whole page was decoded and parsed, several times its size in memory)."""
    import tracemalloc

    from scrapy.http import HtmlResponse

    from scrapy_urlunify.integration.pages._canonicals import canonical_href

    filler = b"<p>Some text of a very long page.</p>" * (20 * 1024 * 1024 // 37)
    body = (
        b"<!DOCTYPE html><html><head><title>t</title><link rel='canonical' href='/c'></head><body>"
        + filler
        + b"<link rel='canonical' href='/not-in-the-head'></body></html>"
    )
    response = HtmlResponse("http://a.test/x", body=body, encoding="utf-8")
    tracemalloc.start()
    try:
        href = canonical_href(response)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert href == "/c"
    assert peak < 2 * 1024 * 1024, f"{peak / 2**20:.1f} MiB"
    # a page without a head at all: only the first HEAD_LIMIT bytes are searched
    assert (
        canonical_href(HtmlResponse("http://a.test/y", body=filler + body, encoding="utf-8"))
        is None
    )


@pytest.mark.parametrize("order", ORDERS, ids=["default order", "breadth-first"])
@pytest_twisted.inlineCallbacks
def test_a_duplicate_page_that_links_other_pages_has_its_links_followed(order):
    # each project's list has a text-only view of one body text, linked first: breadth-first,
    # the list is the duplicate page, and only it links the project's issues. Dropped whole,
    # its issues were never fetched (36 of 36 lost, in a crawl that finished)
    site, crawler, items, dropped = yield run(textviewsite.start, "/", order, PageSpider)
    stats = crawler.stats.get_stats()
    assert textviewsite.issue_pages() <= set(site.hits)
    # the partners' pages, on another host: a spider without allowed_domains wants them as
    # plain Scrapy fetches them (breadth-first, only the partners' list links them, after its
    # text view: they were lost while only the page's own site's rows counted)
    assert textviewsite.partner_pages() <= set(site.hits)
    assert stats["finish_reason"] == "finished"
    # one item per page: the duplicate's own are dropped, as its page's text was already seen
    urls = [i["url"].split("/", 3)[3] for i in items]
    assert len(urls) == len(set(urls))
    lists = {f"projects/{p}/issues" for p in range(textviewsite.PROJECTS)}
    texts = {f"{u}?format=text" for u in lists}
    assert len(set(urls) & (lists | texts)) == textviewsite.PROJECTS
    if not order:  # breadth-first: the text views first, the lists are the duplicate pages
        assert lists <= {item["url"].split("/", 3)[3] for item, _ in dropped}
        # followed: the twelve lists, one month of the calendar whose months are paths, and
        # the partners' list
        assert stats["urlunify/signature/duplicates_followed"] == textviewsite.PROJECTS + 2
        # their links after the links of new pages: at least each list's issues
        assert stats["urlunify/frontier/duplicate_links"] >= len(textviewsite.issue_pages())
        assert "14 of them linking other pages: their links followed" in format_summary(
            summarize(stats)
        )
        # one text, other rows: no evidence that format does not matter
        assert not [k for k in stats if k.startswith("urlunify/learned/param/")]


class _OnsiteSpider(PageSpider):
    allowed_domains = ["127.0.0.1"]


@pytest_twisted.inlineCallbacks
def test_a_duplicate_page_whose_other_rows_are_offsite_is_dropped():
    # breadth-first, the partners' list is a duplicate page whose rows are pages of localhost:
    # outside the spider's allowed_domains, never requested, they are no rows to follow
    site, crawler, items, dropped = yield run(textviewsite.start, "/", {}, _OnsiteSpider)
    stats = crawler.stats.get_stats()
    assert textviewsite.issue_pages() <= set(site.hits)
    assert not textviewsite.partner_pages() & set(site.hits)
    assert stats["urlunify/signature/duplicates_followed"] == textviewsite.PROJECTS + 1
    # fetched, and dropped as the duplicate it is: its text view's item is the list's
    assert "/partners" in site.hits
    assert "partners" not in {item["url"].split("/", 3)[3] for item in items}
    assert stats["finish_reason"] == "finished"


@pytest_twisted.inlineCallbacks
def test_with_a_shared_store_a_duplicate_page_is_followed_as_with_a_local_one(redis_server):
    # the rows of a duplicate page are looked up in the Redis seen store in one round trip: the
    # reports' two-column view, whose rows are the reports spelled otherwise, all requested, is
    # not followed (taken to lead somewhere new without a lookup, it was: 15 followed)
    settings = {"URLUNIFY_STORE": redis_server.url, "URLUNIFY_SCOPE": "textview"}
    site, crawler, items, dropped = yield run(textviewsite.start, "/", settings, PageSpider)
    stats = crawler.stats.get_stats()
    assert textviewsite.issue_pages() | textviewsite.partner_pages() <= set(site.hits)
    assert stats["urlunify/signature/duplicates_followed"] == textviewsite.PROJECTS + 2
    # the calendars are not walked
    assert len([u for u in site.hits if u.startswith("/calendar")]) == 3
    assert len([u for u in site.hits if u.startswith("/events/")]) == 4
    assert stats["finish_reason"] == "finished"


@pytest_twisted.inlineCallbacks
def test_a_calendar_of_empty_months_is_not_walked_through_its_duplicate_pages():
    # an empty calendar: every month one text, linking the month before and the next. Its
    # duplicates link months never requested, but other queries of their own path, not other
    # rows: followed, they would walk the calendar to its end (200 months each way)
    site, crawler, items, dropped = yield run(textviewsite.start, "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    months = [u for u in site.hits if u.startswith("/calendar")]
    assert len(months) == 3  # month 0, and its two neighbours: duplicate pages, dropped
    # months as paths: other rows, but one text many URLs repeat is a template, not a list and
    # its view. One duplicate of a page is followed, then no more: month 0, its neighbours,
    # and the next one's neighbour (without that limit, 200 months each way)
    assert len([u for u in site.hits if u.startswith("/events/")]) == 4
    assert stats["finish_reason"] == "finished"


@pytest_twisted.inlineCallbacks
def test_a_fault_in_the_page_checks_loses_no_page_and_says_so(monkeypatch, caplog):
    """A fault of the add-on's page checks on one page (injected: the shortlink check raises on
    post 3) is one ERROR line naming the page and a stat; the page goes to the spider
    unchecked. Raised from the downloader middleware it was the download's failure, which a
    CrawlSpider rule without an errback drops without a word: the page, its item and its links
    were lost silently."""
    declared = Shortlinks.declared

    def faulty(self, response, *args, **kwargs):  # type: ignore[no-untyped-def]
        if response.url.endswith(f"/post/{shortlinksite.slug(3)}/"):
            raise RuntimeError("injected fault")
        return declared(self, response, *args, **kwargs)

    monkeypatch.setattr(Shortlinks, "declared", faulty)
    caplog.set_level(logging.ERROR)
    site, crawler, items, _ = yield run(shortlinksite.start, "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    assert stats["urlunify/signature/check_errors"] == 1
    assert stats["finish_reason"] == "finished"
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "Page checks failed" in errors[0].getMessage()
    assert f"/post/{shortlinksite.slug(3)}/" in errors[0].getMessage()
    scraped = {urlsplit(item["url"]).path for item in items}
    assert f"/post/{shortlinksite.slug(3)}/" in scraped
    # every post is scraped: post 3's links were followed too
    assert {f"/post/{shortlinksite.slug(i)}/" for i in range(shortlinksite.POSTS)} <= scraped
