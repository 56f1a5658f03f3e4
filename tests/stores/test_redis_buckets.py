"""The seen set's layout in Redis (stores/redis_buckets.py): buckets of integers Redis keeps as
intsets, sized once per scope, in shards of one hash tag each; the old one-SET layout refused
and migrated. Against a REAL redis-server."""

from __future__ import annotations

import logging
import random

import pytest
import redis
from redis.crc import key_slot
from redis_server import RedisServer  # the fixtures come from conftest.py

from scrapy_urlunify.stores import StoreError
from scrapy_urlunify.stores.redis_buckets import DEFAULT_INTSET_LIMIT, MAX_SHARDS, sized
from scrapy_urlunify.stores.redis_connection import connect
from scrapy_urlunify.stores.redis_seen import RedisSeenStore

pytestmark = pytest.mark.redis


def keys(n: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(64) for _ in range(n)]


def test_sizing_keeps_the_expected_urls_under_the_intset_limit() -> None:
    bits, shards = sized(10_000_000, 512)
    assert (bits, shards) == (15, MAX_SHARDS)  # 32,768 buckets of ~305 at 10M
    assert sized(1, 512) == (1, 2)  # a member always leaves a bit to the bucket
    assert sized(10**9, 512)[0] == 22
    assert sized(10_000, 16)[0] > sized(10_000, 512)[0]  # a lower limit: more buckets


def test_buckets_are_intsets_whose_keys_of_a_shard_share_one_slot(client: redis.Redis) -> None:
    store = RedisSeenStore(client, "urlunify:t:seen", size=20_000)
    assert store.add_batch(keys(20_000)) == [True] * 20_000
    layout = store.layout()
    assert layout is not None and layout.buckets == 128 and layout.shards == 64
    assert len(store) == 20_000
    sizes = [client.scard(layout.bucket_key(b)) for b in range(layout.buckets)]
    assert sum(sizes) == 20_000 and max(sizes) <= DEFAULT_INTSET_LIMIT
    assert {client.object("encoding", layout.bucket_key(b)) for b in range(layout.buckets)} == {
        b"intset"
    }
    assert store.converted == 0
    # what one script call touches is of one slot (Redis Cluster), and the shards spread over slots
    for shard in range(layout.shards):
        assert len({key_slot(k.encode()) for k in layout.shard_keys(shard)}) == 1
    assert (
        len({key_slot(layout.owners_key(s).encode()) for s in range(layout.shards)})
        == layout.shards
    )
    # every key the store wrote is one of the layout's
    written = {k.decode() for k in client.keys("urlunify:t:seen*")}
    assert written == {"urlunify:t:seen"} | {
        k for s in range(layout.shards) for k in layout.shard_keys(s)
    }
    store.clear()
    assert client.keys("*") == []


def test_the_first_process_sizes_the_scope_for_every_later_one(client: redis.Redis) -> None:
    first = RedisSeenStore(client, "s:seen", size=1_000)
    first.add(1)
    later = RedisSeenStore(client, "s:seen", size=10**9)  # another setting, another process
    assert later.add(1) is False
    assert later.layout() == first.layout() and later.layout().size == 1_000
    fresh = RedisSeenStore(client, "other:seen", size=10**9)
    fresh.add(1)
    assert fresh.layout().buckets == 1 << 22


def test_config_disabled_sizes_for_the_default_limit(redis_server_factory) -> None:
    server = redis_server_factory(extra_args=("--rename-command", "CONFIG", ""))
    store = RedisSeenStore(connect(server.url), "s:seen", size=100_000, owns_client=True)
    assert store.add(5) and 5 in store
    assert store.layout().limit == DEFAULT_INTSET_LIMIT
    store.close()


def test_a_scope_that_outgrows_its_sizing_warns_and_counts(client: redis.Redis, caplog) -> None:
    client.config_set("set-max-intset-entries", 16)
    store = RedisSeenStore(client, "s:seen", size=100)  # 16 buckets of ~7
    assert store.layout().limit == 16 and store.layout().buckets == 16
    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores.redis_seen"):
        assert store.add_batch(keys(100)) == [True] * 100
        assert store.converted == 0 and not caplog.records
        assert store.add_batch(keys(400, seed=1)) == [True] * 400
    assert store.converted > 0  # buckets of ~31 on a limit of 16
    warnings = [r.getMessage() for r in caplog.records]
    assert (
        len(warnings) == 1
        and "outgrew its sizing" in warnings[0]
        and "set-max-intset-entries" in warnings[0]
    )
    layout = store.layout()
    encodings = {client.object("encoding", layout.bucket_key(b)) for b in range(layout.buckets)}
    assert b"hashtable" in encodings
    assert len(store) == 500 and store.add_batch(keys(100)) == [False] * 100  # still exact


def test_data_lost_is_warned_once_and_the_set_keeps_working(
    redis_server: RedisServer, caplog
) -> None:
    store = RedisSeenStore(
        connect(redis_server.url, timeout=1), "urlunify:x:seen", owns_client=True
    )
    assert store.add_batch(keys(300)) == [True] * 300
    redis_server.restart()
    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores.redis_seen"):
        assert store.add_batch(keys(300)) == [True] * 300  # every page new again
        assert store.add_batch(keys(300, seed=2)) == [True] * 300
    assert store.data_lost == 1
    lost = next(r.getMessage() for r in caplog.records if "lost its data" in r.getMessage())
    assert "urlunify:x:seen" in lost
    fresh = RedisSeenStore(redis_server.client(), "urlunify:x:seen")
    assert fresh.layout() == store.layout() and len(fresh) == 600  # the layout was written back
    store.close()


def old_layout(client: redis.Redis, key: str, seen_keys: list[int]) -> None:
    client.sadd(key, *(k.to_bytes(8, "big") for k in seen_keys))
    client.hset(key + ":owners", "123-abc", "1")
    client.set(key + ":marker", "1")


def test_a_seen_set_of_the_old_layout_is_refused_naming_the_migration(client: redis.Redis) -> None:
    old_layout(client, "urlunify:old:seen", [1, 2, 3])
    store = RedisSeenStore(client, "urlunify:old:seen")
    for call in (
        lambda: store.add(1),
        lambda: store.add_batch([4]),
        lambda: len(store),
        lambda: 1 in store,
    ):
        with pytest.raises(StoreError, match=r"'urlunify:old:seen'.*scrapy urlunify store migrate"):
            call()
    assert client.scard("urlunify:old:seen") == 3  # untouched


def test_migrate_copies_the_old_layout_and_can_be_resumed(client: redis.Redis) -> None:
    seen_keys = keys(2500)
    old_layout(client, "urlunify:old:seen", seen_keys)
    client.sadd("urlunify:old:seen", b"not-8-bytes!")
    store = RedisSeenStore(client, "urlunify:old:seen", size=50_000)
    assert store.migrate() == (2500, 1)
    assert len(store) == 2500 and all(key in store for key in seen_keys[:50])
    assert store.add_batch([*seen_keys[:10], 7]) == [False] * 10 + [True]
    assert not client.exists(
        "urlunify:old:seen:migrating", "urlunify:old:seen:owners", "urlunify:old:seen:marker"
    )
    assert store.migrate() == (0, 0)  # nothing left to migrate
    # interrupted after the rename: a crawl refuses to start; running it again finishes it
    old_layout(client, "urlunify:half:seen", seen_keys[:100])
    client.rename("urlunify:half:seen", "urlunify:half:seen:migrating")
    with pytest.raises(StoreError, match=r"being migrated.*store migrate"):
        RedisSeenStore(client, "urlunify:half:seen").add(1)
    assert RedisSeenStore(client, "urlunify:half:seen").migrate() == (100, 0)
    assert len(RedisSeenStore(client, "urlunify:half:seen")) == 100
