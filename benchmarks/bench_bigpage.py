"""A crawl with a huge HTML page: peak memory of the crawl process, plain Scrapy vs the add-on.

A static site on loopback (its own process): ``index.html`` links to 20 small pages and to
``big.html``, N MiB of paragraphs (a ``<head>`` with a title and a ``rel=canonical``; a link to
one of the small pages every ~5 MB). The same spider crawls it in a fresh process per run: an
item ``{"url", "title"}`` per page, ``response.follow`` on every ``a::attr(href)`` (so both
crawls parse the whole big page once, as a spider that reads its links does), no robots.txt, no
retries, logging at WARNING:

* **plain**: Scrapy's defaults;
* **add-on**: the same, plus ``ADDONS = {"scrapy_urlunify.Addon": 0}`` (its defaults: link
  middleware, signatures, learning, pipelines).

Each run reports the peak resident memory of the crawl process (``ru_maxrss``) and the pages
fetched. Runs alternate (plain, add-on, ...) ``--rounds`` times; the lowest peak of each is
compared. The requirement: the add-on's peak within 10% of plain Scrapy's.

Two sizes by default (``--mib 50,30``): 50 MiB, the size that showed the problem, is above
``URLUNIFY_SIGNATURE_MAX_BYTES`` (32 MiB): its signature is the MD5 of its bytes, its
``rel=canonical`` is looked up in its head only; 30 MiB is the largest kind of page whose body
text is extracted for its signature (before the fix of 2026-12-01: 3.3x plain Scrapy's peak, the
white-space collapsing of the whole text).

``BENCH_BIGPAGE_SETTINGS='{"URLUNIFY_SIGNATURES": false}'`` adds settings to the add-on's runs
(to find where memory goes).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import child_json, write_json
from bench_crawl import serve

SMALL = 20
PARAGRAPH = (
    "<p>" + "A paragraph of the big page, long enough to look like running text in a report "
    "that nobody will read to the end, " * 8 + "</p>\n"
)


def make_site(root: Path, mib: int) -> None:
    pages = "".join(f'<li><a href="p{i}.html">page {i}</a></li>' for i in range(SMALL))
    (root / "index.html").write_text(
        f"<!DOCTYPE html><html><head><title>Index</title></head><body>"
        f"<ul>{pages}<li><a href='big.html'>the big page</a></li></ul></body></html>"
    )
    for i in range(SMALL):
        (root / f"p{i}.html").write_text(
            f"<!DOCTYPE html><html><head><title>Page {i}</title></head><body>"
            f"<p>The text of page {i}.</p><a href='index.html'>home</a></body></html>"
        )
    size = mib << 20
    every = 5 << 20  # bytes between two links
    with open(root / "big.html", "w") as f:
        f.write(
            "<!DOCTYPE html><html><head><title>The big page</title>"
            '<link rel="canonical" href="big.html"></head><body>\n'
        )
        written = link = 0
        while written < size:
            f.write(PARAGRAPH)
            written += len(PARAGRAPH)
            if written // every > link:
                link += 1
                f.write(f'<p><a href="p{link % SMALL}.html">see page {link % SMALL}</a></p>\n')
        f.write("</body></html>\n")


def crawl(mode: str, port: int) -> dict[str, float]:
    """One crawl in this process (called in a child): its peak RSS and counts."""
    from scrapy import Spider
    from scrapy.crawler import CrawlerProcess

    class BigSpider(Spider):
        name = "big"
        allowed_domains = ["127.0.0.1"]
        start_urls = [f"http://127.0.0.1:{port}/index.html"]

        def parse(self, response):  # type: ignore[no-untyped-def]
            yield {"url": response.url, "title": response.css("title::text").get()}
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href)

    settings = {
        "ROBOTSTXT_OBEY": False,
        "RETRY_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "DOWNLOAD_WARNSIZE": 0,
    }
    if mode == "addon":
        settings["ADDONS"] = {"scrapy_urlunify.Addon": 0}
        settings.update(json.loads(os.environ.get("BENCH_BIGPAGE_SETTINGS", "{}")))
    process = CrawlerProcess(settings, install_root_handler=True)
    crawler = process.create_crawler(BigSpider)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats.get_stats()
    return {
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "pages": stats.get("response_received_count", 0),
        "items": stats.get("item_scraped_count", 0),
        "bytes_mib": stats.get("downloader/response_bytes", 0) / (1 << 20),
    }


def run(mode: str, port: int) -> dict[str, float]:
    return child_json(__file__, "--child", mode, "--port", str(port))  # type: ignore[no-any-return]


def measure(rounds: int, mib: int, verbose: bool = True) -> dict[str, dict[str, float]]:
    """The lowest peak of each mode over ``rounds`` alternating runs."""
    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        make_site(Path(tmp), mib)
        server, port = serve(Path(tmp))
        try:
            for r in range(rounds):
                for mode in ("plain", "addon"):
                    result = run(mode, port)
                    if verbose:
                        print(
                            f"round {r + 1} {mode:6s} {result['maxrss_mib']:7.1f} MiB peak RSS  "
                            f"{result['pages']:3.0f} pages  {result['items']:3.0f} items",
                            flush=True,
                        )
                    if mode not in best or result["maxrss_mib"] < best[mode]["maxrss_mib"]:
                        best[mode] = result
        finally:
            server.terminate()
            server.wait()
    return best


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mib", default="50,30", help="sizes of the big page in MiB, comma-separated")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--child", choices=("plain", "addon"), help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(crawl(args.child, args.port)))
        return 0
    results: dict[str, dict[str, Any]] = {}
    for mib in (int(m) for m in args.mib.split(",")):
        print(f"\n{mib} MiB page")
        best = measure(args.rounds, mib)
        plain, addon = best["plain"], best["addon"]
        results[str(mib)] = {
            "plain": plain,
            "addon": addon,
            "ratio": addon["maxrss_mib"] / plain["maxrss_mib"],
        }
    print(
        f"\ncrawl of a site with one huge page, lowest of {args.rounds}, peak RSS of the crawl process\n"
    )
    print(f"{'page':>8s} {'plain MiB':>10s} {'add-on MiB':>11s} {'add-on / plain':>15s}")
    for mib, r in results.items():
        plain, addon = r["plain"], r["addon"]
        print(
            f"{mib + ' MiB':>8s} {plain['maxrss_mib']:10.1f} {addon['maxrss_mib']:11.1f} {r['ratio']:14.2f}x"
        )
    print("\nrequirement: add-on / plain at most 1.10x")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
