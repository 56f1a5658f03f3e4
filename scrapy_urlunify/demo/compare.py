"""The demo crawl: the same generated site crawled by plain Scrapy and by Scrapy with the add-on.

``python -m scrapy_urlunify.demo`` starts the demo site in-process (:class:`.server.DemoServer`
on loopback), crawls it twice (:mod:`.crawl`), counts what each crawl did against the site's
ground truth (:mod:`.measure`) and prints a side-by-side report (:mod:`.report_text`), also
written as a self-contained HTML page (:mod:`.report_html`) and, with ``--json``, as numbers.

This module is the command line.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from scrapy_urlunify.demo.crawl import DEFAULT_SEED, DEFAULT_SIZE, run_comparison
from scrapy_urlunify.demo.report_html import render_html
from scrapy_urlunify.demo.report_text import format_text

__all__ = ["main"]

DEFAULT_HTML = "demo-report.html"


def main(argv: list[str] | None = None) -> int:
    """Run both crawls, write the HTML (and JSON) report, print the text report; the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m scrapy_urlunify.demo",
        description=(
            "Crawl the demo site with plain Scrapy and with scrapy-urlunify; report side by side."
        ),
    )
    parser.add_argument(
        "--size",
        type=int,
        default=DEFAULT_SIZE,
        help=f"approximate number of distinct pages (default {DEFAULT_SIZE})",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=argparse.SUPPRESS)
    parser.add_argument(
        "--out", default=DEFAULT_HTML, help=f"HTML report (default ./{DEFAULT_HTML})"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument("--quiet", action="store_true", help="print only the report's path")
    parser.add_argument("--verbose", action="store_true", help="show Scrapy's INFO log")
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error("--size must be positive")

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s [%(name)s] %(levelname)s: %(message)s",
    )
    if not args.quiet:
        print(
            f"Crawling a demo site of about {args.size} pages three times (plain Scrapy, the "
            "add-on configured, the add-on alone)...",
            flush=True,
        )
    try:
        report = run_comparison(args.size, args.seed, out=None if args.quiet else sys.stderr)
    except RuntimeError as e:  # interrupted (Ctrl-C stops the reactor)
        print(e, file=sys.stderr)
        return 130
    out = Path(args.out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(report), encoding="utf-8")
    if args.json:
        Path(args.json).write_text(
            json.dumps({**report, "html": str(out)}, indent=2) + "\n", encoding="utf-8"
        )
    print(str(out) if args.quiet else format_text(report, os.fspath(out)))
    return 0
