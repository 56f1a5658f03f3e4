"""A crawl of a real Redmine issue tracker on loopback, scored against the tracker's own database.

The tracker is ``tools/sites/redmine.py``'s (Debian's Redmine 5.0, SQLite, puma; 4 public
projects, 300 generated issues with 1,053 journal entries, 48 wiki pages with 196 versions, 12
news, boards; built once into ``--dir`` and reused). The spider is what a naive user writes: a
``CrawlSpider`` with one ``Rule(LinkExtractor(), callback=..., follow=True)`` from the home page,
and an item ``{url, content_id}`` from every response that shows an issue, a wiki page or a news
item, the id taken from the page as that user would (Redmine puts ``controller-X action-show``
in ``<body class>``): an issue's heading (``<h2>Bug #12</h2>``: ``issue:12``), a wiki page's own
"History" link (``/projects/P/wiki/Title/history``: ``wiki:P:Title``), a news item's heading
(``news:<title>``). An old version of a wiki page (``/wiki/Title/3``, the same ``action-show``
with its History link) is an item of that page, as it would be for that user; so are an issue's
tab views (``?tab=history``). Diffs, annotations, histories and exports are not items.

Configurations (``--configs``):

* ``plain``: Scrapy's defaults;
* ``addon``: ``ADDONS = {"scrapy_urlunify.Addon": 0}`` only (which turns learning on);
* ``careful``: the add-on with what a careful user writes for Redmine with the add-on's settings
  (:data:`CAREFUL`): exports' extensions denied, wiki histories, diffs and annotations one page
  with the page or version they belong to, the timeline's dates and filters, the issue tabs, the
  lists' sort orders and page sizes, the calendar's and gantt chart's months removed;

each in Scrapy's default order (depth-first, LIFO queues) and breadth-first (``DEPTH_PRIORITY=1``
and FIFO queues) (``--orders``), with ``CLOSESPIDER_PAGECOUNT`` = ``--budget`` (4000): the
budget counts ``response_received`` (a duplicate page the add-on drops counts).

Scores, per crawl (each in a fresh process), as ``bench_blog.py``'s: content covered (distinct
issues, wiki pages and news of the database seen in an item), duplicate items, *cited* (of
the items of that content, those whose ``canonical_url`` is its own URL), requests,
responses, 404s, responses downloaded until 50%, 90% and 100% of the content was first covered,
the coverage curve (content covered within the first 100 ... 4,000 responses downloaded), CPU
and wall seconds, and *wrong rules* (``_common.audit_rules``). The JSON also holds, per crawl,
the responses downloaded by URL pattern (:data:`PATTERNS`) in all and within each point of the
curve, the duplicate items by pattern, and each response's URL and status.

    python benchmarks/bench_tracker.py                    # build /tmp/bench-tracker once, run all
    python benchmarks/bench_tracker.py --configs plain --orders bfs --budget 2000 --json out.json
    python benchmarks/bench_tracker.py --url http://127.0.0.1:8091 --dir /tmp/bench-tracker
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "sites"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_blog  # noqa: E402
import redmine  # noqa: E402
from _common import (  # noqa: E402
    add_site_runs,
    audit_rules,
    child_json,
    coverage_curve,
    learned_rules,
    print_audits,
    responses_to,
    run_measured,
    site_runs,
    write_json,
)
from bench_blog import CURVE, SHARES, table  # noqa: E402

CONFIGS = ["plain", "addon", "careful"]
ORDERS = ["dfs", "bfs"]


def _careful() -> dict[str, Any]:
    from scrapy.linkextractors import IGNORED_EXTENSIONS

    return {
        # views of a page that are that page: an issue's tabs, a list's order and page size, the
        # timeline's dates and event filters, the calendar's and gantt chart's months
        "URLUNIFY_REMOVE_PARAMS": [
            "tab",
            "sort",
            "per_page",
            "from",
            "show_*",
            "month",
            "year",
            "months",
            "zoom",
            "back_url",
        ],
        # a wiki page's history, a version's diff and annotation: the page (or the version)
        "URLUNIFY_IGNORE_PATH_SUFFIXES": ["history", "diff", "annotate"],
        # exports (Scrapy's own list has pdf and png)
        "URLUNIFY_DENY_EXTENSIONS": [*IGNORED_EXTENSIONS, "atom", "csv", "txt", "html"],
    }


#: URL patterns of a Redmine, first match wins (the path, then ``?query``)
PATTERNS = [
    ("login/account", re.compile(r"^/(login|logout|account/)")),
    ("export", re.compile(r"\.(pdf|atom|csv|txt|html|png)(\?|$)")),
    ("issue tab", re.compile(r"^/issues/\d+\?tab=")),
    ("issue", re.compile(r"^/issues/\d+(\?|$)")),
    ("wiki diff", re.compile(r"/wiki/[^?]+/diff(\?|$)")),
    ("wiki annotate", re.compile(r"/wiki/[^?]+/annotate(\?|$)")),
    ("wiki old version", re.compile(r"/wiki/[^/?]+/\d+(\?|$)")),
    ("wiki history", re.compile(r"/wiki/[^/?]+/history(\?|$)")),
    ("wiki index", re.compile(r"/wiki/(date_)?index(\?|$)")),
    ("wiki page", re.compile(r"^/projects/[^/]+/wiki(/[^/?]+)?(\?|$)")),
    ("activity (dated)", re.compile(r"/activity\?(.*&)?from=")),
    ("activity", re.compile(r"/activity(\?|$)")),
    ("calendar", re.compile(r"/issues/calendar")),
    ("gantt", re.compile(r"/issues/gantt")),
    ("issue report", re.compile(r"/issues/report")),
    ("issue list filtered", re.compile(r"/issues\?(.*&)?(set_filter|query_id|[a-z_]+_id)=")),
    ("issue list sorted", re.compile(r"/issues\?(.*&)?sort=")),
    ("issue list", re.compile(r"/issues(\?(page=\d+)?)?$")),
    ("news", re.compile(r"^/news/\d+")),
    ("news list", re.compile(r"^(/projects/[^/]+)?/news(\?|$)")),
    ("time entries", re.compile(r"/time_entries")),
    ("project list", re.compile(r"^/projects(\?|$)")),
    ("boards", re.compile(r"/boards")),
    ("user", re.compile(r"^/users/")),
    ("version/roadmap", re.compile(r"^/versions/|/roadmap")),
    ("search", re.compile(r"/search")),
    ("home", re.compile(r"^/(\?|$)")),
    ("project pages", re.compile(r"^/projects")),
]

CLASS_RE = re.compile(r"(?:^|\s)controller-(issues|wiki|news)(?:\s|$)")
ISSUE_RE = re.compile(r"#(\d+)\s*$")
HISTORY_RE = re.compile(r"/projects/([^/]+)/wiki/([^/]+)/history$")


def pattern(url: str) -> str:
    """The kind of a tracker URL (:data:`PATTERNS`), ``other`` for none."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    for name, regex in PATTERNS:
        if regex.search(path):
            return name
    return "other"


def settings_for(config: str, order: str, budget: int) -> dict[str, Any]:
    """``bench_blog``'s settings (the order, the budget, the add-on), with :func:`_careful` for
    ``careful``."""
    settings = bench_blog.settings_for("addon" if config == "careful" else config, order, budget)
    if config == "careful":
        settings.update(_careful())
    return settings


def content_id(response: Any) -> str | None:
    """What the naive user's spider calls the content a response shows (None: not an issue, a
    wiki page or a news item): read from the page, not the URL."""
    classes = (response.css("body::attr(class)").get() or "").split()
    if "action-show" not in classes:
        return None
    found = CLASS_RE.search(" ".join(classes))
    if not found:
        return None
    kind = found.group(1)
    if kind == "issues":
        heading = ISSUE_RE.search((response.css("#content h2::text").get() or "").strip())
        return f"issue:{heading.group(1)}" if heading else None
    if kind == "wiki":
        for href in response.css("#content a::attr(href)").getall():
            history = HISTORY_RE.search(href)
            if history:
                return f"wiki:{history.group(1)}:{unquote(history.group(2))}"
        return None
    title = " ".join(t.strip() for t in response.css("#content h2::text").getall()).strip()
    return f"news:{title}" if title else None


def crawl(config: str, order: str, url: str, budget: int) -> dict[str, Any]:
    """One crawl in this process (called in a child): what it fetched and yielded."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess
    from scrapy.http import TextResponse
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    host = url.split("://", 1)[1].split("/", 1)[0].split(":")[0]
    items: list[dict[str, Any]] = []
    responses: list[str] = []  # received: what the budget counts and the spider sees
    downloads: list[list[Any]] = []  # downloaded [url, status], responses then dropped included

    class TrackerSpider(CrawlSpider):
        name = "tracker"
        allowed_domains = [host]
        start_urls = [f"{url}/"]
        rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

        def parse_start_url(self, response):  # type: ignore[no-untyped-def]
            return self.parse_page(response)

        def parse_page(self, response):  # type: ignore[no-untyped-def]
            if isinstance(response, TextResponse):
                found = content_id(response)
                if found:
                    yield {"url": response.url, "content_id": found}

    process = CrawlerProcess(settings_for(config, order, budget), install_root_handler=True)
    crawler = process.create_crawler(TrackerSpider)

    def scraped(item: dict[str, Any]) -> None:
        items.append({**item, "at": len(responses), "downloaded": len(downloads)})

    def received(response: Any) -> None:
        responses.append(response.url)

    def downloaded(response: Any) -> None:
        downloads.append([response.url, response.status])

    scheduled: dict[str, None] = {}  # every request the spider made, merged ones included

    def to_schedule(request: Any) -> None:
        if len(scheduled) < 200_000:
            scheduled[request.url] = None

    # named functions held here: the signals keep only weak references to receivers
    crawler.signals.connect(scraped, signals.item_scraped)
    crawler.signals.connect(received, signals.response_received)
    crawler.signals.connect(downloaded, signals.response_downloaded)
    crawler.signals.connect(to_schedule, signals.request_scheduled)
    stats, cpu_s, wall_s = run_measured(process, crawler)
    rules = learned_rules(crawler) if config != "plain" else []
    audit = audit_rules(rules, list(scheduled)) if rules else []
    return {
        "config": config,
        "order": order,
        "cpu_s": cpu_s,
        "wall_s": wall_s,
        "requests": stats.get("downloader/request_count", 0),
        "responses": stats.get("downloader/response_count", 0),
        "received": len(responses),
        "not_found": stats.get("downloader/response_status_count/404", 0),
        "redirects": sum(
            v
            for k, v in stats.items()
            if k.startswith("downloader/response_status_count/3") and isinstance(v, int)
        ),
        "items": items,
        "downloads": downloads,
        "finish_reason": stats.get("finish_reason"),
        "rules": [str(r) for r in rules],
        "rules_audited": audit,
        "wrong_rules": sum(1 for a in audit if a["wrong"]),
        "stats": {
            k: v
            for k, v in stats.items()
            if k.startswith(
                ("urlunify", "dupefilter", "scheduler/enqueued", "downloader/response_status")
            )
            and isinstance(v, (int, float))
        },
    }


def cited(
    items: list[dict[str, Any]], truth: dict[str, Any]
) -> tuple[list[int] | None, list[list[str]]]:
    """``[cited, items]``: of the items of the tracker's content, those whose
    ``canonical_url`` is the content's own URL (``/issues/N``, ``/projects/P/wiki/Title``,
    ``/news/N``; a project's wiki start page is its ``/projects/P/wiki`` too, the address of the
    project's Wiki tab), escapes aside (None when the items carry no canonical URL: plain
    Scrapy); and the first twenty others, as ``[item URL, canonical URL, the content's URL]``."""
    if not any("canonical_url" in item for item in items):
        return None, []
    urls = {
        r["key"]: unquote(r["url"])
        for kind in ("issues", "wiki_pages", "news")
        for r in truth[kind]
    }
    found = [0, 0]
    others: list[list[str]] = []
    for item in items:
        url = urls.get(item["content_id"])
        if url is None:
            continue
        found[1] += 1
        given = unquote(item.get("canonical_url") or "")
        if given == url or (url.endswith("/wiki/Wiki") and given == url[: -len("/Wiki")]):
            found[0] += 1
        elif len(others) < 20:
            others.append([item["url"], item.get("canonical_url") or "", url])
    return found, others


def score(run: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    content = {r["key"] for kind in ("issues", "wiki_pages", "news") for r in truth[kind]}
    ids = [item["content_id"] for item in run["items"]]
    seen = {i for i in ids if i in content}
    first: dict[str, int] = {}  # id -> responses downloaded when it first showed up
    repeats: Counter[str] = Counter()  # duplicate items by the pattern of their URL
    first_url: dict[str, str] = {}
    examples: list[list[str]] = []  # [first URL, repeat URL] of some duplicate items
    for item in run["items"]:
        if item["content_id"] in first:
            repeats[pattern(item["url"])] += 1
            if len(examples) < 40:
                examples.append([first_url[item["content_id"]], item["url"]])
        elif item["content_id"] in content:
            first[item["content_id"]] = item["downloaded"]
            first_url[item["content_id"]] = item["url"]
    times = sorted(first.values())
    found, others = cited(run["items"], truth)
    row = {k: v for k, v in run.items() if k not in ("items", "downloads")}
    row.update(
        {
            "content": len(content),
            "covered": len(seen),
            "covered_by_kind": dict(Counter(i.split(":", 1)[0] for i in seen)),
            "items_count": len(ids),
            "duplicate_items": len(ids) - len(set(ids)),
            "duplicate_items_by_pattern": dict(repeats.most_common()),
            "duplicate_item_examples": examples,
            "unknown_items": sum(1 for i in ids if i not in content),
            "cited": found,
            "uncited_examples": others,
        }
    )
    for share in SHARES:
        row[f"to_{share}"] = responses_to(times, len(content), share)
    row["curve"] = coverage_curve(times, CURVE)
    kinds = [pattern(u) for u, _ in run["downloads"]]
    row["patterns"] = dict(Counter(kinds).most_common())
    row["patterns_within"] = {
        str(n): dict(Counter(kinds[:n]).most_common()) for n in CURVE if n <= len(kinds)
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("/tmp/bench-tracker"),
        help="the tracker's directory (built there if absent; its database is the truth)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--issues", type=int, default=300)
    parser.add_argument(
        "--url",
        help="an already-running tracker (e.g. http://127.0.0.1:8091) of --dir: not built nor "
        "served",
    )
    add_site_runs(parser, CONFIGS, ORDERS, redmine.DEFAULT_PORT, 4000)
    args = parser.parse_args()
    if args.child:
        config, order, url, budget = args.child
        print(json.dumps(crawl(config, order, url, int(budget))))
        return
    configs, orders = site_runs(parser, args, CONFIGS, ORDERS)
    server = None
    meta: dict[str, Any] = {}
    if args.url:
        url = args.url.rstrip("/")
        port = urlsplit(url).port or 80
        if (args.dir / "tracker.json").exists():
            meta = json.loads((args.dir / "tracker.json").read_text())
    else:
        meta = redmine.build(args.dir.resolve(), args.seed, args.issues, args.port)
        print(f"tracker: {args.dir} {meta}", file=sys.stderr)
        server = redmine.serve(args.dir.resolve(), args.port, args.workers)
        url, port = f"http://127.0.0.1:{args.port}", args.port
    rows, downloads = [], {}
    try:
        truth = redmine.truth(args.dir.resolve(), port)
        if server is not None:
            meta["warm_s"] = round(
                redmine.warm([r["url"] for kind in truth.values() for r in kind]), 1
            )
        for order in orders:
            for config in configs:
                run = child_json(__file__, "--child", config, order, url, str(args.budget))
                rows.append(score(run, truth))
                downloads[f"{config}/{order}"] = run["downloads"]
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
                print(f"  {config}/{order}: {rows[-1]['patterns']}", file=sys.stderr, flush=True)
                print(
                    f"  {config}/{order} duplicate items: {rows[-1]['duplicate_items_by_pattern']}",
                    file=sys.stderr,
                    flush=True,
                )
                print_audits(config, order, run)
                write_json(
                    args.json,
                    {"tracker": meta, "budget": args.budget, "rows": rows, "downloads": downloads},
                )
    finally:
        if server is not None:
            redmine.stop(server)
    print(table(rows))
    write_json(
        args.json,
        {"tracker": meta, "budget": args.budget, "rows": rows, "downloads": downloads},
    )


if __name__ == "__main__":
    main()
