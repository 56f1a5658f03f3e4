"""Several crawler processes sharing one ``URLUNIFY_STORE`` (a real ``redis-server``), one of them
SIGKILLed mid-crawl: which setups lose no page (README, "Which multi-process setups lose nothing
when a worker is killed"; docs/reliability.md). Ground truth: the tree site's own request log
(tests/support/treesite.py: each page is linked from exactly one other, so a lost request loses its
subtree)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from redis_server import RedisServer
from reliable_fleet import extra_fetches, given_back, start_worker, wait_ready
from treesite import TreeSite, finish, start_job

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings(
        "ignore::scrapy.exceptions.ScrapyDeprecationWarning:scrapy_redis.scheduler"
    ),
]

WORKERS = 3


def test_independent_crawls_sharing_a_store_with_a_jobdir_each_lose_nothing(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The safe setup: each worker its own Scrapy scheduler and its own ``JOBDIR``, all one
    ``URLUNIFY_STORE`` (so the fleet fetches each page once). A killed worker's queued requests are
    "seen" for the others, but its JOBDIR has them: restarted on it, it fetches them.

    Worker i starts at page i; whoever handles the item of page 2, then of page 13, kills itself
    there (its links not yet scheduled); each killed worker is restarted on its JOBDIR until it
    finishes."""
    marks = str(tmp_path / "marks")
    settings = {"URLUNIFY_STORE": redis_server.url, "URLUNIFY_SCOPE": "fleet"}
    with TreeSite() as site:
        jobs = [
            start_job(
                tmp_path / f"worker{i}",
                site.url(i),
                marks=marks,
                kill_on_item=[2, 13],
                settings=settings,
            )
            for i in range(WORKERS)
        ]
        runs = [finish(*job) for job in jobs]
        killed = [i for i, run in enumerate(runs) if run.killed]
        assert killed, [run.returncode for run in runs]
        assert all(runs[i].returncode == 0 for i in range(WORKERS) if i not in killed), [
            r.returncode for r in runs
        ]
        assert site.lost(), "the kills cost no page before the restarts: kill earlier"
        for i in killed:  # as the README says: restart the killed worker on its JOBDIR
            for _ in range(3):
                run = finish(
                    *start_job(
                        tmp_path / f"worker{i}",
                        site.url(i),
                        marks=marks,
                        kill_on_item=[2, 13],
                        settings=settings,
                    )
                )
                if not run.killed:
                    break
            assert run.returncode == 0 and run.stats["finish_reason"] == "finished", run.stderr[
                -3000:
            ]
    assert sorted(site.lost()) == []
    # fetched twice: at most the start URLs (Scrapy never filters those) and the pages in flight
    # at each kill (CONCURRENT_REQUESTS = 4)
    assert len(site.fetched_twice()) <= WORKERS + 4 * 2, sorted(site.fetched_twice())


def test_scrapy_redis_workers_sharing_the_reliable_queue_lose_nothing(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Safe (docs/redis_queue.md): scrapy-redis's scheduler on ``RedisQueue`` and RedisDupeFilter,
    the killed worker restarted. With scrapy-redis's own queue, the requests a worker had taken
    (in flight, or their links not yet scheduled) were in the seen set and nowhere else: 64-99 of
    100 pages lost. Now a taken request stays in flight, under its worker, until its links are
    queued; a dead worker's requests go back to the queue, and the links of such a page that the
    dead worker had recorded as seen without queuing them are queued again."""
    marks = str(tmp_path / "marks")
    client = redis_server.client()
    with TreeSite() as site:

        def worker(i: int) -> tuple[subprocess.Popen[str], Path]:
            return start_worker(
                tmp_path / f"worker{i}", redis_server.url, marks=marks, kill_on_item=[4]
            )

        workers = [worker(i) for i in range(WORKERS)]
        wait_ready(
            [proc for proc, _ in workers],
            [tmp_path / f"worker{i}" / "ready" for i in range(WORKERS)],
        )
        client.lpush("fleet:start_urls", site.url(0))
        runs = [finish(*job) for job in workers]
        codes = [run.returncode for run in runs]
        assert -9 in codes, f"no worker was killed: {codes}"
        assert all(code in (0, -9) for code in codes), [run.stderr[-3000:] for run in runs]
        for i, code in enumerate(codes):
            if code == -9:  # restarted: finds nothing left, closes
                run = finish(*worker(i))
                assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(site.lost()) == []
    # fetched twice: at most the requests in flight under the killed worker (given back)
    assert extra_fetches(site.hits) <= given_back(client), (
        site.fetched_twice(),
        given_back(client),
    )
    assert given_back(client) >= 1  # the page whose item killed its worker came back
