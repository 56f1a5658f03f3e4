"""The Redis key layout docs/stores.md documents is the one the stores create.

Each store of a scope (and the reliable queue) is written to through the code a crawl uses, on a
real redis-server and on a real Redis Cluster; every key found (``SCAN``, on every master) is
turned into a pattern (``<scope>``, ``<shard>``, ``<bucket>``...) and the patterns must be
exactly those of the tables in docs/stores.md: a key renamed, added or moved to another slot
fails here instead of leaving the page stale.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from scrapy_urlunify.stores._factory import Stores
from scrapy_urlunify.stores._redis_near_duplicates import RedisNearDuplicateLog
from scrapy_urlunify.stores._redis_queue import ReliableQueue

DOC = Path(__file__).resolve().parents[2] / "docs" / "stores.md"
SCOPE = "acme"
QUEUE_KEY = "fleet:requests"


@pytest.fixture
def doc() -> str:
    if not DOC.is_file():
        pytest.skip(
            "docs/stores.md is not here (the tests of an installed copy): nothing to compare"
        )
    return DOC.read_text("utf-8")


def table(doc: str, header: str) -> list[list[str]]:
    """The cells of each row of the table whose header row starts with ``header``."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:  # after the header and its |---| line
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert rows, f"no rows under {header!r}"
    return rows


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def write_every_store(location: str) -> Any:
    """Write to every store of the scope, and to a reliable queue, as a crawl does; the client."""
    stores = Stores(location, scope=SCOPE, unavailable_timeout=5)
    client = stores.client()
    rng = random.Random(7)
    stores.seen().add_many([rng.getrandbits(64) for _ in range(300)])  # most of the 64 shards
    stores.signatures().get_or_set(b"s" * 16, f"{SCOPE}|a.test/")
    stores.rules().set_many({"learner": "{}"})
    stores.kept().add(b"k" * 8, ("param|a.test|ref",), b"request")
    stores.fetched().add_many([b"f" * 8])
    near = RedisNearDuplicateLog(client, stores.keys()["signatures"] + ":near")
    near.append([b"record"])
    first = ReliableQueue(client, QUEUE_KEY, "worker-1", replicas="off")
    for n in range(3):
        first.push(b"request %d" % n, 0, dedup=b"key %d" % n)
    first.pop()  # in flight under worker-1
    second = ReliableQueue(client, QUEUE_KEY, "worker-2", replicas="off")
    second.pop()
    second.leave()  # gives its request back
    return client


def key_patterns(client: Any) -> set[str]:
    """Every key in Redis, as the docs write it."""
    patterns = set()
    for raw in client.scan_iter(count=1000):
        key = raw.decode() if isinstance(raw, bytes) else raw
        key = key.replace(QUEUE_KEY, "<queue key>").replace(f":{SCOPE}:", ":<scope>:")
        key = re.sub(r":seen:\d+\}", ":seen:<shard>}", key)
        key = re.sub(r"\}:\d+:\d+$", "}:<generation>:<bucket>", key)
        key = re.sub(r":inflight:worker-1$", ":inflight:<worker>", key)
        patterns.add(key)
    return patterns


def test_the_seen_sets_documented_buckets_are_its_keys(doc, redis_server):
    """The table of "Memory: buckets of integers" (one server)."""
    rows = table(doc, "| key | what |")
    seen_key = "urlunify:<scope>:seen"
    documented = {code_spans(row[0])[0].replace("<key>", seen_key) for row in rows}
    assert seen_key in documented and len(documented) == 5
    found = key_patterns(write_every_store(redis_server.url))
    assert {k for k in found if k.startswith(seen_key)} == documented


def test_the_documented_cluster_keys_are_the_stores_keys(doc, redis_cluster):
    """The table of "Redis Cluster": every key of every store of a scope, by name and hash tag."""
    documented = {
        key for row in table(doc, "| store | keys on a cluster") for key in code_spans(row[1])
    }
    assert len(documented) >= 10
    client = write_every_store(redis_cluster.url)
    assert key_patterns(client) == documented
    # the stores' keys spread: the shards of the seen set on many slots, a store on one
    shards = {
        client.keyslot(k) for k in client.scan_iter(match=f"urlunify:{SCOPE}:seen:*", count=1000)
    }
    assert len(shards) > 32
