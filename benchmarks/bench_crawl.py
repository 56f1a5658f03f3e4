"""A whole crawl: CPU seconds of the crawling process, plain Scrapy vs Scrapy with the add-on.

Debian's python3-doc HTML (~530 pages, ~164,000 links) is served as static files by a server
on loopback (its own process: its CPU is not counted). The same spider crawls it in a fresh
process per run, following every ``a::attr(href)`` with ``response.follow``, 16 concurrent
requests, no robots.txt, no retries, no cache, logging at WARNING:

* **plain**: Scrapy's defaults;
* **add-on**: the same, plus ``ADDONS = {"scrapy_urlunify.Addon": 0}`` (its defaults).

Each run reports the user+system CPU seconds of the crawl process from the start of the crawl
to its end (imports excluded), the pages fetched and the links extracted. The runs alternate
(plain, add-on, plain, ...) ``--rounds`` times (default 3); the best of each is compared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path("/usr/share/doc/python3-doc/html")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "http.server",
            str(port),
            "--bind",
            "127.0.0.1",
            "--directory",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the static server did not start")


def crawl(mode: str, port: int) -> dict[str, float]:
    """One crawl in this process (called in a child): its CPU seconds and counts."""
    from scrapy import Spider
    from scrapy.crawler import CrawlerProcess
    from scrapy.http import TextResponse

    class DocSpider(Spider):
        name = "doc"
        allowed_domains = ["127.0.0.1"]
        start_urls = [f"http://127.0.0.1:{port}/index.html"]

        def parse(self, response):  # type: ignore[no-untyped-def]
            if not isinstance(response, TextResponse):
                return
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href)

    settings = {
        "ROBOTSTXT_OBEY": False,
        "RETRY_ENABLED": False,
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "HTTPCACHE_ENABLED": False,
    }
    if mode == "addon":
        settings["ADDONS"] = {"scrapy_urlunify.Addon": 0}
    process = CrawlerProcess(settings, install_root_handler=True)
    crawler = process.create_crawler(DocSpider)
    process.crawl(crawler)
    before = resource.getrusage(resource.RUSAGE_SELF)
    process.start()
    after = resource.getrusage(resource.RUSAGE_SELF)
    stats = crawler.stats.get_stats()
    return {
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "pages": stats.get("response_received_count", 0),
        "requests": stats.get("downloader/request_count", 0),
        "duplicates": stats.get("dupefilter/filtered", 0),
        "links": stats.get("urlunify/links", 0),
        "maxrss_mib": after.ru_maxrss / 1024,
    }


def run(mode: str, port: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--port", str(port)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{mode} crawl failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--child", choices=("plain", "addon"), help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(crawl(args.child, args.port)))
        return 0
    if not args.root.is_dir():
        print(f"no HTML tree at {args.root}: apt-get install python3-doc")
        return 1
    server, port = serve(args.root)
    try:
        best: dict[str, dict[str, float]] = {}
        for r in range(args.rounds):
            for mode in ("plain", "addon"):
                result = run(mode, port)
                print(
                    f"round {r + 1} {mode:6s} {result['cpu']:6.2f} CPU s  {result['pages']:5.0f} pages  "
                    f"{result['maxrss_mib']:6.1f} MiB max RSS",
                    flush=True,
                )
                if mode not in best or result["cpu"] < best[mode]["cpu"]:
                    best[mode] = result
    finally:
        server.terminate()
        server.wait()
    plain, addon = best["plain"], best["addon"]
    print(
        f"\ncrawl of python3-doc on loopback, best of {args.rounds}, CPU seconds of the crawl process\n"
    )
    print(
        f"{'':10s} {'CPU s':>7s} {'pages':>6s} {'requests':>9s} {'duplicates':>11s} {'max RSS MiB':>12s}"
    )
    for name, res in (("plain", plain), ("add-on", addon)):
        print(
            f"{name:10s} {res['cpu']:7.2f} {res['pages']:6.0f} {res['requests']:9.0f} {res['duplicates']:11.0f} "
            f"{res['maxrss_mib']:12.1f}"
        )
    print(f"\nadd-on / plain CPU: {addon['cpu'] / plain['cpu']:.2f}×")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"plain": plain, "addon": addon, "ratio": addon["cpu"] / plain["cpu"]}, indent=1
            )
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
