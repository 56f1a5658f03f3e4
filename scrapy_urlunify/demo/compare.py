"""The demo crawl: the same generated site crawled by plain Scrapy and by Scrapy with the add-on.

``python -m scrapy_urlunify.demo`` starts the demo site in-process (:class:`.server.DemoServer`
on loopback), crawls it twice and prints a side-by-side report:

* **plain Scrapy**: a follow-every-link ``CrawlSpider`` with Scrapy's own defaults (its
  LinkExtractor already skips ``.pdf`` & co.) and every host of the site in ``allowed_domains``;
* **with the add-on**: ``ADDONS = {"scrapy_urlunify.Addon": 0}`` and the per-host settings of
  ``sample_project``'s ``configured`` spider (:data:`CONFIGURED_SETTINGS`); its LinkExtractor
  does not pre-filter extensions (the plugin does) and the sister domain is not listed.

The demo site knows which distinct page every URL serves, so "redundant fetches" (a page
fetched again), "pages missed" and "false merges" (a page dropped as already seen although it
never was fetched) are counted from ground truth, not estimated. The report is also written as
a self-contained HTML page (inline SVG, no script) and, with ``--json``, as numbers.

As a library: :func:`run_comparison` returns the report as a dict; inside a running reactor
use :func:`compare` (a Deferred).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import Rule

from .hosts import MIRROR, NEWS, SITE, TERMOMONT
from .site import DemoSite
from .spider import DemoSpider

__all__ = [
    "ALLOWED_DOMAINS",
    "CONFIGURED_SETTINGS",
    "CRAWL_SETTINGS",
    "DEFAULT_SIZE",
    "compare",
    "format_text",
    "main",
    "render_html",
    "run_comparison",
]

DEFAULT_SIZE = 300
DEFAULT_SEED = 20240601
DEFAULT_HTML = "demo-report.html"

#: What the add-on crawl is told about the demo site (``sample_project``'s ``configured`` spider).
CONFIGURED_SETTINGS: dict[str, Any] = {
    "URLUNIFY_SISTER_SUFFIXES": True,
    "URLUNIFY_KEY_PARAMS": {"news.acme.test": ["cid"]},
    "URLUNIFY_REMOVE_PARAMS": {"news.acme.test": ["inifile", "arglink"]},
}
#: The add-on crawl's ``allowed_domains``: ``termomont.co.rs`` is found as a sister domain.
ALLOWED_DOMAINS: tuple[str, ...] = ("site.test", "news.acme.test", "termomont.rs")
#: Plain Scrapy must list every host it may follow.
PLAIN_ALLOWED_DOMAINS: tuple[str, ...] = (*ALLOWED_DOMAINS, "termomont.co.rs")

#: Settings of both crawls (plus the demo proxy). No retries: every request is counted once.
CRAWL_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": False,
    "RETRY_ENABLED": False,
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
    "DOWNLOAD_DELAY": 0,
    "DOWNLOAD_TIMEOUT": 10,
    "CLOSESPIDER_TIMEOUT": 120,  # a runaway crawl still ends
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
}
ADDON_SETTINGS: dict[str, Any] = {"ADDONS": {"scrapy_urlunify.Addon": 0}}

SECTIONS: dict[str, str] = {
    SITE: "www.site.test",
    NEWS: "news.acme.test",
    TERMOMONT: "termomont.rs + .co.rs",
    MIRROR: "mirror.site.test",
}
CRAWLS: dict[str, str] = {"plain": "plain Scrapy", "addon": "with scrapy_urlunify.Addon"}
SHORT: dict[str, str] = {"plain": "plain Scrapy", "addon": "with the add-on"}

logger = logging.getLogger(__name__)


# -- the two spiders -----------------------------------------------------------------------------
class _ArticleSpider(DemoSpider):
    """Follows every link; one ``{url, title, text}`` item per page with an ``<article>``."""

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        if isinstance(response, TextResponse):
            yield from super().parse_page(response)


class PlainSpider(_ArticleSpider):
    name = "plain"
    allowed_domains = list(PLAIN_ALLOWED_DOMAINS)
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)


class ConfiguredSpider(_ArticleSpider):
    name = "configured"
    allowed_domains = list(ALLOWED_DOMAINS)
    rules = (Rule(LinkExtractor(deny_extensions=[]), callback="parse_page", follow=True),)
    custom_settings = CONFIGURED_SETTINGS


# -- crawling --------------------------------------------------------------------------------------
def _crawl(server: Any, site: DemoSite, spidercls: type, settings: dict[str, Any]) -> Any:
    """One crawl of the demo site; a Deferred firing with the raw observations."""
    from scrapy import signals
    from scrapy.crawler import CrawlerRunner
    from twisted.internet import defer

    from .proxy import demo_settings

    @defer.inlineCallbacks
    def run():  # type: ignore[no-untyped-def]
        start = len(server.log)
        runner = CrawlerRunner(demo_settings(server.proxy_url, **{**CRAWL_SETTINGS, **settings}))
        crawler = runner.create_crawler(spidercls)
        items: list[dict[str, Any]] = []
        dropped: list[str] = []

        def on_item(item: dict[str, Any], **kwargs: Any) -> None:
            items.append(dict(item))

        def on_dropped(request: Any, **kwargs: Any) -> None:
            dropped.append(request.url)

        # signal handlers are held weakly: the closures live as long as this generator
        crawler.signals.connect(on_item, signal=signals.item_scraped)
        crawler.signals.connect(on_dropped, signal=signals.request_dropped)
        began = time.perf_counter()
        yield runner.crawl(crawler, start_urls=list(site.start_urls))
        seconds = time.perf_counter() - began
        return {
            "records": list(server.log[start:]),
            "stats": dict(crawler.stats.get_stats()),
            "items": items,
            "dropped": dropped,
            "seconds": seconds,
        }

    return run()


def measure(site: DemoSite, raw: dict[str, Any]) -> dict[str, Any]:
    """The numbers of one crawl, from the server's log, the crawl's stats and ground truth."""
    gets = [r for r in raw["records"] if r.method == "GET"]
    page_fetches = Counter(r.page_id for r in gets if r.status == 200 and r.page_id)
    fetched = set(page_fetches)
    stats = raw["stats"]

    statuses = Counter(r.status for r in gets)
    redirects = sum(n for s, n in statuses.items() if 300 <= s < 400)
    not_found = sum(n for s, n in statuses.items() if s >= 400)
    pages_fetched = sum(page_fetches.values())
    other_200 = statuses.get(200, 0) - pages_fetched  # PDFs, robots.txt

    redundant_by_section = dict.fromkeys(SECTIONS, 0)
    for pid, n in page_fetches.items():
        section = pid.split(":", 1)[0]
        redundant_by_section[section] = redundant_by_section.get(section, 0) + n - 1

    item_pages = Counter(site.page_id(i.get("url", ""), follow_redirects=True) for i in raw["items"])
    same_text = sorted(p for p in item_pages if p and site.content_duplicates.get(p) in item_pages)

    missed = sorted(site.pages - fetched)
    merged: dict[str, str] = {}
    for url in raw["dropped"]:
        pid = site.page_id(url, follow_redirects=True)
        if pid is not None and pid not in fetched:
            merged.setdefault(pid, url)

    prefix = "urlunify/"
    filtered = {k[len(prefix + "filtered/"):]: v for k, v in stats.items() if k.startswith(prefix + "filtered/")}
    learned = {k[len(prefix + "learned/"):]: v for k, v in stats.items() if k.startswith(prefix + "learned/")}
    return {
        "requests": stats.get("downloader/request_count", len(gets)),
        "responses": {str(s): n for s, n in sorted(statuses.items())},
        "pages_fetched": pages_fetched,
        "distinct_pages": len(fetched),
        "redundant_fetches": pages_fetched - len(fetched),
        "redundant_by_section": redundant_by_section,
        "redirects": redirects,
        "not_found": not_found,
        "documents": other_200,
        "items": len(raw["items"]),
        "duplicate_items": sum(n - 1 for n in item_pages.values()),
        "duplicate_items_same_text": len(same_text),
        "pages_missed": len(missed),
        "missed": missed,
        "false_merges": len(merged),
        "merged": [{"page": p, "dropped_url": u} for p, u in sorted(merged.items())],
        "bytes": stats.get("downloader/response_bytes", 0),
        "seconds": round(raw["seconds"], 2),
        "finish_reason": stats.get("finish_reason"),
        "saved_by": {
            "duplicates": stats.get(prefix + "duplicates", 0),
            "signature_duplicates": stats.get(prefix + "signature/duplicates", 0),
            "filtered": dict(sorted(filtered.items())),
            "learned": dict(sorted(learned.items())),
        },
        "rewritten": stats.get(prefix + "rewritten", 0),
        "allowed_offsite": stats.get(prefix + "allowed_offsite", 0),
        "scrapy_dupefilter_filtered": stats.get("dupefilter/filtered", 0),
        "offsite_filtered": stats.get("offsite/filtered", 0),
    }


def compare(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> Any:
    """Serve a demo site of ``size`` pages and crawl it twice; a Deferred firing with the report.
    Needs Scrapy's (asyncio) reactor installed; use it from code that already runs the reactor."""
    from twisted.internet import defer

    from .server import DemoServer

    @defer.inlineCallbacks
    def run():  # type: ignore[no-untyped-def]
        site = DemoSite(size=size, seed=seed)
        server = DemoServer(site).start()
        try:
            plain = yield _crawl(server, site, PlainSpider, {})
            addon = yield _crawl(server, site, ConfiguredSpider, ADDON_SETTINGS)
        finally:
            yield server.stop()
        return build_report(site, measure(site, plain), measure(site, addon))

    return run()


def build_report(site: DemoSite, plain: dict[str, Any], addon: dict[str, Any]) -> dict[str, Any]:
    saved = plain["requests"] - addon["requests"]
    return {
        "site": {
            "size": site.size,
            "seed": site.seed,
            "pages": len(site.pages),
            "items": len(site.items),
            "content_duplicates": len(site.content_duplicates),
            "sites": len({pid.split(":", 1)[0] for pid in site.pages}),
            "hosts": len(site.hosts),
            "start_urls": list(site.start_urls),
        },
        "plain": plain,
        "addon": addon,
        "requests_saved": saved,
        "requests_saved_share": round(saved / plain["requests"], 4) if plain["requests"] else 0.0,
        "configuration": {
            "plain": {"allowed_domains": list(PLAIN_ALLOWED_DOMAINS), "link_extractor": "LinkExtractor()"},
            "addon": {
                "ADDONS": ADDON_SETTINGS["ADDONS"],
                **CONFIGURED_SETTINGS,
                "allowed_domains": list(ALLOWED_DOMAINS),
                "link_extractor": "LinkExtractor(deny_extensions=[])",
            },
        },
    }


def _reactor_reusable() -> bool:
    """Whether this process can still start Scrapy's reactor itself."""
    if "twisted.internet.reactor" not in sys.modules:
        return True
    from scrapy.utils.reactor import is_asyncio_reactor_installed
    from twisted.internet import reactor

    started = getattr(reactor, "_startedBefore", False) or getattr(reactor, "running", False)
    return is_asyncio_reactor_installed() and not started


def run_comparison(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Run the comparison and return the report (a JSON-able dict).

    Runs the Twisted reactor in this process when it can (once per process: a reactor does not
    restart); otherwise (it already ran, runs, or is not Scrapy's asyncio reactor) runs
    ``python -m scrapy_urlunify.demo`` in a subprocess and reads its ``--json`` output.
    """
    if not _reactor_reusable():
        return _run_in_subprocess(size, seed)
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import reactor as installed

    reactor: Any = installed  # Twisted's interface typing misleads mypy (see demo/server.py)

    outcome: dict[str, Any] = {}

    def done(result: Any) -> None:
        outcome["result"] = result
        reactor.stop()

    reactor.callWhenRunning(lambda: compare(size, seed).addBoth(done))
    reactor.run()
    result: Any = outcome.get("result")
    if hasattr(result, "raiseException"):  # a twisted Failure
        result.raiseException()
    if result is None:
        raise RuntimeError("the demo crawl was interrupted")
    return result


def _run_in_subprocess(size: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="urlunify-demo-") as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "scrapy_urlunify.demo", "--size", str(size), "--seed", str(seed),
               "--json", str(out), "--out", str(Path(tmp) / "report.html"), "--quiet"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


# -- text report -----------------------------------------------------------------------------------
def _n(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def _rows(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    p, a, site = report["plain"], report["addon"], report["site"]
    return [
        ("requests", _n(p["requests"]), _n(a["requests"])),
        ("pages fetched (200)", _n(p["pages_fetched"]), _n(a["pages_fetched"])),
        ("distinct pages", f"{p['distinct_pages']} / {site['pages']}", f"{a['distinct_pages']} / {site['pages']}"),
        ("redundant fetches", _n(p["redundant_fetches"]), _n(a["redundant_fetches"])),
        ("redirects, 404s, PDFs", _n(p["redirects"] + p["not_found"] + p["documents"]),
         _n(a["redirects"] + a["not_found"] + a["documents"])),
        ("items", _n(p["items"]), _n(a["items"])),
        ("duplicate items (same page)", _n(p["duplicate_items"]), _n(a["duplicate_items"])),
        ("duplicate items (same text)", _n(p["duplicate_items_same_text"]), _n(a["duplicate_items_same_text"])),
        ("pages missed", _n(p["pages_missed"]), _n(a["pages_missed"])),
        ("false merges", _n(p["false_merges"]), _n(a["false_merges"])),
        ("downloaded", f"{p['bytes'] / 1024:,.0f} KiB", f"{a['bytes'] / 1024:,.0f} KiB"),
        ("wall time", f"{p['seconds']:.1f} s", f"{a['seconds']:.1f} s"),
    ]


def _savings(addon: dict[str, Any]) -> list[tuple[str, int]]:
    """(label, count) of everything the add-on did not fetch: identifier, signature, filters, learned."""
    by = addon["saved_by"]
    rows = [("already seen: same identifier", by["duplicates"]),
            ("same page signature (body text)", by["signature_duplicates"])]
    rows += [(f"filtered: {reason}", n) for reason, n in by["filtered"].items()]
    rows += [(f"learned: {rule}", n) for rule, n in by["learned"].items()] or [("learned rules", 0)]
    return rows


def format_text(report: dict[str, Any], html_path: str | None = None) -> str:
    site, p, a = report["site"], report["plain"], report["addon"]
    width = 30
    lines = [
        f"scrapy-urlunify demo: {site['pages']} distinct pages on {site['sites']} sites, {site['hosts']} host names "
        f"(size {site['size']}), "
        "crawled twice from " + ", ".join(site["start_urls"]),
        "",
        f"{'':{width}}  {CRAWLS['plain']:>14}  {CRAWLS['addon']:>26}",
    ]
    lines += [f"{label:{width}}  {left:>14}  {right:>26}" for label, left, right in _rows(report)]
    share = 100 * report["requests_saved_share"]
    lines += [
        "",
        (
            f"The add-on made {_n(report['requests_saved'])} fewer requests ({share:.0f}% less); "
            f"redundant fetches {_n(p['redundant_fetches'])} -> {_n(a['redundant_fetches'])}."
        ),
        "",
        "What the add-on skipped, and why (stats urlunify/...):",
    ]
    lines += [f"  {label:{width + 6}} {_n(n):>8}" for label, n in _savings(a)]
    lines += [f"  {'(URLs rewritten before fetching':{width + 6}} {_n(a['rewritten']):>8})",
              f"  {'(sister-domain links let past offsite':{width + 6}} {_n(a['allowed_offsite']):>8})"]
    for key in ("plain", "addon"):
        if report[key]["finish_reason"] != "finished":
            lines += ["", f"Note: the {CRAWLS[key]} crawl ended with {report[key]['finish_reason']!r}."]
    if a["missed"]:
        lines += ["", "Pages the add-on crawl missed: " + ", ".join(a["missed"][:10])
                  + (" ..." if len(a["missed"]) > 10 else "")]
    if a["merged"]:
        lines += ["False merges (dropped as seen, never fetched): "
                  + ", ".join(f"{m['page']} <- {m['dropped_url']}" for m in a["merged"][:5])]
    if html_path:
        lines += ["", f"Report: {html_path}"]
    return "\n".join(lines)


# -- HTML report -----------------------------------------------------------------------------------
GREEN, RED, GREY, BLUE, INK, MUTED = "#2f855a", "#c53030", "#a0aec0", "#2b6cb0", "#1a202c", "#4a5568"
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"


def _text(x: float, y: float, s: str, *, anchor: str = "start", size: int = 13, fill: str = INK,
          weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
            f'font-weight="{weight}">{escape(s)}</text>')


def _stacked_chart(report: dict[str, Any]) -> str:
    """One bar per crawl: first fetch of a page | the same page again | redirects, 404s, PDFs."""
    label_w, bar_w, bar_h, gap, top = 190, 640, 34, 22, 10
    crawls = [(SHORT[key], report[key]) for key in ("plain", "addon")]
    scale = bar_w / max(max(c["requests"] for _, c in crawls), 1)
    parts = []
    y = top
    for label, c in crawls:
        segments = [
            (c["distinct_pages"], GREEN, "distinct pages"),
            (c["redundant_fetches"], RED, "redundant"),
            (c["requests"] - c["pages_fetched"], GREY, "other"),
        ]
        parts.append(_text(label_w - 12, y + bar_h / 2 + 5, label, anchor="end", weight="600"))
        x = float(label_w)
        for value, color, _name in segments:
            if value <= 0:
                continue
            w = max(value * scale, 1.5)
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>')
            if w > 44:
                parts.append(_text(x + w / 2, y + bar_h / 2 + 5, _n(value), anchor="middle", fill="#fff",
                                   weight="600"))
            x += w
        parts.append(_text(x + 8, y + bar_h / 2 + 5, f"{_n(c['requests'])} requests", fill=MUTED))
        y += bar_h + gap
    legend = [(GREEN, "first fetch of a distinct page"), (RED, "a page fetched again (redundant)"),
              (GREY, "redirects, 404s, PDFs")]
    lx = float(label_w)
    for color, name in legend:
        parts.append(f'<rect x="{lx:.1f}" y="{y + 2}" width="12" height="12" rx="2" fill="{color}"/>')
        parts.append(_text(lx + 18, y + 13, name, size=12, fill=MUTED))
        lx += 18 + 5.9 * len(name) + 30
    height = y + 24
    return _svg(label_w + bar_w + 150, height, parts, "Requests of each crawl")


def _sections_chart(report: dict[str, Any]) -> str:
    """Redundant fetches per host, plain vs add-on."""
    label_w, bar_w, bar_h, top = 190, 560, 15, 6
    p, a = report["plain"]["redundant_by_section"], report["addon"]["redundant_by_section"]
    scale = bar_w / max(max(p.values(), default=0), 1)
    parts = []
    y = float(top)
    for key, name in SECTIONS.items():
        parts.append(_text(label_w - 12, y + bar_h + 4, name, anchor="end"))
        for value, color in ((p.get(key, 0), RED), (a.get(key, 0), BLUE)):
            w = max(value * scale, 1.5)
            parts.append(f'<rect x="{label_w}" y="{y:.1f}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>')
            parts.append(_text(label_w + w + 6, y + bar_h - 3, _n(value), size=12, fill=MUTED))
            y += bar_h + 2
        y += 14
    parts.append(f'<rect x="{label_w}" y="{y + 2:.1f}" width="12" height="12" rx="2" fill="{RED}"/>')
    parts.append(_text(label_w + 18, y + 13, SHORT["plain"], size=12, fill=MUTED))
    parts.append(f'<rect x="{label_w + 130}" y="{y + 2:.1f}" width="12" height="12" rx="2" fill="{BLUE}"/>')
    parts.append(_text(label_w + 148, y + 13, SHORT["addon"], size=12, fill=MUTED))
    return _svg(label_w + bar_w + 110, y + 24, parts, "Redundant fetches per host")


def _savings_chart(report: dict[str, Any]) -> str:
    """What the add-on did not fetch, per rule."""
    rows = _savings(report["addon"])
    label_w, bar_w, bar_h, gap, top = 250, 500, 20, 8, 4
    scale = bar_w / max(max(n for _, n in rows), 1)
    parts = []
    y = float(top)
    for label, n in rows:
        parts.append(_text(label_w - 12, y + bar_h - 5, label, anchor="end"))
        w = max(n * scale, 1.5)
        parts.append(f'<rect x="{label_w}" y="{y:.1f}" width="{w:.1f}" height="{bar_h}" fill="{BLUE}"/>')
        parts.append(_text(label_w + w + 6, y + bar_h - 5, _n(n), size=12, fill=MUTED))
        y += bar_h + gap
    return _svg(label_w + bar_w + 110, y, parts, "Requests the add-on skipped, per rule")


def _svg(width: float, height: float, parts: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" width="100%" style="max-width:{width:.0f}px;{FONT}">'
            f"<title>{escape(title)}</title>{''.join(parts)}</svg>")


def _card(value: str, label: str, good: bool | None = None) -> str:
    color = {True: GREEN, False: RED, None: INK}[good]
    return (f'<div class="card"><div class="value" style="color:{color}">{escape(value)}</div>'
            f'<div class="label">{escape(label)}</div></div>')


def render_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no script, no network)."""
    site, p, a = report["site"], report["plain"], report["addon"]
    share = 100 * report["requests_saved_share"]
    cards = "".join([
        _card(f"−{share:.0f}%", f"requests: {_n(p['requests'])} → {_n(a['requests'])}", True),
        _card(f"{_n(p['redundant_fetches'])} → {_n(a['redundant_fetches'])}", "pages fetched again",
              a["redundant_fetches"] <= 0.02 * max(a["distinct_pages"], 1)),
        _card(f"{a['pages_missed']}", f"pages missed (of {site['pages']})", a["pages_missed"] == 0),
        _card(f"{a['false_merges']}", "false merges", a["false_merges"] == 0),
        _card(f"{p['seconds']:.1f} s → {a['seconds']:.1f} s", "wall time"),
    ])
    table = "".join(
        f"<tr><th>{escape(label)}</th><td>{escape(left)}</td><td>{escape(right)}</td></tr>"
        for label, left, right in _rows(report)
    )
    config = report["configuration"]["addon"]
    config_lines = "\n".join(
        f"{k} = {v!r}" for k, v in config.items() if k not in ("link_extractor",)
    ) + f"\n# LinkExtractor: {config['link_extractor']}"
    missed = ""
    if a["missed"] or a["merged"]:
        missed = ("<h2>What the add-on got wrong</h2><ul>"
                  + "".join(f"<li>missed <code>{escape(m)}</code></li>" for m in a["missed"][:20])
                  + "".join(f"<li>false merge: <code>{escape(m['page'])}</code> dropped as "
                            f"<code>{escape(m['dropped_url'])}</code></li>" for m in a["merged"][:20])
                  + "</ul>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scrapy-urlunify demo: {_n(p['requests'])} vs {_n(a['requests'])} requests</title>
<style>
body {{ {FONT}; color:{INK}; background:#f7fafc; margin:0; }}
main {{ max-width:1000px; margin:0 auto; padding:28px 32px 40px; }}
h1 {{ font-size:26px; margin:0 0 6px; }}
h2 {{ font-size:18px; margin:30px 0 4px; }}
p.lead, p.note {{ color:{MUTED}; margin:0 0 10px; line-height:1.45; }}
p.note {{ font-size:13px; }}
.cards {{ display:flex; gap:12px; flex-wrap:wrap; margin:18px 0 6px; }}
.card {{ flex:1 1 150px; background:#fff; border:1px solid #e2e8f0; border-radius:8px; padding:12px 14px; }}
.card .value {{ font-size:24px; font-weight:700; white-space:nowrap; }}
.card .label {{ color:{MUTED}; font-size:13px; margin-top:2px; }}
.panel {{ background:#fff; border:1px solid #e2e8f0; border-radius:8px; padding:16px 18px; margin-top:8px; }}
table {{ border-collapse:collapse; width:100%; font-size:14px; }}
th, td {{ padding:6px 10px; border-bottom:1px solid #edf2f7; }}
th {{ text-align:left; font-weight:500; }}
td {{ text-align:right; font-variant-numeric:tabular-nums; }}
thead th {{ text-align:right; color:{MUTED}; font-weight:600; }}
thead th:first-child {{ text-align:left; }}
pre {{ background:#edf2f7; border-radius:6px; padding:10px 12px; font-size:13px; overflow-x:auto; }}
code {{ font-size:13px; }}
</style></head>
<body><main>
<h1>scrapy-urlunify: the same site, crawled twice</h1>
<p class="lead">A generated site of <b>{site['pages']}</b> distinct pages: {site['sites']} sites under
{site['hosts']} host names (size {site['size']}, seed {site['seed']}), whose every URL is known to serve a given page: links to it are spelled with
<code>www.</code> or not, <code>http</code> or <code>https</code>, <code>index.html</code>, session ids,
tracking parameters, <code>..</code> and <code>//</code>, noise parameters and a sister domain.
First plain Scrapy, then Scrapy with <code>ADDONS = {{"scrapy_urlunify.Addon": 0}}</code>.</p>
<div class="cards">{cards}</div>

<h2>Where the requests went</h2>
<p class="note">Every request either fetched a page for the first time, fetched a page again, or was
a redirect, a 404 or a PDF.</p>
<div class="panel">{_stacked_chart(report)}</div>

<h2>Redundant fetches per host</h2>
<p class="note">Plain Scrapy sees every spelling of a URL as a new page.</p>
<div class="panel">{_sections_chart(report)}</div>

<h2>What the add-on skipped, and why</h2>
<p class="note">From the crawl's stats (<code>urlunify/duplicates</code>,
<code>urlunify/signature/duplicates</code>, <code>urlunify/filtered/&lt;reason&gt;</code>,
<code>urlunify/learned/…</code>). It also rewrote {_n(a['rewritten'])} URLs before fetching them
and let {_n(a['allowed_offsite'])} sister-domain links past the offsite filter.</p>
<div class="panel">{_savings_chart(report)}</div>

<h2>Side by side</h2>
<div class="panel"><table>
<thead><tr><th></th><th>{escape(CRAWLS['plain'])}</th><th>{escape(CRAWLS['addon'])}</th></tr></thead>
<tbody>{table}</tbody></table></div>
<p class="note">Pages missed: pages of the site never fetched. False merges: pages a link led to,
dropped as already seen, and never fetched. Duplicate items (same text): print views and mirror
copies, which only a page signature can recognize.</p>
{missed}
<h2>The add-on's configuration</h2>
<pre>{escape(config_lines)}</pre>
<p class="note">Plain Scrapy: the same spider with Scrapy's defaults and every host in
<code>allowed_domains</code>. Re-run: <code>python -m scrapy_urlunify.demo --size {site['size']}</code>;
the same spiders are in <code>sample_project/</code>.</p>
</main></body></html>
"""


# -- command line ----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scrapy_urlunify.demo",
        description="Crawl the demo site with plain Scrapy and with scrapy-urlunify; report side by side.",
    )
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="approximate number of distinct pages "
                        f"(default {DEFAULT_SIZE})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=DEFAULT_HTML, help=f"HTML report (default ./{DEFAULT_HTML})")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    parser.add_argument("--quiet", action="store_true", help="print only the report's path")
    parser.add_argument("--verbose", action="store_true", help="show Scrapy's INFO log")
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error("--size must be positive")

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s [%(name)s] %(levelname)s: %(message)s")
    if not args.quiet:
        print(f"Crawling a demo site of about {args.size} pages twice (plain Scrapy, then the add-on)...",
              flush=True)
    try:
        report = run_comparison(args.size, args.seed)
    except RuntimeError as e:  # interrupted (Ctrl-C stops the reactor)
        print(e, file=sys.stderr)
        return 130
    out = Path(args.out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(report), encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps({**report, "html": str(out)}, indent=2) + "\n", encoding="utf-8")
    print(str(out) if args.quiet else format_text(report, os.fspath(out)))
    return 0
