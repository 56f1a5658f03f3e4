"""The reliable queue (``scrapy_urlunify.RedisQueue``) through a failover of a Redis Cluster master
(tests/support/redis_cluster.py: 3 masters, 3 replicas): a scrapy-redis worker crawls the tree site
(tests/support/treesite.py, each page linked from one other only: a lost push loses a subtree), the
replica of the queue's master is stopped (SIGSTOP) so the master's last writes are not replicated,
the master is SIGKILLed and the stale replica, resumed, takes its place. Without ``WAIT`` the pushes
the master acknowledged in that window are gone and the crawl ends "finished" without their pages
(``URLUNIFY_QUEUE_REPLICAS = "off"``, the contrast). With it (the default), no push returns before
the replica has it: the crawl waits, then goes on on the promoted replica, and every page is fetched."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from redis_cluster import RedisCluster
from redis_server import RedisServer
from reliable_fleet import QUEUE_KEY, extra_fetches, start_worker, wait_ready
from treesite import Run, TreeSite, finish, wait_for_pages

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings(
        "ignore::scrapy.exceptions.ScrapyDeprecationWarning:scrapy_redis.scheduler"
    ),
]

#: the queue's slot; the seen set ({urlunify:fleet:seen}) and the page signatures
#: ({urlunify:fleet:signatures}, on by default) happen to be on the same master
QUEUE = "{" + QUEUE_KEY + "}"
CONCURRENT = 2


def settings(cluster: RedisCluster, **extra: object) -> dict[str, object]:
    return {
        "REDIS_URL": cluster.seed_url,
        "REDIS_PARAMS": {"redis_cls": "redis.cluster.RedisCluster"},
        "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT": 20,
        "URLUNIFY_REDIS_TIMEOUT": 1,
        "DOWNLOAD_DELAY": 0.05,
        "CONCURRENT_REQUESTS": CONCURRENT,
        **extra,
    }


def replica_of(cluster: RedisCluster, master: RedisServer) -> RedisServer:
    ports = re.findall(
        r"port=(\d+)",
        " ".join(
            v for k, v in cluster.info(master, "replication").items() if k.startswith("slave")
        ),
    )
    return next(n for n in cluster.nodes if str(n.port) in ports)


def crawl_through_a_failover(
    tmp_path: Path, cluster: RedisCluster, site: TreeSite, **extra: object
) -> Run:
    """One worker; after 10 pages the replica of the queue's master stops and its link is cut, 1.5 s
    later the master is killed and the replica resumed: it takes over without the master's last
    writes."""
    client = cluster.client()
    try:
        proc, result = start_worker(
            tmp_path / "w", cluster.url, settings=settings(cluster, **extra)
        )
        wait_ready([proc], [tmp_path / "w" / "ready"])
        client.lpush("fleet:start_urls", site.url(0))
        wait_for_pages(site, proc, 10)
        master = cluster.master_of(QUEUE)
        replica = replica_of(cluster, master)
        assert replica.process is not None
        os.kill(replica.process.pid, signal.SIGSTOP)
        try:
            # cut the stopped replica's link (else what the master sends waits in its socket): the
            # worker's next writes reach the master only
            master_client = master.client()
            master_client.client_kill_filter(_type="replica")
            master_client.close()
            time.sleep(1.5)  # longer than a WAIT (1 s): the worker waits, then tries again
            master.kill()
        finally:
            os.kill(replica.process.pid, signal.SIGCONT)
        return finish(proc, result)
    finally:
        client.close()


def test_a_failover_of_the_queues_master_loses_no_request(
    tmp_path: Path, redis_cluster: RedisCluster
) -> None:
    with TreeSite() as site:
        run = crawl_through_a_failover(tmp_path, redis_cluster, site)
        assert run.returncode == 0, run.stderr[-3000:]
        reason = run.stats["finish_reason"]
        if reason != "finished":  # the other outcome the house rule allows: a stop naming the cause
            assert reason == "urlunify_store_unavailable", run.stderr[-3000:]
            assert re.search(
                r"ERROR: .*unavailable.*(ConnectionError|NotReplicated|ClusterDown)", run.stderr
            )
            redis_cluster.heal()
            run = finish(
                *start_worker(tmp_path / "w", redis_cluster.url, settings=settings(redis_cluster))
            )
            assert run.stats["finish_reason"] == "finished", run.stderr[-3000:]
    assert sorted(site.lost()) == []
    # the worker waited for the replica, then through the failover, and said so
    assert re.search(r"WARNING: Redis .* unavailable \(WAIT: 0 of 1 replicas", run.stderr), (
        run.stderr[-3000:]
    )
    back = re.findall(r"is back after ([\d.]+)s", run.stderr)
    assert back, run.stderr[-3000:]
    # fetched twice: at most the requests in flight at the kill (their pops were not replicated)
    assert extra_fetches(site.hits) <= CONCURRENT, site.fetched_twice()
    print(
        f"\nfailover: {reason}; pages {len(site.hits)}, lost 0, fetched twice {len(site.fetched_twice())}, "
        f"back after {back} s"
    )


def test_without_wait_the_same_failover_loses_requests_unsaid(
    tmp_path: Path, redis_cluster: RedisCluster
) -> None:
    """The contrast: the hazard the test above survives is real."""
    with TreeSite() as site:
        run = crawl_through_a_failover(tmp_path, redis_cluster, site, URLUNIFY_QUEUE_REPLICAS="off")
    assert run.stats["finish_reason"] == "finished", run.stderr[-3000:]
    assert site.lost(), "no push was lost: the scenario does not reach the hazard"
    print(f"\nwithout WAIT: finished, {len(site.lost())} pages lost")
