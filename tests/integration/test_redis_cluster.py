"""Real crawls with their stores on a real Redis Cluster (tests/support/redis_cluster.py: 3
masters, 3 replicas, started once per session): the tree site (tests/support/treesite.py, each
page linked from exactly one other, so a lost link loses a subtree) crawled by a process of its
own (tests/support/tree_job.py); a master SIGKILLed mid-crawl; and a scrapy-redis worker on the
reliable queue with a cluster client."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from redis_cluster import RedisCluster
from reliable_fleet import QUEUE_KEY, start_worker, wait_ready
from treesite import TreeSite, finish, run_job, start_job, wait_for_pages

pytestmark = [
    pytest.mark.redis,
    pytest.mark.filterwarnings(
        "ignore::scrapy.exceptions.ScrapyDeprecationWarning:scrapy_redis.scheduler"
    ),
]

#: slow enough that a master killed after 10 pages dies in the middle of the crawl
SLOW = {"DOWNLOAD_DELAY": 0.05, "CONCURRENT_REQUESTS": 2}
SEEN_LAYOUT = "urlunify:tree:seen"  # the seen set's layout (a hash read alone: no tag needed)
SEEN_KEY = "{urlunify:tree:seen:0}"  # one of its 64 shards; a third of them share its master
SIGNATURES_KEY = "{urlunify:tree:signatures}"  # on another master than the seen set


def store(cluster: RedisCluster, **extra: object) -> dict[str, object]:
    return {"URLUNIFY_STORE": cluster.url, "URLUNIFY_REDIS_TIMEOUT": 0.5, **extra}


def untagged(cluster: RedisCluster) -> list[bytes]:
    """Keys of the crawl that are not on the slot of a hash tag (SCAN on every master)."""
    # (a seen set's layout, "<key>", is a hash read alone: it needs no tag)
    return [
        k
        for k in cluster.all_keys()
        if not re.search(rb"\{[^}]+\}", k) and not k.endswith(b":seen")
    ]


def test_a_crawl_on_a_cluster_fetches_every_page_once_with_every_key_hash_tagged(
    tmp_path: Path, redis_cluster: RedisCluster
) -> None:
    with TreeSite() as site:
        run = run_job(tmp_path, site, settings=store(redis_cluster))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats["finish_reason"] == "finished", run.stderr[-3000:]
    assert sorted(site.lost()) == []
    assert site.fetched_twice() == {}
    assert run.stats["urlunify/redis/link_batches"] > 0  # the links of a response: one script call
    keys = redis_cluster.all_keys()
    assert SEEN_LAYOUT.encode() in keys
    # the seen set's buckets spread over every master
    client = redis_cluster.client()
    try:
        assert (
            len(
                {
                    client.get_node_from_key(k).port
                    for k in keys
                    if k.startswith(SEEN_LAYOUT.encode() + b":")
                }
            )
            == 3
        )
    finally:
        client.close()
    assert untagged(redis_cluster) == [], keys


@pytest.mark.parametrize("key", [SEEN_KEY, SIGNATURES_KEY])
def test_a_master_killed_mid_crawl_is_waited_for_and_nothing_is_lost(
    tmp_path: Path, redis_cluster: RedisCluster, key: str
) -> None:
    """SIGKILL on the master serving the seen set, or the page signatures (a MULTI/EXEC: redis-py
    does not read the slot map again for it, the store's retry loop does): its replica takes over
    (cluster-node-timeout 1 s); the crawl waits (URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT 20 s), says
    so, and finishes with every page. A page may be fetched twice: replication is asynchronous,
    so the last links the dead master recorded may be missing on its replica (docs/stores.md,
    "Redis Cluster")."""
    with TreeSite() as site:
        proc, result = start_job(
            tmp_path,
            site.url(0),
            settings=store(redis_cluster, URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT=20, **SLOW),
        )
        wait_for_pages(site, proc, 10)
        killed = redis_cluster.master_of(key)
        assert killed is not redis_cluster.master_of(
            SEEN_KEY if key != SEEN_KEY else SIGNATURES_KEY
        )
        killed.kill()
        run = finish(proc, result)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stats["finish_reason"] == "finished", run.stderr[-3000:]
    assert sorted(site.lost()) == []
    assert run.stats["urlunify/redis/outages"] >= 1
    assert run.stats["urlunify/redis/retries"] >= 1
    assert run.stats.get("urlunify/signature/duplicates", 0) == 0, (
        run.stats
    )  # every page its own text
    warned = [
        line for line in run.stderr.splitlines() if "WARNING" in line and "unavailable" in line
    ]
    back = re.findall(r"is back after ([\d.]+)s", run.stderr)
    assert warned, run.stderr[-3000:]
    assert back, run.stderr[-3000:]
    print(
        f"\nfailover of {key}: back after {back} s; pages {len(site.hits)}, "
        f"fetched twice {len(site.fetched_twice())}"
    )


def test_a_failover_longer_than_the_budget_stops_the_crawl_naming_it_and_the_resume_finishes(
    tmp_path: Path, redis_cluster: RedisCluster
) -> None:
    with TreeSite() as site:
        proc, result = start_job(
            tmp_path,
            site.url(0),
            settings=store(redis_cluster, URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT=0.3, **SLOW),
        )
        wait_for_pages(site, proc, 10)
        redis_cluster.master_of(SEEN_KEY).kill()
        stopped = finish(proc, result)
        assert stopped.stats["finish_reason"] == "urlunify_store_unavailable", stopped.stderr[
            -3000:
        ]
        errors = [
            line
            for line in stopped.stderr.splitlines()
            if "ERROR" in line and "unavailable" in line
        ]
        assert errors, stopped.stderr[-3000:]
        assert re.search(
            r"redis\+cluster://.*(ConnectionError|ClusterDown|TimeoutError)", errors[0]
        ), errors
        assert site.lost(), "the crawl ended before the kill"
        redis_cluster.wait_healthy()
        resumed = run_job(tmp_path, site, settings=store(redis_cluster))
    assert resumed.stats["finish_reason"] == "finished", resumed.stderr[-3000:]
    assert sorted(site.lost()) == []


def test_a_scrapy_redis_worker_on_the_reliable_queue_crawls_through_a_cluster_client(
    tmp_path: Path, redis_cluster: RedisCluster
) -> None:
    """scrapy-redis builds its client with REDIS_PARAMS["redis_cls"]: a RedisCluster, from a plain
    URL of one node; the seen set is URLUNIFY_STORE's. Queue, in-flight hashes, leases: every
    key of the queue on the slot of ``{fleet:requests}``."""
    cluster_client = {
        "REDIS_URL": redis_cluster.seed_url,
        "REDIS_PARAMS": {"redis_cls": "redis.cluster.RedisCluster"},
    }
    client = redis_cluster.client()
    try:
        with TreeSite(size=40) as site:
            proc, result = start_worker(
                tmp_path / "worker", redis_cluster.url, settings=cluster_client
            )
            wait_ready([proc], [tmp_path / "worker" / "ready"])
            client.lpush("fleet:start_urls", site.url(0))
            run = finish(proc, result)
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.stats["finish_reason"] == "finished", run.stderr[-3000:]
        assert sorted(site.lost()) == []
        assert site.fetched_twice() == {}
        queue_key = "{" + QUEUE_KEY + "}"
        assert client.zcard(queue_key) == 0
        assert client.get(f"{queue_key}:given_back") is None
        keys = redis_cluster.all_keys()
        assert f"{queue_key}:pushed".encode() in keys, keys
        assert untagged(redis_cluster) == [], keys
        assert len({client.keyslot(k) for k in keys if k.startswith(queue_key.encode())}) == 1
    finally:
        client.close()
