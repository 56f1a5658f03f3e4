"""scrapy_urlunify.stores._redis_* and RedisDupeFilter against a REAL redis-server.

Each test that needs a server starts its own (``redis_server`` fixture, tests/support/redis_server.py):
races run in two OS processes, outages kill and restart the server, and scrapy-redis's
Scheduler runs with a real Scrapy crawler. Without ``redis-server`` on PATH these tests skip
(or fail, in CI).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import redis
from redis import exceptions as rex
from redis_server import RedisServer, free_port  # the fixtures come from conftest.py

from scrapy_urlunify.stores._base import SeenStore, SignatureStore, StoreError, StoreUnavailable
from scrapy_urlunify.stores._location import (
    DEFAULT_KEY_TEMPLATE,
    is_redis_url,
    mask_url,
    redis_keys,
)
from scrapy_urlunify.stores._redis_buckets import STAMPS_REFRESH, STAMPS_TTL
from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_seen import RedisSeenStore
from scrapy_urlunify.stores._redis_tables import RedisRulesStore, RedisSignatureStore

ROOT = Path(__file__).resolve().parents[2]
MAX = 2**64 - 1

pytestmark = [
    pytest.mark.redis,
    # scrapy-redis 0.9.1's own use of APIs Scrapy 2.13+ deprecates: not ours to fix
    pytest.mark.filterwarnings(
        "ignore::scrapy.exceptions.ScrapyDeprecationWarning:scrapy_redis.scheduler"
    ),
]


def random_keys(n: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(64) for _ in range(n)]


# --- keys and URLs (no server) ------------------------------------------------------------


def test_redis_keys_default_template() -> None:
    assert redis_keys(DEFAULT_KEY_TEMPLATE, "shop") == {
        "seen": "urlunify:shop:seen",
        "signatures": "urlunify:shop:signatures",
        "rules": "urlunify:shop:rules",
        "kept": "urlunify:shop:kept",
        "fetched": "urlunify:shop:fetched",
    }


def test_redis_keys_never_collide_across_scopes() -> None:
    # scopes built to look like another scope's key
    scopes = [
        "a",
        "b",
        "a:seen",
        "a:rules",
        "a:signatures",
        "a:kept",
        "a:fetched",
        "seen",
        "a:b",
        "%s",
        "a%(scope)s",
    ]
    keys = [k for s in scopes for k in redis_keys(DEFAULT_KEY_TEMPLATE, s).values()]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("template", ["urlunify", "urlunify:%(spider)s", "urlunify:%(scope)d"])
def test_redis_keys_rejects_templates_without_the_scope(template: str) -> None:
    with pytest.raises(ValueError):
        redis_keys(template, "shop")


def test_mask_url() -> None:
    assert mask_url("redis://:s3cret@h:6379/0") == "redis://:***@h:6379/0"
    assert mask_url("rediss://user:s3cret@h:6380/2") == "rediss://user:***@h:6380/2"
    assert mask_url("redis://h:6379/0?password=s3cret&db=1") == "redis://h:6379/0?password=***&db=1"
    assert mask_url("redis://h:6379/0") == "redis://h:6379/0"
    assert (
        is_redis_url("redis://h")
        and is_redis_url("rediss://h")
        and is_redis_url("unix:///tmp/r.sock")
    )
    assert not is_redis_url("jobdir") and not is_redis_url(None) and not is_redis_url("http://h")


def test_connect_rejects_a_non_redis_url() -> None:
    with pytest.raises(ValueError, match="not a Redis URL"):
        connect("http://:pw@127.0.0.1:6379/0")


# --- connection failures at start ------------------------------------------------------------


def test_unreachable_at_start_names_the_url_with_password_masked() -> None:
    port = free_port()  # nobody listens there
    with pytest.raises(StoreUnavailable) as info:
        connect(f"redis://:topsecret@127.0.0.1:{port}/3", timeout=0.5)
    message = str(info.value)
    assert f"redis://:***@127.0.0.1:{port}/3" in message
    assert "topsecret" not in message
    assert isinstance(info.value, StoreError)


def test_tls_url_to_a_plain_server_is_unavailable(redis_server: RedisServer) -> None:
    with pytest.raises(StoreUnavailable, match=rf"rediss://127\.0\.0\.1:{redis_server.port}/0"):
        connect(f"rediss://127.0.0.1:{redis_server.port}/0", timeout=1)


def test_password_protected_server(redis_server_factory) -> None:
    server = redis_server_factory(password="pw-s3cret")
    c = connect(f"redis://:pw-s3cret@127.0.0.1:{server.port}/0", timeout=2)
    store = RedisSeenStore(c, "k", owns_client=True)
    assert store.add(7) and 7 in store
    store.close()
    for url in (
        f"redis://:wrong-pw@127.0.0.1:{server.port}/0",
        f"redis://127.0.0.1:{server.port}/0",
    ):
        with pytest.raises(StoreUnavailable) as info:
            connect(url, timeout=2)
        assert "wrong-pw" not in str(info.value)
        assert f"127.0.0.1:{server.port}" in str(info.value)


# --- SeenStore semantics ----------------------------------------------------------------------


def test_seen_store_add_contains_len(client: redis.Redis) -> None:
    store = RedisSeenStore(client, "urlunify:t:seen")
    assert isinstance(store, SeenStore)
    assert len(store) == 0
    for key in (0, 1, 2**63, MAX):
        assert key not in store
        assert store.add(key) is True
        assert store.add(key) is False
        assert key in store
    assert len(store) == 4
    # compact members: integers in small buckets, which Redis keeps as intsets
    layout = store.layout()
    for key in (0, 1, 2**63, MAX):
        member = layout.member_of(key)
        assert layout.shard_of(key) << 58 | member == key  # shard and member: the key exactly
        assert client.sismember(layout.bucket_of(key), str(member))
        assert client.object("encoding", layout.bucket_of(key)) == b"intset"
    assert -1 not in store and 2**64 not in store and "1" not in store and None not in store
    for bad in (-1, 2**64):
        with pytest.raises(ValueError):
            store.add(bad)
    assert store.retries == 0


def test_add_many_matches_add(client: redis.Redis) -> None:
    store = RedisSeenStore(client, "s")
    keys = random_keys(2500)  # spans three pipeline chunks
    assert store.add(keys[10]) is True
    assert store.add_many(keys) == [i != 10 for i in range(2500)]
    assert store.add_many(keys[:5] + [1, 1]) == [False] * 5 + [True, False]
    assert len(store) == 2501
    assert store.add_many([]) == []


def test_two_clients_on_one_key_share_and_two_scopes_do_not(redis_server: RedisServer) -> None:
    c1, c2 = connect(redis_server.url, timeout=2), connect(redis_server.url, timeout=2)
    shop, blog = redis_keys(DEFAULT_KEY_TEMPLATE, "shop"), redis_keys(DEFAULT_KEY_TEMPLATE, "blog")
    a, b = (
        RedisSeenStore(c1, shop["seen"], owns_client=True),
        RedisSeenStore(c2, shop["seen"], owns_client=True),
    )
    other = RedisSeenStore(c2, blog["seen"])
    assert a.add(42) is True
    assert 42 in b and b.add(42) is False and len(b) == 1
    assert 42 not in other and other.add(42) is True
    sa, sb = (
        RedisSignatureStore(c1, shop["signatures"]),
        RedisSignatureStore(c2, shop["signatures"]),
    )
    assert sa.get_or_set(b"sig", "shop.test/a") is None
    assert sb.get_or_set(b"sig", "shop.test/b") == "shop.test/a"
    assert RedisSignatureStore(c2, blog["signatures"]).get_or_set(b"sig", "blog.test/x") is None
    a.close(), b.close()


def test_clear_deletes_only_this_key(client: redis.Redis) -> None:
    store, other = RedisSeenStore(client, "a:seen"), RedisSeenStore(client, "b:seen")
    store.add(1), other.add(1)
    store.clear()
    assert len(store) == 0 and 1 not in store and 1 in other
    assert client.keys("a:*") == [] and client.keys("b:*")  # every bucket, counter, stamp of a:seen


def test_wrong_type_key_is_a_store_error(client: redis.Redis) -> None:
    client.set("str", "x")
    with pytest.raises(StoreError, match="'str'.*WRONGTYPE"):
        RedisSeenStore(client, "str").add(1)


# --- SignatureStore and rules -------------------------------------------------------------------


def test_signature_store_get_or_set(client: redis.Redis) -> None:
    store = RedisSignatureStore(client, "sigs")
    assert isinstance(store, SignatureStore)
    assert store.get_or_set(b"\x00" * 16, "a.test/x") is None
    assert store.get_or_set(b"\x00" * 16, "a.test/y") == "a.test/x"
    odd = "a.test/caf\u00e9/\udcff"  # non-ASCII and a lone surrogate survive
    assert store.get_or_set(b"\xff" * 16, odd) is None
    assert store.get_or_set(b"\xff" * 16, "z") == odd
    assert len(store) == 2
    with pytest.raises(TypeError):
        store.get_or_set("not bytes", "x")  # type: ignore[arg-type]


def test_signature_store_with_decoded_responses(redis_server: RedisServer) -> None:
    c = redis_server.client(decode_responses=True)
    store = RedisSignatureStore(c, "sigs")
    assert store.get_or_set(b"abc", "a.test/x") is None
    assert store.get_or_set(b"abc", "a.test/y") == "a.test/x"
    seen = RedisSeenStore(c, "seen")
    assert seen.add(MAX) and MAX in seen


def test_rules_store(client: redis.Redis) -> None:
    rules = RedisRulesStore(client, redis_keys(DEFAULT_KEY_TEMPLATE, "shop")["rules"])
    assert rules.get_all() == {}
    rules.set("key_params:shop.test", json.dumps(["id"]))
    rules.set("remove_params:shop.test", '["sid"]')
    rules.set("key_params:shop.test", '["id", "page"]')
    assert rules.get_all() == {
        "key_params:shop.test": '["id", "page"]',
        "remove_params:shop.test": '["sid"]',
    }
    assert len(rules) == 2


# --- races between two OS processes ---------------------------------------------------------------

RACER = textwrap.dedent(
    """
    import json, random, sys
    from scrapy_urlunify.stores._redis_connection import connect
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore
    from scrapy_urlunify.stores._redis_tables import RedisSignatureStore
    url, kind, name, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    client = connect(url, timeout=5)
    rng = random.Random(0)
    items = [rng.getrandbits(64) for _ in range(n)]  # the same list in both processes
    print("ready", flush=True)
    sys.stdin.readline()  # start together
    if kind == "seen":
        store = RedisSeenStore(client, "race:seen")
        out = [i for i, key in enumerate(items) if store.add(key)]
    else:
        store = RedisSignatureStore(client, "race:sigs")
        out = [store.get_or_set(key.to_bytes(8, "big"), f"{name}-{i}") for i, key in enumerate(items)]
    print(json.dumps(out), flush=True)
    """
)


def race(url: str, kind: str, n: int) -> list:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, url, kind, name, str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        for name in ("p0", "p1")
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        for p in procs:  # both are waiting on stdin: release them as close together as possible
            p.stdin.write("go\n")
            p.stdin.flush()
        results = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0]
    return results


def test_two_processes_add_the_same_keys_each_new_exactly_once(
    redis_server: RedisServer,
) -> None:
    n = 2000
    new0, new1 = race(redis_server.url, "seen", n)
    assert sorted(new0 + new1) == list(range(n))  # every one new exactly once in total
    assert len(RedisSeenStore(redis_server.client(), "race:seen")) == n


def test_two_processes_get_or_set_each_signature_owned_once(redis_server: RedisServer) -> None:
    n = 2000
    r0, r1 = race(redis_server.url, "sigs", n)
    for i, (a, b) in enumerate(zip(r0, r1)):
        # exactly one process stored it; the other was told the winner's identifier
        assert (a is None) != (b is None), i
        assert (a or b) == (f"p1-{i}" if a is not None else f"p0-{i}")


# --- outages -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["add", "contains", "get_or_set"])
def test_calls_block_while_redis_is_down_and_succeed_after_restart(
    redis_server: RedisServer, op: str
) -> None:
    c = connect(redis_server.url, timeout=1)
    seen, sigs = RedisSeenStore(c, "seen", unavailable_timeout=30), RedisSignatureStore(c, "sigs")
    assert seen.add(1) is True
    calls = {
        "add": lambda: seen.add(2),
        "contains": lambda: 1 in seen,
        "get_or_set": lambda: sigs.get_or_set(b"s", "a.test/x"),
    }
    redis_server.kill()
    done: dict[str, object] = {}

    def call() -> None:
        done["result"] = calls[op]()
        done["at"] = time.monotonic()

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    time.sleep(0.6)
    assert thread.is_alive() and not done  # no answer at all while Redis is away
    restarted = time.monotonic()
    redis_server.start()  # same port; a non-persistent server comes back empty
    thread.join(10)
    assert not thread.is_alive()
    assert done["at"] >= restarted
    assert done["result"] == {"add": True, "contains": False, "get_or_set": None}[op]
    store = sigs if op == "get_or_set" else seen
    assert store.retries > 0 and store.outages == 1
    if op == "add":
        assert 2 in seen and seen.add(2) is False  # recorded after the restart
    c.close()


def test_stale_connection_after_restart_is_reopened_at_once(redis_server: RedisServer) -> None:
    store = RedisSeenStore(connect(redis_server.url, timeout=1), "seen", owns_client=True)
    store.add(1)
    redis_server.restart()
    t0 = time.monotonic()
    assert store.add(1) is True  # the data is gone (no persistence); the call just works
    assert time.monotonic() - t0 < 0.5 and store.retries <= 1  # redis-py may notice before sending
    store.close()


def test_unavailable_timeout_raises_store_unavailable(redis_server_factory) -> None:
    server = redis_server_factory(password="pw")
    store = RedisSeenStore(connect(server.url, timeout=0.5), "seen", unavailable_timeout=0.7)
    store.add(1)
    server.kill()
    t0 = time.monotonic()
    with pytest.raises(StoreUnavailable) as info:
        store.add(2)
    elapsed = time.monotonic() - t0
    assert 0.7 <= elapsed < 3
    assert f"redis://127.0.0.1:{server.port}/0" in str(info.value) and "pw" not in info.value.url
    assert "unavailable_timeout 0.7s" in str(info.value)
    # given up: later calls fail fast (one attempt) instead of waiting the timeout again
    t0 = time.monotonic()
    with pytest.raises(StoreUnavailable, match="still down"):
        len(store)
    assert time.monotonic() - t0 < 0.5 and store.outages == 1
    server.start()  # back: the store works again, and waits through the next outage afresh
    assert store.add(3) is True and store._gave_up is False


class LosingPipeline(redis.client.Pipeline):
    """A pipeline whose reply is lost (the connection drops) after Redis ran it, while armed."""

    lose: list[bool] = []

    def execute(self, raise_on_error: bool = True):  # type: ignore[no-untyped-def]
        replies = super().execute(raise_on_error)
        if self.lose and self.lose.pop():
            raise rex.ConnectionError("Connection reset by peer")
        return replies


class LosingClient(redis.Redis):
    """Its script calls (one alone, or a pipeline of several) lose their reply after running."""

    def pipeline(self, transaction: bool = True, shard_hint: object = None) -> LosingPipeline:
        return LosingPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )

    def execute_command(self, *args, **options):  # type: ignore[no-untyped-def]
        reply = super().execute_command(*args, **options)
        if args[0] == "EVALSHA" and LosingPipeline.lose and LosingPipeline.lose.pop():
            raise rex.ConnectionError("Connection reset by peer")
        return reply


def test_a_reply_lost_after_sadd_ran_still_reports_new(redis_server: RedisServer) -> None:
    """The SADD ran but its reply was lost: the retry says "new" for a member this very call
    added, and "seen" for one that was there before (no page lost, none fetched twice)."""
    store = RedisSeenStore(LosingClient(port=redis_server.port), "seen")
    LosingPipeline.lose[:] = [True]
    assert store.add(5) is True and store.retries == 1
    assert store.add(5) is False  # no retry: a plain duplicate
    LosingPipeline.lose[:] = [True]
    assert store.add(5) is False and store.retries == 2  # a lost reply does not make it new
    LosingPipeline.lose[:] = [True]
    assert store.add_batch([5, 6, 7]) == [False, True, True] and store.retries == 3  # one shard
    LosingPipeline.lose[:] = [True]
    far = [2**64 - 1, 2**63, 8]  # two shards: a pipeline
    assert store.add_batch(far) == [True, True, True] and store.retries == 4
    assert len(store) == 6


def test_a_lost_reply_of_the_call_that_opened_a_generation(redis_server: RedisServer) -> None:
    """The call that filled its shard's generations opened the next one, and its reply was lost:
    the retry answers what that call did, and the store knows the shard's new generation."""
    redis_server.client().config_set("set-max-intset-entries", 16)  # generations of ~9 a bucket
    store = RedisSeenStore(LosingClient(port=redis_server.port), "seen", size=1)
    rng = random.Random(3)
    shard5 = [5 << 58 | rng.getrandbits(58) for _ in range(14)]  # one shard's keys
    assert store.add_batch(shard5[:8]) == [True] * 8
    LosingPipeline.lose[:] = [True]
    trips = store.round_trips
    assert store.add_batch(shard5[8:11]) == [True] * 3 and store.retries == 1
    assert redis_server.client().get("seen:{seen:5}:generations") == b"2"
    assert store.add_batch(shard5[10:]) == [False, True, True, True]
    assert store.round_trips - trips == 3  # the lost call, its retry, then one: no stale round
    assert len(store) == 14 and all(k in store for k in shard5)


def test_the_stamps_expire_a_week_after_the_calls_that_keep_them(client: redis.Redis) -> None:
    """A shard's stamps outlive a store's last call by STAMPS_TTL: its first call there sets
    the expiry, and it pushes it back once per STAMPS_REFRESH, not at every call."""
    store = RedisSeenStore(client, "s:seen")
    store.add(5)
    owners = store.layout().owners_key(0)
    assert STAMPS_TTL - 5 <= client.ttl(owners) <= STAMPS_TTL
    client.expire(owners, 100)
    store.add(6)
    assert client.ttl(owners) <= 100  # within the hour: not pushed back
    RedisSeenStore(client, "s:seen").add(7)  # another store's first stamp there
    assert client.ttl(owners) > STAMPS_TTL - 5
    client.expire(owners, 100)
    store._refreshed[0] -= STAMPS_REFRESH  # an hour later
    store.add(8)
    assert client.ttl(owners) > STAMPS_TTL - 5


def test_real_lost_reply_with_a_stalled_server(redis_server_factory) -> None:
    """The server stalls (DEBUG SLEEP) past the client's reply timeout: the SADD may run after
    the client gave up on it. Whatever happened, the page is reported new once and recorded."""
    server = redis_server_factory(extra_args=("--enable-debug-command", "local"))
    store = RedisSeenStore(connect(server.url, timeout=0.2), "seen", owns_client=True)
    staller = threading.Thread(
        target=lambda: server.client().execute_command("DEBUG", "SLEEP", "0.6")
    )
    staller.start()
    time.sleep(0.05)
    assert store.add(9) is True
    staller.join()
    assert store.retries > 0 and 9 in store and store.add(9) is False
    store.close()


# --- scrapy-redis's Scheduler with RedisDupeFilter ------------------------------------------------

VARIANTS = [
    "https://www.example.test/shop/",
    "http://example.test/shop/index.html",
    "https://example.test/shop/?utm_source=newsletter",
    "http://www.example.test/shop",
]


def open_scheduler(redis_url: str, **settings: object):
    from scrapy import Spider
    from scrapy.utils.test import get_crawler
    from scrapy_redis.scheduler import Scheduler

    class ShopSpider(Spider):
        name = "shop"

    crawler = get_crawler(
        ShopSpider,
        {
            "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_urlunify.RedisDupeFilter",
            "REDIS_URL": redis_url,
            **settings,
        },
    )
    spider = ShopSpider.from_crawler(crawler)
    crawler.spider = spider
    scheduler = Scheduler.from_crawler(crawler)
    scheduler.open(spider)
    return crawler, scheduler


@pytest.mark.parametrize("persist", [False, True])
def test_scrapy_redis_scheduler_enqueues_one_variant_and_honours_persist(
    redis_server: RedisServer, persist: bool
) -> None:
    from scrapy import Request, signals

    from scrapy_urlunify.integration.seen._redis_dupefilter import RedisDupeFilter

    crawler, scheduler = open_scheduler(redis_server.url, SCHEDULER_PERSIST=persist)
    assert isinstance(scheduler.df, RedisDupeFilter)
    assert scheduler.df.store.key == "urlunify:shop:seen"
    assert [scheduler.enqueue_request(Request(u)) for u in VARIANTS] == [True, False, False, False]
    assert scheduler.enqueue_request(Request("https://example.test/other")) is True
    assert len(scheduler) == 2
    assert crawler.stats.get_value("urlunify/duplicates") == 3
    r = redis_server.client()
    assert len(RedisSeenStore(r, "urlunify:shop:seen")) == 2

    # a second process of the same scope shares the seen set
    _, other = open_scheduler(redis_server.url, SCHEDULER_PERSIST=True)
    assert other.enqueue_request(Request("http://shop.example.test/x")) is True
    assert other.enqueue_request(Request("https://example.test/other/index.html")) is False

    scheduler.close("finished")
    assert bool(r.exists("urlunify:shop:seen")) is persist
    crawler.signals.send_catch_log(signals.spider_closed, spider=crawler.spider, reason="finished")
    assert crawler.stats.get_value("urlunify/redis/retries") == 0


def test_flush_on_start_clears_and_store_url_setting_wins(redis_server_factory) -> None:
    from scrapy import Request

    plain, locked = redis_server_factory(), redis_server_factory(password="pw")
    locked.client().sadd("urlunify:s2:seen", b"old")
    # URLUNIFY_STORE (password-protected) is used; REDIS_URL is only the scheduler's queue
    _, scheduler = open_scheduler(
        plain.url,
        URLUNIFY_STORE=locked.url,
        URLUNIFY_SCOPE="s2",
        SCHEDULER_FLUSH_ON_START=True,
        SCHEDULER_PERSIST=True,
    )
    assert scheduler.enqueue_request(Request(VARIANTS[0])) is True
    assert (
        len(RedisSeenStore(locked.client(), "urlunify:s2:seen")) == 1
    )  # "old" was flushed at open
    assert not plain.client().keys("urlunify:s2:*")


def test_dupefilter_settings_errors(redis_server: RedisServer) -> None:
    from scrapy_urlunify.integration.settings import SettingsError

    with pytest.raises(SettingsError, match="URLUNIFY_REDIS_KEY"):
        open_scheduler(redis_server.url, URLUNIFY_REDIS_KEY="urlunify:all")
    with pytest.raises(StoreUnavailable, match=r"redis://:\*\*\*@127\.0\.0\.1"):
        open_scheduler(
            redis_server.url,
            URLUNIFY_STORE=f"redis://:pw@127.0.0.1:{free_port()}/0",
            URLUNIFY_REDIS_TIMEOUT=0.5,
        )
