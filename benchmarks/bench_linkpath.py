"""The link path: what each link a spider yields costs until the scheduler keeps or drops it.

On python3-doc's link stream (every ``<a href>`` of ~530 pages, in document order, ~164,000
links), one process, best of ``--rounds`` (default 3), gc disabled in the timed loops:

* **plain Scrapy**: ``Request(url)``, then the scheduler's step: ``RFPDupeFilter.request_seen``
  and, for a duplicate, ``log`` (stats);
* **add-on**: ``Request(url)``, ``LinkMiddleware.get_processed_request`` (filters, anchors,
  rewrite, early drop of known duplicates), then for what it lets through the scheduler's step
  with the add-on's ``DupeFilter``.

``url`` is the link resolved against its page (what ``response.follow`` hands to ``Request``),
so the URL join is outside both timings. Both run in real (unstarted) Scrapy crawlers built by
``scrapy.utils.test.get_crawler``, with their stats collectors. The stream starts from an empty
seen set and an empty unifier cache: each round is a whole crawl's worth of links.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from scrapy import Request, Spider  # noqa: E402
from scrapy.dupefilters import RFPDupeFilter  # noqa: E402
from scrapy.http import HtmlResponse  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from corpus import load  # noqa: E402


class BenchSpider(Spider):
    name = "bench"


def stream() -> list[tuple[str, str]]:
    """(page, link) for every http(s) link of the corpus, in document order."""
    return [(link["page"], link["abs"]) for link in load() if link["abs"].startswith(("http://", "https://"))]


def plain(links: list[tuple[str, str]], responses: dict[str, HtmlResponse]) -> tuple[float, int]:
    crawler = get_crawler(BenchSpider, {})
    crawler._apply_settings()
    crawler.spider = spider = BenchSpider.from_crawler(crawler)
    df = RFPDupeFilter.from_crawler(crawler)
    gc.disable()
    try:
        kept = 0
        t = time.perf_counter()
        for _page, url in links:
            r = Request(url)
            if df.request_seen(r):
                df.log(r, spider)
            else:
                kept += 1
        return time.perf_counter() - t, kept
    finally:
        gc.enable()


def addon(links: list[tuple[str, str]], responses: dict[str, HtmlResponse]) -> tuple[float, int]:
    from scrapy_urlunify.integration.dupefilter import DupeFilter
    from scrapy_urlunify.integration.links import LinkMiddleware

    crawler = get_crawler(BenchSpider, {"ADDONS": {"scrapy_urlunify.Addon": 0}})
    crawler._apply_settings()
    crawler.spider = spider = BenchSpider.from_crawler(crawler)
    df = DupeFilter.from_crawler(crawler)
    mw = LinkMiddleware.from_crawler(crawler)
    process = mw.get_processed_request
    gc.disable()
    try:
        kept = 0
        t = time.perf_counter()
        for page, url in links:
            r = process(Request(url), responses[page])
            if r is None:
                continue
            if not r.dont_filter and df.request_seen(r):
                df.log(r, spider)
            else:
                kept += 1
        return time.perf_counter() - t, kept
    finally:
        gc.enable()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    links = stream()
    responses = {page: HtmlResponse(page, body=b"<html></html>") for page, _ in links}
    best = {"plain": float("inf"), "addon": float("inf")}
    kept = {}
    for _ in range(args.rounds):
        for name, run in (("plain", plain), ("addon", addon)):
            seconds, kept[name] = run(links, responses)
            best[name] = min(best[name], seconds)
    n = len(links)
    print(f"link path, {n} links of python3-doc (Request + middleware + scheduler's dupefilter step)\n")
    for name, label in (("plain", "plain Scrapy (Request + RFPDupeFilter)"),
                        ("addon", "add-on (Request + LinkMiddleware + DupeFilter)")):
        print(f"{label:50s} {best[name] / n * 1e6:6.2f} µs/link  {kept[name]:6d} requests kept")
    print(f"\nadd-on / plain: {best['addon'] / best['plain']:.2f}×")
    if args.json:
        args.json.write_text(json.dumps({"links": n, "plain_us": best["plain"] / n * 1e6,
                                         "addon_us": best["addon"] / n * 1e6,
                                         "ratio": best["addon"] / best["plain"], "kept": kept}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
