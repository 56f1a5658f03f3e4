"""The reliable shared queue (``scrapy_urlunify.stores._redis_queue``,
``scrapy_urlunify.integration.queue._redis_queue``): against a real ``redis-server``, then fleets of
real worker processes (tests/support/tree_job.py) SIGKILLed at random moments."""

from __future__ import annotations

import pickle
import random
import subprocess
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from redis_server import RedisServer
from reliable_fleet import (
    QUEUE_KEY,
    extra_fetches,
    given_back,
    in_flight_of,
    start_worker,
    wait_ready,
)
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler
from treesite import TreeSite, finish

from scrapy_urlunify.integration.crawl._meta import GIVEN_BACK_META, QUEUE_ID_META
from scrapy_urlunify.integration.queue._redis_queue import RedisQueue
from scrapy_urlunify.integration.settings import SettingsError
from scrapy_urlunify.stores._redis_queue import ReliableQueue
from scrapy_urlunify.stores._redis_seen import RedisSeenStore

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings(
        "ignore::scrapy.exceptions.ScrapyDeprecationWarning:scrapy_redis.scheduler"
    ),
]


# --- the Redis part ---------------------------------------------------------------------------


def test_pop_takes_the_best_priority_first_and_keeps_the_order_within_one(
    redis_server: RedisServer,
) -> None:
    q = ReliableQueue(redis_server.client(), "q", "w1")
    for payload, priority in [
        (b"low-1", 0),
        (b"high", 10),
        (b"low-2", 0),
        (b"negative", -5),
        (b"low-3", 0),
    ]:
        assert q.push(payload, -priority)
    assert len(q) == 5
    popped = [q.pop() for _ in range(5)]
    assert [p.payload for p in popped if p] == [b"high", b"low-1", b"low-2", b"low-3", b"negative"]
    assert q.pop() is None
    assert len(q) == 0
    assert q.in_flight() == 5
    assert q.mine() == 5


def test_a_popped_entry_stays_in_flight_until_acknowledged(redis_server: RedisServer) -> None:
    q = ReliableQueue(redis_server.client(), "q", "w1")
    q.push(b"a", 0)
    popped = q.pop()
    assert popped is not None
    assert not popped.given_back
    assert q.mine_ids() == {popped.id}
    assert q.ack(popped.id)
    assert not q.ack(popped.id)  # once
    assert q.in_flight() == 0
    assert len(q) == 0


def test_concurrent_pops_take_each_entry_once(redis_server: RedisServer) -> None:
    client = redis_server.client()
    seed = ReliableQueue(client, "q", "seed")
    for i in range(300):
        seed.push(str(i).encode(), 0)
    taken: list[bytes] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        q = ReliableQueue(redis_server.client(), "q", name)
        while (popped := q.pop()) is not None:
            with lock:
                taken.append(popped.payload)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(str(i).encode() for i in range(300))
    assert seed.in_flight() == 300


def test_the_entries_of_a_dead_worker_go_back_to_the_queue(redis_server: RedisServer) -> None:
    client = redis_server.client()
    dead = ReliableQueue(client, "q", "dead", lease=0.3)
    alive = ReliableQueue(client, "q", "alive", lease=30)
    for payload, priority in [(b"a", 1), (b"b", 0), (b"c", 0)]:
        dead.push(payload, -priority)
    first, second = dead.pop(), dead.pop()
    assert first
    assert second
    assert first.payload == b"a"
    assert alive.heartbeat() == 0  # dead is still alive: its lease runs
    time.sleep(0.5)
    assert alive.heartbeat() == 2
    assert alive.in_flight() == 0
    assert len(alive) == 3
    again = [alive.pop() for _ in range(3)]
    # given back at their place (priority, then age), marked as given back
    assert [(p.payload, p.given_back) for p in again if p] == [
        (b"a", True),
        (b"b", True),
        (b"c", False),
    ]
    assert [p.id for p in again[:2] if p] == [first.id, second.id]
    assert not dead.ack(first.id)  # too late: its peer took it back
    assert alive.given_back() == 2


def test_two_workers_racing_never_both_give_back_an_entry(redis_server: RedisServer) -> None:
    client = redis_server.client()
    for w in range(20):
        dead = ReliableQueue(client, "q", f"dead{w}", lease=0.2)
        for i in range(10):
            dead.push(f"{w}-{i}".encode(), 0)
        for _ in range(5):
            dead.pop()
    time.sleep(0.4)
    counts: list[int] = []
    barrier = threading.Barrier(2)

    def race(name: str) -> None:
        q = ReliableQueue(redis_server.client(), "q", name)
        barrier.wait()
        total = 0
        while n := q.requeue_dead():
            total += n
        counts.append(total)

    threads = [threading.Thread(target=race, args=(f"racer{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    q = ReliableQueue(client, "q", "check")
    assert sum(counts) == 100
    assert q.given_back() == 100
    assert len(q) == 200
    assert q.in_flight() == 0
    payloads = Counter(p.payload for p in iter(q.pop, None))
    assert len(payloads) == 200
    assert set(payloads.values()) == {1}


def test_a_redirect_or_retry_replaces_its_request_in_flight_in_one_step(
    redis_server: RedisServer,
) -> None:
    q = ReliableQueue(redis_server.client(), "q", "w1")
    q.push(b"original", 0, dedup=b"k1")
    popped = q.pop()
    assert popped is not None
    assert q.push(b"redirected", 0, dedup=b"k2", replaces=popped.id)
    assert q.in_flight() == 0
    assert len(q) == 1


def test_a_checked_push_queues_only_what_no_one_queued(redis_server: RedisServer) -> None:
    q = ReliableQueue(redis_server.client(), "q", "w1")
    assert q.push(b"a", 0, dedup=b"key-a")
    assert not q.push(b"a again", 0, dedup=b"key-a", check=True)
    assert q.push(b"b", 0, dedup=b"key-b", check=True)
    assert q.push(b"a, not checked", 0, dedup=b"key-a")  # the dupefilter decided: queued
    assert len(q) == 3
    with pytest.raises(ValueError, match="dedup key"):
        q.push(b"c", 0, check=True)


def test_a_worker_that_leaves_gives_back_what_it_holds_and_clear_removes_everything(
    redis_server: RedisServer,
) -> None:
    client = redis_server.client()
    q = ReliableQueue(client, "q", "w1")
    for i in range(3):
        q.push(str(i).encode(), 0, dedup=str(i).encode())
    q.pop()
    assert q.leave() == 1
    assert len(q) == 3
    assert q.in_flight() == 0
    q.pop()
    q.clear()
    assert len(q) == 0
    assert q.in_flight() == 0
    assert not list(client.keys("q*"))


# --- the queue class, as scrapy-redis's scheduler builds it -----------------------------------


class _Spider(Spider):
    name = "fleet"

    def parse(self, response: Any) -> None:
        pass


#: the queue's components, enabled as the add-on enables them (docs/redis_queue.md)
QUEUE_COMPONENTS = {
    "SPIDER_MIDDLEWARES": {
        "scrapy_urlunify.QueueDoneMiddleware": 2,
        "scrapy_urlunify.QueueGivenBackMiddleware": 960,
    },
    "DOWNLOADER_MIDDLEWARES": {"scrapy_urlunify.QueueFailureMiddleware": 1},
}


def _queue(redis_server: RedisServer, watched: bool = True) -> RedisQueue:
    settings = {"URLUNIFY_QUEUE_LEASE": 5, **(QUEUE_COMPONENTS if watched else {})}
    crawler = get_crawler(_Spider, settings)
    spider = _Spider.from_crawler(crawler)
    crawler.spider = spider
    return RedisQueue(redis_server.client(), spider, "%(spider)s:requests")


def test_the_queue_class_keeps_requests_and_priorities(redis_server: RedisServer) -> None:
    queue = _queue(redis_server)
    try:
        assert queue.key == "fleet:requests"
        queue.push(Request("http://a.test/low", meta={"x": 1}))
        queue.push(Request("http://a.test/high", priority=5, callback=queue.spider.parse))
        assert len(queue) == 2
        high, low = queue.pop(), queue.pop()
        assert high is not None
        assert low is not None
        assert queue.pop() is None
        assert (high.url, high.priority, high.callback) == (
            "http://a.test/high",
            5,
            queue.spider.parse,
        )
        assert low.meta["x"] == 1
        assert QUEUE_ID_META in low.meta
        assert GIVEN_BACK_META not in low.meta
        assert queue.store.in_flight() == 2
        queue.ack(low.meta[QUEUE_ID_META])
        # a retry of the high one takes its place
        queue.push(high.replace(dont_filter=True))
        assert queue.store.in_flight() == 0
        assert len(queue) == 1
        queue.clear()
        assert len(queue) == 0
    finally:
        queue._beat.stop()


def test_the_queue_class_refuses_to_open_without_its_done_middlewares(
    redis_server: RedisServer,
) -> None:
    with pytest.raises(SettingsError, match="QueueDoneMiddleware"):
        _queue(redis_server, watched=False)


def test_the_queue_class_refuses_a_bad_lease(redis_server: RedisServer) -> None:
    crawler = get_crawler(_Spider, {"URLUNIFY_QUEUE_LEASE": "soon", **QUEUE_COMPONENTS})
    spider = _Spider.from_crawler(crawler)
    with pytest.raises(SettingsError, match="URLUNIFY_QUEUE_LEASE"):
        RedisQueue(redis_server.client(), spider, "k")


# --- fleets of real workers -------------------------------------------------------------------


def test_an_idle_worker_waits_for_the_requests_of_a_dead_peer_and_fetches_them(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A peer died holding the start page (in flight, its lease not over): a worker that starts
    now finds the queue empty; it must not close after MAX_IDLE_TIME_BEFORE_CLOSE (2 s) but wait
    for the lease to end (4 s), take the page back and crawl the site."""
    client = redis_server.client()
    with TreeSite(size=20) as site:
        dead = ReliableQueue(client, QUEUE_KEY, "dead-peer", lease=4)
        dead.push(pickle.dumps(Request(site.url(0), dont_filter=True).to_dict(), protocol=-1), 0)
        assert dead.pop() is not None
        run = finish(*start_worker(tmp_path / "worker", redis_server.url))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats.get("urlunify/queue/given_back") == 1, run.stats
    assert sorted(site.lost()) == []
    assert site.fetched_twice() == {}
    assert dead.in_flight() == 0
    assert len(dead) == 0


def test_the_links_a_dead_worker_recorded_as_seen_without_queuing_them_are_queued(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A worker dies while the item of page 0 is in the pipelines: page 0 is in flight under it,
    its three links are in the seen set (LinkMiddleware recorded them in one batch) and not in
    the queue. Given back, page 0 is fetched again by a new worker, and its links, "seen" for the
    dupefilter, are queued all the same: nothing lost, only page 0 fetched twice."""
    client = redis_server.client()
    marks = str(tmp_path / "marks")
    with TreeSite(size=40) as site:
        proc, result = start_worker(
            tmp_path / "first", redis_server.url, marks=marks, kill_on_item=[0]
        )
        wait_ready([proc], [tmp_path / "first" / "ready"])
        client.lpush("fleet:start_urls", site.url(0))
        assert finish(proc, result).returncode == -9
        assert client.zcard(QUEUE_KEY) == 0
        assert in_flight_of(client, proc.pid) == 1
        # the start URL and the three links of page 0, seen; the links never queued
        assert len(RedisSeenStore(client, "urlunify:fleet:seen")) == 4
        run = finish(*start_worker(tmp_path / "second", redis_server.url, marks=marks))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats.get("urlunify/queue/given_back") == 1
    assert run.stats.get("urlunify/queue/rescued_links") == 3
    assert sorted(site.lost()) == []
    assert site.fetched_twice() == {"/p/0": 2}


class _ChainSite:
    """``/p/<i>`` (i < 10) links ``/p/<i+1>``, except: page 1 is reached through ``/r/1`` (a 302),
    page 2 answers 500 once then 200 (a retry), page 3 links ``/gone`` (404) and page 5 links
    ``/r/4``, a redirect to page 4 (seen: the scheduler drops the redirect)."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path
                site.hits[path] += 1
                if path.startswith("/r/"):
                    self.send_response(302)
                    self.send_header("Location", "/p/" + path[3:])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if not path.startswith("/p/") or (path == "/p/2" and site.hits[path] == 1):
                    self.send_error(404 if not path.startswith("/p/") else 500)
                    return
                i = int(path[3:])
                default = [f"/p/{i + 1}"] if i < 9 else []
                links = {0: ["/r/1"], 3: ["/p/4", "/gone"], 5: ["/p/6", "/r/4"]}.get(i, default)
                anchors = "".join(f"<a href='{href}'>{href}</a>" for href in links)
                body = f"<html><body><p>The text of page {i}, found nowhere else.</p>{anchors}</body></html>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"


def test_redirects_retries_and_failures_end_their_requests(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """One worker; nothing stays in flight, so the crawl closes (a request never acknowledged
    would keep the fleet open) and nothing was given back."""
    site = _ChainSite()
    client = redis_server.client()
    try:
        proc, result = start_worker(
            tmp_path / "worker",
            redis_server.url,
            settings={"RETRY_ENABLED": True, "RETRY_HTTP_CODES": [500]},
        )
        wait_ready([proc], [tmp_path / "worker" / "ready"])
        client.lpush("fleet:start_urls", site.url("/p/0"))
        run = finish(proc, result)
    finally:
        site.server.shutdown()
        site.server.server_close()
    assert run.returncode == 0, run.stderr[-3000:]
    assert {f"/p/{i}" for i in range(10)} <= set(site.hits), run.stderr[-6000:]
    assert site.hits["/p/2"] == 2
    assert site.hits["/gone"] == 1
    assert site.hits["/r/1"] == site.hits["/r/4"] == site.hits["/p/4"] == 1
    assert run.stats.get("retry/count") == 1
    assert run.stats.get("downloader/response_status_count/302") == 2
    assert run.stats.get("httperror/response_ignored_count") == 1
    assert client.zcard(QUEUE_KEY) == 0
    assert not list(client.scan_iter(f"{QUEUE_KEY}:inflight:*"))
    assert given_back(client) == 0
    assert "urlunify/queue/unobserved" not in run.stats


@pytest.mark.parametrize("seed", [11])
def test_a_fleet_with_workers_killed_at_random_moments_loses_nothing(
    redis_server: RedisServer, tmp_path: Path, seed: int
) -> None:
    """3 workers; 4 times, when the site has served a random number of pages, a random worker is
    SIGKILLed (what it held in flight is read from Redis right after) and restarted after a
    random pause. Every page is fetched; a page is fetched twice only if it was in flight at a
    kill."""
    rng = random.Random(seed)
    client = redis_server.client()
    size = 200
    settings = {"URLUNIFY_QUEUE_LEASE": 5}
    incarnations = Counter[int]()

    def worker(i: int) -> tuple[subprocess.Popen[str], Path]:
        incarnations[i] += 1
        return start_worker(
            tmp_path / f"worker{i}-{incarnations[i]}", redis_server.url, settings=settings
        )

    in_flight_at_kills = kills = 0
    with TreeSite(size=size) as site:
        workers = {i: worker(i) for i in range(3)}
        wait_ready(
            [p for p, _ in workers.values()],
            [tmp_path / f"worker{i}-1" / "ready" for i in range(3)],
        )
        client.lpush("fleet:start_urls", site.url(0))
        for threshold in sorted(rng.sample(range(15, size - 30), 4)):
            deadline = time.monotonic() + 120
            while sum(site.hits.values()) < threshold and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rng.uniform(0, 0.05))
            victim = rng.randrange(3)
            proc, _ = workers[victim]
            if proc.poll() is not None:
                continue
            proc.kill()
            proc.wait()
            kills += 1
            in_flight_at_kills += in_flight_of(client, proc.pid)
            time.sleep(rng.uniform(0, 1.0))
            workers[victim] = worker(victim)
        runs = [finish(*job, timeout=180) for job in workers.values()]
    assert kills >= 3, "the crawl ended before the kills"
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.stats.get("finish_reason") == "finished", run.stderr[-3000:]
        assert "urlunify/queue/unobserved" not in run.stats  # every request's end was seen
    assert sorted(site.lost()) == []
    assert extra_fetches(site.hits) <= in_flight_at_kills, (
        site.fetched_twice(),
        in_flight_at_kills,
    )
    assert (
        given_back(client) <= in_flight_at_kills
    )  # nothing else came back: no live worker lost a lease
    assert client.zcard(QUEUE_KEY) == 0
    assert not any(client.hlen(k) for k in client.scan_iter(f"{QUEUE_KEY}:inflight:*"))
