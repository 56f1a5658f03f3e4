"""Real crawls with a Redis store, the links of each response checked in one round trip
(integration/seen/_link_batch.py): round trips per page, the same counts as a memory store, order,
requests dropped after the batch, two processes racing, a store error mid-batch, disk full.

The site (``mesh_site``: tests/support/treesite.py's server with ``links_of``) is served by a thread of
the test process: ``/p/<i>`` links to its three tree children (so every page is reachable) and to
eight other pages of the mesh, some spelled differently (``?utm_source=``, ``www.``-less
duplicates do not apply on an IP), so most links a crawl meets are duplicates, as on a real site.
``hits`` is what the server served.
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerRunner
from scrapy.exceptions import IgnoreRequest
from treesite import TreeSite, finish, resume_until_finished, start_job, wait_for_pages

from scrapy_urlunify.integration.seen._fingerprinter import Fingerprinter
from scrapy_urlunify.integration.seen._keys import seen_key
from scrapy_urlunify.stores._redis_seen import RedisSeenStore

pytestmark = pytest.mark.redis

SIZE = 120
MESH = 8


def links_of(i: int, size: int = SIZE) -> list[str]:
    tree = [f"/p/{c}" for c in (3 * i + 1, 3 * i + 2, 3 * i + 3) if c < size]
    mesh = [f"/p/{(i * 37 + k * 13) % size}" for k in range(1, MESH + 1)]
    return [*tree, *mesh, f"/p/{(i + 1) % size}?utm_source=mesh", "/files/report.pdf", "/p/0"]


def mesh_site(gate: int = 0) -> TreeSite:
    """The mesh: the tree site of ``SIZE`` pages, each page with ``links_of`` its own."""
    return TreeSite(SIZE, gate=gate, links=links_of)


def seen_set(server: Any) -> RedisSeenStore:
    """The mesh scope's seen set, as another process sees it."""
    return RedisSeenStore(server.client(), "urlunify:mesh:seen")


def store_key(url: str) -> bytes:
    """The member a page's URL has in the seen set (the default policy: plain IP URLs)."""
    from scrapy_urlunify import identify

    return seen_key(Fingerprinter.compute("GET", identify(url))).to_bytes(8, "big")


# --- in-process crawls ---------------------------------------------------------------------------------

SETTINGS = {
    "ADDONS": {"scrapy_urlunify.Addon": 0},
    "ROBOTSTXT_OBEY": False,
    "RETRY_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "CONCURRENT_REQUESTS": 4,
    "CLOSESPIDER_TIMEOUT": 60,
}


class MeshSpider(Spider):
    name = "mesh"

    def parse(self, response):  # type: ignore[no-untyped-def]
        yield {"page": response.url}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)


class OrderSpider(Spider):
    """Interleaves items, links, a duplicate, a ``dont_filter`` request and an opt-out one."""

    name = "order"
    asynchronous = False

    def outputs(self, response):  # type: ignore[no-untyped-def]
        """Page i's output; each carries its position (``seq``) in it."""
        i = int(response.url.rsplit("/", 1)[1].partition("?")[0])
        out: list[Any] = [{"item": f"{i}-first"}]
        for n, href in enumerate(response.css("a::attr(href)").getall()):
            out.append(response.follow(href))
            if n % 3 == 0:
                out.append({"item": f"{i}-{n}"})
        out.append(response.follow("/p/0", dont_filter=True, callback=self.ignore))
        out.append(response.follow("/p/1", meta={"urlunify": False}, callback=self.ignore))
        out.append({"item": f"{i}-last"})
        for seq, o in enumerate(out):
            if isinstance(o, Request):
                o.meta["seq"] = seq
            else:
                o["seq"] = seq
        return out

    def parse(self, response):  # type: ignore[no-untyped-def]
        if response.meta.get("depth", 0) >= 1:
            return []
        return self.outputs(response)

    def ignore(self, response):  # type: ignore[no-untyped-def]
        return []


class AsyncOrderSpider(OrderSpider):
    name = "order"

    async def parse(self, response):  # type: ignore[no-untyped-def]
        if response.meta.get("depth", 0) >= 1:
            return
        for o in self.outputs(response):
            yield o


def _describe(o: Any) -> tuple[str, Any]:
    if isinstance(o, Request):
        return (
            "request",
            (
                o.url.partition("//")[2].partition("/")[2],
                o.dont_filter,
                o.meta.get("seq"),
                o.meta.get("urlunify") is False,
            ),
        )
    return ("item", o.get("item") or o.get("page"), o.get("seq"))


@pytest_twisted.inlineCallbacks
def crawl(
    spider: type[Spider],
    start: str,
    settings: dict[str, Any],  # type: ignore[no-untyped-def]
    record: list[Any] | None = None,
    refuse: str | None = None,
):
    """A crawl in this process: (stats, URLs of request_dropped). ``record``: what reaches the
    engine, in order (each request as the engine schedules it, each item as it leaves the
    pipelines: with CONCURRENT_ITEMS = 1 the engine takes a response's output in its order).
    ``refuse``: a ``request_scheduled`` handler refuses (IgnoreRequest) requests ending so, after
    the link batch recorded them."""
    runner = CrawlerRunner({**SETTINGS, **settings})
    crawler = runner.create_crawler(spider)
    dropped: list[str] = []

    def on_dropped(request, **kw):  # type: ignore[no-untyped-def]
        dropped.append(request.url)

    def on_scheduled(request, **kw):  # type: ignore[no-untyped-def]
        if record is not None:
            record.append(_describe(request))
        if refuse and request.url.endswith(refuse):
            raise IgnoreRequest(f"refused by the test: {request.url}")

    def on_scraped(item, **kw):  # type: ignore[no-untyped-def]
        if record is not None:
            record.append(_describe(item))

    # it sees what reaches the engine, and need not see the links dropped before (else the
    # link middleware leaves every duplicate to the scheduler, and makes no batch)
    on_scheduled.urlunify_link_safe = True  # type: ignore[attr-defined]
    # (signal handlers are weak references: these locals live as long as the crawl)
    crawler.signals.connect(on_dropped, signal=signals.request_dropped)
    crawler.signals.connect(on_scheduled, signal=signals.request_scheduled)
    crawler.signals.connect(on_scraped, signal=signals.item_scraped)
    yield runner.crawl(crawler, start_urls=[start])
    return crawler.stats.get_stats(), dropped


@pytest_twisted.inlineCallbacks
def test_a_page_costs_one_round_trip_and_counts_what_a_memory_store_counts(redis_server):  # type: ignore[no-untyped-def]
    """The same crawl with the memory store and with Redis: every page once, the same links,
    duplicates and filtered counts; with Redis one round trip to the seen set per response
    (plus one for the start request, recorded outside the batch), where checking each link at
    the scheduler would cost one per link that reaches it."""
    with mesh_site() as site:
        memory, _ = yield crawl(MeshSpider, site.url(0), {})
        assert site.lost() == set() and site.fetched_twice() == {}
    redis_server.client().config_resetstat()
    with mesh_site() as site:
        shared, dropped = yield crawl(MeshSpider, site.url(0), {"URLUNIFY_STORE": redis_server.url})
        assert site.lost() == set() and site.fetched_twice() == {}
    calls = shared["urlunify/redis/seen_round_trips"]
    for key in (
        "urlunify/links",
        "urlunify/duplicates",
        "dupefilter/filtered",
        "urlunify/filtered/extension:pdf",
        "urlunify/rewritten",
        "item_scraped_count",
        "response_received_count",
    ):
        assert shared.get(key) == memory.get(key), key
    responses = shared["response_received_count"]
    assert responses == SIZE
    assert shared["urlunify/redis/link_batches"] == responses
    # + the start request (recorded outside a batch), and at start: the layout (sizing, read or
    # written), Redis learning the script, the count of what the store held before
    assert calls <= responses + 8, f"{calls} round trips to the seen set for {responses} pages"
    assert shared["urlunify/links"] / responses > 10  # per link, it would have been 10x as many
    assert (
        len(dropped) == shared["dupefilter/filtered"]
    )  # request_dropped, as the scheduler sends it
    assert len(seen_set(redis_server)) == SIZE


@pytest.mark.parametrize("spider", [OrderSpider, AsyncOrderSpider], ids=["sync", "async-generator"])
@pytest_twisted.inlineCallbacks
def test_items_and_requests_keep_their_order(redis_server, spider):  # type: ignore[no-untyped-def]
    """What reaches the engine from a response is the spider's output, in the spider's order,
    minus the duplicates: items wait with the links before them, never overtake or lag them;
    ``dont_filter`` and opt-out requests are not checked (they pass, in their place)."""
    one_at_a_time = {"CONCURRENT_REQUESTS": 1, "CONCURRENT_ITEMS": 1}
    with mesh_site() as site:
        redis_seen: list[Any] = []
        stats, _ = yield crawl(
            spider,
            site.url(0),
            {"URLUNIFY_STORE": redis_server.url, **one_at_a_time},
            record=redis_seen,
        )
        memory_seen: list[Any] = []
        yield crawl(spider, site.url(0), one_at_a_time, record=memory_seen)
    assert stats["urlunify/redis/link_batches"] >= 1
    # the memory store drops at the scheduler what is not recorded yet (a link repeated on one
    # page): compare what both let through, in order, after the scheduler's part
    items = [o for o in redis_seen if o[0] == "item"]
    assert items == [o for o in memory_seen if o[0] == "item"]
    assert items[0] == ("item", "0-first", 0)
    last = next(i for i, o in enumerate(redis_seen) if o[:2] == ("item", "0-last"))
    # page 0's output (the start request before it has no place in it)
    first_page = [
        o for o in redis_seen[: last + 1] if (o[-1] if o[0] == "item" else o[1][2]) is not None
    ]
    order = [o[-1] if o[0] == "item" else o[1][2] for o in first_page]
    assert order == sorted(order), f"the output of the page was reordered: {order}"
    requests = [o[1] for o in first_page if o[0] == "request"]
    assert ("p/0", True, False) in [(r[0], r[1], r[3]) for r in requests]  # dont_filter
    assert ("p/1", False, True) in [(r[0], r[1], r[3]) for r in requests]  # opt-out
    links = [r[0] for r in requests if not r[1] and not r[3]]
    assert len(links) == len(set(links)), f"a link repeated on the page went on twice: {links}"
    # the page's links the crawl had not met yet, each once (the rest were duplicates)
    assert set(links) == {h.lstrip("/").partition("?")[0] for h in links_of(0)} - {
        "files/report.pdf",
        "p/0",
    }


@pytest_twisted.inlineCallbacks
def test_a_request_dropped_after_its_batch_is_taken_out_of_redis(redis_server):  # type: ignore[no-untyped-def]
    """A ``request_scheduled`` handler refuses /p/7 after the batch recorded it as new. Its key
    must not stay in the seen set (the page was never scheduled): it is removed again, so
    another link, process or run can still fetch the page."""
    with mesh_site() as site:
        stats, _ = yield crawl(
            MeshSpider, site.url(0), {"URLUNIFY_STORE": redis_server.url}, refuse="/p/7"
        )
        assert site.lost() == {"/p/7"}
        assert site.fetched_twice() == {}
        seven = store_key(site.url(7))
    seen = seen_set(redis_server)
    assert stats.get("urlunify/redis/released", 0) >= 1, stats
    assert int.from_bytes(seven, "big") not in seen, "a page never scheduled stays 'seen' in Redis"
    assert len(seen) == SIZE - 1


@pytest_twisted.inlineCallbacks
def test_another_middleware_after_the_link_middleware_turns_batches_off(redis_server):  # type: ignore[no-untyped-def]
    """A spider middleware below LinkMiddleware sees every link the scheduler would (it would miss
    the duplicates a batch drops): the links are then checked one by one, at the scheduler."""
    with mesh_site() as site:
        stats, _ = yield crawl(
            MeshSpider,
            site.url(0),
            {
                "URLUNIFY_STORE": redis_server.url,
                "SPIDER_MIDDLEWARES": {f"{__name__}.PassThrough": 500},
            },
        )
        assert site.lost() == set()
        assert site.fetched_twice() == {}
    assert stats.get("urlunify/redis/link_batches", 0) == 0
    assert stats["urlunify/duplicates"] > 0


class PassThrough:
    def process_spider_output(self, response, result, spider=None):  # type: ignore[no-untyped-def]
        yield from result

    async def process_spider_output_async(self, response, result, spider=None):  # type: ignore[no-untyped-def]
        async for o in result:
            yield o


# --- crawls in their own processes (tests/support/tree_job.py) -----------------------------------------------


def store(server: Any, **extra: Any) -> dict[str, Any]:
    return {
        "URLUNIFY_STORE": server.url,
        "URLUNIFY_REDIS_TIMEOUT": 2,
        "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT": 3,
        "URLUNIFY_SCOPE": "mesh",
        **extra,
    }


def test_two_processes_racing_on_one_site_fetch_each_page_once(redis_server, tmp_path) -> None:
    """Two crawler processes (each its own Scrapy queue and JOBDIR), one Redis seen set, started
    on two pages of the mesh that link to each other, released together: both race for the
    links of the whole site. Each page is new for exactly one of them, so the site serves every
    page exactly once, none missed."""
    with mesh_site(gate=2) as site:
        jobs = [
            start_job(
                tmp_path / f"w{i}", site.url(i), settings=store(redis_server, DOWNLOAD_DELAY=0.01)
            )
            for i in (0, 1)
        ]
        runs = [finish(*job) for job in jobs]
        lost, twice = site.lost(), site.fetched_twice()
    for run in runs:
        assert run.returncode == 0 and run.stats.get("finish_reason") == "finished", run.stderr[
            -3000:
        ]
    assert lost == set() and twice == {}, (lost, twice)
    fetched = [run.stats["response_received_count"] for run in runs]
    assert min(fetched) > 5, f"no race: one process fetched almost everything {fetched}"
    assert all(run.stats["urlunify/duplicates"] > 0 for run in runs)
    responses = sum(fetched)
    calls = sum(run.stats["urlunify/redis/seen_round_trips"] for run in runs)
    # + per process: its start request (recorded outside a batch), the layout, Redis learning the script
    assert calls <= responses + 2 * 8, f"{calls} round trips to the seen set for {responses} pages"


def test_a_store_error_mid_batch_closes_the_crawl_and_loses_nothing(redis_server, tmp_path) -> None:
    """The seen set turns into a string mid-crawl (WRONGTYPE): the next batch fails. The crawl
    closes with urlunify_store_error naming the error, counts nothing of that batch as seen, and
    the resume (the set restored) fetches every page the first run did not, none twice beyond
    the pages in flight."""
    r = redis_server.client()
    slow = {"DOWNLOAD_DELAY": 0.05, "CONCURRENT_REQUESTS": 2}
    with mesh_site() as site:
        proc, result = start_job(tmp_path, site.url(0), settings=store(redis_server, **slow))
        wait_for_pages(site, proc, 10)
        layout = seen_set(redis_server).layout(create=False)
        owners = [layout.owners_key(shard) for shard in range(layout.shards)]
        swap = r.pipeline(transaction=True)  # at once (MULTI), as one key would be
        for key in owners:  # every shard's stamps (those it has: RENAME fails alone on the others)
            swap.rename(key, key + ":saved")
            swap.set(key, "another program's value")  # another program's string
        swap.execute(raise_on_error=False)
        failed = finish(proc, result)
        assert failed.returncode == 0 and failed.stats["finish_reason"] == "urlunify_store_error", (
            failed.stderr[-3000:]
        )
        errors = [line for line in failed.stderr.splitlines() if "ERROR" in line]
        assert any("WRONGTYPE" in line and "SADD (batch)" in line for line in errors), errors
        first = sum(site.hits.values())
        assert 0 < first < SIZE
        swap = r.pipeline(transaction=True)
        for key in owners:
            swap.delete(key)
            swap.rename(key + ":saved", key)
        swap.execute(raise_on_error=False)
        resumed = finish(*start_job(tmp_path, site.url(0), settings=store(redis_server)))
        assert resumed.returncode == 0 and resumed.stats["finish_reason"] == "finished", (
            resumed.stderr[-3000:]
        )
        assert site.lost() == set()
        extra = {
            p: n for p, n in site.fetched_twice().items() if p != "/p/0"
        }  # start page: dont_filter
        # in flight when the batch failed: the downloads; the page whose links that batch held
        # (downloaded, its output never handled, so fetched again to get its links); and the
        # responses downloaded meanwhile whose own batches waited for Redis (the downloader
        # frees a slot once a response is in, so on a loaded machine a few wait: 4 pages once in
        # a full run here, with 2 concurrent requests; 1-2 alone)
        assert len(extra) <= 2 * slow["CONCURRENT_REQUESTS"] + 1, extra


def test_disk_full_under_jobdir_mid_batch_takes_the_unlogged_keys_back(
    redis_server, tmp_path
) -> None:
    """JOBDIR on a disk that fills up (RLIMIT_FSIZE 24 KiB: a write past it fails with EFBIG as
    on a full disk): the S record of a new link cannot be written after its batch recorded it in
    Redis. Its key is taken out of Redis again (else the page would be 'seen' with no request to
    fetch it), the crawl closes with urlunify_store_error, and the resume fetches every page."""
    with mesh_site() as site:
        full = finish(
            *start_job(tmp_path, site.url(0), settings=store(redis_server), fsize=24 * 1024)
        )
        assert full.stats.get("finish_reason") == "urlunify_store_error", full.stderr[-3000:]
        assert 0 < len(site.hits) < SIZE, "the disk filled up after the whole site was crawled"
        resumed = finish(*start_job(tmp_path, site.url(0), settings=store(redis_server)))
        assert resumed.returncode == 0 and resumed.stats["finish_reason"] == "finished", (
            resumed.stderr[-3000:]
        )
        assert site.lost() == set()


@pytest.mark.parametrize("kills", [[0], [1, 5], [2, 8, 26]], ids=["root", "two", "three"])
def test_a_kill_after_a_batch_before_the_scheduler_loses_no_page(
    redis_server, tmp_path, kills
) -> None:
    """JOBDIR and a Redis store, the tree site (each page linked from one page only: a lost link
    loses a subtree). Killed while a page's item is in the pipelines: its links were checked and
    recorded in Redis by their batch, and are not scheduled yet (Scrapy schedules them in worker
    tasks). Their ``S`` records, written with the batch, make the resume schedule them: nothing
    lost, at most the pages in flight fetched twice."""
    settings = {"URLUNIFY_STORE": redis_server.url}
    with TreeSite() as site:
        runs = resume_until_finished(
            tmp_path, site, len(kills) + 1, kill_on_item=kills, settings=settings
        )
    assert [r.killed for r in runs] == [True] * len(kills) + [False], [
        r.stderr[-2000:] for r in runs
    ]
    assert runs[-1].returncode == 0, runs[-1].stderr[-3000:]
    assert runs[-1].stats["finish_reason"] == "finished"
    assert sorted(site.lost()) == []
    assert len(site.fetched_twice()) <= 8 * len(kills), site.fetched_twice()
    assert runs[-1].stats.get("urlunify/redis/link_batches", 0) > 0


@pytest_twisted.inlineCallbacks
def test_dupefilter_debug_lines_are_the_schedulers(redis_server, caplog):  # type: ignore[no-untyped-def]
    """DUPEFILTER_DEBUG: a duplicate dropped by a batch is logged as the scheduler logs it, on
    Scrapy's dupefilter logger, with the Referer the request would have had, once per duplicate:
    as many lines as with the memory store."""
    import logging

    caplog.set_level(logging.DEBUG, logger="scrapy.dupefilters")
    lines = {}
    for name, extra in (("memory", {}), ("redis", {"URLUNIFY_STORE": redis_server.url})):
        caplog.clear()
        with mesh_site() as site:
            stats, _ = yield crawl(MeshSpider, site.url(0), {"DUPEFILTER_DEBUG": True, **extra})
        lines[name] = [
            r.getMessage()
            for r in caplog.records
            if r.name == "scrapy.dupefilters" and "Filtered duplicate request" in r.getMessage()
        ]
        assert len(lines[name]) == stats["dupefilter/filtered"], name
    assert stats["urlunify/redis/link_batches"] == SIZE
    assert len(lines["redis"]) == len(lines["memory"]) > SIZE
    assert all("(referer: http://127.0.0.1:" in line for line in lines["redis"]), lines["redis"][:3]
