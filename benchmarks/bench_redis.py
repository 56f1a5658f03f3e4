"""Speed and Redis memory of the Redis-backed dupefilter: ours vs scrapy-redis's, one server.

Starts a throw-away ``redis-server`` on loopback (tests/redis_server.py; no persistence), then:

1. ``request_seen`` throughput, fingerprint included, for ``RedisDupeFilter`` and
   scrapy-redis's ``RFPDupeFilter``: N prebuilt ``Request`` objects for N distinct URLs
   (all new), then N *other* ``Request`` objects for the same URLs (all duplicates; new
   objects, so no fingerprint cache helps). One Redis round trip per request for both.
2. The fingerprint alone (no Redis), to show where the time goes.
3. ``RedisSeenStore.add_many``: the same N keys pipelined (1,000 per round trip).
4. Redis memory per URL: the ``used_memory`` delta of ``INFO memory`` over the N adds, and
   ``MEMORY USAGE key SAMPLES 0`` (exact), for our 8-byte members and scrapy-redis's
   40-character hex SHA-1 members; and per page signature for ``RedisSignatureStore``
   (16-byte MD5 -> the page's identifier).

Usage: python benchmarks/bench_redis.py [--n 100000] [--json results.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from redis_server import NOT_FOUND, RedisServer, find_redis_server  # noqa: E402
from scrapy import Request  # noqa: E402
from scrapy.settings import Settings  # noqa: E402
from scrapy_redis.connection import get_redis_from_settings  # noqa: E402
from scrapy_redis.dupefilter import RFPDupeFilter  # noqa: E402

from scrapy_urlunify import identify  # noqa: E402
from scrapy_urlunify.integration.dupefilter import seen_key  # noqa: E402
from scrapy_urlunify.integration.fingerprinter import Fingerprinter  # noqa: E402
from scrapy_urlunify.integration.redis_dupefilter import RedisDupeFilter  # noqa: E402
from scrapy_urlunify.core.unify import DEFAULT_POLICY, unifier_for  # noqa: E402
from scrapy_urlunify.stores.redis import RedisSeenStore, RedisSignatureStore, connect  # noqa: E402

#: Redis finishes an incremental rehash in its cron (activerehashing): wait before reading
#: used_memory, so it counts one table, not the old and the new one.
SETTLE = 0.5


def cold() -> None:
    """Empty our unifier's whole-URL cache, so a "new URL" is unified from scratch (a
    duplicate met later in a crawl may hit it, as here in the duplicates pass)."""
    unifier_for(DEFAULT_POLICY).cache_clear()


def urls(n: int) -> list[str]:
    """N distinct, realistic URLs over 50 hosts (with tracking parameters to strip)."""
    return [
        f"https://www.shop{i % 50}.example.test/category/{i % 97}/item-{i}.html?utm_source=news&ref={i % 7}"
        for i in range(n)
    ]


def rate(n: int, run: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    run()
    return n / (time.perf_counter() - t0)


def best_rate(n: int, repeat: int, setup: Callable[[], Any], run: Callable[[Any], object]) -> float:
    """The best of ``repeat`` timings of ``run(setup())`` (setup untimed)."""
    best = 0.0
    for _ in range(repeat):
        data = setup()
        best = max(best, rate(n, lambda: run(data)))
    return best


def used_memory(client: Any) -> int:
    time.sleep(SETTLE)
    return int(client.info("memory")["used_memory"])


def memory_usage(client: Any, key: str) -> int:
    return int(client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0"))


def bench_filter(
    name: str, df: Any, key: str, admin: Any, url_list: Sequence[str], repeat: int
) -> dict[str, float]:
    """Time both passes of ``df.request_seen`` (best of ``repeat``, each on an emptied server
    with fresh Request objects and a cold URL cache) and measure what the seen set costs Redis."""
    n = len(url_list)
    best: dict[str, float] = {"new_per_s": 0.0, "dup_per_s": 0.0}
    seen = df.request_seen
    for _ in range(repeat):
        first = [Request(u) for u in url_list]
        again = [Request(u) for u in url_list]
        admin.flushall()
        cold()
        before = used_memory(admin)
        best["new_per_s"] = max(best["new_per_s"], rate(n, lambda: [seen(r) for r in first]))
        after = used_memory(admin)
        best["dup_per_s"] = max(best["dup_per_s"], rate(n, lambda: [seen(r) for r in again]))
        assert admin.scard(key) == n, f"{name}: {admin.scard(key)} members for {n} distinct URLs"
    best["bytes_used_memory"] = (after - before) / n
    best["bytes_memory_usage"] = memory_usage(admin, key) / n
    return best


def run(n: int, repeat: int = 3) -> dict[str, Any]:
    results: dict[str, Any] = {"n": n, "repeat": repeat}
    url_list = urls(n)
    with RedisServer() as server:
        admin = server.client()
        results["redis_version"] = admin.info("server")["redis_version"]

        ours = RedisDupeFilter(Fingerprinter(), RedisSeenStore(connect(server.url), "bench:seen",
                                                                          owns_client=True))
        results["ours"] = bench_filter("ours", ours, "bench:seen", admin, url_list, repeat)
        ours.close("finished")

        theirs = RFPDupeFilter(get_redis_from_settings(Settings({"REDIS_URL": server.url})), "bench:dupefilter")
        results["scrapy_redis"] = bench_filter("scrapy-redis", theirs, "bench:dupefilter", admin, url_list, repeat)

        # the fingerprint alone: fresh Request objects, so nothing is cached
        fp = Fingerprinter()
        results["ours"]["fingerprint_per_s"] = best_rate(
            n, repeat, lambda: cold() or [Request(u) for u in url_list],
            lambda reqs: [seen_key(fp.fingerprint(r)) for r in reqs])
        results["scrapy_redis"]["fingerprint_per_s"] = best_rate(
            n, repeat, lambda: [Request(u) for u in url_list],
            lambda reqs: [theirs.request_fingerprint(r) for r in reqs])

        # pipelined adds of the same keys
        keys = [seen_key(Fingerprinter.compute("GET", identify(u))) for u in url_list]
        store = RedisSeenStore(connect(server.url), "bench:many", owns_client=True)
        new_rates, dup_rates = [], []
        for _ in range(repeat):
            admin.flushall()
            new_rates.append(rate(n, lambda: store.add_many(keys)))
            dup_rates.append(rate(n, lambda: store.add_many(keys)))
        results["ours"]["add_many_new_per_s"] = max(new_rates)
        results["ours"]["add_many_dup_per_s"] = max(dup_rates)
        assert len(store) == n
        store.close()

        # page signatures: 16-byte MD5 -> identifier
        sigs = RedisSignatureStore(connect(server.url), "bench:signatures", owns_client=True)
        pairs = [(hashlib.md5(f"body {i}".encode()).digest(), identify(u)) for i, u in enumerate(url_list)]
        admin.flushall()
        before = used_memory(admin)
        results["signatures"] = {
            "get_or_set_per_s": rate(n, lambda: [sigs.get_or_set(s, i) for s, i in pairs]),
            "identifier_chars": sum(len(i) for _, i in pairs) / n,
        }
        results["signatures"]["bytes_used_memory"] = (used_memory(admin) - before) / n
        results["signatures"]["bytes_memory_usage"] = memory_usage(admin, "bench:signatures") / n
        assert len(sigs) == n
        sigs.close()
    return results


def table(r: dict[str, Any]) -> str:
    ours, theirs, sigs = r["ours"], r["scrapy_redis"], r["signatures"]
    rows = [
        ("request_seen, new URLs (req/s)", ours["new_per_s"], theirs["new_per_s"]),
        ("request_seen, duplicates (req/s)", ours["dup_per_s"], theirs["dup_per_s"]),
        ("fingerprint only, no Redis (req/s)", ours["fingerprint_per_s"], theirs["fingerprint_per_s"]),
        ("add_many pipelined, new (keys/s)", ours["add_many_new_per_s"], None),
        ("add_many pipelined, duplicates (keys/s)", ours["add_many_dup_per_s"], None),
        ("Redis bytes/URL, used_memory delta", ours["bytes_used_memory"], theirs["bytes_used_memory"]),
        ("Redis bytes/URL, MEMORY USAGE", ours["bytes_memory_usage"], theirs["bytes_memory_usage"]),
        ("RedisSignatureStore get_or_set (sig/s)", sigs["get_or_set_per_s"], None),
        ("Redis bytes/signature, used_memory delta", sigs["bytes_used_memory"], None),
        ("Redis bytes/signature, MEMORY USAGE", sigs["bytes_memory_usage"], None),
    ]
    width = max(len(label) for label, *_ in rows)
    out = [f"N = {r['n']:,} URLs, best of {r['repeat']}, redis-server {r['redis_version']} on loopback TCP; "
           f"signature identifiers average {sigs['identifier_chars']:.0f} chars",
           f"{'':{width}}  {'ours':>12}  {'scrapy-redis':>12}  {'ours/theirs':>11}"]
    for label, a, b in rows:
        ratio = f"{a / b:10.2f}x" if b else ""
        b_text = f"{b:12,.1f}" if b is not None else f"{'-':>12}"
        out.append(f"{label:{width}}  {a:12,.1f}  {b_text}  {ratio:>11}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="distinct URLs (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes, best kept (default 3)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if find_redis_server() is None:
        print(NOT_FOUND, file=sys.stderr)
        return 2
    results = run(args.n, args.repeat)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
