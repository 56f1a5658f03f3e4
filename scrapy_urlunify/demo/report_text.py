"""The demo report as plain text: the side-by-side table and what the add-on skipped, and why.

Its table rows and savings rows are shared with :mod:`.report_html`, so both reports always show
the same numbers under the same labels.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CRAWLS",
    "SHORT",
    "crawl_keys",
    "format_text",
    "learned_rules",
    "learning_outcome",
    "number",
    "savings",
    "table_rows",
]

CRAWLS: dict[str, str] = {
    "plain": "plain Scrapy",
    "addon": "with scrapy_urlunify.Addon",
    "unconfigured": "add-on, nothing configured",
}
SHORT: dict[str, str] = {
    "plain": "plain Scrapy",
    "addon": "with the add-on",
    "unconfigured": "add-on, nothing configured",
}


def crawl_keys(report: dict[str, Any]) -> tuple[str, ...]:
    """The crawls a report holds, in column order (older reports have no ``unconfigured``)."""
    return tuple(k for k in ("plain", "addon", "unconfigured") if k in report)


def number(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def table_rows(report: dict[str, Any]) -> list[tuple[str, ...]]:
    """(label, one value per crawl of :func:`crawl_keys`) rows."""
    site = report["site"]
    crawls = [report[k] for k in crawl_keys(report)]

    def row(label: str, value: Any) -> tuple[str, ...]:
        return (label, *(value(c) for c in crawls))

    return [
        row("requests", lambda c: number(c["requests"])),
        row("pages fetched (200)", lambda c: number(c["pages_fetched"])),
        row("distinct pages", lambda c: f"{c['distinct_pages']} / {site['pages']}"),
        row("redundant fetches", lambda c: number(c["redundant_fetches"])),
        row(
            "redirects, 404s, PDFs",
            lambda c: number(c["redirects"] + c["not_found"] + c["documents"]),
        ),
        row('soft 404s (200, "not found")', lambda c: number(c.get("soft_404s", 0))),
        row("items", lambda c: number(c["items"])),
        row("duplicate items (same page)", lambda c: number(c["duplicate_items"])),
        row("duplicate items (same text)", lambda c: number(c["duplicate_items_same_text"])),
        row(
            "items under their canonical URL",
            lambda c: f"{number(c.get('canonical_items', 0))} / {number(c['items'])}",
        ),
        row("pages missed", lambda c: number(c["pages_missed"])),
        row("false merges", lambda c: number(c["false_merges"])),
        row("downloaded", lambda c: f"{c['bytes'] / 1024:,.0f} KiB"),
        row("wall time", lambda c: f"{c['seconds']:.1f} s"),
    ]


def savings(addon: dict[str, Any]) -> list[tuple[str, int]]:
    """(label, count) of the requests the add-on did not make: same identifier, same page
    signature, filtered links (learned rules act through the identifier: see
    :func:`learned_rules`)."""
    by = addon["saved_by"]
    rows = [
        ("already seen: same identifier", by["duplicates"]),
        ("same page signature (body text)", by["signature_duplicates"]),
    ]
    rows += [(f"filtered: {reason}", n) for reason, n in by["filtered"].items()]
    return rows


def learned_rules(crawl: dict[str, Any], revoked: bool = False) -> list[tuple[str, int]]:
    """(what the rule says, page pairs that taught it) of every rule a crawl learned and kept to
    the end, or (``revoked``) of those it learned and revoked."""
    rules = []
    learned = crawl["saved_by"]["learned"]
    for key, pairs in learned.items():
        if key.count("/") != 2:
            continue  # a counter (params, confirmed, probation/...), not a rule
        if bool(learned.get(f"revoked/{key}")) != revoked:  # 0: learned again
            continue
        kind, host, name = key.split("/")
        says = {
            "param": f"the parameter {name} does not matter on {host}",
            "alias": f"{name} serves the pages of {host}",
            "path": f"the path prefix /{name}/ does not matter on {host}",
        }.get(kind, f"{kind} {host} {name}")
        rules.append((says, pairs))
    return rules


def learning_outcome(crawl: dict[str, Any]) -> str:
    """What became of a crawl's learned rules: confirmed, revoked, what their probation cost."""
    learned = crawl["saved_by"]["learned"]
    return (
        f"{learned.get('confirmed', 0)} confirmed after probation, {learned.get('revoked', 0)} "
        f"revoked; {number(learned.get('probation/samples', 0))} requests fetched to check them, "
        f"{number(learned.get('probation/kept', 0))} kept until they were confirmed"
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def format_text(report: dict[str, Any], html_path: str | None = None) -> str:
    site, p, a = report["site"], report["plain"], report["addon"]
    width = 30
    lines = [
        f"scrapy-urlunify demo: {site['pages']} distinct pages on {site['sites']} sites, "
        f"{site['hosts']} host names "
        f"(size {site['size']}), "
        f"crawled {len(crawl_keys(report))} times from " + ", ".join(site["start_urls"]),
        "",
        f"{'':{width}}" + "".join(f"  {CRAWLS[k]:>26}" for k in crawl_keys(report)),
    ]
    lines += [
        f"{label:{width}}" + "".join(f"  {v:>26}" for v in values)
        for label, *values in table_rows(report)
    ]
    share = 100 * report["requests_saved_share"]
    lines += [
        "",
        (
            f"The add-on made {number(report['requests_saved'])} fewer requests ({share:.0f}% "
            f"less); redundant fetches {number(p['redundant_fetches'])} -> "
            f"{number(a['redundant_fetches'])}."
        ),
        (
            f"Its closing summary says at least {number(a['plain_estimate'] - a['requests'])} requests "
            f"saved beyond plain Scrapy (the other links it met: a floor, from its own crawl alone)."
        ),
        "",
        "What the add-on skipped, and why (stats urlunify/...):",
    ]
    lines += [f"  {label:{width + 6}} {number(n):>8}" for label, n in savings(a)]
    lines += [
        f"  {'(URLs rewritten before fetching':{width + 6}} {number(a['rewritten']):>8})",
        (
            f"  {'(sister-domain links let past offsite':{width + 6}} "
            f"{number(a['allowed_offsite']):>8})"
        ),
    ]
    if "unconfigured" in report:
        u = report["unconfigured"]
        lines += [
            "",
            (
                f"With the add-on and nothing configured (learning on): {number(u['requests'])} "
                f"requests, {100 * (u['requests'] / a['requests'] - 1):+.0f}% against the "
                f"configured crawl; pages missed {u['pages_missed']}, duplicate items "
                f"{u['duplicate_items']}."
            ),
        ]
    for key in crawl_keys(report)[1:]:
        rules = learned_rules(report[key])
        lines += [
            "",
            f"Rules learned ({SHORT[key]}): " + (_plural(len(rules), "rule") if rules else "none"),
        ]
        lines += [
            f"  {says} ({_plural(pairs, 'page pair')} with one page signature)"
            for says, pairs in rules
        ]
        revoked = learned_rules(report[key], revoked=True)
        lines += [f"  revoked: {says}" for says, _ in revoked]
        if rules or revoked:
            lines += [f"  {learning_outcome(report[key])}"]
    for key in crawl_keys(report):
        if report[key]["finish_reason"] != "finished":
            lines += [
                "",
                f"Note: the {CRAWLS[key]} crawl ended with {report[key]['finish_reason']!r}.",
            ]
    if a["missed"]:
        lines += [
            "",
            "Pages the add-on crawl missed: "
            + ", ".join(a["missed"][:10])
            + (" ..." if len(a["missed"]) > 10 else ""),
        ]
    if a["merged"]:
        lines += [
            "False merges (dropped as seen, never fetched): "
            + ", ".join(f"{m['page']} <- {m['dropped_url']}" for m in a["merged"][:5])
        ]
    if html_path:
        lines += ["", f"Report: {html_path}"]
    return "\n".join(lines)
