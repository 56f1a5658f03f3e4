"""What each layer saves on the demo site: URL rules, page signatures, learning; and false merges.

Real crawls of the demo site (``scrapy_urlunify.demo``), one per configuration, against the same
server; the site's ground truth counts what each crawl fetched:

* **plain Scrapy**;
* **URL rules, defaults**: the add-on line, signatures (and so learning) off;
* **URL rules, configured**: plus the per-host settings of the demo's configured spider
  (key and removed parameters of the news site, sister suffixes), signatures off;
* **+ signatures**: page signatures on (duplicate pages stop before the callback), learning off;
* **defaults + signatures + learning**: no per-host settings at all, learning on: the add-on
  line alone, as its defaults are;
* **configured + signatures + learning**.

With ``--orders dfs,bfs`` each configuration runs in Scrapy's default order (``dfs``) and
breadth-first (``bfs``: ``DEPTH_PRIORITY = 1``, FIFO queues), and a second table gives each
crawl's *coverage curve*: the site's content (a page, or a content duplicate of it) obtained
within the first N requests the server answered, tunnels left out (:data:`CURVE`).

The demo site has the traps a learner must survive (defaults spelled out, a 3 MB index with
session ids, clocks, tokens, soft 404s: ``scrapy_urlunify.demo.traps``); ``--no-traps`` crawls
the site without them.

Columns: requests; *redundant*: fetches of a page already fetched under another URL; *copies*:
items from more than one member of a content-duplicate group (print views, mirrors: distinct
URLs, equal body text), i.e. the same article stored twice; *sig dup*: responses recognized by signature;
*learned*: rules adopted; *missed*: pages never fetched (ground truth); *content_missed*: pages
whose content no fetch obtained (neither the page nor a content duplicate of it: a print view left
unfetched because its article was fetched is not content missed); *false merges*: distinct pages
dropped as already seen and never fetched. The goal: zero content missed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import BFS_SETTINGS, write_json

from scrapy_urlunify.demo import crawl as c
from scrapy_urlunify.demo.measure import measure


class DefaultsSpider(c.ConfiguredSpider):
    """The add-on's defaults: no per-host settings; every host listed, as for plain Scrapy."""

    name = "defaults"
    allowed_domains = list(c.PLAIN_ALLOWED_DOMAINS)
    custom_settings: dict[str, Any] = {}


CONFIGS: list[tuple[str, type, dict[str, Any]]] = [
    ("plain Scrapy", c.PlainSpider, {}),
    (
        "URL rules, defaults",
        DefaultsSpider,
        {**c.ADDON_SETTINGS, "URLUNIFY_SIGNATURES": False, "URLUNIFY_LEARN": False},
    ),
    (
        "URL rules, configured",
        c.ConfiguredSpider,
        {**c.ADDON_SETTINGS, "URLUNIFY_SIGNATURES": False, "URLUNIFY_LEARN": False},
    ),
    ("configured + signatures", c.ConfiguredSpider, {**c.ADDON_SETTINGS, "URLUNIFY_LEARN": False}),
    (
        "defaults + signatures + learning",
        DefaultsSpider,
        {**c.ADDON_SETTINGS, "URLUNIFY_LEARN": True},
    ),
    (
        "configured + signatures + learning",
        c.ConfiguredSpider,
        {**c.ADDON_SETTINGS, "URLUNIFY_LEARN": True},
    ),
]


#: Scrapy's default order (depth-first), and breadth-first
ORDERS: dict[str, dict[str, Any]] = {
    "dfs": {},
    "bfs": BFS_SETTINGS,
}
#: the coverage curve: content obtained within the first N requests answered
CURVE = (50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000)


def curve(records: list[Any], group: dict[str, str]) -> dict[str, int]:
    """Content obtained (groups of a page and its content duplicates) within the first N
    requests the server answered (its tunnels for https left out), for each N of
    :data:`CURVE`."""
    obtained: set[str] = set()
    within: list[int] = []
    for r in records:
        if r.method == "CONNECT":  # the proxy's tunnel for https: no response of the crawl's
            continue
        if r.method == "GET" and r.status == 200 and r.page_id in group:
            obtained.add(group[r.page_id])
        within.append(len(obtained))
    return {str(n): within[min(n, len(within)) - 1] if within else 0 for n in CURVE}


def run_all(
    size: int, traps: bool = True, orders: tuple[str, ...] = ("dfs",)
) -> list[dict[str, Any]]:
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import defer, reactor

    from scrapy_urlunify.demo.server import DemoServer
    from scrapy_urlunify.demo.site import DemoSite

    site = DemoSite(size=size, traps=traps)
    rows: list[dict[str, Any]] = []

    @defer.inlineCallbacks
    def go():  # type: ignore[no-untyped-def]
        server = DemoServer(site).start()
        try:
            for order, (name, spidercls, settings) in (
                (o, config) for o in orders for config in CONFIGS
            ):
                raw = yield c.crawl_once(server, site, spidercls, {**settings, **ORDERS[order]})
                m = measure(site, raw)
                # a page and its content duplicates (print view, mirror copies) form a group:
                # its content was obtained when any member was fetched
                group = {p: p for p in site.pages}
                for copy, original in site.content_duplicates.items():
                    group[copy] = original
                fetched = {
                    r.page_id
                    for r in raw["records"]
                    if r.method == "GET" and r.status == 200 and r.page_id
                }
                obtained = {group[p] for p in fetched}
                content_missed = sorted(p for p in site.pages if group[p] not in obtained)
                item_pages = {
                    site.page_id(i.get("url", ""), follow_redirects=True) for i in raw["items"]
                }
                copies = sum(
                    len({p for p in item_pages if p and group.get(p) == g}) - 1
                    for g in {group[p] for p in item_pages if p in group}
                )
                learned = {
                    k: v
                    for k, v in m["saved_by"]["learned"].items()
                    if "/" in k and k.count("/") >= 2
                }
                rows.append(
                    {
                        "name": name,
                        "order": order,
                        "curve": curve(raw["records"], group),
                        "content": len(set(group.values())),
                        "requests": m["requests"],
                        "redundant": m["redundant_fetches"],
                        "copies": copies,
                        "sig_dup": m["saved_by"]["signature_duplicates"],
                        "learned": len(learned),
                        "rules": sorted(learned),
                        "missed": m["pages_missed"],
                        "content_missed": len(content_missed),
                        "false_merges": m["false_merges"],
                        "items": m["items"],
                        "duplicate_items": m["duplicate_items"],
                        "soft_404s": m["soft_404s"],
                        "seconds": m["seconds"],
                    }
                )
        finally:
            yield server.stop()

    def stop(_: Any) -> Any:
        reactor.stop()  # type: ignore[attr-defined]
        return _

    reactor.callWhenRunning(lambda: go().addBoth(stop))  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size", type=int, default=300)
    ap.add_argument(
        "--no-traps", action="store_true", help="the demo site without the learner's traps"
    )
    ap.add_argument("--orders", default="dfs", help=f"comma-separated, of {list(ORDERS)}")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    orders = tuple(args.orders.split(","))
    for order in orders:
        if order not in ORDERS:
            ap.error(f"unknown order {order!r}")
    rows = run_all(args.size, traps=not args.no_traps, orders=orders)
    cols = (
        "requests",
        "redundant",
        "copies",
        "sig_dup",
        "learned",
        "missed",
        "content_missed",
        "false_merges",
        "items",
        "duplicate_items",
        "soft_404s",
        "seconds",
    )
    print(
        f"\ndemo site, size {args.size}{'' if not args.no_traps else ', no traps'}\n{'':36s}"
        + "".join(f"{c:>16s}" for c in cols)
    )
    for r in rows:
        print(f"{r['name'] + ' ' + r['order']:36s}" + "".join(f"{r[c]:>16}" for c in cols))
    print(
        f"\ncontent obtained within the first N requests ({rows[0]['content']} pages)\n{'':36s}"
        + "".join(f"{n:>8,}" for n in CURVE)
    )
    for r in rows:
        print(
            f"{r['name'] + ' ' + r['order']:36s}"
            + "".join(f"{r['curve'][str(n)]:>8}" for n in CURVE)
        )
    for r in rows:
        if r["rules"]:
            print(f"learned by {r['name']!r}: {', '.join(r['rules'])}")
    write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
