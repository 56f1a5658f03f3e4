"""A crawl of a real WordPress blog on loopback, scored against the blog's own database.

The blog is ``tools/sites/wordpress.py``'s (Debian's WordPress 6.1, MariaDB, Twenty Twenty-One,
pretty permalinks, 300 generated posts by four authors over 18 months, 10 categories, 40 tags,
2-20 threaded comments per post paged at 10, six pages; built once into ``--dir`` and reused).
The spider is what a naive user writes: a ``CrawlSpider`` with one
``Rule(LinkExtractor(), callback=..., follow=True)`` from the home page, and an item
``{url, post_id}`` from every response that shows a single post or page (WordPress puts
``postid-N`` or ``page-id-N`` in ``<body class>``): a post's other comment pages
(``/comment-page-N/``) and its "Reply" views (``?replytocom=N``) are items too, as they would be
for that user.

Configurations (``--configs``):

* ``plain``: Scrapy's defaults;
* ``addon``: ``ADDONS = {"scrapy_urlunify.Addon": 0}`` only (which turns learning on);
* ``careful``: the add-on with what a careful user writes for WordPress (:data:`CAREFUL`): the
  reply views' parameter removed, comment pages one page with their post, and its spider's
  ``LinkExtractor(deny=...)`` (:data:`CAREFUL_DENY`: the log-in page, feeds, searches);

each in Scrapy's default order (depth-first, LIFO queues) and breadth-first (``DEPTH_PRIORITY=1``
and FIFO queues) (``--orders``), with ``CLOSESPIDER_PAGECOUNT`` = ``--budget`` (4000). That
extension counts ``response_received`` signals: a duplicate page the add-on drops is received
first, so it counts, and ``requests`` exceeds the budget only by the requests in flight.

Scores, per crawl (each in a fresh process): content covered (distinct published posts and pages
of the database seen in an item), duplicate items (items beyond one per id), *cited* (of the
items of a post's or page's own view, those whose ``canonical_url`` is its permalink), requests,
responses (downloaded, redirects and errors included), 404s, responses downloaded until 50%, 90%
and 100% of the content was first covered, the *coverage curve* (content covered within the
first 100, 200, 300, 500, 750, 1,000, 1,500, 2,000, 3,000, 4,000 responses downloaded:
duplicate pages the add-on drops included, whatever ``CLOSESPIDER_PAGECOUNT`` counts), CPU
seconds of the crawl process, wall seconds, and *wrong rules* (the add-on's learned parameter
rules, each checked against the blog after the crawl: ``_common.audit_rules``). The JSON also
holds, per crawl, the responses downloaded by URL pattern (post, comment page, reply view,
archive page...) in all and within each point of the curve, and each response's URL and status.

    python benchmarks/bench_blog.py                       # build /tmp/bench-blog once, run all
    python benchmarks/bench_blog.py --configs plain --orders bfs --budget 2000 --json out.json
    python benchmarks/bench_blog.py --url http://127.0.0.1:8090 --dir /tmp/bench-blog
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "sites"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import wordpress  # noqa: E402
from _common import (  # noqa: E402
    BFS_SETTINGS,
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

CONFIGS = ["plain", "addon", "careful"]
#: What a careful user writes for a WordPress blog: the reply-form views and the paged comments
#: are the post.
CAREFUL: dict[str, Any] = {
    "URLUNIFY_REMOVE_PARAMS": ["replytocom"],
    "URLUNIFY_IGNORE_PATH_SUFFIXES": ["comment-page-*"],
}
#: and, in the spider, the links the careful user does not follow: ``LinkExtractor(deny=...)``
#: (the log-in page, feeds, searches), as a Scrapy user says it
CAREFUL_DENY = [r"/wp-login\.php", r"/feed/", r"[?&]s="]
ORDERS = ["dfs", "bfs"]
#: the coverage curve: content covered within the first N responses downloaded
CURVE = (100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 4000)
#: the "to N%" columns: responses downloaded until N% of the content was first covered
SHARES = (50, 90, 100)

BODY_RE = re.compile(rb"<body[^>]*\bclass=[\"']([^\"']*)[\"']")
ITEM_RE = re.compile(r"(?:^|\s)(?:postid|page-id)-(\d+)(?:\s|$)")

#: URL patterns of a WordPress blog, first match wins (the path, then ``?query``)
PATTERNS = [
    ("reply view", re.compile(r"[?&]replytocom=")),
    ("search", re.compile(r"[?&]s=")),
    ("shortlink", re.compile(r"^/\?p=\d+$")),
    ("login/admin", re.compile(r"^/(wp-login\.php|wp-admin/)")),
    ("wp files", re.compile(r"^/(wp-json|wp-includes|wp-content|xmlrpc\.php)")),
    ("feed", re.compile(r"/feed/(\w+/)?(\?|$)")),
    ("comment page", re.compile(r"^/\d{4}/\d\d/\d\d/[^/]+/comment-page-\d+/")),
    ("post", re.compile(r"^/\d{4}/\d\d/\d\d/[^/]+/(\?|$)")),
    ("date archive", re.compile(r"^/\d{4}/(\d\d/(\d\d/)?)?(page/\d+/)?(\?|$)")),
    ("category", re.compile(r"^/category/")),
    ("tag", re.compile(r"^/tag/")),
    ("author", re.compile(r"^/author/")),
    ("home", re.compile(r"^/(page/\d+/)?(\?|$)")),
    ("page", re.compile(r"^/[a-z0-9-]+/([a-z0-9-]+/)?(\?|$)")),
]


def pattern(url: str) -> str:
    """The kind of a blog URL (:data:`PATTERNS`), ``other`` for none."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    for name, regex in PATTERNS:
        if regex.search(path):
            return name
    return "other"


def settings_for(config: str, order: str, budget: int) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        # BENCH_LOG_LEVEL=INFO BENCH_LOG_FILE=crawl.log: what the add-on decided, for a look
        "LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        "LOG_FILE": os.environ.get("BENCH_LOG_FILE"),
        "CLOSESPIDER_PAGECOUNT": budget,
        "HTTPERROR_ALLOW_ALL": False,
    }
    if order == "bfs":
        settings.update(BFS_SETTINGS)
    if config != "plain":
        settings["ADDONS"] = {"scrapy_urlunify.Addon": 0}
    if config == "careful":
        settings.update(CAREFUL)
    return settings


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

    class BlogSpider(CrawlSpider):
        name = "blog"
        allowed_domains = [host]
        start_urls = [f"{url}/"]
        rules = (
            Rule(
                LinkExtractor(deny=CAREFUL_DENY if config == "careful" else ()),
                callback="parse_page",
                follow=True,
            ),
        )

        def parse_start_url(self, response):  # type: ignore[no-untyped-def]
            return self.parse_page(response)

        def parse_page(self, response):  # type: ignore[no-untyped-def]
            if isinstance(response, TextResponse):
                body = BODY_RE.search(response.body)
                found = ITEM_RE.search(body.group(1).decode()) if body else None
                if found:
                    yield {"url": response.url, "post_id": int(found.group(1))}

    process = CrawlerProcess(settings_for(config, order, budget), install_root_handler=True)
    crawler = process.create_crawler(BlogSpider)

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
            if k.startswith(("urlunify", "dupefilter", "scheduler/enqueued"))
            and isinstance(v, (int, float))
        },
    }


def cited(items: list[dict[str, Any]], truth: dict[str, Any]) -> list[int] | None:
    """``[cited, items]``: of the items of a post's or page's own view (any spelling of it, a
    reply view included; not one of its comment pages, a page of its own), those whose
    ``canonical_url`` is the post's permalink, as WordPress declares it (``rel=canonical``);
    None when the crawl's items carry no canonical URL (plain Scrapy)."""
    if not any("canonical_url" in item for item in items):
        return None
    permalinks = {r["id"]: r["url"] for r in truth["posts"] + truth["pages"]}
    found = [0, 0]
    for item in items:
        permalink = permalinks.get(item["post_id"])
        if permalink is None or "/comment-page-" in item["url"]:
            continue
        found[0] += item.get("canonical_url") == permalink
        found[1] += 1
    return found


def score(run: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any]:
    content = {r["id"] for r in truth["posts"] + truth["pages"]}
    ids = [item["post_id"] for item in run["items"]]
    seen = {i for i in ids if i in content}
    first: dict[int, int] = {}  # id -> responses downloaded when it first showed up
    for item in run["items"]:
        if item["post_id"] in content:
            first.setdefault(item["post_id"], item["downloaded"])
    times = sorted(first.values())
    row = {k: v for k, v in run.items() if k not in ("items", "downloads")}
    row.update(
        {
            "content": len(content),
            "covered": len(seen),
            "items_count": len(ids),
            "duplicate_items": len(ids) - len(set(ids)),
            "unknown_items": sum(1 for i in ids if i not in content),
            "cited": cited(run["items"], truth),
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


def table(rows: list[dict[str, Any]]) -> str:
    cols = [
        ("config", "config"),
        ("order", "order"),
        ("covered", "covered"),
        ("dup items", "duplicate_items"),
        ("items", "items_count"),
        ("cited", "cited"),
        ("requests", "requests"),
        ("responses", "responses"),
        ("404s", "not_found"),
        *((f"to {s}%", f"to_{s}") for s in SHARES),
        *((f"@{n:,}", f"curve:{n}") for n in CURVE),
        ("wrong rules", "wrong_rules"),
        ("CPU s", "cpu_s"),
        ("wall s", "wall_s"),
    ]
    lines = [
        "| " + " | ".join(c for c, _ in cols) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(cols) - 2)) + "|",
    ]
    for r in rows:
        cells = []
        for _, k in cols:
            if k == "covered":
                cells.append(f"{r['covered']}/{r['content']}")
            elif k == "cited":
                cells.append("-" if r.get("cited") is None else "{}/{}".format(*r["cited"]))
            elif k.startswith("curve:"):
                cells.append(str(r["curve"][k[6:]]))
            else:
                value = r.get(k, "")
                cells.append("-" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("/tmp/bench-blog"),
        help="the blog's directory (built there if absent; its database is the truth)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--posts", type=int, default=300)
    parser.add_argument(
        "--url",
        help="an already-running blog (e.g. http://127.0.0.1:8090) of --dir: not built nor served",
    )
    add_site_runs(parser, CONFIGS, ORDERS, wordpress.DEFAULT_PORT, 4000)
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
        if (args.dir / "blog.json").exists():
            meta = json.loads((args.dir / "blog.json").read_text())
    else:
        meta = wordpress.build(args.dir.resolve(), args.seed, args.posts, args.port)
        print(f"blog: {args.dir} {meta}", file=sys.stderr)
        server = wordpress.serve(args.dir.resolve(), args.port, args.workers)
        url, port = f"http://127.0.0.1:{args.port}", args.port
    rows, downloads = [], {}
    try:
        truth = wordpress.truth(args.dir.resolve(), port)
        if server is not None:
            meta["warm_s"] = round(
                wordpress.warm([r["url"] for r in truth["posts"] + truth["pages"]]), 1
            )
        for order in orders:
            for config in configs:
                run = child_json(__file__, "--child", config, order, url, str(args.budget))
                rows.append(score(run, truth))
                downloads[f"{config}/{order}"] = run["downloads"]
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
                print(f"  {config}/{order}: {rows[-1]['patterns']}", file=sys.stderr, flush=True)
                print_audits(config, order, run)
    finally:
        if server is not None:
            wordpress.stop(server)
    print(table(rows))
    write_json(
        args.json,
        {"blog": meta, "budget": args.budget, "rows": rows, "downloads": downloads},
    )


if __name__ == "__main__":
    main()
