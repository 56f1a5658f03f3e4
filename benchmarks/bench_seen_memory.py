"""Memory and speed of the dupefilter's "seen" set: FingerprintSet vs what Scrapy uses.

Scrapy's ``RFPDupeFilter`` keeps a Python ``set`` of 20-byte SHA-1 digests (``bytes``);
``scrapy_urlunify.stores.FingerprintSet`` keeps 64-bit fingerprints in one ``array('Q')``
hash table. For each size N (``--sizes``, default 1M and 10M) and each structure, a fresh
subprocess:

1. derives the N keys from synthetic URLs (BLAKE2b -> 64-bit int for ours, SHA-1 digest
   for Scrapy's), all generated *before* the memory baseline;
2. builds the structure and reports bytes per entry as the RSS delta (untraced build)
   and as tracemalloc's traced size (a second, traced build; "peak" is the traced
   maximum, which for FingerprintSet is the old+new table during its last resize). For
   the set the digest objects are created during the build, as in a crawl, because the
   set keeps them alive; our ints are not kept (the table holds the raw 8 bytes);
3. times ``add`` of new keys (a full build, resizes included) and lookups of present
   (random order) and absent keys, with keys prebuilt so only the structure is timed.

Optionally (``--dupefilter-n``, default 1M) it also times ``RFPDupeFilter.request_seen``
itself on prebuilt ``Request`` objects, to show where a dupefilter's time really goes.

``--whole SIZES`` (e.g. ``1000000,3000000``) measures instead the whole dupefilter through
``request_seen``, ours (the add-on's settings, the memory store) and Scrapy's ``RFPDupeFilter``
(its defaults), each in a process of its own: distinct URLs, one fresh ``Request`` each; the RSS
growth per URL between two sizes is what a crawl pays per URL for the dupefilter and everything
it grows (for ours the unifier's result cache too, until it reaches its bound at ~2M URLs), and
``store_B`` our seen set's own table.

Usage: python benchmarks/bench_seen_memory.py [--sizes 1000000,10000000]
       [--lookups 1000000] [--dupefilter-n 1000000]
With the defaults it takes ~3 minutes and ~3 GB of RAM (mostly key generation and the
traced 10M-entry set build).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from _common import child_json, write_json

ROOT = Path(__file__).resolve().parents[1]
URL = "https://example.test/p?page={}"
ABSENT_URL = "https://example.test/q?page={}"

STRUCTURES = {
    "ours": "FingerprintSet (64-bit ints)",
    "scrapy": "set of SHA-1 digests (RFPDupeFilter)",
}


def rss_bytes() -> int:
    """Resident set size now (Linux /proc; falls back to the peak elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        import resource

        scale = 1 if sys.platform == "darwin" else 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def fp64(url: str) -> int:
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "little")


def sha1(url: str) -> bytes:
    return hashlib.sha1(url.encode()).digest()


def per_op_us(fn: Callable[[Any], object], keys: Iterable[Any], count: int) -> float:
    start = time.perf_counter()
    for key in keys:
        fn(key)
    return (time.perf_counter() - start) / count * 1e6


def measure_memory(build: Callable[[], object], n: int) -> dict[str, float]:
    """Bytes per entry of what ``build`` creates: RSS delta, then traced (second build)."""
    gc.collect()
    before = rss_bytes()
    obj = build()
    rss = (rss_bytes() - before) / n
    del obj
    gc.collect()
    tracemalloc.start()
    obj = build()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del obj
    gc.collect()
    return {"rss_B": rss, "traced_B": current / n, "peak_B": peak / n}


def worker(structure: str, n: int, lookups: int) -> dict[str, Any]:
    rng = random.Random(n)
    n_look = min(n, lookups)
    if structure == "ours":
        from scrapy_urlunify.stores._fingerprints import FingerprintSet

        keys = [fp64(URL.format(i)) for i in range(n)]
        absent = [fp64(ABSENT_URL.format(i)) for i in range(n_look)]

        def build() -> object:
            s = FingerprintSet()
            add = s.add
            for k in keys:
                add(k)
            return s

        result = measure_memory(build, n)
        s = FingerprintSet()
        result["add_us"] = per_op_us(s.add, keys, n)
        result["table_B"] = s.nbytes / n
    else:
        # One blob, so the digest objects the set keeps are created during the build.
        blob = b"".join(sha1(URL.format(i)) for i in range(n))
        absent = [sha1(ABSENT_URL.format(i)) for i in range(n_look)]

        def build() -> object:
            s: set[bytes] = set()
            add = s.add
            for i in range(0, 20 * n, 20):
                add(blob[i : i + 20])
            return s

        result = measure_memory(build, n)
        keys = [blob[i : i + 20] for i in range(0, 20 * n, 20)]
        del blob
        s = set()
        result["add_us"] = per_op_us(s.add, keys, n)
    present = rng.sample(keys, n_look)
    contains = s.__contains__
    result["hit_us"] = per_op_us(contains, present, n_look)
    result["miss_us"] = per_op_us(contains, absent, n_look)
    result["dup_add_us"] = per_op_us(s.add, present, n_look)
    # What the loop itself costs (a no-op call over the same shuffled keys): part of
    # every figure above, for both structures alike.
    result["loop_us"] = per_op_us(lambda k: None, present, n_look)
    assert len(s) == n, "synthetic keys collided"
    return result


def dupefilter_worker(n: int, lookups: int) -> dict[str, Any]:
    from scrapy import Request
    from scrapy.dupefilters import RFPDupeFilter

    requests = [Request(URL.format(i)) for i in range(n)]
    # Duplicates arrive as new Request objects in a crawl (the fingerprinter caches per
    # object), so build fresh ones for the same URLs.
    dups = [Request(URL.format(i)) for i in random.Random(n).sample(range(n), min(n, lookups))]
    df = RFPDupeFilter()
    return {
        "new_us": per_op_us(df.request_seen, requests, n),
        "dup_us": per_op_us(df.request_seen, dups, len(dups)),
    }


#: ``--whole``: the URLs of a crawl over many sites (``--hosts`` of them), each distinct.
WHOLE_URL = "https://www.site{h}.example.test/section/{s}/item-{i}.html?ref={r}"
#: ``--whole``: requests built, then timed through ``request_seen``, at a time
CHUNK = 10_000


def whole_url(i: int, hosts: int) -> str:
    return WHOLE_URL.format(h=i % hosts, s=i % 53, i=i, r=i % 7)


def whole_worker(kind: str, sizes: list[int], hosts: int) -> dict[str, Any]:
    """RSS after ``request_seen`` of each size's distinct URLs over ``hosts`` sites, through one
    dupefilter; the time ``request_seen`` took (the requests are built untimed, a chunk at a
    time), and a second pass over a sample of them (duplicates, each a fresh ``Request``)."""
    from scrapy import Request, Spider
    from scrapy.dupefilters import RFPDupeFilter
    from scrapy.utils.test import get_crawler

    from scrapy_urlunify.integration.seen._dupefilter import DupeFilter

    class S(Spider):
        name = "seen-memory"

    crawler = get_crawler(S, {"ADDONS": {"scrapy_urlunify.Addon": 0}} if kind == "ours" else {})
    crawler.spider = S()
    df: Any = (
        DupeFilter.from_crawler(crawler) if kind == "ours" else RFPDupeFilter.from_crawler(crawler)
    )
    seen = df.request_seen
    df.request_seen(
        Request("https://first.example.test/")
    )  # first-call allocations out of the baseline
    # a chunk of requests built and dropped once, so their memory is reused, not counted
    chunk = [Request(whole_url(-1 - i, hosts)) for i in range(CHUNK)]
    del chunk
    gc.collect()
    base = rss_bytes()
    out: dict[str, Any] = {}
    done, spent = 0, 0.0
    for n in sorted(sizes):
        for start in range(done, n, CHUNK):
            chunk = [Request(whole_url(i, hosts)) for i in range(start, min(start + CHUNK, n))]
            t0 = time.perf_counter()
            for request in chunk:
                seen(request)
            spent += time.perf_counter() - t0
        del chunk
        done = n
        gc.collect()
        out[str(n)] = {
            "rss_growth": rss_bytes() - base,
            "store_B": df.store.nbytes / n if kind == "ours" else None,
            "new_us": spent / n * 1e6,
        }
    sample = random.Random(done).sample(range(done), min(done, 200_000))
    dups = [Request(whole_url(i, hosts)) for i in sample]
    t0 = time.perf_counter()
    assert all(seen(r) for r in dups)
    out["dup_us"] = (time.perf_counter() - t0) / len(dups) * 1e6
    df.close("finished")
    return out


def whole_marginal(r: dict[str, Any], lo: int, hi: int) -> float:
    """Bytes per URL the whole dupefilter grew by between ``lo`` and ``hi`` URLs."""
    return (r[str(hi)]["rss_growth"] - r[str(lo)]["rss_growth"]) / (hi - lo)  # type: ignore[no-any-return]


def run_worker(*args: str) -> dict[str, Any]:
    print(f"  measuring {' '.join(args[:2])} ...", file=sys.stderr, flush=True)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    return child_json(__file__, "--worker", *args, env=env)  # type: ignore[no-any-return]


def report(n: int, results: dict[str, dict[str, Any]]) -> None:
    cols = [
        ("traced_B", "B/entry traced"),
        ("peak_B", "traced peak"),
        ("rss_B", "B/entry RSS"),
        ("add_us", "add µs"),
        ("hit_us", "hit µs"),
        ("miss_us", "miss µs"),
        ("dup_add_us", "dup add µs"),
    ]
    width = max(len(v) for v in STRUCTURES.values())
    print(f"\nN = {n:,}")
    print(f"{'':{width}}  " + "  ".join(f"{title:>14}" for _, title in cols))
    for key, label in STRUCTURES.items():
        r = results[key]
        print(f"{label:{width}}  " + "  ".join(f"{r[c]:14.2f}" for c, _ in cols))
    ours, theirs = results["ours"], results["scrapy"]
    print(
        f"{'ratio ours / Scrapy':{width}}  "
        + "  ".join(f"{ours[c] / theirs[c]:14.2f}" for c, _ in cols)
    )
    print(
        f"(table alone: {ours['table_B']:.2f} B/entry; a no-op call over the same shuffled keys costs "
        f"{ours['loop_us']:.2f} / {theirs['loop_us']:.2f} µs, included in every timing above)"
    )


def marginal(by_size: dict[int, dict[str, Any]], key: str, lo: int, hi: int) -> float:
    """Bytes per URL added between ``lo`` and ``hi`` URLs (from the RSS per entry at each)."""
    return (by_size[hi][key]["rss_B"] * hi - by_size[lo][key]["rss_B"] * lo) / (hi - lo)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000", help="comma-separated N values")
    parser.add_argument("--lookups", type=int, default=1_000_000, help="lookups timed per kind")
    parser.add_argument(
        "--dupefilter-n", type=int, default=1_000_000, help="RFPDupeFilter size, 0 to skip"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--whole", help="comma-separated sizes: the whole DupeFilter through request_seen"
    )
    parser.add_argument(
        "--hosts", type=int, default=997, help="--whole: the sites its URLs are spread over"
    )
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, n = args.worker[0], args.worker[1]
        if kind.startswith("whole-"):
            out = whole_worker(kind[len("whole-") :], [int(x) for x in n.split(",")], args.hosts)
        elif kind == "dupefilter":
            out = dupefilter_worker(int(n), args.lookups)
        else:
            out = worker(kind, int(n), args.lookups)
        print(json.dumps(out))
        return
    if args.whole:
        sizes = sorted(int(x.replace("_", "")) for x in args.whole.split(","))
        whole = {}
        for kind, label in (
            ("ours", "DupeFilter (add-on, memory store)"),
            ("scrapy", "RFPDupeFilter"),
        ):
            r = whole[kind] = run_worker(
                f"whole-{kind}", ",".join(map(str, sizes)), "--hosts", str(args.hosts)
            )
            print(f"{label} through request_seen, distinct URLs over {args.hosts} hosts:")
            for n in sizes:
                v = r[str(n)]
                table = (
                    f" (seen set's table {v['store_B']:.2f})" if v["store_B"] is not None else ""
                )
                print(
                    f"  {n:>12,} URLs: RSS growth {v['rss_growth'] / n:6.2f} B/URL{table}, "
                    f"{v['new_us']:.2f} µs per new URL"
                )
            for lo, hi in zip(sizes, sizes[1:], strict=False):
                print(f"  marginal {lo:,} -> {hi:,}: {whole_marginal(r, lo, hi):.2f} B/URL")
            print(f"  duplicates (fresh requests of seen URLs): {r['dup_us']:.2f} µs each")
        for lo, hi in zip(sizes, sizes[1:], strict=False):
            ratio = whole_marginal(whole["ours"], lo, hi) / whole_marginal(whole["scrapy"], lo, hi)
            print(f"marginal {lo:,} -> {hi:,}, ours / RFPDupeFilter: {ratio:.3f}")
        write_json(args.json, whole)
        return

    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; each row measured in a fresh process"
    )
    by_size = {}
    for n in (int(s.replace("_", "")) for s in args.sizes.split(",")):
        by_size[n] = {
            key: run_worker(key, str(n), "--lookups", str(args.lookups)) for key in STRUCTURES
        }
        report(n, by_size[n])
    sizes = sorted(by_size)
    if len(sizes) > 1:
        print(
            "\nmarginal bytes per URL (RSS growth / URLs added, across the table's growth steps):"
        )
        for lo, hi in zip(sizes, sizes[1:]):
            for key, label in STRUCTURES.items():
                print(f"  {lo:,} -> {hi:,}  {label}: {marginal(by_size, key, lo, hi):.2f} B")
    write_json(args.json, {str(n): v for n, v in by_size.items()})
    if args.dupefilter_n:
        n = args.dupefilter_n
        r = run_worker("dupefilter", str(n), "--lookups", str(args.lookups))
        print(
            f"\nscrapy.dupefilters.RFPDupeFilter.request_seen, N = {n:,} prebuilt requests: "
            f"{r['new_us']:.2f} µs per new request, {r['dup_us']:.2f} µs per duplicate"
        )
        if n in by_size:
            ours, theirs = by_size[n]["ours"], by_size[n]["scrapy"]
            print(
                f"(of which the set itself: ~{theirs['add_us'] + theirs['miss_us']:.2f} µs new, "
                f"~{theirs['hit_us']:.2f} µs duplicate; FingerprintSet.add: "
                f"{ours['add_us']:.2f} / {ours['dup_add_us']:.2f} µs -- fingerprinting dominates)"
            )


if __name__ == "__main__":
    main()
