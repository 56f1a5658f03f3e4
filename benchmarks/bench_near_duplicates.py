"""The near-duplicate fingerprint and its index: time per page, time per lookup, bytes per page.

* **fingerprint**: on python3-doc's HTML pages (each parsed once, as the spider's selector does),
  µs per 100 KB of HTML, best of ``--rounds``, gc off: the exact signature from the parsed tree
  (``page_signature(..., tree=...)``: its text extraction and MD5, what a crawl pays already),
  :func:`main_text` (the extra libxslt pass), :func:`fingerprint` of that text, and the two
  together (the extra cost over the exact signature). Also on a python3-doc page's text repeated
  to 20 MB (the 1 MiB bound).
* **index**: ``NearDuplicateIndex`` filled with N random fingerprints in a process of its own:
  bytes per page (tracemalloc, the index alone) and µs per ``seen()`` (a lookup at the page
  threshold, then the insert) of new pages and of near-duplicates (3 bits off a known page),
  at ``--sizes`` (default 100,000 and 1,000,000).

Usage: python benchmarks/bench_near_duplicates.py [--rounds 5] [--sizes 100000,1000000] [--json out.json]
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import random
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import child_json, write_json  # noqa: E402 (after the sys.path line)

ROOTS = (Path("/usr/share/doc/python3/html"), Path("/usr/share/doc/python3-doc/html"))


def best(function: Any, rounds: int) -> float:
    """Seconds of the fastest of ``rounds`` calls, gc off."""
    gc.disable()
    try:
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            function()
            times.append(time.perf_counter() - started)
        return min(times)
    finally:
        gc.enable()


def fingerprint_costs(root: Path, rounds: int) -> dict[str, Any]:
    from lxml import html

    from scrapy_urlunify.learning._near_duplicates import fingerprint, folded_fingerprint, main_text
    from scrapy_urlunify.learning._page_signature import page_signature

    pages = [path.read_bytes() for path in sorted(root.rglob("*.html"))]
    trees = [html.document_fromstring(body) for body in pages]
    texts = [main_text(tree) for tree in trees]
    html_bytes = sum(map(len, pages))
    per_100k = 1e6 * 100_000 / html_bytes

    def exact() -> None:
        for body, tree in zip(pages, trees, strict=True):
            page_signature(body, "text/html", tree=functools.partial(lambda root: root, tree))

    def extract() -> None:
        for tree in trees:
            main_text(tree)

    def hash_texts() -> None:
        for text in texts:
            fingerprint(text)

    def fold_texts() -> None:
        for text in texts:
            folded_fingerprint(text)

    def both() -> None:
        for tree in trees:
            fingerprint(main_text(tree))

    results: dict[str, Any] = {
        "pages": len(pages),
        "html_mb": round(html_bytes / 1e6, 1),
        "text_mb": round(sum(len(t.encode()) for t in texts) / 1e6, 1),
    }
    for name, function in (
        ("exact signature (tree)", exact),
        ("main_text", extract),
        ("fingerprint(text)", hash_texts),
        ("folded_fingerprint(text)", fold_texts),
        ("main_text + fingerprint", both),
    ):
        results[name] = round(best(function, rounds) * per_100k, 1)
    # about 100 KB of HTML, the target's unit (1 ms per 100 KB page): python3-doc's pages between
    # 80 and 120 KB
    sized = [
        (body, text)
        for body, text in zip(pages, texts, strict=True)
        if 80_000 <= len(body) <= 120_000
    ]
    results["pages 80-120 KB"] = len(sized)
    results["fingerprint µs per 80-120 KB page"] = round(
        best(lambda: [fingerprint(text) for _, text in sized], rounds) * 1e6 / len(sized), 1
    )
    huge = texts[max(range(len(texts)), key=lambda i: len(texts[i]))]
    huge = huge * (20_000_000 // len(huge) + 1)
    results["fingerprint ms, 20 MB text"] = round(best(lambda: fingerprint(huge), rounds) * 1e3, 2)
    return results


def index_child(size: int) -> dict[str, Any]:
    from scrapy_urlunify.learning._near_duplicate_index import NearDuplicateIndex
    from scrapy_urlunify.learning._near_duplicates import PAGE_DISTANCE

    rng = random.Random(size)
    fingerprints = [rng.getrandbits(64) for _ in range(size)]
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = NearDuplicateIndex()
    for key, value in enumerate(fingerprints):
        index.add(value, key)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    probes = 20_000
    new = [rng.getrandbits(64) for _ in range(probes)]
    near = [
        fingerprints[rng.randrange(size)]
        ^ 0b10000000000000000000000000000100000000000000000000000100
        for _ in range(probes)
    ]
    gc.disable()
    started = time.perf_counter()
    for key, value in enumerate(new):
        index.seen(value, size + key, PAGE_DISTANCE)
    new_us = (time.perf_counter() - started) * 1e6 / probes
    started = time.perf_counter()
    found = sum(index.seen(value, 0, PAGE_DISTANCE) is not None for value in near)
    near_us = (time.perf_counter() - started) * 1e6 / probes
    started = time.perf_counter()
    data = index.to_bytes()
    dump_ms = (time.perf_counter() - started) * 1e3
    started = time.perf_counter()
    NearDuplicateIndex.from_bytes(data)
    load_ms = (time.perf_counter() - started) * 1e3
    return {
        "pages": size,
        "bytes per page": round(held / size, 1),
        "seen() µs, new page": round(new_us, 2),
        "seen() µs, near-duplicate": round(near_us, 2),
        "near-duplicates found": found / probes,
        "to_bytes bytes per page": round(len(data) / len(index), 1),
        "to_bytes ms": round(dump_ms, 1),
        "from_bytes ms": round(load_ms, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--index-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.index_child:
        print(json.dumps(index_child(args.index_child)))
        return 0
    results: dict[str, Any] = {}
    root = next((r for r in ROOTS if r.is_dir()), None)
    if root is None:
        print("no python3-doc HTML: apt-get install python3-doc (fingerprint costs skipped)")
    else:
        results["fingerprint"] = fingerprint_costs(root, args.rounds)
        print("fingerprint, µs per 100 KB of HTML (python3-doc):")
        for name, value in results["fingerprint"].items():
            print(f"  {name}: {value}")
    results["index"] = []
    for size in (int(s) for s in args.sizes.split(",")):
        row = child_json(__file__, "--index-child", str(size))
        results["index"].append(row)
        print("index: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
