"""DupeFilter.request_seen against Scrapy's RFPDupeFilter, per call, in one process.

Both filters run inside a real (unstarted) Scrapy crawler built by ``scrapy.utils.test.get_crawler``:
ours with the add-on's settings (so the fingerprint is ``Fingerprinter``: identify() in the
scope, all rules on), Scrapy's with its defaults (``RequestFingerprinter``: canonicalize_url and
SHA-1 of a JSON dict). Requests are built before the timed loop, as the scheduler receives them,
so the fingerprint is inside the timing and the Request construction is not.

* **new**: N distinct URLs (the python3-doc corpus's distinct URLs, then ``?page=i`` variants of
  them to reach N), each seen for the first time;
* **duplicate**: N fresh Request objects for the same URLs (a crawl sees links again in new
  Request objects, so the per-request fingerprint caches do not help).

Our filter is measured twice: **cold** (the URL was never seen by the plugin: the whole
unification is inside the timing) and **in a crawl** (``LinkMiddleware`` has already
standardized the link when the spider yielded it, so its identifier is in the unifier's cache
when the scheduler asks; the request carries the standardized URL). Scrapy's filter has no
such earlier step: its canonicalization happens in ``request_seen`` either way.

Memory per seen URL at 1M and 10M is the dupefilter's retained structure; see
``bench_seen_memory.py``, which feeds both structures the keys the dupefilters derive.
Best of ``--rounds`` (default 3), gc disabled in the timed loops.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus import load
from scrapy import Request, Spider
from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.test import get_crawler


class BenchSpider(Spider):
    name = "bench"


def urls(n: int) -> list[str]:
    base = list(dict.fromkeys(link["abs"] for link in load() if link["abs"].startswith("http")))
    out = list(base)
    i = 0
    while len(out) < n:
        u = base[i % len(base)].split("#")[0]
        out.append(f"{u}{'&' if '?' in u else '?'}page={i}")
        i += 1
    return out[:n]


def make_filter(kind: str):  # type: ignore[no-untyped-def]
    if kind == "ours":
        crawler = get_crawler(BenchSpider, {"ADDONS": {"scrapy_urlunify.Addon": 0}})
        crawler.spider = BenchSpider()
        from scrapy_urlunify.integration.seen._dupefilter import DupeFilter

        return DupeFilter.from_crawler(crawler)
    crawler = get_crawler(BenchSpider, {})
    return RFPDupeFilter.from_crawler(crawler)


def timed(df, requests: list[Request]) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    gc.disable()
    try:
        t = time.perf_counter()
        seen = 0
        for r in requests:
            seen += df.request_seen(r)
        return (time.perf_counter() - t) / len(requests) * 1e6, seen
    finally:
        gc.enable()


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    targets = urls(args.n)
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.rounds):
        for kind in ("ours", "ours-crawl", "scrapy"):
            df = make_filter("scrapy" if kind == "scrapy" else "ours")
            batch = targets
            if kind == "ours-crawl":  # what LinkMiddleware did when the links were extracted
                unifier = df.check.policies.unifier
                batch = [unifier.standardize(u) for u in targets]
            new_us, _ = timed(df, [Request(u) for u in batch])
            dup_us, dups = timed(df, [Request(u) for u in batch])
            assert dups == len(batch), (kind, dups)
            for phase, us in (("new", new_us), ("duplicate", dup_us)):
                best[(kind, phase)] = min(us, best.get((kind, phase), float("inf")))
            df.close("finished")
    print(
        f"request_seen() per call, fingerprint included, {args.n} distinct URLs (python3-doc + ?page=i)\n"
    )
    print(f"{'':40s} {'new µs':>8s} {'ratio':>6s} {'dup µs':>8s} {'ratio':>6s}")
    scrapy_new, scrapy_dup = best[("scrapy", "new")], best[("scrapy", "duplicate")]
    for kind, label in (
        ("scrapy", "Scrapy RFPDupeFilter"),
        ("ours", "DupeFilter, cold"),
        ("ours-crawl", "DupeFilter, in a crawl"),
    ):
        new, dup = best[(kind, "new")], best[(kind, "duplicate")]
        print(
            f"{label:40s} {new:8.2f} {scrapy_new / new:5.1f}× {dup:8.2f} {scrapy_dup / dup:5.1f}×"
        )
    print("\nratio: Scrapy's µs per call / that row's (higher is faster than Scrapy)")
    if args.json:
        args.json.write_text(json.dumps({f"{k}|{p}": us for (k, p), us in best.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
