"""The seen set's layout in Redis (stores/_redis_buckets.py): buckets of integers Redis keeps as
intsets, in shards of one hash tag each, in generations a shard opens as it grows; the fixed
layout of earlier versions still served; the old one-SET layout refused and migrated. Against a
REAL redis-server."""

from __future__ import annotations

import logging
import random

import pytest
import redis
from redis.crc import key_slot
from redis_server import RedisServer  # the fixtures come from conftest.py

from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._redis_buckets import (
    DEFAULT_INTSET_LIMIT,
    DEFAULT_SEEN_SIZE,
    MAX_SHARDS,
    START_BITS,
    first_generation_bits,
)
from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_seen import RedisSeenStore

pytestmark = pytest.mark.redis


def keys(n: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(64) for _ in range(n)]


def bucket_sizes(client: redis.Redis, key: str) -> dict[str, int]:
    """Every bucket of the seen set at ``key``: its name and how many members it holds."""
    names = [
        k.decode()
        for k in client.scan_iter(match=f"{key}:{{*", count=1000)
        if not k.endswith((b":owners", b":count", b":generations"))
    ]
    return {n: client.scard(n) for n in names}


def test_sizing_starts_small_unless_a_size_is_chosen() -> None:
    assert first_generation_bits(None, 512) == START_BITS  # 256 buckets of ~307: 78,592 URLs
    assert first_generation_bits(DEFAULT_SEEN_SIZE, 512) == START_BITS  # the setting left alone
    assert first_generation_bits(1, 512) == 0  # one bucket a shard
    assert first_generation_bits(10**9, 512) == 16  # 2**22 buckets of ~240
    assert first_generation_bits(10**6, 16) > first_generation_bits(10**6, 512)


def test_an_unsized_scope_grows_in_generations_of_intsets(client: redis.Redis) -> None:
    """A scope nobody sized holds 160,000 URLs in intsets of at most the limit, a few hundred
    members each, however many generations it opened; every key is new once, then seen."""
    store = RedisSeenStore(client, "urlunify:t:seen", size=DEFAULT_SEEN_SIZE)
    first = keys(160_000)
    assert store.add_many(first) == [True] * 160_000
    assert store.add_many(first[::7]) == [False] * len(first[::7])
    assert len(store) == 160_000 and store.converted == 0
    layout = store.layout()
    assert layout is not None and layout.grows and layout.buckets == MAX_SHARDS << START_BITS
    generations = [int(client.get(layout.generations_key(s)) or 1) for s in range(MAX_SHARDS)]
    assert min(generations) >= 2  # 78,592 URLs in the first, as many in the second, then twice
    sizes = bucket_sizes(client, "urlunify:t:seen")
    assert sum(sizes.values()) == 160_000
    assert max(sizes.values()) <= DEFAULT_INTSET_LIMIT
    assert len(sizes) < 160_000 / 100  # few keys of Redis's own per URL
    assert {client.object("encoding", b) for b in list(sizes)[::50]} == {b"intset"}
    assert all(k in store for k in first[:200:3])
    assert not any(k in store for k in keys(50, seed=9))


def test_what_one_call_touches_is_on_one_slot(client: redis.Redis) -> None:
    store = RedisSeenStore(client, "urlunify:t:seen", size=1)  # a generation per ~307 a shard
    store.add_many(keys(60_000))
    layout = store.layout()
    assert layout is not None
    by_shard: dict[str, set[int]] = {}
    for k in client.scan_iter(match="urlunify:t:seen:*", count=1000):
        tag = k[k.index(b"{") : k.index(b"}") + 1].decode()
        by_shard.setdefault(tag, set()).add(key_slot(k))
    assert len(by_shard) == layout.shards
    assert all(len(slots) == 1 for slots in by_shard.values())
    assert len({slots.pop() for slots in by_shard.values()}) == layout.shards
    store.clear()
    assert client.keys("*") == []


def test_a_process_that_missed_a_generation_still_answers_exactly(client: redis.Redis) -> None:
    """Two processes on one scope: one opens generations the other does not know of. The other
    is told by the shards (one more round trip for those), and each key is new exactly once."""
    a = RedisSeenStore(client, "s:seen", size=1)
    b = RedisSeenStore(client, "s:seen", size=1)
    early, late, fresh = keys(500, seed=1), keys(60_000, seed=2), keys(500, seed=3)
    assert b.add_many(early) == [True] * 500  # b learns the shards' first generation
    assert a.add_many(late) == [True] * 60_000  # a opens three or four more in each shard
    trips = b.round_trips
    assert b.add_batch(late[:300] + early[:100]) == [False] * 400
    assert b.round_trips - trips == 2  # told, then its calls again
    assert b.add_batch(fresh) == [True] * 500  # b knows them now: one round trip
    assert b.round_trips - trips == 3
    assert a.add_batch(fresh + early) == [False] * 1000
    assert len(a) == len(b) == 61_000
    assert all(k in b for k in late[-50:]) and all(k in a for k in fresh[:50])
    b.discard_many(late[:10])
    assert a.add_batch(late[:10]) == [True] * 10  # removed from the generation that held it


def test_many_keys_are_looked_up_in_one_round_trip_and_a_missed_generation_in_one_more(
    client: redis.Redis,
) -> None:
    """A duplicate page's links are looked up together (integration/pages/_duplicate_rows.py):
    one round trip for keys of every shard, one more when another process opened generations
    meanwhile, and exact answers either way."""
    a = RedisSeenStore(client, "m:seen", size=1)
    b = RedisSeenStore(client, "m:seen", size=1)
    early, late, fresh = keys(500, seed=1), keys(60_000, seed=2), keys(200, seed=3)
    assert b.contains_many(early) == [False] * 500  # no set yet: no round trip needed
    assert b.add_many(early) == [True] * 500
    assert a.add_many(late) == [True] * 60_000  # a opens generations b does not know of
    trips = b.round_trips
    assert b.contains_many(late[:300] + fresh + early[:100]) == (
        [True] * 300 + [False] * 200 + [True] * 100
    )
    assert b.round_trips - trips == 2  # told, then asked again
    assert b.contains_many(late[-300:] + fresh) == [True] * 300 + [False] * 200
    assert b.round_trips - trips == 3
    assert b.contains_many([-1, 2**64, late[0]]) == [False, False, True]  # not keys: not held


def test_an_explicit_size_is_the_first_generation(client: redis.Redis) -> None:
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


def fixed_layout(client: redis.Redis, key: str, bits: int, shards: int, size: int) -> None:
    """The layout hash an earlier version wrote for a new scope: buckets sized once."""
    client.hset(
        key,
        mapping={"layout": "buckets-1", "bits": bits, "shards": shards, "limit": 16, "size": size},
    )


def test_a_scope_of_the_fixed_layout_is_served_as_it_was(client: redis.Redis) -> None:
    """A scope an earlier version created keeps its buckets and shards (its crawls may run
    beside processes of that version): the same members in the same buckets, one generation."""
    fixed_layout(client, "f:seen", bits=8, shards=64, size=10_000)
    store = RedisSeenStore(client, "f:seen")
    some = keys(3000, seed=4)
    assert store.add_many(some) == [True] * 3000
    layout = store.layout()
    assert layout is not None and not layout.grows
    for key in some[:20]:  # where the earlier version put it: bucket = top 8 bits, shard = low 6
        bucket = key >> 56
        name = f"f:seen:{{f:seen:{bucket & 63}}}:{bucket}"
        assert client.sismember(name, key & ((1 << 56) - 1))
    assert {client.get(k) for k in client.keys("f:seen:*:generations")} == {b"1"}  # never grows
    assert store.add_many(some[:100]) == [False] * 100 and len(store) == 3000


def test_a_fixed_scope_that_outgrows_its_sizing_warns_and_counts(
    client: redis.Redis, caplog
) -> None:
    client.config_set("set-max-intset-entries", 16)
    fixed_layout(client, "s:seen", bits=4, shards=16, size=100)  # 16 buckets of ~7
    store = RedisSeenStore(client, "s:seen")
    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores._redis_seen"):
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
    encodings = {client.object("encoding", b) for b in bucket_sizes(client, "s:seen")}
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
    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores._redis_seen"):
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
