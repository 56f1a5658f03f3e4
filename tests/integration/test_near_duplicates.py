"""Near-duplicate pages in real crawls of a small MediaWiki-like site (tests/support/wikisite.py)."""

from __future__ import annotations

import asyncio
from collections import Counter

import blogsite
import filtersite
import pytest
import pytest_twisted
import wikisite
from minicrawl import SETTINGS, PageSpider, run
from scrapy import Spider
from scrapy.crawler import CrawlerRunner
from scrapy.linkextractors import LinkExtractor
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.defer import Deferred, DeferredList, succeed

from scrapy_urlunify.integration.pages._checks import NEAR_SYNC_SECONDS
from scrapy_urlunify.integration.pages._near_duplicates import distance_for
from scrapy_urlunify.learning._near_duplicates import ITEM_DISTANCE, PAGE_DISTANCE, resemblance


class WikiSpider(Spider):
    name = "wiki"

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.seen: dict[str, tuple[str | None, float | None]] = {}

    def parse(self, response):  # type: ignore[no-untyped-def]
        path = response.url.split("/", 3)[3]
        self.seen["/" + path] = (
            response.meta.get("urlunify_near_duplicate_of"),
            response.meta.get("urlunify_resemblance"),
        )
        yield {"url": response.url, "title": response.css("h1::text").get()}
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url, self.parse)


class BlogSpider(Spider):
    name = "blog"

    def parse(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url, "title": response.css("h1::text").get()}
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url, self.parse)


@pytest_twisted.inlineCallbacks
def crawl(settings, wrong=(), start="/", later=1236, copies=False):  # type: ignore[no-untyped-def]
    site, crawler, items, dropped = yield run(
        lambda: wikisite.start(wrong, later, copies), start, settings, WikiSpider
    )
    return site, crawler.stats.get_stats(), crawler.spider.seen, items, dropped


def test_resemblance_settings_map_to_the_calibrated_distances():
    assert distance_for(0.94) == PAGE_DISTANCE
    assert distance_for(0.985) == ITEM_DISTANCE
    assert distance_for(1.0) == 0


VIEWS = (
    "/index.php?title=A0&oldid=1234",
    "/index.php?title=A1&oldid=1234",
    "/index.php?title=A2&printable=yes",
    "/wiki/Old_A3",
)


@pytest_twisted.inlineCallbacks
def test_views_of_an_article_are_near_duplicates_and_their_links_followed():
    site, stats, seen, items, dropped = yield crawl({"URLUNIFY_DROP_NEAR_DUPLICATE_ITEMS": False})
    # every view has its own body text (banner, no navigation, "Redirected from"): no exact
    # duplicate; each is a near-duplicate of its article, and reaches the callback
    assert "urlunify/signature/duplicates" not in stats
    for view, article in zip(VIEWS, ("A0", "A1", "A2", "A3")):
        of, alike = seen[view]
        assert of is not None and of.endswith(f"/wiki/{article}"), (view, of)
        assert alike is not None and 0.94 <= alike <= 1.0
    # the articles themselves are not
    for article in wikisite.ARTICLES:
        assert seen[f"/wiki/{article}"] == (None, None)
    assert seen["/"] == (None, None) and seen["/claims"] == (None, None)
    # the links of a near-duplicate page are followed: /wiki/Only_in_print is linked only there
    assert site.hits["/wiki/Only_in_print"] == 1
    # three sentences more in an article: 5 bits, a near-duplicate page still
    of, alike = seen["/wiki/A3?notes=1"]
    assert of.endswith("/wiki/A3")
    assert alike == pytest.approx(resemblance(5), abs=1e-4)
    # the four views, the article with a note, and the ten /claims/N pages (articles with a banner)
    assert stats["urlunify/signature/near_duplicates"] == 4 + 1 + 10
    assert not dropped
    assert len(items) == len(seen)


@pytest_twisted.inlineCallbacks
def test_near_duplicates_can_be_switched_off():
    site, stats, seen, items, dropped = yield crawl({"URLUNIFY_NEAR_DUPLICATES": False})
    assert "urlunify/signature/near_duplicates" not in stats
    assert all(v == (None, None) for v in seen.values())
    assert not dropped


@pytest.mark.parametrize("value", [0.5, "x"])
def test_a_resemblance_below_the_reach_of_the_index_is_refused(value):
    from scrapy.settings import Settings

    from scrapy_urlunify.integration.settings import SettingsError, validate

    with pytest.raises(SettingsError, match="URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE"):
        validate(Settings({"URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE": value}))


@pytest_twisted.inlineCallbacks
def test_items_of_near_duplicate_pages_are_dropped_at_the_strict_threshold(caplog):
    with caplog.at_level("DEBUG"):
        site, stats, seen, items, dropped = yield crawl({})
    # the views (0 bits) and the /claims/N pages (0 bits) yield nothing; the article with three
    # sentences more (5 bits) is beyond the strict item threshold (3 bits): its item is kept
    urls = sorted(i["url"].split("/", 3)[3] for i in items)
    assert "wiki/A3?notes=1" in urls
    assert not [u for u in urls if u.startswith(("index.php", "claims/")) or u == "wiki/Old_A3"]
    assert len(dropped) == stats["urlunify/signature/dropped_near_duplicate_items"] == 4 + 10
    # each logged with the page it duplicated
    reasons = {item["url"].split("/", 3)[3]: reason for item, reason in dropped}
    assert reasons["wiki/Old_A3"].endswith("/wiki/A3")
    assert "near-duplicate (100.0% alike) of" in reasons["index.php?title=A0&oldid=1234"]
    drops = [r for r in caplog.records if r.getMessage().startswith("Dropped:")]
    assert any("/wiki/A0" in r.getMessage() for r in drops)
    assert all(r.levelname == "DEBUG" for r in drops)  # an expected drop: no warning


@pytest_twisted.inlineCallbacks
def test_looser_item_thresholds_are_opt_in():
    site, stats, seen, items, dropped = yield crawl(
        {"URLUNIFY_NEAR_DUPLICATE_ITEM_RESEMBLANCE": 0.94}
    )
    assert "wiki/A3?notes=1" in {item["url"].split("/", 3)[3] for item, _ in dropped}
    assert stats["urlunify/signature/dropped_near_duplicate_items"] == 4 + 1 + 10
    site, stats, seen, items, dropped = yield crawl({"URLUNIFY_DROP_NEAR_DUPLICATE_ITEMS": False})
    assert not dropped


@pytest_twisted.inlineCallbacks
def test_a_canonical_whose_target_is_a_near_duplicate_is_verified(caplog):
    # /claims/N is article N under a "Revision as of" banner, and declares /wiki/AN canonical
    # (fetched before): its exact signature differs, the near-duplicate check says the same page
    with caplog.at_level("DEBUG", logger="scrapy_urlunify.integration.pages._declared"):
        site, stats, seen, items, dropped = yield crawl({})
    assert stats["urlunify/canonical/verified"] == 10
    assert stats["urlunify/canonical/near_duplicates"] == 10
    assert "urlunify/canonical/counter_examples" not in stats
    # and without near-duplicates, the same ten are counter-examples: the site's canonicals off
    with caplog.at_level("DEBUG", logger="scrapy_urlunify.integration.pages._declared"):
        site, stats, seen, items, dropped = yield crawl({"URLUNIFY_NEAR_DUPLICATES": False})
    assert stats["urlunify/canonical/counter_examples"] == 5
    assert "canonicals of 127.0.0.1 are ignored for the rest of the crawl: 5 of 5" in caplog.text


@pytest_twisted.inlineCallbacks
def test_a_canonical_whose_target_is_a_duplicate_of_another_page_is_verified(caplog):
    # each /copy/AN is fetched after /wiki/AN (the same bytes): an exact duplicate, whose
    # near-duplicate signature is its article's; /claims/N (a banner more) names it canonical
    with caplog.at_level("DEBUG", logger="scrapy_urlunify.integration.pages._declared"):
        site, stats, seen, items, dropped = yield crawl({}, start="/claims", copies=True)
    assert all(site.hits[f"/copy/{a}"] == 1 for a in wikisite.ARTICLES)
    assert stats["urlunify/signature/duplicates"] >= 5  # the copies after their articles
    assert "urlunify/canonical/counter_examples" not in stats, caplog.text
    assert stats["urlunify/canonical/verified"] == 10
    assert "ignored for the rest of the crawl" not in caplog.text


@pytest_twisted.inlineCallbacks
def test_one_wrong_canonical_in_ten_does_not_switch_off_the_site(caplog):
    # /claims/3 declares /wiki/A4 canonical, but has A3's article
    with caplog.at_level("DEBUG", logger="scrapy_urlunify.integration.pages._declared"):
        site, stats, seen, items, dropped = yield crawl({}, wrong=(3,))
    assert stats["urlunify/canonical/verified"] == 9
    assert stats["urlunify/canonical/counter_examples"] == 1
    assert "/wiki/A4 of http://127.0.0.1" in caplog.text
    assert "/claims/3 has other content: not the same page (1 of 4 checked" in caplog.text
    assert "ignored for the rest of the crawl" not in caplog.text
    assert "urlunify/canonical/ignored" not in stats
    # the wrong claim was not trusted: its page's item is A3's, dropped as a near-duplicate of A3
    assert any(
        item["url"].endswith("/claims/3") and reason.endswith("/wiki/A3")
        for item, reason in dropped
    )


@pytest_twisted.inlineCallbacks
def test_mostly_wrong_canonicals_switch_the_site_off(caplog):
    with caplog.at_level("DEBUG", logger="scrapy_urlunify.integration.pages._declared"):
        site, stats, seen, items, dropped = yield crawl({}, wrong=(0, 1, 2, 4, 5, 6, 8))
    # after five checked (0, 1, 2 wrong, 3 true, 4 wrong): 4 of 5 are other pages; the claims after
    # are not even checked
    assert "canonicals of 127.0.0.1 are ignored for the rest of the crawl: 4 of 5" in caplog.text
    assert stats["urlunify/canonical/counter_examples"] == 4
    assert stats["urlunify/canonical/verified"] == 1
    assert stats["urlunify/canonical/ignored"] == 5


LEARN = {"URLUNIFY_LEARN": True, "URLUNIFY_DROP_NEAR_DUPLICATE_ITEMS": False}


@pytest_twisted.inlineCallbacks
def test_near_duplicate_pages_teach_the_learner():
    # two permanent links of article N (&oldid=1234 and 1235, its latest revision, under a
    # "Revision as of ..., revision 1234" banner): not the same text, nearly the same page;
    # three pairs teach that oldid does not matter
    site, stats, seen, items, dropped = yield crawl(LEARN, start="/learn")
    assert stats["urlunify/learned/params"] == 1
    assert [k for k in stats if k.startswith("urlunify/learned/param/")] == [
        "urlunify/learned/param/127.0.0.1/oldid"
    ]
    # on probation, its samples (the permanent links of /later, near-duplicates of their page)
    # agree with the pages they were merged into: no counter-example, nothing revoked
    assert "urlunify/learned/revoked" not in stats
    assert stats["urlunify/learned/confirmed"] == 1
    # without near-duplicates, the pairs are not pairs: nothing learned
    site, stats, seen, items, dropped = yield crawl(
        {**LEARN, "URLUNIFY_NEAR_DUPLICATES": False}, start="/learn"
    )
    assert "urlunify/learned/params" not in stats


@pytest_twisted.inlineCallbacks
def test_a_page_that_is_no_near_duplicate_is_a_counter_example():
    # /later links old revisions (oldid=1000: another text): a sample of one contradicts the rule
    site, stats, seen, items, dropped = yield crawl(LEARN, start="/learn", later=1000)
    assert stats["urlunify/learned/params"] == 1
    assert stats["urlunify/learned/revoked"] == 1


#: Scrapy's default order (priority 0, last in first out), and breadth-first (minicrawl's)
ORDERS = (
    {"DEPTH_PRIORITY": 0, "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue"},
    {},
)


@pytest.mark.parametrize("order", ORDERS, ids=["default order", "breadth-first"])
@pytest_twisted.inlineCallbacks
def test_a_near_duplicate_that_links_another_page_is_another_page_to_the_learner(order):
    # filtered lists of one text under 40 values of filter, every eighth with one more row, a
    # closed issue nothing else links: nearly alike, but they link another page. Taken as the
    # same page, they were evidence that filter does not matter on /issues, and the lists not
    # fetched yet were merged: 3 of the 5 closed issues never fetched, in a crawl that finished
    site, crawler, items, _ = yield run(
        filtersite.start, "/", {**order, "CONCURRENT_REQUESTS": 16}, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert filtersite.closed_pages() <= set(site.hits)
    assert not [k for k in stats if k.startswith("urlunify/learned/param/")]
    assert stats["urlunify/learned/other_links"] >= 1
    assert stats["finish_reason"] == "finished"


@pytest_twisted.inlineCallbacks
def test_a_resumed_job_knows_the_pages_fetched_before(tmp_path):
    site, port, base = wikisite.start()
    seen_runs = []
    try:
        for start in ("/wiki/A0", "/index.php?title=A0&oldid=1234"):
            runner = CrawlerRunner({**SETTINGS, "JOBDIR": str(tmp_path / "job"), "DEPTH_LIMIT": 0})
            crawler = runner.create_crawler(WikiSpider)
            yield runner.crawl(crawler, start_urls=[base + start])
            seen_runs.append(crawler.spider.seen)
    finally:
        yield port.stopListening()
    assert (tmp_path / "job" / "near_duplicates.bin").exists()
    # the second run fetched only the permanent link: a near-duplicate of the article the first fetched
    of, alike = seen_runs[1]["/index.php?title=A0&oldid=1234"]
    assert of.endswith("/wiki/A0")
    assert alike == 1.0


@pytest_twisted.inlineCallbacks
def test_another_process_of_the_scope_knows_the_pages_fetched_before_in_redis(redis_server):
    site, port, base = wikisite.start()
    seen_runs = []
    try:
        for start in ("/wiki/A0", "/index.php?title=A0&oldid=1234"):
            runner = CrawlerRunner(
                {
                    **SETTINGS,
                    "URLUNIFY_STORE": redis_server.url,
                    "URLUNIFY_SCOPE": "near",
                    "DEPTH_LIMIT": 0,
                }
            )
            crawler = runner.create_crawler(WikiSpider)
            yield runner.crawl(crawler, start_urls=[base + start])
            seen_runs.append(crawler.spider.seen)
    finally:
        yield port.stopListening()
    of, alike = seen_runs[1]["/index.php?title=A0&oldid=1234"]
    assert of.endswith("/wiki/A0")
    assert alike == 1.0
    # A0 by its fingerprint and by its digest up to numbers; the permanent link, 0 bits from it, once
    assert redis_server.client().llen("urlunify:near:signatures:near") == 3


def test_the_index_file_round_trips_and_a_bad_one_is_ignored(tmp_path, caplog):
    from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages

    pages = NearDuplicatePages(1 << 20, 7, 7)
    from lxml import html

    root = html.fromstring(wikisite.wiki_page("A1"))
    assert pages.check("s|a", root, "s|a/A1", b"1" * 16)[1] is None
    pages.save(tmp_path / "f")
    again = NearDuplicatePages(1 << 20, 7, 7)
    assert again.load(tmp_path / "f")
    fp, found = again.check(
        "s|a", html.fromstring(wikisite.wiki_page("A1", banner="<p>x</p>")), "s|a/B", b"2" * 16
    )
    assert found.of == "s|a/A1"
    assert found.signature == b"1" * 16
    assert again.group("s|a/B", b"2" * 16) == b"1" * 16
    (tmp_path / "bad").write_bytes(b"URLUNIFY-NEAR 1\n\x05")
    assert not again.load(tmp_path / "bad")
    assert "Ignoring unreadable near-duplicate index" in caplog.text
    assert len(again) == 1  # the same fingerprint is not added twice


def test_short_pages_are_near_duplicates_only_of_an_equal_main_text(tmp_path):
    """A product of one line and its print view (a banner above ``<main>``): too short for a
    SimHash, they are one page by the digest of their main text, saved and read back with the
    rest; another line is another page, and a long page is never compared with them."""
    from lxml import html

    from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages

    def page(banner: str, line: str) -> html.HtmlElement:
        return html.fromstring(
            f"<html><body><nav>Shop | Cart</nav>{banner}<main><h1>Red kettle</h1>"
            f"<p>{line}</p></main></body></html>"
        )

    pages = NearDuplicatePages(1 << 20, 7, 7)
    assert pages.check("s|a", page("", "Steel, 1.7 litres."), "s|a/p1", b"1" * 16)[1] is None
    pages.save(tmp_path / "f")
    again = NearDuplicatePages(1 << 20, 7, 7)
    assert again.load(tmp_path / "f")
    _, found = again.check(
        "s|a",
        page("<p>Printer-friendly version</p>", "Steel, 1.7 litres."),
        "s|a/p1?print=1",
        b"2" * 16,
    )
    assert (found.of, found.distance, found.resemblance) == ("s|a/p1", 0, 1.0)
    assert again.group("s|a/p1?print=1", b"2" * 16) == b"1" * 16
    assert again.check("s|a", page("", "Steel, 1.8 litres."), "s|a/p2", b"3" * 16)[1] is None
    assert (
        again.check("s|a", html.fromstring(wikisite.wiki_page("A1")), "s|a/A1", b"4" * 16)[1]
        is None
    )


class LiveSpider(Spider):
    """Fetches its start URL; its callback calls back ``started``, sleeps ``pause`` seconds,
    waits for ``wait_for`` (a Deferred), then fetches ``then``, whose callback calls back
    ``done`` and waits for ``hold`` before the crawl may close."""

    name = "live"

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.seen: dict[str, tuple[str | None, float | None]] = {}

    async def parse(self, response):  # type: ignore[no-untyped-def]
        self.started.callback(None)
        await asyncio.sleep(self.pause)
        await maybe_deferred_to_future(self.wait_for.addTimeout(30, reactor))
        yield response.follow(self.then, self.parse_then)

    async def parse_then(self, response):  # type: ignore[no-untyped-def]
        self.seen[response.url.split("/", 3)[3]] = (
            response.meta.get("urlunify_near_duplicate_of"),
            response.meta.get("urlunify_resemblance"),
        )
        self.done.callback(None)
        await maybe_deferred_to_future(self.hold.addTimeout(30, reactor))
        yield {"url": response.url}


@pytest_twisted.inlineCallbacks
def test_running_processes_of_a_scope_share_their_pages_in_redis(redis_server):
    """Two crawls of one scope at the same time: B opens first (the list is empty), A fetches
    /wiki/A0 and, NEAR_SYNC_SECONDS later, its next page writes it to Redis; B, still running,
    then fetches A0's permanent link: a near-duplicate of a page only A fetched."""
    _site, port, base = wikisite.start()
    b_started, a_wrote, b_done = Deferred(), Deferred(), Deferred()
    try:
        runner = CrawlerRunner(
            {**SETTINGS, "URLUNIFY_STORE": redis_server.url, "URLUNIFY_SCOPE": "near"}
        )
        b = runner.create_crawler(LiveSpider)
        crawl_b = runner.crawl(
            b,
            start_urls=[base + "/wiki/A1"],
            started=b_started,
            pause=0,
            wait_for=a_wrote,
            then="/index.php?title=A0&oldid=1234",
            done=b_done,
            hold=succeed(None),
        )
        yield b_started
        a = runner.create_crawler(LiveSpider)
        # A's second page, NEAR_SYNC_SECONDS after it opened, writes A0's record; A stays open
        # until B is done, so its last write (at close) comes after B's read
        crawl_a = runner.crawl(
            a,
            start_urls=[base + "/wiki/A0"],
            started=Deferred(),
            pause=NEAR_SYNC_SECONDS + 0.2,
            wait_for=succeed(None),
            then="/wiki/A2",
            done=a_wrote,
            hold=b_done,
        )
        yield DeferredList([crawl_a, crawl_b], fireOnOneErrback=True)
    finally:
        yield port.stopListening()
    of, alike = b.spider.seen["index.php?title=A0&oldid=1234"]
    assert of is not None
    assert of.endswith("/wiki/A0")
    assert alike == 1.0
    # A0's records (its fingerprint, its digest up to numbers), read live
    assert b.stats.get_value("urlunify/signature/near_records_read") == 2
    # two for each of A0, A1, A2; one for the link (0 bits from A0: no digest looked up)
    assert redis_server.client().llen("urlunify:near:signatures:near") == 7


@pytest_twisted.inlineCallbacks
def test_a_post_under_other_comment_pages_is_one_item_and_a_guest_book_every_page():
    site, crawler, items, dropped = yield run(blogsite.start, "/", {}, BlogSpider)
    titles = Counter(item["title"] for item in items)
    # a post and its other comment pages show one article: one item per post
    assert {f"Post {n}": 1 for n in range(blogsite.POSTS)}.items() <= titles.items()
    stats = crawler.stats.get_stats()
    assert stats["urlunify/signature/dropped_near_duplicate_items"] == len(dropped) > 0
    # a guest book is nothing but its entries: every page fetched, each an item
    assert titles["Guest book"] == blogsite.GUESTBOOK_PAGES
    for page in range(1, blogsite.GUESTBOOK_PAGES):
        assert site.hits[f"/guestbook/comment-page-{page}/"] == 1
