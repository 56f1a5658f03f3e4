"""``RedisSeenStore.add_batch``: many keys checked and recorded in one round trip, against a REAL
redis-server -- each key new exactly once across processes, through lost replies too."""

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
from redis_server import RedisServer  # the fixtures come from conftest.py

from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_seen import RedisSeenStore

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.redis


def test_add_batch_answers_as_add_in_one_round_trip(
    client: redis.Redis, redis_server: RedisServer
) -> None:
    store = RedisSeenStore(client, "b:seen")
    assert store.add(7) is True
    assert store.add_batch([7]) == [False]  # Redis learns the script (SCRIPT LOAD) once
    admin = redis_server.client()
    admin.config_resetstat()
    trips = store.round_trips
    # a repeat inside the batch is new once; a key seen before is seen; 0 and 2**64-1 are keys too
    assert store.add_batch([1, 7, 2, 1, 0, 2**64 - 1]) == [True, False, True, False, True, True]
    assert store.round_trips == trips + 1  # one round trip for the six: one pipeline ...
    stats = admin.info("commandstats")
    # ... of one script call per shard the keys fall in (0, 1, 2 and 7 share bucket 0)
    assert stats["cmdstat_evalsha"]["calls"] == 2, stats
    assert stats["cmdstat_sadd"]["calls"] == 6  # (commands a script runs are counted too)
    assert "cmdstat_script" not in stats  # nothing asked whether the script is loaded
    assert store.add_batch([]) == []
    assert len(store) == 5 and all(k in store for k in (0, 1, 2, 7, 2**64 - 1))
    assert store.add(2) is False  # add and add_batch share one set
    assert store.batches == 3


def test_release_removes_keys_before_adding(client: redis.Redis) -> None:
    store = RedisSeenStore(client, "b:seen")
    store.add_batch([1, 2, 3])
    # 1 is released and added again in the same call: new again; 2 only released
    assert store.add_batch([1, 4], release=[1, 2]) == [True, True]
    assert 2 not in store and {1, 3, 4} <= {k for k in (1, 2, 3, 4) if k in store}
    store.discard(3)
    assert 3 not in store and len(store) == 2


def test_a_key_of_another_type_is_a_store_error_and_adds_nothing(client: redis.Redis) -> None:
    client.set("b:seen", "someone else's string")
    store = RedisSeenStore(client, "b:seen")
    with pytest.raises(StoreError, match="WRONGTYPE"):
        store.add_batch([1, 2])
    client.delete("b:seen")
    assert store.add_batch([1, 2]) == [True, True]
    # a shard's key taken by another program mid-crawl: the whole call fails, naming the error
    layout = store.layout()
    client.delete(layout.owners_key(0))
    client.set(layout.owners_key(0), "someone else's string")
    with pytest.raises(StoreError, match=r"SADD \(batch\) 'b:seen'.*WRONGTYPE"):
        store.add_batch([3, 4])
    client.delete(layout.owners_key(0))
    assert store.add_batch([3, 4, 1]) == [True, True, False]


def test_batch_answer_tells_what_a_call_did(client: redis.Redis) -> None:
    """What a run resuming requests whose batch got no reply asks (dupefilter.recheck)."""
    store = RedisSeenStore(client, "b:seen")
    store.add(5)
    store.add_batch([4, 5, 6])
    calls = [store.batch_call(i) for i in range(3)]
    later = RedisSeenStore(client, "b:seen")  # another process, or the resumed run
    assert [later.batch_answer(call) for call in calls] == [True, False, True]
    # far apart keys (other shards), in one call: each answered from its own shard's stamp
    far = [2**64 - 1, 2**63, 2**62, 9]
    store.add_batch([9])
    assert store.add_batch(far) == [True, True, True, False]
    calls = [store.batch_call(i) for i in range(4)]
    assert len({call.split()[2] for call in calls}) > 1
    assert [later.batch_answer(call) for call in calls] == [True, True, True, False]
    # an owner's calls are stamped in order: a stamp of another call means that one never ran
    store.add_batch([8])  # (8 shares the shard of 9)
    assert later.batch_answer(calls[3]) is None
    # Redis cannot tell (no stamp of the owner; a malformed value, or one of the old layout's
    # "<owner> <call id> <index>"): fetch rather than lose
    assert later.batch_answer("nobody " + calls[3].split(" ", 1)[1]) is True
    assert later.batch_answer("garbage") is True
    assert later.batch_answer(store.last_batch + " 0") is True
    store.clear()
    assert client.keys("b:seen*") == []


def test_a_lost_reply_is_answered_by_the_attempt_that_ran(redis_server_factory) -> None:
    """The server stalls past the reply timeout after receiving the batch: the script runs while
    the client gives up on it and retries. The retry must answer what the first attempt did
    (new for the keys it added), not "seen" for keys the same call added."""
    server = redis_server_factory(extra_args=("--enable-debug-command", "local"))
    store = RedisSeenStore(connect(server.url, timeout=0.2), "seen", owns_client=True)
    assert store.add_batch([1]) == [True]
    staller = threading.Thread(
        target=lambda: server.client().execute_command("DEBUG", "SLEEP", "0.6")
    )
    staller.start()
    time.sleep(0.05)
    assert store.add_batch([1, 2, 3]) == [False, True, True]
    staller.join()
    assert store.retries > 0
    assert store.add_batch([2, 3]) == [False, False]
    store.close()


RACER = textwrap.dedent(
    """
    import json, random, sys
    from scrapy_urlunify.stores._redis_connection import connect
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore
    url, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = RedisSeenStore(connect(url, timeout=5), "race:seen")
    rng = random.Random(0)
    keys = [rng.getrandbits(64) for _ in range(n)]  # the same keys in both processes ...
    order = list(range(n))
    random.Random(seed).shuffle(order)  # ... in batches of another order and size
    size = 7 + 50 * seed
    print("ready", flush=True)
    sys.stdin.readline()
    new = []
    for start in range(0, n, size):
        chunk = order[start:start + size]
        new += [i for i, added in zip(chunk, store.add_batch([keys[i] for i in chunk])) if added]
    print(json.dumps(new), flush=True)
    """
)


def test_two_processes_batching_the_same_keys_get_each_new_exactly_once(
    redis_server: RedisServer,
) -> None:
    n = 3000
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, redis_server.url, str(n), str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        for seed in (0, 1)
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        new0, new1 = (json.loads(p.communicate(timeout=60)[0]) for p in procs)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert sorted(new0 + new1) == list(range(n))  # every key new exactly once, in one process
    assert new0 and new1, "no race: one process added every key"
    assert len(RedisSeenStore(redis_server.client(), "race:seen")) == n


def test_add_batch_with_decoded_responses(redis_server: RedisServer) -> None:
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    store = RedisSeenStore(client, "b:seen")
    assert store.add_batch([1, 1]) == [True, False]
    assert store.batch_answer(store.batch_call(0)) is True
    client.close()


def test_many_random_keys(client: redis.Redis) -> None:
    rng = random.Random(3)
    keys = [rng.getrandbits(64) for _ in range(2000)]
    store = RedisSeenStore(client, "b:seen")
    assert store.add_batch(keys) == [True] * len(keys)
    assert store.add_batch(keys) == [False] * len(keys)
