"""The demo report as plain text: the side-by-side table and what the add-on skipped, and why.

Its table rows and savings rows are shared with :mod:`.report_html`, so both reports always show
the same numbers under the same labels.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CRAWLS", "SHORT", "format_text", "number", "savings", "table_rows"]

CRAWLS: dict[str, str] = {"plain": "plain Scrapy", "addon": "with scrapy_urlunify.Addon"}
SHORT: dict[str, str] = {"plain": "plain Scrapy", "addon": "with the add-on"}


def number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def table_rows(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    p, a, site = report["plain"], report["addon"], report["site"]
    return [
        ("requests", number(p["requests"]), number(a["requests"])),
        ("pages fetched (200)", number(p["pages_fetched"]), number(a["pages_fetched"])),
        ("distinct pages", f"{p['distinct_pages']} / {site['pages']}", f"{a['distinct_pages']} / {site['pages']}"),
        ("redundant fetches", number(p["redundant_fetches"]), number(a["redundant_fetches"])),
        ("redirects, 404s, PDFs", number(p["redirects"] + p["not_found"] + p["documents"]),
         number(a["redirects"] + a["not_found"] + a["documents"])),
        ("items", number(p["items"]), number(a["items"])),
        ("duplicate items (same page)", number(p["duplicate_items"]), number(a["duplicate_items"])),
        ("duplicate items (same text)", number(p["duplicate_items_same_text"]), number(a["duplicate_items_same_text"])),
        ("pages missed", number(p["pages_missed"]), number(a["pages_missed"])),
        ("false merges", number(p["false_merges"]), number(a["false_merges"])),
        ("downloaded", f"{p['bytes'] / 1024:,.0f} KiB", f"{a['bytes'] / 1024:,.0f} KiB"),
        ("wall time", f"{p['seconds']:.1f} s", f"{a['seconds']:.1f} s"),
    ]


def savings(addon: dict[str, Any]) -> list[tuple[str, int]]:
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
    lines += [f"{label:{width}}  {left:>14}  {right:>26}" for label, left, right in table_rows(report)]
    share = 100 * report["requests_saved_share"]
    lines += [
        "",
        (
            f"The add-on made {number(report['requests_saved'])} fewer requests ({share:.0f}% less); "
            f"redundant fetches {number(p['redundant_fetches'])} -> {number(a['redundant_fetches'])}."
        ),
        "",
        "What the add-on skipped, and why (stats urlunify/...):",
    ]
    lines += [f"  {label:{width + 6}} {number(n):>8}" for label, n in savings(a)]
    lines += [f"  {'(URLs rewritten before fetching':{width + 6}} {number(a['rewritten']):>8})",
              f"  {'(sister-domain links let past offsite':{width + 6}} {number(a['allowed_offsite']):>8})"]
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

