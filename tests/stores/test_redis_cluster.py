"""The Redis stores on a real Redis Cluster (tests/support/redis_cluster.py: 3 masters, 3
replicas): the ``redis+cluster://`` URL, every key on the slot of its hash tag, scripts
pipelined one round trip per node, and the retry loop through a failover."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
import redis
from redis.cluster import RedisCluster as ClusterClient
from redis_cluster import RedisCluster

from scrapy_urlunify.stores._base import StoreUnavailable
from scrapy_urlunify.stores._location import cluster_nodes, hash_tagged, mask_url
from scrapy_urlunify.stores._redis_connection import RedisUnavailable, connect, remap, run_scripts
from scrapy_urlunify.stores._redis_near_duplicates import RedisNearDuplicateLog
from scrapy_urlunify.stores._redis_queue import ReliableQueue
from scrapy_urlunify.stores._redis_seen import RedisSeenStore
from scrapy_urlunify.stores._redis_tables import (
    RedisFetchedStore,
    RedisKeptStore,
    RedisRulesStore,
    RedisSignatureStore,
)

pytestmark = pytest.mark.redis


def slot(client: ClusterClient, key: bytes | str) -> int:
    return int(client.keyslot(key))


# --- the URL ----------------------------------------------------------------------------------


def test_a_cluster_url_names_its_seed_nodes_and_keeps_its_password_out_of_messages() -> None:
    seed, nodes = cluster_nodes(
        "redis+cluster://:s3cr/t@10.0.0.1:7000, 10.0.0.2:7001,[::1]:7002?ssl_cert_reqs=none"
    )
    assert nodes == [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("::1", 7002)]
    assert seed == "redis://:s3cr/t@10.0.0.1:7000?ssl_cert_reqs=none"
    assert cluster_nodes("rediss+cluster://h")[0] == "rediss://h:6379"
    assert mask_url("redis+cluster://:s3cr/t@h:1,h:2") == "redis+cluster://:***@h:1,h:2"
    for bad, why in (
        ("redis+cluster://h:1/3", "database 0"),
        ("redis+cluster://h:port", "bad port"),
        ("redis+cluster://", "no node"),
    ):
        with pytest.raises(ValueError, match=why):
            cluster_nodes(bad)


def test_hash_tags_keep_a_users_tag_and_put_every_other_key_in_one() -> None:
    assert hash_tagged("urlunify:shop:seen") == "{urlunify:shop:seen}"
    assert hash_tagged("{shop}:seen") == "{shop}:seen"
    assert hash_tagged("a{}b") == "{a{}b}"  # an empty tag is no tag for Redis


def test_connect_makes_a_cluster_client_from_any_reachable_seed(
    redis_cluster: RedisCluster,
) -> None:
    dead_seed = "127.0.0.1:1"  # nobody listens: another seed answers
    client = connect(f"redis+cluster://{dead_seed},{redis_cluster.url.split('://')[1]}", timeout=2)
    try:
        assert isinstance(client, ClusterClient)
        assert len(client.get_primaries()) == 3
    finally:
        client.close()
    with pytest.raises(RedisUnavailable, match=r"redis\+cluster://127\.0\.0\.1:1"):
        connect("redis+cluster://127.0.0.1:1", timeout=1)


def test_a_plain_url_of_a_cluster_node_is_refused_at_connect(redis_cluster: RedisCluster) -> None:
    with pytest.raises(ValueError, match="redis\\+cluster://"):
        connect(redis_cluster.seed_url, timeout=2)


# --- every store, its keys on the slot of their tag --------------------------------------------


def test_every_store_works_on_a_cluster_with_its_keys_hash_tagged(
    redis_cluster: RedisCluster,
) -> None:
    client = connect(redis_cluster.url, timeout=5)
    try:
        seen = RedisSeenStore(client, "urlunify:s:seen")
        assert seen.add(1)
        assert not seen.add(1)
        assert seen.add_batch([1, 2, 3], release=[]) == [False, True, True]
        assert 2 in seen
        assert seen.contains_many([3, 4, 1, 2**64]) == [True, False, True, False]  # many slots
        assert len(seen) == 3
        signatures = RedisSignatureStore(client, "urlunify:s:signatures")
        assert signatures.get_or_set(b"sig", "first") is None
        assert signatures.get_or_set(b"sig", "second") == "first"
        rules = RedisRulesStore(client, "urlunify:s:rules")
        rules.set_many({"a": "1", "b": "2"})
        assert rules.get_all() == {"a": "1", "b": "2"}
        kept = RedisKeptStore(client, "urlunify:s:kept")
        kept.add(b"e1", ("r",), b"data")
        assert len(kept.entries()) == 1
        fetched = RedisFetchedStore(client, "urlunify:s:fetched")
        fetched.add(b"12345678")
        assert fetched.fetched(b"12345678")
        log = RedisNearDuplicateLog(client, "urlunify:s:near")
        log.append([b"r1", b"r2"])
        assert log.records() == [b"r1", b"r2"]
        assert log.exchange([b"r3"]) == [b"r1", b"r2"]  # a MULTI/EXEC on its slot
        assert log.offset == 3
        keys = redis_cluster.all_keys()
        seen_keys = [k for k in keys if k.startswith(b"urlunify:s:seen")]
        # every key but the seen set's layout (one hash, read alone) is hash-tagged
        assert all(b"{" in k and b"}" in k for k in keys if k != b"urlunify:s:seen"), keys
        # the seen set's shards each on the slot of their own tag ({<key>:<shard>}: a script
        # touches one shard's keys), so its buckets spread over the cluster
        shards: dict[bytes, set[int]] = {}
        for k in seen_keys:
            if b"{" in k:
                shards.setdefault(k[k.index(b"{") : k.index(b"}") + 1], set()).add(slot(client, k))
        assert shards and all(len(slots) == 1 for slots in shards.values()), shards
        many = RedisSeenStore(client, "urlunify:m:seen")
        assert many.add_batch(list(range(0, 2**64 - 1, 2**64 // 500))) == [True] * 501
        assert (
            len(
                {
                    slot(client, k)
                    for k in redis_cluster.all_keys()
                    if k.startswith(b"urlunify:m:seen:")
                }
            )
            > 32
        )
        many.clear()
        seen.clear()
        assert not [
            k
            for k in redis_cluster.all_keys()
            if k.startswith((b"urlunify:s:seen", b"urlunify:m:seen"))
        ]
    finally:
        client.close()


def test_an_untagged_key_left_by_another_client_is_reported(
    redis_cluster: RedisCluster, caplog: pytest.LogCaptureFixture
) -> None:
    client = connect(redis_cluster.url, timeout=5)
    try:
        client.hset("urlunify:old:signatures", b"sig", b"page")
        with caplog.at_level(logging.WARNING):
            store = RedisSignatureStore(client, "urlunify:old:signatures")
        assert store.key == "{urlunify:old:signatures}"
        assert any(
            "'urlunify:old:signatures'" in r.getMessage() and "does not read" in r.getMessage()
            for r in caplog.records
        ), caplog.text
    finally:
        client.close()


def test_the_reliable_queue_keeps_every_key_on_one_slot(redis_cluster: RedisCluster) -> None:
    import time

    client = connect(redis_cluster.url, timeout=5)
    try:
        dead = ReliableQueue(client, "fleet:requests", "dead", lease=0.3)
        alive = ReliableQueue(client, "fleet:requests", "alive")
        for i in range(3):
            dead.push(str(i).encode(), 0, dedup=str(i).encode())
        assert dead.pop()
        assert dead.pop()
        time.sleep(0.5)
        assert alive.heartbeat() == 2  # the script reads the dead worker's in-flight hash
        assert alive.push(b"again", 0, dedup=b"0", check=True) is False
        assert [p.payload for p in iter(alive.pop, None)] == [b"0", b"1", b"2"]
        assert alive.in_flight() == 3
        keys = redis_cluster.all_keys()
        assert {slot(client, k) for k in keys} == {slot(client, "{fleet:requests}")}, keys
        alive.clear()
        assert redis_cluster.all_keys() == []
    finally:
        client.close()


# --- scripts pipelined across slots ------------------------------------------------------------


class CountingConnection(redis.Connection):
    """A real connection that counts what it writes, by node: one write is one round trip."""

    writes: Counter[int] = Counter()

    def send_packed_command(self, command, check_health=True):  # type: ignore[no-untyped-def]
        CountingConnection.writes[self.port] += 1
        return super().send_packed_command(command, check_health)


INCR_BY_ARGV = "return redis.call('INCRBY', KEYS[1], ARGV[1])"


def test_script_calls_on_many_slots_cost_one_round_trip_per_node(
    redis_cluster: RedisCluster,
) -> None:
    client = ClusterClient(host="127.0.0.1", port=redis_cluster.ports[0])
    for node in client.get_nodes():
        pool = node.redis_connection.connection_pool
        pool.connection_class = CountingConnection
        pool.reset()  # (connections made before are dropped, not reused)
    try:
        script = client.register_script(INCR_BY_ARGV)
        keys = [f"k:{{b{i}}}" for i in range(60)]
        client.script_load(INCR_BY_ARGV)
        CountingConnection.writes.clear()
        assert run_scripts(client, [(script, [k], [i]) for i, k in enumerate(keys)]) == list(
            range(60)
        )
        nodes = {client.get_node_from_key(k).port for k in keys}
        assert len(nodes) == 3
        assert dict(CountingConnection.writes) == dict.fromkeys(nodes, 1)
        # a node that forgot its scripts (restarted, promoted): loaded, and only those calls sent again
        for node in redis_cluster.masters():
            redis.Redis(port=node.port).script_flush()
        assert run_scripts(client, [(script, [k], [1]) for k in keys]) == [i + 1 for i in range(60)]
        assert [int(client.get(k)) for k in keys] == [i + 1 for i in range(60)]
    finally:
        client.close()


# --- the retry loop through a failover ---------------------------------------------------------


def test_a_store_waits_through_a_failover_and_stops_loudly_when_it_outlasts_the_budget(
    redis_cluster: RedisCluster,
) -> None:
    """The seen set and the page signatures on one master (one tag), SIGKILLed. The signatures'
    HSETNX+HGET is a MULTI/EXEC, for which redis-py never reads the slot map again with its
    retries off: the store's retry loop does (remap), so it finds the promoted replica too."""
    client = connect(redis_cluster.url, timeout=0.5)
    try:
        patient = RedisSeenStore(client, "{f}:seen", unavailable_timeout=30)
        hasty = RedisSeenStore(client, "{f}:seen", unavailable_timeout=0.2)
        signatures = RedisSignatureStore(client, "{f}:signatures", unavailable_timeout=15)
        assert patient.add_batch([1, 2]) == [True, True]
        assert signatures.get_or_set(b"s1", "page1") is None
        master = redis_cluster.master_of("{f}")
        master_client = master.client()
        assert master_client.wait(1, 2000) == 1  # on the replica: the failover loses none of it
        master_client.close()
        master.kill()
        with pytest.raises(
            StoreUnavailable, match=r"unavailable_timeout 0\.2s.*(Connection|Cluster|Timeout)"
        ):
            hasty.add(3)
        # the replica takes over within the budget: each store's answer is the right one
        assert signatures.get_or_set(b"s1", "page2") == "page1"
        assert signatures.get_or_set(b"s2", "page2") is None
        assert signatures.outages == 1
        assert client.get_node_from_key("{f}").port != master.port
        assert patient.add_batch([2, 3, 4]) == [False, True, True]
        assert patient.outages == 0  # the map was read again already: nothing to wait for
        assert hasty.add(5)  # back: fails fast no more
    finally:
        client.close()


def test_remap_reads_the_slot_map_again_at_most_once_per_interval(
    redis_cluster: RedisCluster,
) -> None:
    client = connect(redis_cluster.url, timeout=2)
    try:
        assert remap(client) is True
        assert (
            remap(client, interval=60) is False
        )  # read just now: an outage does not hammer the cluster
        assert remap(client, interval=0) is True
        assert remap(redis.Redis(port=redis_cluster.ports[0])) is False  # one server: no slot map
        assert len(client.get_primaries()) == 3
    finally:
        client.close()
