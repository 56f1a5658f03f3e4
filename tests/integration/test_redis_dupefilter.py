"""Real crawls with the Redis store (``URLUNIFY_STORE = "redis://..."``): outages, resumes, fleets.

Everything is real: a throw-away ``redis-server`` (tests/support/redis_server.py), the demo site served
by ``python -m scrapy_urlunify.demo.server`` in its own process, and each crawl a Scrapy process
of its own (tests/support/redis_crawl_job.py) that writes ``<status> <url>`` for every response it
downloads. ``DemoSite.page_id`` turns those URLs into the site's distinct pages, so "every page
fetched once, none missed" is counted, not guessed.

Outages are made two ways:

* ``SIGSTOP`` on the redis-server process: it stops answering (connections are still accepted
  by the kernel, replies never come) and keeps its data; ``SIGCONT`` brings it back as it was.
  This is a hung or partitioned server, and the case where no page may be fetched twice.
* ``RedisServer.restart()``: a real kill and a new server on the same port. Without
  persistence the seen set is gone, so pages are fetched again by design; the crawl must only
  survive, finish and miss nothing.

``URLUNIFY_REDIS_TIMEOUT`` (the socket timeout, default 10 s) is set to 0.25 s so a stopped
server is noticed, and retried, within a quarter of a second.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from redis_server import (  # fixtures: conftest.py
    RedisServer,
    free_port,
    require_redis_server,
)

from scrapy_urlunify.demo.site import DemoSite

SIZE = 50
HERE = Path(__file__).parents[1] / "support"
START_URL = "https://www.site.test/"
#: a stalled server is noticed after this long (the socket timeout of the store's client)
REPLY_TIMEOUT = 0.25
#: slow enough that an outage after a few responses hits the middle of the crawl (~2 s long)
SLOW = {"CONCURRENT_REQUESTS": 4, "DOWNLOAD_DELAY": 0.05}

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings(
        "ignore::scrapy.exceptions.ScrapyDeprecationWarning:scrapy_redis.scheduler"
    ),
]


@pytest.fixture(scope="module")
def proxy() -> str:
    """The demo site, served by a process of its own; its proxy URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_urlunify.demo.server", "--size", str(SIZE), "--no-traps"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield json.loads(proc.stdout.readline())["proxy_url"]
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE, traps=False)


class Job:
    """One crawler process (tests/support/redis_crawl_job.py) and what it fetched."""

    def __init__(
        self,
        directory: Path,
        proxy: str,
        settings: dict[str, Any],
        *,
        name: str = "job",
        spider: str = "plain",
        start_urls: list[str] | None = None,
        heartbeat: float | None = None,
        out: Path | None = None,
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.out = out or directory / "fetched.txt"
        self.result_path = directory / "result.json"
        self.ready_path = directory / "ready"
        self.err_path = directory / "stderr.txt"
        config = {
            "proxy": proxy,
            "out": str(self.out),
            "result": str(self.result_path),
            "name": name,
            "spider": spider,
            "start_urls": [START_URL] if start_urls is None else start_urls,
            "heartbeat": heartbeat,
            "settings": settings,
            "ready": str(self.ready_path),
        }
        self.config = directory / "config.json"
        self.config.write_text(json.dumps(config))
        self.proc: subprocess.Popen | None = None

    def start(self) -> Job:
        self.result_path.unlink(missing_ok=True)
        self.ready_path.unlink(missing_ok=True)
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(HERE / "redis_crawl_job.py"), str(self.config)],
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        return self

    def wait(self, timeout: float = 60) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"the crawl did not end within {timeout}s; its log:\n{self.stderr[-3000:]}")

    def wait_ready(self, timeout: float = 60) -> None:
        """Until the spider is open (its process has started and connected)."""
        deadline = time.monotonic() + timeout
        while not self.ready_path.exists():
            assert self.proc is not None
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the worker did not open its spider; its log:\n{self.stderr[-3000:]}")
            time.sleep(0.05)

    def run(self, timeout: float = 60) -> Job:
        self.start().wait(timeout)
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace") if self.err_path.exists() else ""

    @property
    def result(self) -> dict[str, Any]:
        assert self.result_path.exists(), (
            f"the crawl wrote no result; its log:\n{self.stderr[-3000:]}"
        )
        return json.loads(self.result_path.read_text())

    @property
    def stats(self) -> dict[str, Any]:
        return self.result["stats"]

    def lines(self) -> list[str]:
        return self.out.read_text().splitlines() if self.out.exists() else []

    def wait_for_responses(self, n: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while len(self.lines()) < n:
            assert self.proc is not None and self.proc.poll() is None, (
                f"the crawl ended before {n} responses; its log:\n{self.stderr[-3000:]}"
            )
            assert time.monotonic() < deadline, f"fewer than {n} responses after {timeout}s"
            time.sleep(0.01)


def seen_count(client: Any, key: str) -> int:
    """The keys a seen set of the scope holds (its buckets' counters)."""
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore

    return len(RedisSeenStore(client, key))


def fetches(lines: list[str], site: DemoSite) -> Counter[str]:
    """Distinct page -> how many 200 responses served it (redirects, 404s and PDFs are not pages)."""
    counts = Counter(site.page_id(line.split()[1]) for line in lines if line.startswith("200 "))
    counts.pop(None, None)
    return counts


def assert_every_page_once(counts: Counter[str], site: DemoSite) -> None:
    assert set(counts) == set(site.pages), f"pages missed: {sorted(set(site.pages) - set(counts))}"
    assert {p: n for p, n in counts.items() if n > 1} == {}, "pages fetched more than once"


def store_settings(server: RedisServer, **extra: Any) -> dict[str, Any]:
    return {"URLUNIFY_STORE": server.url, "URLUNIFY_REDIS_TIMEOUT": REPLY_TIMEOUT, **extra}


def freeze(server: RedisServer) -> None:
    """Make redis-server unresponsive without losing its data."""
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGSTOP)


def thaw(server: RedisServer) -> None:
    if server.process is not None and server.process.poll() is None:
        os.kill(server.process.pid, signal.SIGCONT)


# --- 1. unreachable at start ---------------------------------------------------------------------


@pytest.mark.parametrize("password", [None, "s3cret-Pw"], ids=["no-password", "password"])
def test_unreachable_store_stops_the_crawl_at_start(proxy, tmp_path, password) -> None:
    """Nobody listens on the port: the crawl does not start, fetches nothing, and says which
    store (password masked) and which setting to fix."""
    port = free_port()
    auth = f":{password}@" if password else ""
    job = Job(tmp_path, proxy, {"URLUNIFY_STORE": f"redis://{auth}127.0.0.1:{port}/0"})
    t0 = time.monotonic()
    job.run()
    assert time.monotonic() - t0 < 20  # refused at once: no waiting through an "outage"
    assert job.proc.returncode != 0 and job.result["bootstrap_failed"], job.stderr[-3000:]
    assert job.lines() == [], "the crawl fetched pages although its store is unreachable"
    assert "Spider opened" not in job.stderr
    masked = f"redis://{':***@' if password else ''}127.0.0.1:{port}/0"
    errors = [line for line in job.stderr.splitlines() if masked in line]
    assert errors, f"no error names the store {masked}:\n{job.stderr[-3000:]}"
    assert any("URLUNIFY_STORE" in line for line in errors), (
        f"the error does not name the setting URLUNIFY_STORE: {errors[-1]}"
    )
    if password:
        assert password not in job.stderr


# --- 2. an outage in the middle of a crawl, then Redis is back -------------------------------------


@pytest.mark.parametrize("outage", ["sigstop", "restart"])
def test_crawl_waits_through_an_outage_and_finishes(
    redis_server, proxy, site, tmp_path, outage
) -> None:
    """Redis goes away after 10 responses, for about 1 s, while the crawl runs on Scrapy's own
    scheduler. The crawl waits (calls retry with backoff; the reactor is blocked, so nothing is
    downloaded meanwhile) and finishes when Redis is back.

    sigstop: the server keeps its data, so every page is fetched exactly once, none missed.
    restart: killed and started again empty (no persistence): pages recorded before the kill are
    forgotten and may be fetched again; none may be missed."""
    job = Job(tmp_path, proxy, store_settings(redis_server, **SLOW)).start()
    try:
        job.wait_for_responses(10)
        if outage == "sigstop":
            freeze(redis_server)
            try:
                time.sleep(0.4)
                frozen_at = len(job.lines())
                time.sleep(0.6)
                # the reactor is blocked in a Redis call: no response is even handled
                assert len(job.lines()) == frozen_at, "the crawl went on while Redis did not answer"
                assert job.proc.poll() is None, "the crawl ended during a 1 s outage"
            finally:
                thaw(redis_server)
        else:
            redis_server.restart(down_for=1.0)
        assert job.wait() == 0, job.stderr[-3000:]
    finally:
        job.kill()
        thaw(redis_server)
    stats = job.stats
    assert stats["finish_reason"] == "finished"
    assert "urlunify/store_unavailable" not in stats
    assert "is back after" in job.stderr
    counts = fetches(job.lines(), site)
    if outage == "sigstop":
        assert_every_page_once(counts, site)
    else:
        assert set(counts) == set(site.pages), (
            f"pages missed: {sorted(set(site.pages) - set(counts))}"
        )
    # the outage shows in the crawl's stats (the WARNING in the log is not enough for monitoring)
    assert stats.get("urlunify/redis/retries", 0) > 0, (
        f"no urlunify/redis/retries stat: {sorted(k for k in stats if k.startswith('urlunify/'))}"
    )
    assert stats.get("urlunify/redis/outages", 0) >= 1


def test_a_frozen_server_never_turns_a_seen_page_into_a_new_one(redis_server) -> None:
    """What decides "exactly once" above, without the luck of timing. While Redis is frozen, the
    crawl asks "seen?" about a link; every attempt times out *after* the kernel buffered it, and
    on SIGCONT Redis runs them all. For a page already recorded the answer must still be "seen"
    (else it is fetched twice, as a crawl does when the freeze lands on a duplicate link, most
    of its links); for a new page, "new" exactly once (else it is lost)."""
    from scrapy_urlunify.stores._redis_connection import connect
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore

    store = RedisSeenStore(
        connect(redis_server.url, timeout=REPLY_TIMEOUT),
        "urlunify:t:seen",
        unavailable_timeout=30,
        owns_client=True,
    )
    assert store.add(1) is True
    answers: dict[int, bool] = {}
    for fp in (1, 2):  # 1: recorded before the freeze; 2: a new page
        freeze(redis_server)
        try:
            thread = threading.Thread(
                target=lambda fp=fp: answers.__setitem__(fp, store.add(fp)), daemon=True
            )
            thread.start()
            time.sleep(1.0)
            assert thread.is_alive()  # no answer while Redis is frozen
        finally:
            thaw(redis_server)
        thread.join(10)
    assert store.retries > 0
    assert answers == {1: False, 2: True}, "a frozen server changed the answer of 'seen?'"
    assert store.add(2) is False
    store.close()


# --- 3. an outage longer than URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT, then a resume ------------------------

UNAVAILABLE_TIMEOUT = 1.0
#: The outage starts after this many responses: requests in flight then are at most
#: CONCURRENT_REQUESTS (plus the one whose store call was cut off).
OUTAGE_AFTER = 10


@pytest.fixture(scope="module")
def outage_and_resume(proxy, site, tmp_path_factory) -> dict[str, Any]:
    """Run 1 (JOBDIR, Redis store) is cut off by a SIGSTOP of Redis that outlasts
    URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT; Redis is then resumed (SIGCONT: its data intact), and
    run 2 resumes the job from the same JOBDIR (Scrapy saved its queue at the clean close) and
    the same Redis."""
    directory = tmp_path_factory.mktemp("outage")
    with RedisServer(require_redis_server()) as server:
        settings = store_settings(
            server,
            JOBDIR=str(directory / "job"),
            URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT=UNAVAILABLE_TIMEOUT,
            **SLOW,
        )
        out = directory / "fetched.txt"
        first, second = (
            Job(directory / "run1", proxy, settings, out=out),
            Job(directory / "run2", proxy, settings, out=out),
        )
        try:
            first.start()
            first.wait_for_responses(OUTAGE_AFTER)
            freeze(server)
            stopped = time.monotonic()
            rc1 = first.wait(120)
            closed_after = time.monotonic() - stopped
            run1_lines = first.lines()
            thaw(server)
            second.run()
        finally:
            first.kill()
            second.kill()
            thaw(server)
    return {
        "first": first,
        "second": second,
        "rc1": rc1,
        "closed_after": closed_after,
        "run1": fetches(run1_lines, site),
        "all": fetches(second.lines(), site),
    }


def test_outage_longer_than_the_timeout_closes_the_crawl(outage_and_resume) -> None:
    first: Job = outage_and_resume["first"]
    assert outage_and_resume["rc1"] == 0, first.stderr[-3000:]
    assert first.stats["finish_reason"] == "urlunify_store_unavailable"
    assert first.stats["urlunify/store_unavailable"] == 1
    assert "closing the crawl (reason 'urlunify_store_unavailable')" in first.stderr
    # Closing takes the timeout (1 s), the first failed reply (0.25 s) and the downloads then in
    # flight. It must not make one more Redis call per request the closing crawl still handles,
    # each waiting a reply timeout (the default timeout is 10 s: minutes for a close).
    assert outage_and_resume["closed_after"] < UNAVAILABLE_TIMEOUT + 4, (
        f"the crawl took {outage_and_resume['closed_after']:.1f}s to close after Redis stopped answering"
    )


def test_resume_after_the_outage_fetches_every_page_once(outage_and_resume, site) -> None:
    """The union of both runs fetched every page; none twice, except the requests in flight when
    the outage hit.

    The bound: when Redis stopped answering, at most CONCURRENT_REQUESTS (4) requests were being
    downloaded, and one store call was cut off without a reply (its SADD may or may not have run:
    the store reports "new" when in doubt, so that request is queued and fetched on resume even if
    its page was fetched before). Every other link found while the crawl closed is queued
    unrecorded; the resumed run must recognize those whose page Redis already has, not fetch them
    again."""
    second: Job = outage_and_resume["second"]
    assert second.proc.returncode == 0, second.stderr[-3000:]
    assert second.stats["finish_reason"] == "finished"
    run1, union = outage_and_resume["run1"], outage_and_resume["all"]
    assert 0 < sum(run1.values()) < len(site.pages), "the outage did not cut the first run short"
    assert set(union) == set(site.pages), f"pages missed: {sorted(set(site.pages) - set(union))}"
    twice = {p: n for p, n in union.items() if n > 1}
    in_flight = SLOW["CONCURRENT_REQUESTS"]
    assert len(twice) <= in_flight and all(n == 2 for n in twice.values()), (
        f"{len(twice)} pages fetched more than once (at most {in_flight} may be): {twice}"
    )


# --- 4. two crawler processes, one scope, scrapy-redis ---------------------------------------------


def test_two_scrapy_redis_processes_share_the_work_and_fetch_each_page_once(
    redis_server, proxy, site, tmp_path
) -> None:
    """Two workers as scrapy-redis users run them: scrapy-redis's scheduler (one request queue in
    Redis for both), RedisDupeFilter (one seen set in Redis for both), the add-on line, a
    RedisCrawlSpider that reads its start URL from the Redis list ``fleet:start_urls`` (pushed
    by the test, as a user would), and MAX_IDLE_TIME_BEFORE_CLOSE to end each worker once the
    shared queue stays empty. SCHEDULER_PERSIST is on: without it the first worker to close
    deletes the shared queue and seen set under the other one.

    A worker's idle time counts from its own first download (tests/support/redis_crawl_job.py): counted
    from its start, a worker waiting for the other to start up, or for it to fetch the start
    page, closed on a loaded machine before it had any work (the work then all done by one
    worker, or by none)."""
    settings = store_settings(
        redis_server,
        SCHEDULER="scrapy_redis.scheduler.Scheduler",
        DUPEFILTER_CLASS="scrapy_urlunify.RedisDupeFilter",
        REDIS_URL=redis_server.url,
        SCHEDULER_PERSIST=True,
        MAX_IDLE_TIME_BEFORE_CLOSE=3,
        CONCURRENT_REQUESTS=2,
        DOWNLOAD_DELAY=0.1,
    )
    workers = [
        Job(
            tmp_path / f"worker{i}",
            proxy,
            settings,
            name="fleet",
            spider="redis",
            start_urls=[],
            heartbeat=0.5,
        )
        for i in (1, 2)
    ]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.wait_ready()
        redis_server.client().lpush("fleet:start_urls", json.dumps({"url": START_URL}))
        codes = [worker.wait(60) for worker in workers]
    finally:
        for worker in workers:
            worker.kill()
    assert codes == [0, 0], [w.stderr[-2000:] for w in workers]
    assert [w.stats["finish_reason"] for w in workers] == ["finished", "finished"]
    per_worker = [fetches(w.lines(), site) for w in workers]
    assert all(sum(c.values()) > 0 for c in per_worker), (
        f"one worker did all the work: {[sum(c.values()) for c in per_worker]}"
    )
    assert_every_page_once(per_worker[0] + per_worker[1], site)
    r = redis_server.client()
    assert seen_count(r, "urlunify:fleet:seen") > len(site.pages) // 2  # our seen set, shared ...
    assert not r.exists("fleet:dupefilter")  # ... instead of scrapy-redis's own
    assert r.llen("fleet:start_urls") == 0


# --- 5. two scopes on one Redis -----------------------------------------------------------------------


def test_two_scopes_on_one_redis_never_filter_each_other(
    redis_server, proxy, site, tmp_path
) -> None:
    """Two crawls of the same site, one after the other, on one Redis, with different
    URLUNIFY_SCOPE: the second finds nothing of the first's seen set or page signatures."""
    counts = {}
    for scope in ("alpha", "beta"):
        job = Job(tmp_path / scope, proxy, store_settings(redis_server, URLUNIFY_SCOPE=scope)).run()
        assert job.proc.returncode == 0 and job.stats["finish_reason"] == "finished", job.stderr[
            -3000:
        ]
        counts[scope] = fetches(job.lines(), site)
        assert_every_page_once(counts[scope], site)
        assert job.stats.get("urlunify/signature/duplicates") == len(site.content_duplicates)
    r = redis_server.client()
    assert seen_count(r, "urlunify:alpha:seen") == seen_count(r, "urlunify:beta:seen") > 0


def test_a_shared_store_emptied_by_another_process_makes_its_pages_new_again(redis_server) -> None:
    """The URLs a process scheduled are known to its dupefilter only with a store of its own:
    a shared one may be emptied under it (scrapy-redis's clear() when SCHEDULER_PERSIST is off,
    ``urlunify store clear``), and then every page is new again, for this process too."""
    from scrapy import Request

    from scrapy_urlunify.integration.seen._redis_dupefilter import RedisDupeFilter
    from scrapy_urlunify.integration.seen._seen import SeenCheck
    from scrapy_urlunify.stores._redis_connection import connect
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore

    store = RedisSeenStore(connect(redis_server.url), "urlunify:emptied:seen", owns_client=True)
    df = RedisDupeFilter(SeenCheck.standalone(store))
    url = "https://a.test/page?b=2&a=1"
    assert df.request_seen(Request(url)) is False
    assert df.request_seen(Request(url)) is True
    RedisSeenStore(connect(redis_server.url), "urlunify:emptied:seen", owns_client=True).clear()
    assert df.request_seen(Request(url)) is False
    df.close("finished")
