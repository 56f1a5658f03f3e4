"""RedisSeenStore.add, one key a call (the scheduler's request_seen of a request that did not come
through a link batch), against a REAL redis-server: what a call costs inside Redis, what a lost
reply answers, the generations a store did not know of, and the connection a store keeps for
these calls (one per process and thread, looked at after it sat idle)."""

from __future__ import annotations

import os
import random
import threading

import pytest
import redis
from redis import exceptions as rex
from redis_server import RedisServer  # the fixtures come from conftest.py

from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_one import IDLE_CHECK
from scrapy_urlunify.stores._redis_seen import RedisSeenStore

pytestmark = pytest.mark.redis


class LoseAfterRun:
    """Stands in for a store's ``ones.eval`` (the one-key call): the call runs, then its reply
    is lost, once per True in ``lose``."""

    def __init__(self, store: RedisSeenStore) -> None:
        self.run = store.ones.eval
        self.lose: list[bool] = []

    def __call__(self, keys: list[bytes], args: list[object]) -> object:
        reply = self.run(keys, args)
        if self.lose and self.lose.pop():
            raise rex.ConnectionError("Connection reset by peer")
        return reply


def test_a_lost_reply_of_one_key_never_makes_a_new_page_seen(redis_server: RedisServer) -> None:
    """add() on a client of connect(): its first attempt does not look for a stamp. A reply lost
    after the call ran: the retry answers from the stamp of the attempt that added the key
    ("new"), and "seen" only for a key that was there before the call."""
    store = RedisSeenStore(connect(redis_server.url), "seen", owns_client=True)
    assert store.ones.plain and not store.ones.always_check  # the cheaper path
    store.ones.eval = lost = LoseAfterRun(store)  # type: ignore[method-assign]
    lost.lose[:] = [True]
    assert store.add(5) is True and store.retries == 1
    assert store.add(5) is False  # no retry: a plain duplicate
    lost.lose[:] = [True]
    assert store.add(5) is False and store.retries == 2  # seen before the call, so no stamp
    lost.lose[:] = [True, True]  # the call and its first retry both ran unanswered
    assert store.add(6) is True and store.retries == 4
    assert store.add(6) is False and len(store) == 2
    store.close()


def test_a_lost_reply_of_the_one_key_call_that_opened_a_generation(
    redis_server: RedisServer,
) -> None:
    """The one-key call that filled its shard's first generation opened the next one, and its
    reply was lost: the retry answers "new" and tells the store of the generation."""
    redis_server.client().config_set("set-max-intset-entries", 16)  # generations of ~9 a bucket
    store = RedisSeenStore(connect(redis_server.url), "seen", size=1, owns_client=True)
    rng = random.Random(4)
    shard5 = [5 << 58 | rng.getrandbits(58) for _ in range(10)]
    assert [store.add(k) for k in shard5[:8]] == [True] * 8
    store.ones.eval = lost = LoseAfterRun(store)  # type: ignore[method-assign]
    lost.lose[:] = [True]
    assert store.add(shard5[8]) is True and store.retries == 1  # the 9th: opens generation 2
    assert redis_server.client().get("seen:{seen:5}:generations") == b"2"
    trips = store.round_trips
    assert store.add(shard5[9]) is True and store.add(shard5[8]) is False
    assert store.round_trips - trips == 2  # no stale round: the stamp said it opened one
    store.close()


def commands(admin: redis.Redis) -> dict[str, int]:
    """The commands Redis ran since CONFIG RESETSTAT (that one left out), by name."""
    stats = admin.info("commandstats")
    return {k[8:]: v["calls"] for k, v in stats.items() if k != "cmdstat_config|resetstat"}


def test_a_duplicate_one_key_call_writes_nothing(redis_server: RedisServer) -> None:
    """What add() costs inside Redis: a duplicate asks SISMEMBER of its bucket in each generation
    until found; a new key then reads the shard's generation count and adds itself, the
    counter, the intset check and its stamp, and reads no stamp."""
    store = RedisSeenStore(connect(redis_server.url), "seen", owns_client=True)
    admin = redis_server.client()
    assert store.add(7) is True
    admin.config_resetstat()
    assert store.add(7) is False
    assert commands(admin) == {"evalsha": 1, "sismember": 1}
    admin.config_resetstat()
    assert store.add(8) is True
    assert commands(admin) == {
        "evalsha": 1,
        "sismember": 1,
        "get": 1,
        "sadd": 1,
        "scard": 1,
        "incrby": 1,
        "hset": 1,
    }
    admin.script_flush()  # a server that forgot the script: NOSCRIPT, loaded, sent again
    assert store.add(9) is True and store.add(9) is False and len(store) == 3
    store.close()


def test_a_store_that_missed_a_generation_answers_one_key_exactly(
    redis_server: RedisServer,
) -> None:
    """A store that knows one generation of a shard that has two: a key of the first is seen in
    one round trip (found where the store looked, whatever the shard holds besides), a key of
    the second is seen after the shard names its generations, and a new key goes to the newest."""
    redis_server.client().config_set("set-max-intset-entries", 16)  # generations of ~9 a bucket
    admin = redis_server.client()
    a = RedisSeenStore(connect(redis_server.url), "seen", size=1, owns_client=True)
    rng = random.Random(5)
    shard5 = [5 << 58 | rng.getrandbits(58) for _ in range(12)]
    assert [a.add(k) for k in shard5[:10]] == [True] * 10  # the 9th opened generation 2
    assert admin.get("seen:{seen:5}:generations") == b"2"
    layout = a.layout()
    assert layout is not None
    member = layout.member_of
    assert admin.sismember(layout.bucket_of(shard5[9], 1), member(shard5[9]))

    b = RedisSeenStore(connect(redis_server.url), "seen", owns_client=True)  # knows 1 of 2
    b.add(0)  # (the layout read, the script loaded: not the calls counted below)
    trips = b.round_trips
    assert b.add(shard5[0]) is False and b.round_trips - trips == 1
    assert b.add(shard5[9]) is False and b.round_trips - trips == 3  # + the shard's answer
    c = RedisSeenStore(connect(redis_server.url), "seen", owns_client=True)
    assert c.add(shard5[10]) is True and c.add(shard5[10]) is False
    assert admin.sismember(layout.bucket_of(shard5[10], 1), member(shard5[10]))
    assert not admin.sismember(layout.bucket_of(shard5[10], 0), member(shard5[10]))
    for store in (a, b, c):
        store.close()


def connections_made(admin: redis.Redis) -> int:
    return int(admin.info("stats")["total_connections_received"])


def test_one_key_calls_keep_one_connection(redis_server: RedisServer) -> None:
    """The calls of a store go on one connection, which a batch does not take; one the server
    closed is connected again: at once, unasked, after IDLE_CHECK idle seconds; otherwise the
    call fails, and is retried with its answer exact."""
    admin = redis_server.client()
    store = RedisSeenStore(connect(redis_server.url), "seen", owns_client=True)
    assert store.ones.keeps
    store.add(1)
    made = connections_made(admin)
    assert [store.add(k) for k in range(2, 102)] == [True] * 100
    assert store.add_batch([1, 500]) == [False, True] and store.add(500) is False
    assert connections_made(admin) - made == 1  # the batch's, from the pool
    admin.client_kill_filter(_type="normal", skipme=True)  # every client but admin
    assert store.add(600) is True and store.retries == 1  # cut off, retried: still exact
    assert store.add(600) is False
    admin.client_kill_filter(_type="normal", skipme=True)
    store.ones._used -= IDLE_CHECK  # idle since: looked at before the call
    assert store.add(601) is True and store.retries == 1  # no retry
    store.close()


def test_a_forked_process_does_not_send_on_its_parent_s_connection(
    redis_server: RedisServer,
) -> None:
    """A process forked after the store's first call gets a connection of its own (the parent's
    socket, shared, would interleave the two processes' replies)."""
    store = RedisSeenStore(connect(redis_server.url), "seen", owns_client=True)
    assert store.add(1) is True
    parents = store.ones._kept
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 if it answered on a connection of its own
        try:
            ok = store.add(2) is True and store.ones._kept is not parents
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.add(2) is False and store.add(3) is True and store.ones._kept is parents
    store.close()


def test_threads_do_not_share_the_kept_connection(redis_server: RedisServer) -> None:
    """Two threads adding the same keys at once: each key new for exactly one call. The thread
    that made the first call keeps the connection; the other takes one from the pool a call."""
    store = RedisSeenStore(connect(redis_server.url), "seen", owns_client=True)
    store.add(0)
    keys = list(range(1, 801))
    answers: dict[str, list[bool]] = {}

    def run(name: str) -> None:
        answers[name] = [store.add(k) for k in keys]

    other = threading.Thread(target=run, args=("other",))
    other.start()
    run("keeper")
    other.join()
    assert [a + b for a, b in zip(answers["keeper"], answers["other"], strict=True)] == [1] * 800
    assert store.retries == 0 and len(store) == 801
    store.close()
