"""A crawl of the generated DUST shop (``tools/sites/dustsite.py``), scored against its URL floor;
``--site store``: of the generated WooCommerce-like store (``tools/sites/storesite.py``) instead.

The shop serves a CMS route beside pretty URLs, three host names (``www.shop.test``,
``shop.test`` and the mirror ``mirror.shop.test``), noise parameters (``utm_*``, ``ref``,
per-view ``sessionid``/``;jsessionid``, ``print=1``, ``view``, ``sort`` on product pages),
listings whose ``page``, ``limit`` and ``sort`` matter, and endless spaces made of DUST only
(listing filters the shop ignores, a calendar's days). Its *URL floor* is one fetch per distinct
page reachable from the start URL (the ground truth: each page declares its id).

The store (``--site store``) is built otherwise, so that results tuned to the shop show: a
WordPress query form (``/?post_type=product&p=N``, ``/?p=N``, the shortlink each product and
post declares) and a category path form beside
pretty URLs, AMP and ``comment-page-1`` segments (later comment pages are pages), a mobile host
``m.store.test``, ``add-to-cart``/``add_to_wishlist``/``replytocom``/a per-view ``_wpnonce``/a
one-value ``v`` hash, ``/page/N/`` and ``?paged=N``, and filters (``filter_color``,
``min_price``/``max_price``) that matter unless they keep a whole category; see its docstring.

The spider is what a naive user writes: a ``CrawlSpider`` with one
``Rule(LinkExtractor(), callback=..., follow=True)`` from ``http://www.shop.test/`` and an item
``{url, page_id}`` per page (read from its ``<meta name="page-id">``); the store's spider is
the same from ``http://www.store.test/``. Configurations
(``--configs``), each in a fresh process, in Scrapy's default order (``dfs``: depth-first) and,
with ``--orders dfs,bfs``, breadth-first too (``bfs``: ``DEPTH_PRIORITY = 1``, FIFO queues):

* ``plain``: Scrapy's defaults;
* ``addon``: ``ADDONS = {"scrapy_urlunify.Addon": 0}`` only (which turns learning on);
* ``mirror``: the add-on, with the mirror (the store: its mobile host) named in
  ``URLUNIFY_DOMAIN_ALIASES`` (the site module's ``MIRROR_SETTINGS``);
* ``careful``: the add-on with what a careful user writes for the site (its module's
  ``CAREFUL_SETTINGS``);
* ``nolearn``: the add-on with ``URLUNIFY_LEARN = False``;
* ``presence``: the add-on with ``URLUNIFY_LEARN_PRESENCE = True`` (``print=1`` learned from
  pages with and without it; off by default, see docs/learning.md);
* ``learnonly``: learning alone, the add-on with its built-in identity rules off as far as the
  settings allow (:data:`BUILTINS_OFF`: no session-id, tracking- or action-parameter lists, no
  ``www`` prefix, no index pages, ``http`` and ``https`` apart) and learning on. Left on: the rules no
  setting switches (fragment, escapes, slashes, sorted parameters), the follow filters
  (extensions, URL length, traps), page signatures and declared canonicals.

A crawl stops at ``--cap`` downloaded responses (counted at ``response_downloaded``, so responses
the add-on drops count too) or ``--timeout`` seconds. The host names reach the shop's server (a
forward proxy for http, in its own process) through the demo's ``DemoProxyMiddleware``.

Scores: pages covered (distinct page ids seen in an item) / floor, fetches
(``downloader/response_count``) and fetches / floor, duplicate items (items beyond one per page
id), items cited as their page declares (of the first item of each page that declares a
``rel=canonical``, those whose ``canonical_url`` is it), pages missed (floor - covered),
requests dropped at dequeue
(``urlunify/dropped_at_dequeue``), rules learned, CPU seconds of the crawl process; and the
*coverage curve*: pages covered within the first N responses downloaded (:data:`CURVE`), and the
responses until 90% of the floor was covered.

    python benchmarks/bench_dust.py                            # all seven, seed 1, 600 products
    python benchmarks/bench_dust.py --configs addon,careful --products 100 --categories 6
    python benchmarks/bench_dust.py --configs plain,addon --orders dfs,bfs     # the curves
    python benchmarks/bench_dust.py --configs mirror --set URLUNIFY_LEARN_PROBATION_SAMPLES=5
    python benchmarks/bench_dust.py --site store --configs plain,addon --explain
"""

from __future__ import annotations

import argparse
import html
import importlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "sites"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    BFS_SETTINGS,
    child_json,
    coverage_curve,
    responses_to,
    run_measured,
    write_json,
)

CONFIGS = ["plain", "addon", "mirror", "careful", "nolearn", "presence", "learnonly"]
ORDERS = ["dfs", "bfs"]
#: the coverage curve: pages covered within the first N responses downloaded
CURVE = (100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 6000)

#: ``--site``: the module of each generated site in ``tools/sites`` and its site class. Both
#: modules have one interface: ``HOSTS``, ``MIRROR_SETTINGS`` (the mirror named: what a user who
#: noticed it writes), ``CAREFUL_SETTINGS`` (what a careful user writes for the site),
#: ``shop_spider()``, ``main()`` (``serve``, ``truth``) and the site class.
SITES = {"shop": ("dustsite", "DustSite"), "store": ("storesite", "StoreSite")}
#: What a URL is, without its values (``--explain``): the site's names and numbers in a path
SHAPES: dict[str, tuple[tuple[str, str], ...]] = {
    "shop": ((r"/\d+-[a-z0-9-]+", "/N"),),
    "store": (
        (r"^/shop/[^/]+/[^/]+/", "/shop/C/S/"),
        (r"^/product/[^/]+/", "/product/S/"),
        (r"^/product-(category|tag)/[^/]+/", r"/product-\1/C/"),
        (r"^/blog/(?!page/)[^/]+/", "/blog/S/"),
        (r"^/\d{4}/\d{2}/", "/YYYY/MM/"),
        (r"/page/\d+/", "/page/N/"),
        (r"/comment-page-(?!1/)\d+/", "/comment-page-N/"),
    ),
}


class Site(Protocol):
    """What the scoring reads of a generated site."""

    def page_id(self, url: str) -> str | None: ...

    def reachable(self, start: str = ...) -> dict[str, str]: ...

    def render(self, url: str) -> tuple[int, bytes]: ...


def site_module(site: str) -> ModuleType:
    """The module of ``--site`` (``tools/sites`` is on the path)."""
    return importlib.import_module(SITES[site][0])


def make_site(name: str, seed: int, categories: int, products: int) -> Site:
    """The generated site of ``--site`` ``name`` for a seed and size."""
    site_class: Any = getattr(site_module(name), SITES[name][1])
    site: Site = site_class(seed, categories, products)
    return site


#: The add-on's built-in identity rules that a setting turns off (``learnonly``).
BUILTINS_OFF: dict[str, Any] = {
    "URLUNIFY_STRIP_SESSION_IDS": False,
    "URLUNIFY_STRIP_TRACKING_PARAMS": False,
    "URLUNIFY_IGNORE_ACTION_PARAMS": False,
    "URLUNIFY_STRIP_HOST_PREFIXES": [],
    "URLUNIFY_INDEX_PAGES": [],
    "URLUNIFY_IGNORE_SCHEME": False,
}


def settings_for(
    config: str, proxy: str, cap_s: int, order: str = "dfs", site: str = "shop"
) -> dict[str, Any]:
    from scrapy_urlunify.demo.proxy import demo_settings

    module = site_module(site)
    settings: dict[str, Any] = {
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        # BENCH_LOG_LEVEL=DEBUG BENCH_LOG_FILE=crawl.log: what the add-on decided, for a look
        "LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        "LOG_FILE": os.environ.get("BENCH_LOG_FILE"),
        "CLOSESPIDER_TIMEOUT": cap_s,
        **demo_settings(proxy, URLUNIFY_DEMO_HOSTS=list(module.HOSTS)),
    }
    if order == "bfs":
        settings.update(BFS_SETTINGS)
    if config != "plain":
        settings["ADDONS"] = {"scrapy_urlunify.Addon": 0}
    if config == "nolearn":
        settings["URLUNIFY_LEARN"] = False
    if config == "presence":
        settings["URLUNIFY_LEARN_PRESENCE"] = True
    if config == "mirror":
        settings.update(module.MIRROR_SETTINGS)
    if config == "careful":
        settings.update(module.CAREFUL_SETTINGS)
    if config == "learnonly":
        settings.update(BUILTINS_OFF)
    return settings


def crawl(
    config: str,
    proxy: str,
    cap: int,
    timeout: int,
    extra: dict[str, Any] | None = None,
    order: str = "dfs",
    site: str = "shop",
) -> dict[str, Any]:
    """One crawl in this process (called in a child): its stats and items. ``extra``: settings
    added to an add-on configuration (``--set``)."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    items: list[dict[str, Any]] = []
    downloads: list[str] = []

    settings = settings_for(config, proxy, timeout, order, site)
    if config != "plain":
        settings.update(extra or {})
    process = CrawlerProcess(settings, install_root_handler=True)
    crawler = process.create_crawler(site_module(site).shop_spider())

    def scraped(item: dict[str, str]) -> None:
        items.append({**item, "downloaded": len(downloads)})

    def downloaded(response: Any, request: Any, spider: Any) -> None:
        downloads.append(response.url)
        if len(downloads) == cap and crawler.engine:
            crawler.engine.close_spider(spider, "fetch_cap")

    # named functions held here: the signals keep only weak references to receivers
    crawler.signals.connect(scraped, signals.item_scraped)
    crawler.signals.connect(downloaded, signals.response_downloaded)
    stats, cpu_s, wall_s = run_measured(process, crawler)
    return {
        "config": config,
        "order": order,
        "cpu_s": cpu_s,
        "wall_s": wall_s,
        "fetches": stats.get("downloader/response_count", 0),
        "downloads": downloads,
        "items": items,
        "finish_reason": stats.get("finish_reason"),
        "dropped_at_dequeue": stats.get("urlunify/dropped_at_dequeue", 0),
        "learned": sorted(
            k.split("/", 3)[3]
            for k in stats
            if k.startswith("urlunify/learned/") and k.count("/") >= 4
        ),
        "stats": {
            k: v
            for k, v in stats.items()
            if k.startswith(("urlunify", "dupefilter", "scheduler/enqueued"))
            and isinstance(v, (int, float))
        },
    }


def shape(url: str, site: str = "shop") -> str:
    """What a URL is, without its values: ``www.shop.test /product/N ?print,ref``,
    ``m.store.test /product/S/amp/ ?v``."""
    parts = urlsplit(url)
    path = re.sub(r";jsessionid=[^/?]*", ";jsessionid", parts.path)
    for pattern, replacement in SHAPES[site]:
        path = re.sub(pattern, replacement, path)
    names = sorted({name for name, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return f"{parts.hostname} {path}" + (" ?" + ",".join(names) if names else "")


def excess(
    downloads: list[str], site: Site, items: list[dict[str, Any]], name: str = "shop"
) -> dict[str, Any]:
    """Where the fetches beyond one per page went, and the URLs of duplicate items, by shape."""
    seen: set[str | None] = set()
    refetched: Counter[str] = Counter()
    for url in downloads:
        page = site.page_id(url)
        if page in seen:
            refetched[shape(url, name)] += 1
        seen.add(page)
    first: set[str] = set()
    duplicated: Counter[str] = Counter()
    for item in items:
        if item["page_id"] in first:
            duplicated[shape(item["url"], name)] += 1
        first.add(item["page_id"])
    return {
        "refetched": dict(refetched.most_common()),
        "duplicate_items": dict(duplicated.most_common()),
    }


#: the canonical a page of the generated sites declares
CANONICAL_LINK = re.compile(rb'<link rel="canonical" href="([^"]+)"')


def cited(site: Site, items: list[dict[str, Any]], truth: dict[str, str]) -> list[int] | None:
    """``[cited, declaring]``: of the first item of each page that declares a canonical, those
    whose ``canonical_url`` is that canonical (what a careful user cites); None when the
    crawl's items carry no canonical URL (plain Scrapy)."""
    if not any("canonical_url" in item for item in items):
        return None
    found = [0, 0]
    seen: set[str] = set()
    for item in items:
        page = item["page_id"]
        if page not in truth or page in seen:
            continue
        seen.add(page)
        match = CANONICAL_LINK.search(site.render(item["url"])[1])
        if match is not None:
            declared = urljoin(item["url"], html.unescape(match.group(1).decode()))
            found[0] += item.get("canonical_url") == declared
            found[1] += 1
    return found


def score(
    run: dict[str, Any], site: Site, truth: dict[str, str], name: str = "shop"
) -> dict[str, Any]:
    floor = len(truth)
    ids = [item["page_id"] for item in run["items"]]
    covered = set(ids) & set(truth)
    reached = {site.page_id(url) for url in run["downloads"]} - {None}
    first: dict[str, int] = {}  # page id -> responses downloaded when its item first came
    for item in run["items"]:
        if item["page_id"] in truth:
            first.setdefault(item["page_id"], item["downloaded"])
    times = sorted(first.values())
    row = {k: v for k, v in run.items() if k not in ("items", "downloads")}
    row.update(
        {
            "floor": floor,
            "to_90": responses_to(times, floor, 90),
            "curve": coverage_curve(times, CURVE),
            "covered": len(covered),
            "items_count": len(ids),
            "duplicate_items": len(ids) - len(set(ids)),
            "missed": floor - len(covered),
            "missed_pages": sorted(set(truth) - covered)[:20],
            "fetched_not_itemised": len(reached - covered),
            "per_floor": round(run["fetches"] / floor, 2),
            "excess": excess(run["downloads"], site, run["items"], name),
            "cited": cited(site, run["items"], truth),
        }
    )
    return row


def table(rows: list[dict[str, Any]]) -> str:
    cols = [
        ("config", "config"),
        ("order", "order"),
        ("covered", "covered"),
        ("fetches", "fetches"),
        ("fetches/floor", "per_floor"),
        ("dup items", "duplicate_items"),
        ("cited", "cited"),
        ("missed", "missed"),
        ("dropped at dequeue", "dropped_at_dequeue"),
        ("to 90%", "to_90"),
        *((f"@{n:,}", f"curve:{n}") for n in CURVE),
        ("rules learned", "learned"),
        ("finish", "finish_reason"),
        ("CPU s", "cpu_s"),
        ("wall s", "wall_s"),
    ]
    lines = [
        "| " + " | ".join(c for c, _ in cols) + " |",
        "|---|---|" + "|".join(["---:"] * (len(cols) - 2)) + "|",
    ]
    for r in rows:
        cells = []
        for _, key in cols:
            if key == "covered":
                cells.append(f"{r['covered']}/{r['floor']}")
            elif key == "cited":
                cells.append("-" if r["cited"] is None else "{}/{}".format(*r["cited"]))
            elif key == "learned":
                cells.append(", ".join(r["learned"]) or "—")
            elif key.startswith("curve:"):
                cells.append(str(r["curve"][key[6:]]))
            else:
                value = r.get(key)
                cells.append("-" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def start_server(args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    """The site's server in its own process on a free port: (process, proxy URL)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tools" / "sites" / f"{SITES[args.site][0]}.py"),
            "serve",
            "--port",
            "0",
            "--seed",
            str(args.seed),
            "--products",
            str(args.products),
            "--categories",
            str(args.categories),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "serving on http://127.0.0.1:PORT (...)"
    if not line.startswith("serving on "):
        proc.kill()
        raise SystemExit(f"the {args.site}'s server did not start: {line!r}")
    return proc, line.split()[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--site",
        choices=sorted(SITES),
        default="shop",
        help="the generated site: the OpenCart-like shop (dustsite.py, the default) or the "
        "WooCommerce-like store (storesite.py)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--products", type=int, default=600)
    parser.add_argument("--categories", type=int, default=20)
    parser.add_argument(
        "--configs", default=",".join(CONFIGS), help=f"comma-separated, of {CONFIGS}"
    )
    parser.add_argument(
        "--orders", default="dfs", help=f"comma-separated, of {ORDERS} (default: dfs)"
    )
    parser.add_argument(
        "--cap", type=int, default=6000, help="downloaded responses after which a crawl stops"
    )
    parser.add_argument(
        "--timeout", type=int, default=1200, help="CLOSESPIDER_TIMEOUT of each crawl"
    )
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also print, per crawl, where the fetches beyond one per page went (by URL shape)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting added to every add-on configuration, VALUE read as JSON "
        "(e.g. URLUNIFY_LEARN_PROBATION_SAMPLES=5); repeatable",
    )
    parser.add_argument(
        "--child",
        nargs=6,
        metavar=("CONFIG", "PROXY", "CAP", "TIMEOUT", "EXTRA", "ORDER"),
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args()
    if args.child:
        config, proxy, cap, timeout, added, order = args.child
        run = crawl(config, proxy, int(cap), int(timeout), json.loads(added), order, args.site)
        print(json.dumps(run))
        return
    extra: dict[str, Any] = {}
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep or not name:
            parser.error(f"--set {item!r}: expected NAME=VALUE")
        try:
            extra[name] = json.loads(value)
        except ValueError:
            extra[name] = value
    configs = args.configs.split(",")
    for name in configs:
        if name not in CONFIGS:
            parser.error(f"unknown configuration {name!r}")
    orders = args.orders.split(",")
    for name in orders:
        if name not in ORDERS:
            parser.error(f"unknown order {name!r}")
    site = make_site(args.site, args.seed, args.categories, args.products)
    truth = site.reachable()
    print(
        f"{args.site}: seed {args.seed}, {args.products} products, {args.categories} categories, "
        f"URL floor {len(truth)}",
        file=sys.stderr,
    )
    server, proxy = start_server(args)
    rows = []
    try:
        for order in orders:
            for config in configs:
                run = child_json(
                    __file__,
                    "--child",
                    config,
                    proxy,
                    str(args.cap),
                    str(args.timeout),
                    json.dumps(extra),
                    order,
                    "--site",
                    args.site,
                )
                rows.append(score(run, site, truth, args.site))
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait()
    print(table(rows))
    if args.explain:
        for row in rows:
            name = f"{row['config']}/{row['order']}"
            print(f"\n{name}: fetched again (page fetched before), by URL shape:")
            for what, n in row["excess"]["refetched"].items():
                print(f"  {n:6d}  {what}")
            print(f"{name}: duplicate items, by URL shape:")
            for what, n in row["excess"]["duplicate_items"].items():
                print(f"  {n:6d}  {what}")
    write_json(
        args.json,
        {
            "site": args.site,
            "seed": args.seed,
            "products": args.products,
            "categories": args.categories,
            "floor": len(truth),
            "cap": args.cap,
            "settings": extra,
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
