"""Process memory of a crawl's link path at N distinct URLs: plain Scrapy vs the add-on.

Each contender runs in its own fresh subprocess, in a real (unstarted) Scrapy crawler built by
``scrapy.utils.test.get_crawler`` (the add-on's with ``ADDONS = {"scrapy_urlunify.Addon": 0}``):

* **plain Scrapy**: for each link ``Request(url)``, then ``RFPDupeFilter.request_seen``;
* **add-on**: ``Request(url)``, ``LinkMiddleware.get_processed_request`` (filter, rewrite, early
  drop), then ``DupeFilter.request_seen`` for what it lets through.

The links: python3-doc's link stream (every ``<a href>`` in document order: repeats, fragments,
other hosts), then ``?page=i`` variants of its distinct URLs until ``N`` distinct URLs
(default 200,000) have been offered. Requests are dropped after the dupefilter step (a
scheduler would hold the same requests in both runs). The URL list is built before the
baseline, so what is measured is what the components keep: the seen set (``RFPDupeFilter``'s set
of SHA-1 digests; our 8-byte table), the unifier's result cache and per-host tables, the
middleware's per-host tables, stats. Reported per contender: the RSS growth over the feed
(``/proc/self/statm``), the process's max RSS (``ru_maxrss``), and, in a second subprocess, the
bytes tracemalloc sees retained and at their peak.

Usage: python benchmarks/bench_process_memory.py [-n 200000] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import child_json, write_json

MiB = 1 << 20


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def links(n: int) -> list[tuple[str, str]]:
    """(page, url): the corpus's link stream, then ``?page=i`` variants, up to ``n`` distinct URLs."""
    from corpus import load

    out = [
        (link["page"], link["abs"])
        for link in load()
        if link["abs"].startswith(("http://", "https://"))
    ]
    distinct = list(dict.fromkeys(u for _, u in out))
    page = out[0][0]
    i = 0
    seen = len(distinct)
    while seen < n:
        u = distinct[i % len(distinct)].split("#")[0]
        out.append((page, f"{u}{'&' if '?' in u else '?'}page={i}"))
        i += 1
        seen += 1
    return out


def feed(kind: str, stream: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    """Build the contender, return a function feeding it the stream (and what it keeps)."""
    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    class BenchSpider(Spider):
        name = "bench"

    responses = {
        p: HtmlResponse(p, body=b"<html></html>") for p in dict.fromkeys(p for p, _ in stream)
    }
    if kind == "plain":
        from scrapy.dupefilters import RFPDupeFilter

        crawler = get_crawler(BenchSpider, {})
        crawler.spider = spider = BenchSpider.from_crawler(crawler)
        df = RFPDupeFilter.from_crawler(crawler)

        def run() -> object:
            for _page, url in stream:
                r = Request(url)
                if df.request_seen(r):
                    df.log(r, spider)
            return df

        return run
    from scrapy_urlunify.integration.links._middleware import LinkMiddleware
    from scrapy_urlunify.integration.seen._dupefilter import DupeFilter

    crawler = get_crawler(BenchSpider, {"ADDONS": {"scrapy_urlunify.Addon": 0}})
    crawler.spider = spider = BenchSpider.from_crawler(crawler)
    adf = DupeFilter.from_crawler(crawler)
    mw = LinkMiddleware.from_crawler(crawler)

    def run_addon() -> object:
        process = mw.get_processed_request
        for page, url in stream:
            r = process(Request(url), responses[page])
            if r is not None and not r.dont_filter and adf.request_seen(r):
                adf.log(r, spider)
        return adf

    return run_addon


def worker(kind: str, n: int, traced: bool) -> dict[str, Any]:
    stream = links(n)
    run = feed(kind, stream)
    gc.collect()
    if traced:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = run()
        gc.collect()
        now, peak = tracemalloc.get_traced_memory()
        del kept
        return {"traced_MiB": (now - before) / MiB, "traced_peak_MiB": (peak - before) / MiB}
    before = rss()
    kept = run()
    gc.collect()
    grown = rss() - before
    del kept
    return {
        "rss_growth_MiB": grown / MiB,
        "max_rss_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "links": len(stream),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("-n", type=int, default=200_000, help="distinct URLs offered")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        kind, n, traced = args.worker
        print(json.dumps(worker(kind, int(n), traced == "traced")))
        return 0
    results: dict[str, dict[str, Any]] = {}
    for kind in ("plain", "addon"):
        results[kind] = {}
        for mode in ("rss", "traced"):
            results[kind].update(child_json(__file__, "--worker", kind, str(args.n), mode))
    p, a = results["plain"], results["addon"]
    print(f"process memory of the link path, {args.n} distinct URLs ({p['links']} links)\n")
    print(f"{'':28s} {'plain Scrapy':>13s} {'add-on':>9s} {'add-on/plain':>13s}")
    for key, label in (
        ("rss_growth_MiB", "RSS growth, MiB"),
        ("max_rss_MiB", "max RSS, MiB"),
        ("traced_MiB", "traced retained, MiB"),
        ("traced_peak_MiB", "traced peak, MiB"),
    ):
        print(f"{label:28s} {p[key]:13.1f} {a[key]:9.1f} {a[key] / p[key]:12.2f}×")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
