"""The link path: what each link a spider yields costs until the scheduler keeps or drops it.

On python3-doc's link stream (every ``<a href>`` of ~530 pages, in document order, ~164,000
links, 84% of them links to a page already seen), one process per contender, best of
``--rounds`` (default 3), gc disabled in the timed loops. Two measures:

* **whole path** (the honest one): what a crawl does with each link. For each page, Scrapy's
  own ``Scraper`` calls the spider through the crawler's real ``SpiderMiddlewareManager``
  (Scrapy's default chain: ``MetaCopyDetectionMiddleware``, ``DepthMiddleware``,
  ``UrlLengthMiddleware``, ``RefererMiddleware``, ``HttpErrorMiddleware``,
  ``StartSpiderMiddleware``; with the add-on, ``LinkMiddleware`` where the add-on puts it);
  the spider yields ``Request(url)`` for every link of the page, and each request that
  comes out of the chain goes to the engine: the ``request_scheduled`` signal (Scrapy's
  ``OffsiteMiddleware`` listens: ``allowed_domains = ["docs.python.org"]``), the real
  ``Scheduler.enqueue_request`` (dupefilter, priority queue push, stats) and, for a duplicate,
  ``request_dropped``. The engine is opened (``open_spider``) but paused, so nothing is
  downloaded: the pages are given as responses with an empty body. Time is CPU time of
  the process (``time.process_time``) over all pages, divided by the links;
* **narrow** (the first measure, 2026-12-01): ``Request(url)`` then the scheduler's dupefilter
  step alone (``request_seen``, ``log``) vs ``Request(url)``, ``LinkMiddleware`` and the
  add-on's ``DupeFilter``, called directly.

``url`` is the link resolved against its page (what ``response.follow`` hands to ``Request``),
so the URL join is outside both. Each round starts from an empty seen set and an empty unifier
cache: each round is a whole crawl's worth of links.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import child_json, write_json
from corpus import load

ALLOWED = ["docs.python.org"]
# as in bench_crawl.py: what a crawl of a static site would set
SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": False,
    "RETRY_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "HTTPCACHE_ENABLED": False,
}


def stream() -> list[tuple[str, str]]:
    """(page, link) for every http(s) link of the corpus, in document order."""
    return [
        (link["page"], link["abs"])
        for link in load()
        if link["abs"].startswith(("http://", "https://"))
    ]


def narrow(mode: str, links: list[tuple[str, str]]) -> tuple[float, int]:
    from scrapy import Request, Spider
    from scrapy.dupefilters import RFPDupeFilter
    from scrapy.http import HtmlResponse
    from scrapy.utils.test import get_crawler

    class BenchSpider(Spider):
        name = "bench"

    responses = {page: HtmlResponse(page, body=b"<html></html>") for page, _ in links}
    crawler = get_crawler(
        BenchSpider, {"ADDONS": {"scrapy_urlunify.Addon": 0}} if mode == "addon" else {}
    )
    crawler.spider = spider = BenchSpider.from_crawler(crawler)
    if mode == "plain":
        df = RFPDupeFilter.from_crawler(crawler)
        process = None
    else:
        from scrapy_urlunify.integration.links._middleware import LinkMiddleware
        from scrapy_urlunify.integration.seen._dupefilter import DupeFilter

        df = DupeFilter.from_crawler(crawler)
        process = LinkMiddleware.from_crawler(crawler).get_processed_request
    gc.disable()
    try:
        kept = 0
        t = time.perf_counter()
        for page, url in links:
            r: Any = Request(url)
            if process is not None:
                r = process(r, responses[page])
                if r is None:
                    continue
            if not r.dont_filter and df.request_seen(r):
                df.log(r, spider)
            else:
                kept += 1
        return time.perf_counter() - t, kept
    finally:
        gc.enable()


def whole(mode: str, links: list[tuple[str, str]]) -> None:
    """The whole link path through a real, opened (paused) engine: see the module docstring."""
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from scrapy import Request, Spider
    from scrapy.http import HtmlResponse
    from scrapy.utils.defer import deferred_from_coro
    from scrapy.utils.test import get_crawler
    from twisted.internet import task

    pages: dict[str, list[str]] = {}
    for page, url in links:
        pages.setdefault(page, []).append(url)

    class PathSpider(Spider):
        name = "linkpath"
        allowed_domains = ALLOWED

        def parse(self, response: Any) -> Any:
            for url in pages[response.url]:
                yield Request(url)

    result: dict[str, Any] = {}

    async def measure() -> None:
        settings = dict(SETTINGS)
        if mode == "addon":
            settings["ADDONS"] = {"scrapy_urlunify.Addon": 0}
        crawler = get_crawler(PathSpider, settings)
        crawler.spider = crawler._create_spider()
        crawler.engine = engine = crawler._create_engine()
        await engine.open_spider_async(close_if_idle=False)
        engine.pause()  # nothing is downloaded: the queue only fills
        scraper = engine.scraper
        jobs = []
        for page in pages:
            request = Request(page, callback=crawler.spider.parse)
            jobs.append((HtmlResponse(page, body=b"<html></html>", request=request), request))
        gc.disable()
        try:
            t = time.process_time()
            for response, request in jobs:
                await scraper._scrape(response, request)
            result["seconds"] = time.process_time() - t
        finally:
            gc.enable()
        stats = crawler.stats.get_stats()
        result["kept"] = stats.get("scheduler/enqueued", 0)
        result["links"] = len(links)
        await engine.close_spider_async(reason="finished")
        print(json.dumps(result), flush=True)

    task.react(lambda _reactor: deferred_from_coro(measure()))  # exits the process
    raise AssertionError("unreachable")


def child(kind: str, mode: str) -> None:
    links = stream()
    if kind == "narrow":
        seconds, kept = narrow(mode, links)
        print(json.dumps({"seconds": seconds, "kept": kept, "links": len(links)}), flush=True)
    else:
        whole(mode, links)  # prints its result and exits the process


def run(kind: str, mode: str) -> dict[str, Any]:
    return child_json(__file__, "--child", kind, mode)  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    best: dict[str, dict[str, Any]] = {}
    for r in range(args.rounds):
        for kind in ("whole", "narrow"):
            for mode in ("plain", "addon"):
                res = run(kind, mode)
                key = f"{kind}|{mode}"
                print(
                    f"round {r + 1} {kind:6s} {mode:6s} {res['seconds'] / res['links'] * 1e6:7.2f} µs/link",
                    flush=True,
                )
                if key not in best or res["seconds"] < best[key]["seconds"]:
                    best[key] = res
    n = best["whole|plain"]["links"]
    print(f"\nlink path, {n} links of python3-doc, best of {args.rounds}\n")
    out: dict[str, Any] = {"links": n}
    for kind, label in (
        ("whole", "whole path: spider's Request() + spider middlewares + engine + scheduler"),
        ("narrow", "narrow: Request() + the dupefilter step only"),
    ):
        plain, addon = best[f"{kind}|plain"], best[f"{kind}|addon"]
        p_us, a_us = plain["seconds"] / n * 1e6, addon["seconds"] / n * 1e6
        print(
            f"{label}\n  plain Scrapy {p_us:7.2f} µs/link  {plain['kept']:6d} requests kept\n"
            f"  add-on       {a_us:7.2f} µs/link  {addon['kept']:6d} requests kept\n"
            f"  add-on / plain: {a_us / p_us:.2f}×\n"
        )
        out[kind] = {
            "plain_us": p_us,
            "addon_us": a_us,
            "ratio": a_us / p_us,
            "kept": {"plain": plain["kept"], "addon": addon["kept"]},
        }
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
