"""The Redis seen set at 10M URLs: bytes per URL, links per second against scrapy-redis, round trips.

Each part starts a fresh throw-away ``redis-server`` on loopback (tests/support/redis_server.py;
no persistence, default ``set-max-intset-entries``):

1. **Memory.** ``RedisSeenStore.add_batch`` (the link batch's call), 500 links a call, for
   ``--n`` distinct URLs (10M), the scope unsized (its generations grow with it) unless
   ``--size``. The key of a URL is the first 8 bytes of a BLAKE2b digest of it, as uniform as
   the fingerprint's (unifying 10M URLs would take the run's whole time and changes nothing
   here). Bytes of Redis memory per URL: the ``used_memory`` delta of ``INFO memory`` at 1M (or
   at each of ``--marks``) and at ``--n``; the shards' generations and buckets; buckets that
   became hashtables; round trips per call (the store's count, and
   ``INFO commandstats``: EVALSHA calls per call = shards touched, all in one pipeline).
2. **Links per second**, ``--rate-n`` URLs (1M), fingerprint included, on prebuilt ``Request``
   objects (untimed), pages of ``--links`` links: ours, ``Fingerprinter`` key then one
   ``add_batch`` per page (what ``LinkMiddleware`` does with a response's links); scrapy-redis,
   ``RFPDupeFilter.request_seen`` per link (what its scheduler does: one ``SADD`` round trip
   each). A pass of new URLs, then a pass of the same URLs again (all seen), each with its ratio,
   and round trips per page. scrapy-redis's memory per URL at that size, for reference.

``--cluster``: the same on a real Redis Cluster of 3 masters on loopback
(tests/support/redis_cluster.py, no replicas: a replica would only add its copy and its CPU, and
the memory counted is the masters' anyway), through a ``redis+cluster://`` URL and
:func:`~scrapy_urlunify.stores._redis_connection.connect`. Part 1 runs on the cluster instead of
one server, and reports each master's ``used_memory`` delta and their sum; part 2 adds ours on
the cluster to ours and scrapy-redis's on one server. Round trips are counted per node as the
client writes them (one write of a pipeline to a node is one round trip to it), next to each
master's ``EVALSHA`` calls (``INFO commandstats``). ``--reshard`` (with ``--cluster``): then, on a
cluster holding ``--n`` URLs, one shard's slot moved to another master under link batches of new
URLs: how long it took, the slowest batch, the store's retries, every URL new exactly once.

Usage: python benchmarks/bench_redis_seen.py [--n 10000000] [--marks 100000,500000] [--size N]
       [--rate-n 1000000] [--links 100] [--cluster [--reshard]] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import redis
from _common import write_json
from redis_cluster import RedisCluster
from redis_server import NOT_FOUND, RedisServer, find_redis_server
from scrapy import Request
from scrapy.settings import Settings
from scrapy_redis.connection import get_redis_from_settings
from scrapy_redis.dupefilter import RFPDupeFilter

from scrapy_urlunify.integration.seen._fingerprinter import Fingerprinter
from scrapy_urlunify.integration.seen._keys import seen_key
from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_seen import RedisSeenStore

#: Redis finishes an incremental rehash of its keyspace in its cron: wait before reading memory.
SETTLE = 1.0
BATCH = 500


def url(i: int) -> str:
    return f"https://www.shop{i % 50}.example.test/category/{i % 97}/item-{i}.html?utm_source=news&ref={i % 7}"


class CountingConnection(redis.Connection):
    """A real connection that counts its writes by server port: one write is one round trip
    (a pipeline is written to each node it touches in one write)."""

    writes: Counter[int] = Counter()

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        CountingConnection.writes[self.port] += 1
        super().send_packed_command(command, check_health)


def counted(client: Any) -> Any:
    """``client`` (from :func:`connect`) with every node's connections counting their writes."""
    pools = (
        [n.redis_connection.connection_pool for n in client.get_nodes()]
        if hasattr(client, "get_nodes")
        else [client.connection_pool]
    )
    for pool in pools:
        pool.connection_class = CountingConnection
        pool.reset()  # (the PING's connection is dropped, not reused)
    return client


@contextmanager
def redis_target(cluster: bool) -> Iterator[tuple[str, list[Any]]]:
    """A fresh server, or a 3-master cluster: its store URL, and a plain client per master."""
    if not cluster:
        with RedisServer() as server:
            yield server.url, [server.client()]
        return
    nodes = RedisCluster(find_redis_server() or "redis-server", size=3, replicas=0).start()
    try:
        yield nodes.url, [n.client() for n in nodes.masters()]
    finally:
        nodes.close()


def used_memory(admins: list[Any]) -> list[int]:
    time.sleep(SETTLE)
    return [int(a.info("memory")["used_memory"]) for a in admins]


def evalsha_calls(admins: list[Any]) -> list[int]:
    return [int(a.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)) for a in admins]


def reset_stats(admins: list[Any]) -> None:
    for a in admins:
        a.config_resetstat()
    CountingConnection.writes.clear()


def writes_per_node(admins: list[Any], calls: int) -> list[float]:
    """Round trips per call to each master, in the order of ``admins``."""
    ports = [a.connection_pool.connection_kwargs["port"] for a in admins]
    return [CountingConnection.writes[p] / calls for p in ports]


def hashed_keys(start: int, stop: int) -> Iterator[list[int]]:
    for first in range(start, stop, BATCH):
        yield [
            int.from_bytes(hashlib.blake2b(url(i).encode(), digest_size=8).digest(), "big")
            for i in range(first, min(first + BATCH, stop))
        ]


def bench_memory(
    n: int, cluster: bool = False, marks: Sequence[int] = (), size: int | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n, "masters": 3 if cluster else 1}
    with redis_target(cluster) as (location, admins):
        out["redis_version"] = admins[0].info("server")["redis_version"]
        store = RedisSeenStore(
            counted(connect(location)),
            "bench:seen",
            owns_client=True,
            **({"size": size} if size else {}),
        )
        store.layout()
        base = used_memory(admins)
        reset_stats(admins)
        done, t0 = 0, time.perf_counter()
        checkpoints = sorted({*(m for m in marks if m < n), n} if marks else {min(n, 1_000_000), n})
        for mark in checkpoints:
            for keys in hashed_keys(done, mark):
                store.add_batch(keys)
            done = mark
            delta = [
                after - before for after, before in zip(used_memory(admins), base, strict=True)
            ]
            out[f"bytes_per_url_{mark}"] = sum(delta) / mark
            out[f"node_bytes_{mark}"] = delta
            print(
                f"# {mark:,} URLs: {out[f'bytes_per_url_{mark}']:.2f} bytes/URL "
                f"({time.perf_counter() - t0:.0f}s)",
                file=sys.stderr,
                flush=True,
            )
        out["seconds"] = time.perf_counter() - t0
        # (counted before the reads below, which are the benchmark's, not the batches')
        out.update(
            batches=store.batches,
            round_trips_per_batch=store.round_trips / store.batches,
            node_round_trips_per_batch=writes_per_node(admins, store.batches),
            node_evalsha_per_batch=[c / store.batches for c in evalsha_calls(admins)],
        )
        assert len(store) == n, f"{len(store)} members for {n} distinct keys"
        layout = store.layout()
        assert layout is not None
        generations = [
            int(store.client.get(layout.generations_key(s)) or 1) for s in range(layout.shards)
        ]
        out.update(
            first_buckets=layout.buckets,
            buckets=sum(1 for _ in _buckets(admins, "bench:seen")),
            generations=[min(generations), max(generations)],
            shards=layout.shards,
            intset_limit=layout.limit,
            size=layout.size,
            hashtables=store.converted,
        )
        out["evalsha_per_batch"] = sum(out["node_evalsha_per_batch"])
        out["sampled_encodings"] = sorted(_encodings(admins, "bench:seen"))
        store.close()
    return out


def _buckets(admins: list[Any], key: str) -> Iterator[tuple[Any, bytes]]:
    """``(master, name)`` of every bucket of the seen set at ``key``."""
    for a in admins:
        for name in a.scan_iter(match=f"{key}:{{*", count=1000):
            if not name.endswith((b":owners", b":count", b":generations")):
                yield a, name


def _encodings(admins: list[Any], key: str, sample: int = 1000) -> set[str]:
    """The encodings of some buckets of the seen set at ``key``."""
    out = set()
    for n, (a, name) in enumerate(_buckets(admins, key)):
        if n == sample:
            break
        e = a.object("encoding", name)
        out.add(e.decode() if isinstance(e, bytes) else str(e))
    return out


def rate_ours(pages: list[list[str]], cluster: bool) -> dict[str, Any]:
    """Ours on one server or the cluster: a page's keys, then one ``add_batch``."""
    n, out, fp = sum(map(len, pages)), {}, Fingerprinter()
    with redis_target(cluster) as (location, admins):
        store = RedisSeenStore(counted(connect(location)), "bench:seen", owns_client=True)
        store.layout()
        base = used_memory(admins)
        for name in ("new", "dup"):
            requests = [[Request(u) for u in page] for page in pages]
            reset_stats(admins)
            trips, t0 = store.round_trips, time.perf_counter()
            for page in requests:
                store.add_batch([seen_key(fp.fingerprint(r)) for r in page])
            out[f"{name}_per_s"] = n / (time.perf_counter() - t0)
            out[f"{name}_round_trips_per_page"] = (store.round_trips - trips) / len(pages)
            out[f"{name}_node_round_trips_per_page"] = writes_per_node(admins, len(pages))
            out[f"{name}_node_evalsha_per_page"] = [c / len(pages) for c in evalsha_calls(admins)]
            if name == "new":
                out["bytes_per_url"] = (sum(used_memory(admins)) - sum(base)) / n
        assert len(store) == n
        store.close()
    return out


def rate_scrapy_redis(pages: list[list[str]]) -> dict[str, Any]:
    """scrapy-redis on one server: ``RFPDupeFilter.request_seen`` per link."""
    n, out = sum(map(len, pages)), {}
    with RedisServer() as server:
        admin = server.client()
        df = RFPDupeFilter(
            get_redis_from_settings(Settings({"REDIS_URL": server.url})), "bench:dupefilter"
        )
        base = used_memory([admin])[0]
        for name in ("new", "dup"):
            requests = [[Request(u) for u in page] for page in pages]
            admin.config_resetstat()
            t0 = time.perf_counter()
            for page in requests:
                for r in page:
                    df.request_seen(r)
            out[f"{name}_per_s"] = n / (time.perf_counter() - t0)
            sadd = admin.info("commandstats").get("cmdstat_sadd", {}).get("calls", 0)
            out[f"{name}_round_trips_per_page"] = sadd / len(pages)
            if name == "new":
                out["bytes_per_url"] = (used_memory([admin])[0] - base) / n
        assert admin.scard("bench:dupefilter") == n
    return out


def bench_rate(n: int, links: int, cluster: bool = False) -> dict[str, Any]:
    url_list = [url(i) for i in range(n)]
    pages = [url_list[i : i + links] for i in range(0, n, links)]
    out: dict[str, Any] = {"n": n, "links_per_page": links}
    for name, run in (
        ("ours", lambda: rate_ours(pages, False)),
        ("ours_cluster", lambda: rate_ours(pages, True) if cluster else {}),
        ("scrapy_redis", lambda: rate_scrapy_redis(pages)),
    ):
        t0 = time.perf_counter()
        for k, v in run().items():
            out[f"{name}_{k}"] = v
        print(f"# rate, {name}: {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    for name in ("new", "dup"):
        out[f"ratio_{name}"] = out[f"ours_{name}_per_s"] / out[f"scrapy_redis_{name}_per_s"]
        if cluster:
            out[f"ratio_cluster_{name}"] = (
                out[f"ours_cluster_{name}_per_s"] / out[f"scrapy_redis_{name}_per_s"]
            )
    return out


def move_slot(admins: list[Any], slot: int, source: Any, target: Any) -> int:
    """Move ``slot`` from ``source`` to ``target`` as ``redis-cli --cluster reshard`` does
    (IMPORTING, MIGRATING, ``MIGRATE`` its keys 10 at a time, then the slot's owner on every
    master); the keys moved."""
    ids = {a: a.execute_command("CLUSTER", "MYID") for a in (source, target)}
    target.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source])
    source.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target])
    port, moved = target.connection_pool.connection_kwargs["port"], 0
    while keys := source.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10):
        source.execute_command("MIGRATE", "127.0.0.1", port, "", 0, 5000, "KEYS", *keys)
        moved += len(keys)
    for a in admins:
        a.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])
    return moved


def bench_reshard(n: int, links: int) -> dict[str, Any]:
    """A crawl's link batches on the cluster (``n`` URLs already seen, then new pages) while
    one shard's slot moves to another master: the slowest batch, the store's retries, and
    whether every URL was new exactly once."""
    out: dict[str, Any] = {"n": n, "links_per_page": links}
    with redis_target(True) as (location, admins):
        store = RedisSeenStore(connect(location), "bench:seen", owns_client=True)
        layout = store.layout()
        assert layout is not None
        for keys in hashed_keys(0, n):
            store.add_batch(keys)
        slot = int(admins[0].execute_command("CLUSTER", "KEYSLOT", layout.count_key(0)))
        source = next(a for a in admins if a.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot))
        target = next(a for a in admins if a is not source)
        moving, result = threading.Event(), {}

        def reshard() -> None:
            t0 = time.perf_counter()
            result["keys_moved"] = move_slot(admins, slot, source, target)
            result["move_seconds"] = time.perf_counter() - t0
            moving.set()

        first, slowest, news, calls, during = n, 0.0, 0, 0, 0
        mover = threading.Thread(target=reshard)
        mover.start()
        while not moving.is_set() or during < 2:  # and a few batches after it
            keys = [k for batch in hashed_keys(first, first + links) for k in batch]
            t0 = time.perf_counter()
            news += sum(store.add_batch(keys))
            slowest, first, calls = max(slowest, time.perf_counter() - t0), first + links, calls + 1
            during += moving.is_set()
        mover.join()
        repeat = sum(store.add_batch([k for batch in hashed_keys(0, first) for k in batch[:1]]))
        out.update(
            result,
            slot=slot,
            batches=calls,
            slowest_batch_ms=slowest * 1000,
            retries=store.retries,
            new=news,
            expected_new=first - n,
            repeated_new=repeat,
            members=len(store),
        )
        store.close()
    return out


def _nodes(values: list[float], fmt: str) -> str:
    return " + ".join(format(v, fmt) for v in values) if len(values) > 1 else format(values[0], fmt)


def table(r: dict[str, Any]) -> str:
    m, s = r["memory"], r["rate"]
    where = "3 masters of a Redis Cluster (no replicas)" if m["masters"] > 1 else "one server"
    lines = [
        (
            f"Redis {m['redis_version']}, {where}: {m['shards']} shards of {m['generations'][0]}"
            f"-{m['generations'][1]} generations, {m['buckets']:,} buckets (the first generation "
            f"{m['first_buckets']:,}, sized for {m['size']:,} URLs, intset limit "
            f"{m['intset_limit']}); bucket encodings sampled: "
            f"{', '.join(m['sampled_encodings'])}; buckets turned hashtable: {m['hashtables']}"
        ),
    ]
    for k, v in m.items():
        if k.startswith("bytes_per_url_"):
            at = int(k[len("bytes_per_url_") :])
            per_node = m[f"node_bytes_{at}"]
            split = (
                f"  (per master: {_nodes([b / 1e6 for b in per_node], '.1f')} MB)"
                if len(per_node) > 1
                else ""
            )
            lines.append(f"  bytes of Redis memory per URL at {at:>10,}: {v:6.2f}{split}")
    lines.append(
        f"  per add_batch of {BATCH} links: {m['round_trips_per_batch']:.3f} round trips (the store's "
        f"count), per node {_nodes(m['node_round_trips_per_batch'], '.3f')}; "
        f"EVALSHA per node {_nodes(m['node_evalsha_per_batch'], '.1f')} (one per shard touched)"
    )
    cluster = "ours_cluster_new_per_s" in s
    lines.append(f"{s['n']:,} URLs in pages of {s['links_per_page']} links, fingerprint included:")
    head = (
        f"  {'':18} {'ours':>12}"
        + (f" {'ours, cluster':>14}" if cluster else "")
        + f" {'scrapy-redis':>14}"
    )
    lines.append(head + f" {'ratio':>7}" + (f" {'cluster ratio':>14}" if cluster else ""))
    for name, what in (("new", "new links/s"), ("dup", "seen links/s")):
        row = f"  {what:18} {s[f'ours_{name}_per_s']:12,.0f}"
        row += f" {s[f'ours_cluster_{name}_per_s']:14,.0f}" if cluster else ""
        row += f" {s[f'scrapy_redis_{name}_per_s']:14,.0f} {s[f'ratio_{name}']:6.1f}x"
        row += f" {s[f'ratio_cluster_{name}']:13.1f}x" if cluster else ""
        lines.append(row)
    row = f"  {'round trips/page':18} {s['ours_new_round_trips_per_page']:12.2f}"
    row += f" {s['ours_cluster_new_round_trips_per_page']:14.2f}" if cluster else ""
    lines.append(row + f" {s['scrapy_redis_new_round_trips_per_page']:14.1f}")
    row = f"  {'bytes/URL':18} {s['ours_bytes_per_url']:12.1f}"
    row += f" {s['ours_cluster_bytes_per_url']:14.1f}" if cluster else ""
    lines.append(row + f" {s['scrapy_redis_bytes_per_url']:14.1f}")
    if cluster:
        for name in ("new", "dup"):
            lines.append(
                f"  cluster, {name} pass, per page per master: round trips "
                f"{_nodes(s[f'ours_cluster_{name}_node_round_trips_per_page'], '.2f')}, EVALSHA "
                f"{_nodes(s[f'ours_cluster_{name}_node_evalsha_per_page'], '.1f')}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000, help="URLs for the memory part")
    ap.add_argument("--rate-n", type=int, default=1_000_000, help="URLs for the speed part")
    ap.add_argument("--links", type=int, default=100, help="links per page in the speed part")
    ap.add_argument(
        "--cluster",
        action="store_true",
        help="memory on a 3-master Redis Cluster, and ours on it in the speed part too",
    )
    ap.add_argument(
        "--reshard",
        action="store_true",
        help="with --cluster: move one shard's slot to another master under link batches",
    )
    ap.add_argument(
        "--marks",
        default="",
        help="comma-separated counts at which the memory part reads memory (default 1M and --n)",
    )
    ap.add_argument(
        "--size",
        type=int,
        default=None,
        help="URLs the seen set is sized for (RedisSeenStore's size; default: the store's own)",
    )
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    if find_redis_server() is None:
        print(NOT_FOUND, file=sys.stderr)
        return 1
    if args.cluster and shutil.which("redis-cli") is None:
        print(
            "redis-cli not found (it joins the cluster): apt-get install redis-tools",
            file=sys.stderr,
        )
        return 1
    results = {
        "memory": bench_memory(
            args.n,
            args.cluster,
            [int(m.replace("_", "")) for m in args.marks.split(",") if m],
            args.size,
        ),
        "rate": bench_rate(args.rate_n, args.links, args.cluster),
    }
    if args.cluster and args.reshard:
        results["reshard"] = bench_reshard(args.n, args.links)
    print(table(results))
    if "reshard" in results:
        print("reshard:", results["reshard"])
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
