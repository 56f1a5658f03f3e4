"""Speed and Redis memory of the Redis-backed dupefilter: ours vs scrapy-redis's, one server.

Starts a throw-away ``redis-server`` on loopback (tests/support/redis_server.py; no persistence), then:

1. ``request_seen`` throughput, fingerprint included, for ``RedisDupeFilter`` and
   scrapy-redis's ``RFPDupeFilter``: N prebuilt ``Request`` objects for N distinct URLs
   (all new), then N *other* ``Request`` objects for the same URLs (all duplicates; new
   objects, so no fingerprint cache helps). One Redis round trip per request for both. The
   two filters take turns pass by pass within each repeat; the best repeat of each is reported,
   and the ratio of each repeat's pair.
2. The fingerprint alone (no Redis), to show where the time goes.
3. ``RedisSeenStore.add_many``: the same N keys pipelined (1,000 per round trip).
4. Redis memory per URL: the ``used_memory`` delta of ``INFO memory`` over the N adds, and
   ``MEMORY USAGE key SAMPLES 0`` (exact), for our 8-byte members and scrapy-redis's
   40-character hex SHA-1 members; and per page signature for ``RedisSignatureStore``
   (16-byte MD5 -> the page's identifier).
5. The link path of a crawl, page by page (``--pages``): the links of each page of python3-doc
   (``benchmarks/corpus.py``, in document order: ~84% of them seen before), or without that
   corpus synthetic pages of 100 links, each link a fresh ``Request``:

   * scrapy-redis: ``RFPDupeFilter.request_seen`` per link (what its scheduler does), one round
     trip each;
   * ours, per link: ``LinkMiddleware`` then ``DupeFilter.request_seen`` per link, as before the
     link batch (one round trip per link the middleware lets through);
   * ours, page batch: ``LinkMiddleware.process_spider_output`` on the page's requests (one
     round trip for the page, integration/seen/_link_batch.py), then ``request_seen`` for what
     it lets through (pre-recorded: no round trip).

   Links per second, and round trips to the seen set per page (ours: the store's count, a
   pipeline of per-shard script calls being one; scrapy-redis: its ``SADD`` calls, ``INFO
   commandstats``), in real unstarted Scrapy crawlers.

Usage: python benchmarks/bench_redis.py [--n 100000] [--pages 200] [--json results.json]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Callable, Sequence
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

from scrapy_urlunify import identify
from scrapy_urlunify.core._unify import DEFAULT_POLICY, unifier_for
from scrapy_urlunify.integration.seen._fingerprinter import Fingerprinter
from scrapy_urlunify.integration.seen._keys import seen_key
from scrapy_urlunify.integration.seen._redis_dupefilter import RedisDupeFilter
from scrapy_urlunify.integration.seen._seen import SeenCheck
from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_seen import RedisSeenStore
from scrapy_urlunify.stores._redis_tables import RedisSignatureStore

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
    """``MEMORY USAGE`` of ``key`` and of every key under it (our seen set's buckets)."""
    names = [key, *client.scan_iter(match=key + ":*", count=1000)]
    return sum(
        int(client.execute_command("MEMORY", "USAGE", k, "SAMPLES", "0") or 0) for k in names
    )


def members(df: Any, admin: Any, key: str) -> int:
    store = getattr(df, "store", None)
    return len(store) if store is not None else int(admin.scard(key))


def bench_filters(
    filters: dict[str, tuple[Any, str]], admin: Any, url_list: Sequence[str], repeat: int
) -> dict[str, dict[str, Any]]:
    """Time both passes of each filter's ``request_seen`` (best of ``repeat``, each repeat on an
    emptied server with fresh Request objects and a cold URL cache), and measure what each seen
    set costs Redis. The filters take turns pass by pass (the new URLs of one, of the other, then
    the duplicates of each), the first of a repeat going second in the next: a shared machine's
    load then weighs on both alike. ``filters``: name -> (filter, its seen set's key)."""
    n = len(url_list)
    results: dict[str, dict[str, Any]] = {
        name: {"new_per_s": 0.0, "dup_per_s": 0.0, "new_rounds": [], "dup_rounds": []}
        for name in filters
    }
    names = list(filters)
    for round_ in range(repeat):
        order = names if round_ % 2 == 0 else names[::-1]
        requests = {
            name: ([Request(u) for u in url_list], [Request(u) for u in url_list]) for name in order
        }
        for name in order:
            df = filters[name][0]
            if hasattr(df, "store"):
                df.store.clear()  # (its layout, read once, would otherwise outlive the flush)
        admin.flushall()
        cold()
        for kind, which in (("new", 0), ("dup", 1)):
            for name in order:
                df, key = filters[name]
                reqs = requests[name][which]
                seen = df.request_seen
                before = used_memory(admin) if kind == "new" else 0
                timed = rate(n, lambda seen=seen, reqs=reqs: [seen(r) for r in reqs])
                results[name][f"{kind}_rounds"].append(timed)
                if kind == "new":  # (the other filter's set is untouched meanwhile)
                    results[name]["bytes_used_memory"] = (used_memory(admin) - before) / n
        for name in order:
            df, key = filters[name]
            assert members(df, admin, key) == n, (
                f"{name}: {members(df, admin, key)} members for {n} distinct URLs"
            )
            best = results[name]
            best["new_per_s"] = max(best["new_rounds"])
            best["dup_per_s"] = max(best["dup_rounds"])
            best["bytes_memory_usage"] = memory_usage(admin, key) / n
    return results


def link_pages(limit: int) -> tuple[str, list[tuple[str, list[str]]]]:
    """(where the links come from, [(page URL, its http(s) links in document order)])."""
    try:
        from corpus import DEFAULT_ROOT, load

        if not DEFAULT_ROOT.is_dir():
            raise FileNotFoundError(DEFAULT_ROOT)
        pages: dict[str, list[str]] = {}
        for link in load():
            if link["abs"].startswith(("http://", "https://")):
                pages.setdefault(link["page"], []).append(link["abs"])
        return "python3-doc", list(pages.items())[:limit]
    except (ImportError, OSError, SystemExit):
        # 100 links per page: 16 to pages of the crawl seen before, the rest new
        out = []
        for p in range(limit):
            links = [f"https://docs.example.test/section/{p}/topic-{k}.html" for k in range(84)]
            links += [
                f"https://docs.example.test/section/{max(p - 1, 0)}/topic-{k}.html"
                for k in range(16)
            ]
            out.append((f"https://docs.example.test/section/{p}/", links))
        return "synthetic", out


def seen_round_trips(admin: Any) -> int:
    """scrapy-redis's round trips: its SADDs (ours count their own: RedisSeenStore.round_trips,
    a pipeline of per-shard script calls being one round trip)."""
    return int(admin.info("commandstats").get("cmdstat_sadd", {}).get("calls", 0))


def bench_pages(server: Any, admin: Any, limit: int, repeat: int) -> dict[str, Any]:
    """Item 5 of the module docstring: links/s and round trips per page of three link paths.

    The requests are built before each timing (a fresh ``Request`` per link and run, so no
    fingerprint cache helps): what is timed is the dupefilter's part, and for ours the rest of
    ``LinkMiddleware`` too (filters, rewrite), which scrapy-redis does not do. Runs alternate
    between the three paths, each on an emptied server, best of ``repeat``."""
    from scrapy import Spider
    from scrapy.http import HtmlResponse
    from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
    from scrapy.utils.test import get_crawler

    from scrapy_urlunify.integration.links._middleware import LinkMiddleware
    from scrapy_urlunify.integration.seen._dupefilter import DupeFilter

    source, pages = link_pages(limit)
    n = sum(len(links) for _, links in pages)
    responses = {page: HtmlResponse(page, body=b"<html></html>") for page, _ in pages}

    class BenchSpider(Spider):
        name = "bench"

    def requests() -> list[tuple[str, list[Request]]]:
        return [(page, [Request(url) for url in links]) for page, links in pages]

    def theirs(output: list[tuple[str, list[Request]]]) -> tuple[float, int]:
        df = RFPDupeFilter(
            get_redis_from_settings(Settings({"REDIS_URL": server.url})), "bench:dupefilter"
        )
        spider = BenchSpider()
        kept = 0
        t0 = time.perf_counter()
        for _page, page_requests in output:
            for r in page_requests:
                if df.request_seen(r):
                    df.log(r, spider)
                else:
                    kept += 1
        return time.perf_counter() - t0, kept

    trips = [0]

    def ours(output: list[tuple[str, list[Request]]], batch: bool) -> tuple[float, int]:
        crawler = get_crawler(
            BenchSpider,
            {
                "ADDONS": {"scrapy_urlunify.Addon": 0},
                "URLUNIFY_STORE": server.url,
                "URLUNIFY_LEARN": False,
            },
        )
        crawler.spider = spider = BenchSpider.from_crawler(crawler)
        df = DupeFilter.from_crawler(crawler)
        mw = LinkMiddleware.from_crawler(crawler)
        # without the batch: BaseSpiderMiddleware's output loop, one request at a time
        process = (
            mw.process_spider_output
            if batch
            else BaseSpiderMiddleware.process_spider_output.__get__(mw)
        )
        kept = 0
        t0 = time.perf_counter()
        for page, page_requests in output:
            for r in process(responses[page], page_requests):
                if not r.dont_filter and df.request_seen(r):
                    df.log(r, spider)
                else:
                    kept += 1
        elapsed = time.perf_counter() - t0
        trips[0] = df.store.round_trips  # a pipeline of per-shard script calls is one
        df.close("finished")
        return elapsed, kept

    paths: dict[str, Callable[[list[tuple[str, list[Request]]]], tuple[float, int]]] = {
        "scrapy_redis": theirs,
        "ours_per_link": lambda output: ours(output, False),
        "ours_batch": lambda output: ours(output, True),
    }
    results: dict[str, Any] = {"source": source, "pages": len(pages), "links": n}
    best = dict.fromkeys(paths, float("inf"))
    request_best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        requests()
        request_best = min(request_best, time.perf_counter() - t0)
        for name, path in paths.items():
            output = requests()
            admin.flushall()
            admin.script_flush()
            cold()
            admin.config_resetstat()
            seconds, kept = path(output)
            best[name] = min(best[name], seconds)
            round_trips = seen_round_trips(admin) if name == "scrapy_redis" else trips[0]
            results[name] = {"kept": kept, "round_trips_per_page": round_trips / len(pages)}
    for name in paths:
        results[name]["links_per_s"] = n / best[name]
    results["request_us"] = request_best / n * 1e6
    return results


def run(n: int, repeat: int = 3, pages: int = 200) -> dict[str, Any]:
    results: dict[str, Any] = {"n": n, "repeat": repeat}
    url_list = urls(n)
    with RedisServer() as server:
        admin = server.client()
        results["redis_version"] = admin.info("server")["redis_version"]

        ours = RedisDupeFilter(
            SeenCheck.standalone(
                RedisSeenStore(connect(server.url), "bench:seen", owns_client=True)
            )
        )
        theirs = RFPDupeFilter(
            get_redis_from_settings(Settings({"REDIS_URL": server.url})), "bench:dupefilter"
        )
        filters = {"ours": (ours, "bench:seen"), "scrapy_redis": (theirs, "bench:dupefilter")}
        results.update(bench_filters(filters, admin, url_list, repeat))
        ours.close("finished")

        # the fingerprint alone: fresh Request objects, so nothing is cached
        fp = Fingerprinter()
        results["ours"]["fingerprint_per_s"] = best_rate(
            n,
            repeat,
            lambda: cold() or [Request(u) for u in url_list],
            lambda reqs: [seen_key(fp.fingerprint(r)) for r in reqs],
        )
        results["scrapy_redis"]["fingerprint_per_s"] = best_rate(
            n,
            repeat,
            lambda: [Request(u) for u in url_list],
            lambda reqs: [theirs.request_fingerprint(r) for r in reqs],
        )

        # pipelined adds of the same keys
        keys = [seen_key(Fingerprinter.compute("GET", identify(u))) for u in url_list]
        store = RedisSeenStore(connect(server.url), "bench:many", owns_client=True)
        new_rates, dup_rates = [], []
        for _ in range(repeat):
            store.clear()
            new_rates.append(rate(n, lambda: store.add_many(keys)))
            dup_rates.append(rate(n, lambda: store.add_many(keys)))
        results["ours"]["add_many_new_per_s"] = max(new_rates)
        results["ours"]["add_many_dup_per_s"] = max(dup_rates)
        assert len(store) == n
        store.close()

        # page signatures: 16-byte MD5 -> identifier
        sigs = RedisSignatureStore(connect(server.url), "bench:signatures", owns_client=True)
        pairs = [
            (hashlib.md5(f"body {i}".encode()).digest(), identify(u))
            for i, u in enumerate(url_list)
        ]
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

        if pages:
            results["pages"] = bench_pages(server, admin, pages, repeat)
    return results


def table(r: dict[str, Any]) -> str:
    ours, theirs, sigs = r["ours"], r["scrapy_redis"], r["signatures"]
    rows = [
        ("request_seen, new URLs (req/s)", ours["new_per_s"], theirs["new_per_s"]),
        ("request_seen, duplicates (req/s)", ours["dup_per_s"], theirs["dup_per_s"]),
        (
            "fingerprint only, no Redis (req/s)",
            ours["fingerprint_per_s"],
            theirs["fingerprint_per_s"],
        ),
        ("add_many pipelined, new (keys/s)", ours["add_many_new_per_s"], None),
        ("add_many pipelined, duplicates (keys/s)", ours["add_many_dup_per_s"], None),
        (
            "Redis bytes/URL, used_memory delta",
            ours["bytes_used_memory"],
            theirs["bytes_used_memory"],
        ),
        ("Redis bytes/URL, MEMORY USAGE", ours["bytes_memory_usage"], theirs["bytes_memory_usage"]),
        ("RedisSignatureStore get_or_set (sig/s)", sigs["get_or_set_per_s"], None),
        ("Redis bytes/signature, used_memory delta", sigs["bytes_used_memory"], None),
        ("Redis bytes/signature, MEMORY USAGE", sigs["bytes_memory_usage"], None),
    ]
    pages = r.get("pages")
    if pages:
        theirs_p = pages["scrapy_redis"]
        for key, label in (
            ("ours_per_link", "links, checked one by one"),
            ("ours_batch", "links, page batch"),
        ):
            rows.append((f"{label} (links/s)", pages[key]["links_per_s"], theirs_p["links_per_s"]))
            rows.append(
                (
                    f"{label} (round trips/page)",
                    pages[key]["round_trips_per_page"],
                    theirs_p["round_trips_per_page"],
                )
            )
        rows.append(("Request() alone, both paths (µs/link)", pages["request_us"], None))
    width = max(len(label) for label, *_ in rows)
    out = [
        f"N = {r['n']:,} URLs, best of {r['repeat']}, redis-server {r['redis_version']} on loopback TCP; "
        f"signature identifiers average {sigs['identifier_chars']:.0f} chars",
        *(
            [
                f"link path: {pages['links']:,} links of {pages['pages']} pages ({pages['source']}); "
                f"requests kept: scrapy-redis {pages['scrapy_redis']['kept']:,}, "
                f"ours {pages['ours_batch']['kept']:,}"
            ]
            if pages
            else []
        ),
        f"{'':{width}}  {'ours':>12}  {'scrapy-redis':>12}  {'ours/theirs':>11}",
    ]
    for label, a, b in rows:
        ratio = f"{a / b:10.2f}x" if b else ""
        b_text = f"{b:12,.1f}" if b is not None else f"{'-':>12}"
        out.append(f"{label:{width}}  {a:12,.1f}  {b_text}  {ratio:>11}")
    for kind, label in (("new", "new URLs"), ("dup", "duplicates")):
        paired = zip(ours[f"{kind}_rounds"], theirs[f"{kind}_rounds"], strict=True)
        out.append(
            f"request_seen ours/theirs by repeat, {label}: "
            + ", ".join(f"{a / b:.2f}x" for a, b in paired)
        )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="distinct URLs (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes, best kept (default 3)")
    parser.add_argument(
        "--pages",
        type=int,
        default=200,
        help="pages of the link-path benchmark (default 200; 0: skip it)",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if find_redis_server() is None:
        print(NOT_FOUND, file=sys.stderr)
        return 2
    results = run(args.n, args.repeat, args.pages)
    print(table(results))
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
