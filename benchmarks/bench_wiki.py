"""A crawl of a real MediaWiki on loopback, scored against the wiki's own database.

The wiki is ``tools/sites/mediawiki.py``'s (Debian's MediaWiki 1.39, SQLite, short URLs, 340
generated articles + the Main Page, redirects, categories, templates, 2-4 revisions each; built
once into ``--dir`` and reused). The spider is what a naive user writes: a ``CrawlSpider`` with
one ``Rule(LinkExtractor(), callback=..., follow=True)`` from the Main Page, and an item
``{url, title}`` from every response that shows an article (the page's own JS config says
``wgIsArticle`` in namespace 0): an old revision, a redirect view and a printable view are items
too, as they would be for that user.

Configurations (``--configs``):

* ``plain``: Scrapy's defaults;
* ``addon``: ``ADDONS = {"scrapy_urlunify.Addon": 0}`` only (which turns learning on);
* ``nonear``: the add-on with ``URLUNIFY_NEAR_DUPLICATES = False`` (the exact signature alone:
  what near-duplicate pages cost and save);
* ``nofrontier``: the add-on with ``URLUNIFY_FRONTIER = False`` (requests of URL patterns that
  bring nothing new are not scheduled after the others: ``docs/frontier.md``);
* ``follow``: the add-on with ``URLUNIFY_ROBOTS_NOFOLLOW = False`` (the links of pages that
  declare ``nofollow`` -- history, old revisions, diffs, special pages -- followed as plain
  Scrapy does);
* ``nolearn``: the add-on with ``URLUNIFY_LEARN = False``;
* ``careful``: the add-on with the settings a careful user writes for MediaWiki (key parameters
  ``title``, ``action``, ``oldid``, ``diff``..., ``returnto``/``returntoquery`` removed);

each in Scrapy's default order (depth-first, LIFO queues) and breadth-first (``DEPTH_PRIORITY=1``
and FIFO queues) (``--orders``), with ``CLOSESPIDER_PAGECOUNT`` = ``--budget`` (6000). That
extension counts ``response_received`` signals: a duplicate page the add-on drops is received
first (``DuplicatePageGate`` drops it in the spider's input chain), so it counts, and
``requests`` exceeds the budget only by the requests in flight (up to ``CONCURRENT_REQUESTS``).

Scores, per crawl (each in a fresh process): articles covered (distinct articles of the
database seen in an item), duplicate items (items beyond one per article), split into *same
revision* (an article's revision already yielded, shown again: a permanent link, a redirect view,
a diff of the latest edit: the same text, which the near-duplicate signature is for), *older
revisions* (another revision of an article yielded: another text) and *not articles* (a redirect
page shown with ``redirect=no``, a title the database has no article for), *cited* (of the
items showing an article at its latest revision, those whose ``canonical_url`` is its
``/wiki/Title``), login/account pages
downloaded (``Special:UserLogin`` / ``Special:CreateAccount``, counted at ``response_downloaded``:
received or not, whatever the add-on does with them), requests, responses, responses received
until the last article first showed up, the responses downloaded until 90% of the articles were
covered (``to 90% dl``) and the *coverage curve*: articles covered within the first 100, 200,
..., 6,000 responses downloaded (``in 1,500 dl``: duplicate pages dropped included, whatever
``CLOSESPIDER_PAGECOUNT`` counts), items, CPU seconds of the crawl process, wall seconds, and
*wrong rules*: the parameter rules the crawl ended with, each checked against the wiki itself
after the crawl (``_common.audit_rules``: among the URLs the spider made, merged ones included,
those the rule covers, grouped by the rest of their URL; up to 12 values of each of the 5
largest groups, one per leading part first, fetched again and compared with the group's first
page as the crawl compares pages: one body text, or near-duplicates; a page that is neither
makes the rule wrong, and both URLs are printed).

    python benchmarks/bench_wiki.py                       # build /tmp/bench-wiki once, run all
    python benchmarks/bench_wiki.py --configs plain,careful --orders bfs --json out.json
    python benchmarks/bench_wiki.py --url http://127.0.0.1:8089 --dir /tmp/bench-wiki
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus, urlencode
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "sites"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mediawiki  # noqa: E402
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

CONFIGS = ["plain", "addon", "follow", "nofrontier", "nonear", "nolearn", "careful"]
ORDERS = ["dfs", "bfs"]
#: the coverage curve, the "in N dl" columns: articles covered within the first N responses
#: downloaded
WITHIN = (100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 6000)

#: What a careful user sets for a MediaWiki (the "careful user's settings" of the first
#: reported figures, docs/test_sites.md).
CAREFUL = {
    "URLUNIFY_KEY_PARAMS": [
        "title",
        "action",
        "oldid",
        "diff",
        "curid",
        "target",
        "from",
        "until",
        "offset",
        "limit",
        "days",
    ],
    "URLUNIFY_REMOVE_PARAMS": ["returnto", "returntoquery"],
}

ARTICLE_RE = re.compile(rb'"wgNamespaceNumber":0,.*?"wgIsArticle":true', re.S)
TITLE_RE = re.compile(rb'"wgTitle":"((?:[^"\\]|\\.)*)"')
REVISION_RE = re.compile(rb'"wgRevisionId":(\d+)')
LOGIN_RE = re.compile(r"Special:(UserLogin|CreateAccount)")


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
    if config == "nolearn":
        settings["URLUNIFY_LEARN"] = False
    if config == "nonear":
        settings["URLUNIFY_NEAR_DUPLICATES"] = False
    if config == "nofrontier":
        settings["URLUNIFY_FRONTIER"] = False
    if config == "follow":
        settings["URLUNIFY_ROBOTS_NOFOLLOW"] = False
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
    downloads: list[str] = []  # downloaded, including responses a middleware then drops

    class WikiSpider(CrawlSpider):
        name = "wiki"
        allowed_domains = [host]
        start_urls = [f"{url}/wiki/Main_Page"]
        rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

        def parse_start_url(self, response):  # type: ignore[no-untyped-def]
            return self.parse_page(response)

        def parse_page(self, response):  # type: ignore[no-untyped-def]
            if isinstance(response, TextResponse) and ARTICLE_RE.search(response.body):
                title = TITLE_RE.search(response.body)
                revision = REVISION_RE.search(response.body)
                if title:
                    yield {
                        "url": response.url,
                        "title": json.loads(b'"' + title.group(1) + b'"'),
                        "revision": int(revision.group(1)) if revision else None,
                    }

    process = CrawlerProcess(settings_for(config, order, budget), install_root_handler=True)
    crawler = process.create_crawler(WikiSpider)

    def scraped(item: dict[str, str]) -> None:
        items.append({**item, "at": len(responses), "downloaded": len(downloads)})

    def received(response: Any) -> None:
        responses.append(response.url)

    def downloaded(response: Any) -> None:
        downloads.append(response.url)

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
    audit = audit_rules(learned_rules(crawler), list(scheduled)) if config != "plain" else []
    return {
        "config": config,
        "order": order,
        "cpu_s": cpu_s,
        "wall_s": wall_s,
        "requests": stats.get("downloader/request_count", 0),
        "responses": stats.get("downloader/response_count", 0),
        "received": len(responses),
        "login_pages": sum(1 for u in downloads if LOGIN_RE.search(unquote_plus(u))),
        "login_pages_received": sum(1 for u in responses if LOGIN_RE.search(unquote_plus(u))),
        "items": items,
        "items_dropped": stats.get("item_dropped_count", 0),
        "finish_reason": stats.get("finish_reason"),
        "rules_audited": audit,
        "wrong_rules": sum(1 for a in audit if a["wrong"]),
        "stats": {
            k: v
            for k, v in stats.items()
            if k.startswith(("urlunify", "dupefilter", "scheduler/enqueued"))
            and isinstance(v, (int, float))
        },
    }


def truth_from_api(url: str) -> dict[str, Any]:
    """The articles of an external wiki, from its API (when its directory is not at hand)."""
    articles, params = (
        [],
        {
            "action": "query",
            "format": "json",
            "generator": "allpages",
            "gapnamespace": "0",
            "gapfilterredir": "nonredirects",
            "gaplimit": "max",
            "prop": "info",
        },
    )
    while True:
        with urlopen(f"{url}/w/api.php?{urlencode(params)}", timeout=60) as resp:
            data = json.load(resp)
        articles += [
            {"id": p["pageid"], "title": p["title"], "latest": p["lastrevid"]}
            for p in data.get("query", {}).get("pages", {}).values()
        ]
        if "continue" not in data:
            return {"articles": articles, "redirects": []}
        params.update(data["continue"])


def cited(items: list[dict[str, Any]], truth: dict[str, Any]) -> list[int] | None:
    """``[cited, items]``: of the items showing an article at its latest revision (under any
    URL: ``/wiki/Title``, ``index.php?title=Title``, a redirect's title, a diff of its last
    edit), those whose ``canonical_url`` is the article's ``/wiki/Title``, escapes aside; None
    when the crawl's items carry no canonical URL (plain Scrapy)."""
    if not any("canonical_url" in item for item in items):
        return None
    latest = {a["title"]: a["latest"] for a in truth["articles"]}
    found = [0, 0]
    for item in items:
        title = item["title"]
        if latest.get(title) is None or item.get("revision") != latest[title]:
            continue
        base = item["url"].split("/", 3)
        expected = f"{base[0]}//{base[2]}/wiki/{title.replace(' ', '_')}"
        found[0] += unquote_plus(item.get("canonical_url") or "") == expected
        found[1] += 1
    return found


def score(
    run: dict[str, Any], truth: dict[str, Any], within: tuple[int, ...] = WITHIN
) -> dict[str, Any]:
    by_title = {a["title"]: a["id"] for a in truth["articles"]}
    ids = [by_title.get(item["title"]) for item in run["items"]]
    seen = {i for i in ids if i is not None}
    # the same text twice: one article at one revision (a permanent link, a redirect view, a
    # diff of the latest edit show the revision the article shows)
    shown = {
        (i, item.get("revision"))
        for i, item in zip(ids, run["items"], strict=True)
        if i is not None
    }
    first: dict[int, int] = {}
    first_downloaded: dict[int, int] = {}
    for i, item in zip(ids, run["items"], strict=True):
        if i is not None:
            first.setdefault(i, item["at"])
            first_downloaded.setdefault(i, item.get("downloaded", 0))
    row = {k: v for k, v in run.items() if k != "items"}
    row.update(
        {
            "articles": len(by_title),
            "covered": len(seen),
            "items_count": len(ids),
            "duplicate_items": len(ids) - len(seen),
            # an older revision of an article seen is another text, yet another item of it
            "same_revision_items": len(ids) - ids.count(None) - len(shown),
            "older_revision_items": len(shown) - len(seen),
            "unknown_items": ids.count(None),
            "cited": cited(run["items"], truth),
            # responses received when the last article first showed up
            "responses_to_cover": max(first.values(), default=0),
        }
    )
    # articles covered within the first n responses downloaded (duplicate pages the add-on drops
    # included), whatever CLOSESPIDER_PAGECOUNT counts
    times = sorted(first_downloaded.values())
    for n, covered in coverage_curve(times, within).items():
        row[f"covered_within_{n}"] = covered
    row["to_90_downloaded"] = responses_to(times, len(by_title), 90)
    return row


def table(rows: list[dict[str, Any]]) -> str:
    cols = [
        ("config", "config"),
        ("order", "order"),
        ("covered", "covered"),
        ("dup items", "duplicate_items"),
        ("same revision", "same_revision_items"),
        ("older revisions", "older_revision_items"),
        ("not articles", "unknown_items"),
        ("items", "items_count"),
        ("cited", "cited"),
        ("login pages", "login_pages"),
        ("requests", "requests"),
        ("responses", "responses"),
        ("to cover", "responses_to_cover"),
        ("wrong rules", "wrong_rules"),
        ("to 90% dl", "to_90_downloaded"),
        *((f"in {n:,} dl", f"covered_within_{n}") for n in WITHIN),
        ("CPU s", "cpu_s"),
        ("wall s", "wall_s"),
    ]
    lines = [
        "| " + " | ".join(c for c, _ in cols) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(cols) - 2)) + "|",
    ]
    for r in rows:
        cells = [
            f"{r['covered']}/{r['articles']}"
            if k == "covered"
            else "{}/{}".format(*r[k])
            if isinstance(r.get(k), list)
            else "-"
            if r.get(k, "") is None
            else str(r.get(k, ""))
            for _, k in cols
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("/tmp/bench-wiki"),
        help="the wiki's directory (built there if absent; its database is the truth)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--articles", type=int, default=340)
    parser.add_argument(
        "--url",
        help="an already-running wiki (e.g. http://127.0.0.1:8089): not built nor "
        "served; truth from --dir if it holds a wiki, else from its API",
    )
    add_site_runs(parser, CONFIGS, ORDERS, mediawiki.DEFAULT_PORT, 6000)
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
        truth = (
            mediawiki.truth(args.dir) if (args.dir / "wiki.json").exists() else truth_from_api(url)
        )
    else:
        meta = mediawiki.build(args.dir.resolve(), args.seed, args.articles, args.port)
        print(f"wiki: {args.dir} {meta}", file=sys.stderr)
        server = mediawiki.serve(args.dir.resolve(), args.port, args.workers)
        url = f"http://127.0.0.1:{args.port}"
        truth = mediawiki.truth(args.dir)
    rows = []
    try:
        if server is not None:
            meta["warm_s"] = round(mediawiki.warm(url, [a["title"] for a in truth["articles"]]), 1)
        for order in orders:
            for config in configs:
                run = child_json(__file__, "--child", config, order, url, str(args.budget))
                rows.append(score(run, truth))
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
                print_audits(config, order, run)
    finally:
        if server is not None:
            mediawiki.stop(server)
    print(table(rows))
    write_json(args.json, {"wiki": meta, "budget": args.budget, "rows": rows})


if __name__ == "__main__":
    main()
