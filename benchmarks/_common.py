"""What several benchmarks share: running a measurement in a process of its own (so each
contender starts from a fresh interpreter and its memory is its own) and reading its result;
the breadth-first order; a crawl's coverage curve."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

#: breadth-first: priority ``-depth`` and first-in-first-out queues (Scrapy's FAQ); Scrapy's
#: default order is depth-first
BFS_SETTINGS: dict[str, Any] = {
    "DEPTH_PRIORITY": 1,
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
}


def coverage_curve(times: list[int], points: tuple[int, ...]) -> dict[str, int]:
    """The coverage curve: of the responses after which each piece of content was first
    covered (``times``), how many within the first N, for each N of ``points``."""
    return {str(n): sum(1 for t in times if t <= n) for n in points}


def responses_to(times: list[int], total: int, share: int) -> int | None:
    """The responses until ``share`` percent of ``total`` pieces of content were covered
    (``times`` sorted: :func:`coverage_curve`'s), None when they never were."""
    need = -(-total * share // 100)  # ceil
    return times[need - 1] if len(times) >= need else None


def child_json(script: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """Run ``python script args...`` and return the JSON object of the last line of its output
    that holds one; a child that failed or printed none stops the benchmark with its stderr."""
    out = subprocess.run(
        [sys.executable, script, *args], capture_output=True, text=True, check=False, env=env
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(
            f"{Path(script).name} {' '.join(args)} failed (exit status {out.returncode}):\n"
            f"{out.stderr[-3000:]}"
        )
    return json.loads(lines[-1])


def run_measured(process: Any, crawler: Any) -> tuple[dict[str, Any], float, float]:
    """Run ``crawler`` in ``process`` (a ``CrawlerProcess``) to its end: its stats, and the CPU
    seconds (user + system) and wall seconds the crawl took in this process."""
    import resource
    import time

    process.crawl(crawler)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, wall0 = usage.ru_utime + usage.ru_stime, time.monotonic()
    process.start()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    stats = crawler.stats.get_stats() if crawler.stats else {}
    return (
        stats,
        round(usage.ru_utime + usage.ru_stime - cpu0, 2),
        round(time.monotonic() - wall0, 1),
    )


def write_json(path: Path | None, results: Any) -> None:
    """``--json PATH``: also write the results there (nothing without the option)."""
    if path:
        path.write_text(json.dumps(results, indent=1))


def learned_rules(crawler: Any) -> list[Any]:
    """The rules a crawl's learner holds at its end (``LearnedRule``; none without learning)."""
    from scrapy_urlunify.integration.crawl._build import UnifyCrawl

    learning = UnifyCrawl.of(crawler).learning
    return list(learning.learner.rules) if learning is not None else []


def _lead(value: str) -> str:
    for i, c in enumerate(value):
        if not c.isalnum():
            return value[: i + 1]
    return value


def _diverse(values: dict[str, str]) -> list[str]:
    """The URLs of ``values`` (value -> URL), one per leading part first (``Talk:``, ``User:``,
    a plain title), then the others."""
    by_lead: dict[str, list[str]] = {}
    for value, url in sorted(values.items()):
        by_lead.setdefault(_lead(value), []).append(url)
    order: list[str] = []
    while any(by_lead.values()):
        for urls in by_lead.values():
            if urls:
                order.append(urls.pop(0))
    return order


def _fetched_page(url: str) -> tuple[Any, ...] | None:
    """What a crawl compares of the page at ``url``: its signature (MD5 of its body text), its
    near-duplicate fingerprint (and whether it is a short page's), its digest up to numbers."""
    from urllib.error import HTTPError
    from urllib.request import urlopen

    from lxml import html

    import scrapy_urlunify.learning._near_duplicates as nd
    from scrapy_urlunify.learning._page_signature import signature

    try:
        with urlopen(url, timeout=60) as resp:
            body, ctype = resp.read(), resp.headers.get("Content-Type")
    except HTTPError as e:  # a wiki answers a missing page with 404 and a page of text
        body, ctype = e.read(), e.headers.get("Content-Type")
    sig = signature(body, ctype)
    if sig is None:
        return None
    text = nd.main_text(html.fromstring(body).getroottree().getroot())
    return sig, nd.page_fingerprint(text), nd.folded_fingerprint(text)


def _alike(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether a crawl takes two pages for one (docs/near_duplicates.md): one body text, or
    near-duplicates (fingerprints within ``PAGE_DISTANCE`` bits; a short page's equal), or one
    main text up to its numbers."""
    import scrapy_urlunify.learning._near_duplicates as nd

    if a[0] == b[0] or a[2] == b[2]:
        return True
    fa, fb = a[1], b[1]
    if fa is None or fb is None or fa[1] != fb[1]:
        return False
    return fa[0] == fb[0] if fa[1] else nd.distance(fa[0], fb[0]) <= nd.PAGE_DISTANCE


def audit_rules(
    rules: list[Any], urls: list[str], groups: int = 5, per_group: int = 12
) -> list[dict[str, Any]]:
    """Each parameter rule a crawl learned, checked against the site itself after the crawl:
    among the URLs the crawl scheduled (``urls``, merged ones included), those the rule covers,
    grouped by what is left without the parameter; in the largest ``groups`` groups, up to
    ``per_group`` values each (one per leading part first: ``Talk:``, ``Category_talk:``)
    fetched again and compared with the first as the crawl compares pages (one body text, or
    near-duplicates). A rule is wrong when a page of a group is not the group's first page: the
    rule merged pages that differ. ``{"rule", "checked", "wrong"}`` per rule,
    ``wrong`` the two URLs that differ (or None)."""
    from urllib.parse import urlsplit

    from scrapy_urlunify.core._domains import within
    from scrapy_urlunify.core._params import context_items
    from scrapy_urlunify.learning._rule_types import param_value

    report = []
    for rule in rules:
        if rule.kind != "param":
            continue
        grouped: dict[str, dict[str, str]] = {}
        for url in urls:
            parts = urlsplit(url)
            if not within(parts.hostname or "", rule.host):
                continue
            if not rule.applies_to(parts.path or "/", set(context_items(parts.query))):
                continue
            value = param_value(url, rule.name)
            if value is None:
                continue
            rest = "&".join(
                i for i in parts.query.split("&") if i.partition("=")[0].lower() != rule.name
            )
            grouped.setdefault(f"{parts.netloc}{parts.path}?{rest}", {}).setdefault(value, url)
        checked, wrong = 0, None
        for values in sorted(grouped.values(), key=len, reverse=True)[:groups]:
            first: tuple[str, tuple[Any, ...]] | None = None
            for url in _diverse(values)[:per_group]:
                page = _fetched_page(url)
                checked += 1
                if page is None:
                    continue
                if first is None:
                    first = (url, page)
                elif not _alike(first[1], page):
                    wrong = [first[0], url]
                    break
            if wrong:
                break
        report.append({"rule": str(rule), "checked": checked, "wrong": wrong})
    return report


def add_site_runs(
    parser: Any, configs: list[str], orders: list[str], port: int, budget: int
) -> None:
    """The options of a benchmark of a real-software site served on loopback (the wiki, the
    blog): where it runs, which crawls, their budget, the JSON, and the child's arguments."""
    import argparse

    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--workers", type=int, default=4, help="PHP_CLI_SERVER_WORKERS")
    parser.add_argument(
        "--configs", default=",".join(configs), help=f"comma-separated, of {configs}"
    )
    parser.add_argument("--orders", default=",".join(orders), help=f"comma-separated, of {orders}")
    parser.add_argument("--budget", type=int, default=budget, help="CLOSESPIDER_PAGECOUNT")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--child", nargs=4, metavar=("CONFIG", "ORDER", "URL", "BUDGET"), help=argparse.SUPPRESS
    )


def site_runs(
    parser: Any, args: Any, configs: list[str], orders: list[str]
) -> tuple[list[str], list[str]]:
    """The configurations and orders ``args`` asks for (a usage error for an unknown one)."""
    chosen, ordered = args.configs.split(","), args.orders.split(",")
    for name in chosen + ordered:
        if name not in configs + orders:
            parser.error(f"unknown configuration or order {name!r}")
    return chosen, ordered


def print_audits(config: str, order: str, run: dict[str, Any]) -> None:
    """The verdict on each rule a crawl ended with (``audit_rules``), to stderr."""
    for a in run.get("rules_audited", []):
        verdict = f"WRONG: {a['wrong'][0]} and {a['wrong'][1]} differ" if a["wrong"] else "right"
        print(
            f"  {config}/{order}: {a['rule']}: {verdict} ({a['checked']} URLs fetched again)",
            file=sys.stderr,
            flush=True,
        )
