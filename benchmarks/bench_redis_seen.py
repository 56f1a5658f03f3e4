"""The Redis seen set at 10M URLs: bytes per URL, links per second against scrapy-redis, round trips.

Each part starts a fresh throw-away ``redis-server`` on loopback (tests/support/redis_server.py;
no persistence, default ``set-max-intset-entries``):

1. **Memory.** ``RedisSeenStore.add_batch`` (the link batch's call), 500 links a call, for
   ``--n`` distinct URLs (10M), the store at its default sizing (``URLUNIFY_REDIS_SEEN_SIZE``).
   The key of a URL is the first 8 bytes of a BLAKE2b digest of it, as uniform as the
   fingerprint's (unifying 10M URLs would take the run's whole time and changes nothing here).
   Bytes of Redis memory per URL: the ``used_memory`` delta of ``INFO memory`` at 1M and at
   ``--n``; buckets that became hashtables; round trips per call (the store's count, and
   ``INFO commandstats``: EVALSHA calls per call = shards touched, all in one pipeline).
2. **Links per second**, ``--rate-n`` URLs (1M), fingerprint included, on prebuilt ``Request``
   objects (untimed), pages of ``--links`` links: ours, ``Fingerprinter`` key then one
   ``add_batch`` per page (what ``LinkMiddleware`` does with a response's links); scrapy-redis,
   ``RFPDupeFilter.request_seen`` per link (what its scheduler does: one ``SADD`` round trip
   each). A pass of new URLs, then a pass of the same URLs again (all seen), each with its ratio,
   and round trips per page. scrapy-redis's memory per URL at that size, for reference.

Usage: python benchmarks/bench_redis_seen.py [--n 10000000] [--rate-n 1000000] [--links 100] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import write_json
from redis_server import NOT_FOUND, RedisServer, find_redis_server
from scrapy import Request
from scrapy.settings import Settings
from scrapy_redis.connection import get_redis_from_settings
from scrapy_redis.dupefilter import RFPDupeFilter

from scrapy_urlunify.integration.fingerprinter import Fingerprinter
from scrapy_urlunify.integration.keys import seen_key
from scrapy_urlunify.stores.redis_connection import connect
from scrapy_urlunify.stores.redis_seen import RedisSeenStore

#: Redis finishes an incremental rehash of its keyspace in its cron: wait before reading memory.
SETTLE = 1.0
BATCH = 500


def url(i: int) -> str:
    return f"https://www.shop{i % 50}.example.test/category/{i % 97}/item-{i}.html?utm_source=news&ref={i % 7}"


def used_memory(client: Any) -> int:
    time.sleep(SETTLE)
    return int(client.info("memory")["used_memory"])


def evalsha_calls(client: Any) -> int:
    return int(client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


def hashed_keys(start: int, stop: int) -> Iterator[list[int]]:
    for first in range(start, stop, BATCH):
        yield [int.from_bytes(hashlib.blake2b(url(i).encode(), digest_size=8).digest(), "big")
               for i in range(first, min(first + BATCH, stop))]


def bench_memory(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n}
    with RedisServer() as server:
        admin = server.client()
        out["redis_version"] = admin.info("server")["redis_version"]
        store = RedisSeenStore(connect(server.url), "bench:seen", owns_client=True)
        store.layout()
        base = used_memory(admin)
        admin.config_resetstat()
        done, t0, checkpoints = 0, time.perf_counter(), sorted({min(n, 1_000_000), n})
        for mark in checkpoints:
            for keys in hashed_keys(done, mark):
                store.add_batch(keys)
            done = mark
            out[f"bytes_per_url_{mark}"] = (used_memory(admin) - base) / mark
            print(f"# {mark:,} URLs: {out[f'bytes_per_url_{mark}']:.2f} bytes/URL "
                  f"({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
        assert len(store) == n, f"{len(store)} members for {n} distinct keys"
        layout = store.layout()
        assert layout is not None
        out.update(buckets=layout.buckets, shards=layout.shards, intset_limit=layout.limit, size=layout.size,
                   hashtables=store.converted, batches=store.batches,
                   round_trips_per_batch=store.round_trips / store.batches,
                   evalsha_per_batch=evalsha_calls(admin) / store.batches)
        encodings = {admin.object("encoding", layout.bucket_key(b)) for b in range(0, layout.buckets, 997)}
        out["sampled_encodings"] = sorted(e.decode() if isinstance(e, bytes) else str(e) for e in encodings)
        store.close()
    return out


def bench_rate(n: int, links: int) -> dict[str, Any]:
    url_list = [url(i) for i in range(n)]
    pages = [url_list[i : i + links] for i in range(0, n, links)]
    out: dict[str, Any] = {"n": n, "links_per_page": links}
    fp = Fingerprinter()

    with RedisServer() as server:
        admin = server.client()
        store = RedisSeenStore(connect(server.url), "bench:seen", owns_client=True)
        store.layout()
        base = used_memory(admin)
        for name in ("new", "dup"):
            requests = [[Request(u) for u in page] for page in pages]
            admin.config_resetstat()
            trips, t0 = store.round_trips, time.perf_counter()
            for page in requests:
                store.add_batch([seen_key(fp.fingerprint(r)) for r in page])
            out[f"ours_{name}_per_s"] = n / (time.perf_counter() - t0)
            out[f"ours_{name}_round_trips_per_page"] = (store.round_trips - trips) / len(pages)
            out[f"ours_{name}_evalsha_per_page"] = evalsha_calls(admin) / len(pages)
            if name == "new":
                out["ours_bytes_per_url"] = (used_memory(admin) - base) / n
        assert len(store) == n
        store.close()

    with RedisServer() as server:
        admin = server.client()
        df = RFPDupeFilter(get_redis_from_settings(Settings({"REDIS_URL": server.url})), "bench:dupefilter")
        base = used_memory(admin)
        for name in ("new", "dup"):
            requests = [[Request(u) for u in page] for page in pages]
            admin.config_resetstat()
            t0 = time.perf_counter()
            for page in requests:
                for r in page:
                    df.request_seen(r)
            out[f"scrapy_redis_{name}_per_s"] = n / (time.perf_counter() - t0)
            sadd = admin.info("commandstats").get("cmdstat_sadd", {}).get("calls", 0)
            out[f"scrapy_redis_{name}_round_trips_per_page"] = sadd / len(pages)
            if name == "new":
                out["scrapy_redis_bytes_per_url"] = (used_memory(admin) - base) / n
        assert admin.scard("bench:dupefilter") == n
    for name in ("new", "dup"):
        out[f"ratio_{name}"] = out[f"ours_{name}_per_s"] / out[f"scrapy_redis_{name}_per_s"]
    return out


def table(r: dict[str, Any]) -> str:
    m, s = r["memory"], r["rate"]
    lines = [
        (f"Redis {m['redis_version']}: {m['buckets']:,} buckets in {m['shards']} shards (sized for "
         f"{m['size']:,} URLs, intset limit {m['intset_limit']}); bucket encodings sampled: "
         f"{', '.join(m['sampled_encodings'])}; buckets turned hashtable: {m['hashtables']}"),
    ]
    lines += [f"  bytes of Redis memory per URL at {k[len('bytes_per_url_'):]:>10}: {v:6.2f}"
              for k, v in m.items() if k.startswith("bytes_per_url_")]
    lines.append(f"  per add_batch of {BATCH} links: {m['round_trips_per_batch']:.3f} round trips, "
                 f"{m['evalsha_per_batch']:.1f} EVALSHA (one per shard touched, pipelined)")
    lines.append(f"{s['n']:,} URLs in pages of {s['links_per_page']} links, fingerprint included:")
    lines.append(f"  {'':18} {'ours':>12} {'scrapy-redis':>14} {'ratio':>7}")
    for name, what in (("new", "new links/s"), ("dup", "seen links/s")):
        lines.append(f"  {what:18} {s[f'ours_{name}_per_s']:12,.0f} {s[f'scrapy_redis_{name}_per_s']:14,.0f} "
                     f"{s[f'ratio_{name}']:6.1f}x")
    lines.append(f"  {'round trips/page':18} {s['ours_new_round_trips_per_page']:12.2f} "
                 f"{s['scrapy_redis_new_round_trips_per_page']:14.1f}")
    lines.append(f"  {'bytes/URL':18} {s['ours_bytes_per_url']:12.1f} {s['scrapy_redis_bytes_per_url']:14.1f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000, help="URLs for the memory part")
    ap.add_argument("--rate-n", type=int, default=1_000_000, help="URLs for the speed part")
    ap.add_argument("--links", type=int, default=100, help="links per page in the speed part")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    if find_redis_server() is None:
        print(NOT_FOUND, file=sys.stderr)
        return 1
    results = {"memory": bench_memory(args.n), "rate": bench_rate(args.rate_n, args.links)}
    print(table(results))
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
