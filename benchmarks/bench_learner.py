"""The learner's cost per observed page: memory and ``Learner.observe()`` time.

A synthetic crawl of ``--pages`` observations over a few hosts, paths and noise parameters
(``ref=`` that does not matter, ``page=`` that does, a mirror host), the URLs and signatures
built before the baseline. For each round, in a fresh ``Learner`` (``max_entries`` the crawl's
default, 50,000 records):

* **time**: µs per ``observe()`` call, best of ``--rounds``; beside it, in the same run, Scrapy's
  own per-response work on the same URLs, ``RequestFingerprinter().fingerprint(Request(url))``,
  as the yardstick (a ratio above 1 means observe() costs more than Scrapy fingerprinting the
  request once);
* **memory**: tracemalloc's traced bytes held by the learner after the crawl, per observed page,
  while the index is under its cap and once it is full (the cap bounds it: bytes per page fall as
  the crawl grows); beside it, what Scrapy's ``RFPDupeFilter`` keeps per URL (a 20-byte SHA-1
  digest in a set), measured the same way.

Usage: python benchmarks/bench_learner.py [--pages 20000] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from _common import write_json

from scrapy_urlunify.integration.rules._session import LEARNING_INDEX_ENTRIES
from scrapy_urlunify.learning._learner import Learner


def observations(n: int) -> list[tuple[str, str, bytes]]:
    """(url, identity host, signature): articles with ref= noise, listings with page=, a mirror."""
    out = []
    for i in range(n):
        kind = i % 4
        article = i // 4
        if kind == 0:
            url, content = f"https://www.site.test/a/{article}?ref=r{i % 7}", f"article {article}"
        elif kind == 1:
            url, content = f"https://www.site.test/a/{article}?ref=s{i % 5}", f"article {article}"
        elif kind == 2:
            url, content = f"https://www.site.test/list?page={article}", f"listing {article}"
        else:
            url, content = f"https://mirror.site.test/a/{article}", f"article {article}"
        host = url.split("/")[2].removeprefix("www.")
        out.append((url, host, hashlib.md5(content.encode()).digest()))
    return out


def time_observe(obs: list[tuple[str, str, bytes]]) -> float:
    learner = Learner(sites=["site.test"], max_entries=LEARNING_INDEX_ENTRIES)
    gc.disable()
    began = time.perf_counter()
    for url, host, sig in obs:
        learner.observe(url, host, sig)
    elapsed = time.perf_counter() - began
    gc.enable()
    return elapsed / len(obs) * 1e6


def time_scrapy(urls: list[str]) -> float:
    from scrapy import Request
    from scrapy.utils.request import RequestFingerprinter

    fp = RequestFingerprinter()
    gc.disable()
    began = time.perf_counter()
    for url in urls:
        fp.fingerprint(Request(url))
    elapsed = time.perf_counter() - began
    gc.enable()
    return elapsed / len(urls) * 1e6


def memory_observe(obs: list[tuple[str, str, bytes]]) -> dict[str, Any]:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    learner = Learner(sites=["site.test"], max_entries=LEARNING_INDEX_ENTRIES)
    for url, host, sig in obs:
        learner.observe(url, host, sig)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {
        "bytes": held,
        "per_page": held / len(obs),
        "index_records": learner.index_size,
        "rules": [str(r) for r in learner.rules],
    }


def memory_scrapy(urls: list[str]) -> float:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    seen = {hashlib.sha1(u.encode()).digest() for u in urls}
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert seen
    return held / len(urls)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    obs = observations(args.pages)
    urls = [u for u, _h, _s in obs]
    ours = min(time_observe(obs) for _ in range(args.rounds))
    scrapy = min(time_scrapy(urls) for _ in range(args.rounds))
    small = memory_observe(obs[: min(len(obs), 5_000)])
    full = memory_observe(obs)
    scrapy_mem = memory_scrapy(urls)
    result = {
        "pages": args.pages,
        "observe_us": round(ours, 2),
        "scrapy_fingerprint_us": round(scrapy, 2),
        "observe_vs_scrapy_fingerprint": round(ours / scrapy, 2),
        "bytes_per_page_5k": round(small["per_page"]),
        "bytes_per_page_full": round(full["per_page"]),
        "learner_bytes_full": full["bytes"],
        "index_records_full": full["index_records"],
        "scrapy_seen_bytes_per_url": round(scrapy_mem),
        "rules": full["rules"],
    }
    print(
        f"Learner.observe(): {ours:.1f} µs per page; Scrapy's fingerprint(Request(url)): {scrapy:.1f} µs "
        f"(ratio {ours / scrapy:.2f}), best of {args.rounds}"
    )
    print(
        f"memory: {small['per_page']:.0f} B per page after 5,000 pages, {full['per_page']:.0f} B per page "
        f"after {args.pages:,} ({full['bytes'] / 2**20:.1f} MiB held, {full['index_records']:,} index records, "
        f"cap {LEARNING_INDEX_ENTRIES:,}); RFPDupeFilter's seen set: {scrapy_mem:.0f} B per URL"
    )
    print("rules learned:", "; ".join(full["rules"]) or "none")
    write_json(args.json, result)


if __name__ == "__main__":
    main()
