"""Calibrate the near-duplicate fingerprint: distances of true duplicate and true distinct pairs.

Data sets (real pages, no network):

* ``python3-doc``: every HTML page of Debian's python3-doc (``apt-get install python3-doc``,
  /usr/share/doc/python3/html): hundreds of distinct pages in one Sphinx template, from short
  listings of one template (``library/frameworks.html``, ...) to 700 KB references.
  *True near-duplicates*: each page against a view of it with one of the variations that make
  near-duplicate pages, made on its HTML: a MediaWiki "Revision as of ..." banner (Permanent link),
  a "(Redirected from ...)" line, a "Last edited on" line with another date, a view counter with
  another count, a per-view form token and session id in links, the print view (navigation, sidebar,
  search and footer removed, a "Retrieved from" line added), three words edited, and all of banner +
  redirect + counter + last-edited at once. *True distinct pairs*: every pair of distinct pages.
* ``demo``: the package's demo site (``scrapy_urlunify.demo.site.DemoSite``), generated text from a
  small vocabulary, so distinct pages look alike: near-duplicates are two views of a page with
  a clock (its text changes on every view) and the print/mirror copies of the ground truth;
  distinct pairs are every pair of its unique pages.

For each text (``main``: :func:`main_text`, what the fingerprint reads; ``body``: the exact
signature's body text, for comparison) it prints, per distance threshold, the recall of each
variation and the distinct pairs merged (false positives) with the precision over all pairs,
and the closest distinct pairs, to look at by hand.

Usage: PYTHONPATH=. python tools/calibrate_near_duplicates.py [--root DIR] [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lxml import etree, html

from scrapy_urlunify.learning._near_duplicates import (
    MIN_FEATURES,
    distance,
    fingerprint,
    folded_fingerprint,
    main_text,
)
from scrapy_urlunify.learning._page_signature import body_text

ROOT = Path("/usr/share/doc/python3/html")
THRESHOLDS = range(11)
#: shown, not counted in the recall of all pairs nor the precision: another text, not a view
APART = frozenset({"previous revision"})
_NAV = (
    "//*[@role='navigation']|//*[contains(@class,'related')]|//*[contains(@class,'sphinxsidebar')]"
    "|//*[@class='footer']|//form|//footer|//nav"
)


def _main(root: etree._Element) -> etree._Element:
    found = root.xpath("(//main|//*[@role='main'])[1]") or root.xpath("//body") or [root]
    return found[0]


def _fragment(markup: str) -> etree._Element:
    return html.fragment_fromstring(markup)


def _prepend(markup: str) -> Callable[[etree._Element], None]:
    def change(root: etree._Element) -> None:
        main = _main(root)
        main.insert(0, _fragment(markup))

    return change


def _append(markup: str) -> Callable[[etree._Element], None]:
    def change(root: etree._Element) -> None:
        _main(root).append(_fragment(markup))

    return change


def _print_view(root: etree._Element) -> None:
    for element in root.xpath(_NAV):
        if element.getparent() is not None:
            element.drop_tree()
    _append(
        '<div class="printfooter">Retrieved from "https://wiki.example.org/index.php?title=Page&amp;oldid=4521"</div>'
    )(root)


def _edit_words(seed: int, count: int) -> Callable[[etree._Element], None]:
    def change(root: etree._Element) -> None:
        rng = random.Random(seed)
        nodes = [
            n
            for n in _main(root).iter()
            if isinstance(n.tag, str) and n.text and len(n.text.split()) > 3
        ]
        for _ in range(count):
            if not nodes:
                return
            node = rng.choice(nodes)
            words = node.text.split()
            words[rng.randrange(len(words))] = rng.choice(
                ["however", "notably", "formerly", "mostly"]
            )
            node.text = " ".join(words)

    return change


BANNER = (
    '<div id="contentSub"><div id="mw-revision-info">Revision as of 12:34, 5 May 2024 by '
    '<a href="/wiki/User:Example">Example</a> (talk | contribs)</div><div id="mw-revision-nav">'
    "(diff) &#8592; Older revision | Latest revision (diff) | Newer revision &#8594; (diff)</div></div>"
)
REDIRECT = '<span class="mw-redirectedfrom">(Redirected from <a href="/w/index.php?title=Old_name&amp;redirect=no">Old name</a>)</span>'


def _edited(line: str) -> Callable[[etree._Element], None]:
    return _append(f'<div id="footer-info-lastmod">{line}</div>')


def _combined(root: etree._Element) -> None:
    _prepend(BANNER)(root)
    _prepend(REDIRECT)(root)
    _edited("This page was last edited on 17 November 2025, at 09:01.")(root)
    _append('<div id="viewcount">This page has been accessed 1,000 times.</div>')(root)


# name -> (change of the original, change of the variant): a pair is (original with its change,
# variant with its change), so a pair differs by the variation only
VARIATIONS: dict[
    str, tuple[Callable[[etree._Element], None] | None, Callable[[etree._Element], None]]
] = {
    "banner": (None, _prepend(BANNER)),
    "redirect": (None, _prepend(REDIRECT)),
    "last-edited": (
        _edited("This page was last edited on 5 May 2024, at 12:34."),
        _edited("This page was last edited on 17 November 2025, at 09:01."),
    ),
    "counter": (
        _append('<div id="viewcount">This page has been accessed 999 times.</div>'),
        _append('<div id="viewcount">This page has been accessed 1,000 times.</div>'),
    ),
    "token": (
        _append(
            '<form><input type="hidden" name="wpEditToken" value="a1b2c3d4e5+\\"><a href="/x?sid=ab12">edit</a></form>'
        ),
        _append(
            '<form><input type="hidden" name="wpEditToken" value="f9e8d7c6b5+\\"><a href="/x?sid=zz99">edit</a></form>'
        ),
    ),
    "print": (None, _print_view),
    "3 words": (None, _edit_words(7, 3)),
    "combined": (_edited("This page was last edited on 5 May 2024, at 12:34."), _combined),
}


def _render(source: bytes, change: Callable[[etree._Element], None] | None) -> bytes:
    root = html.document_fromstring(source)
    if change is not None:
        change(root)
    return html.tostring(root, encoding="utf-8")


def _texts(document: bytes) -> dict[str, int | None]:
    main = main_text(html.document_fromstring(document))
    return {
        "main": fingerprint(main),
        "body": fingerprint(body_text(document)),
        # what a crawl compares for pages long enough for SimHash: equal up to numbers
        "folded": folded_fingerprint(main)
        if fingerprint(main, min_features=MIN_FEATURES) is not None
        else None,
    }


def folded_merges(title: str, pages: dict[str, dict[str, int | None]]) -> list[list[str]]:
    """The groups of distinct pages whose main texts are equal up to their numbers (each would
    drop the items of the others)."""
    groups: dict[int, list[str]] = {}
    for name, fp in pages.items():
        if fp["folded"] is not None:
            groups.setdefault(fp["folded"], []).append(name)
    merged = [names for names in groups.values() if len(names) > 1]
    pairs = sum(len(names) * (len(names) - 1) // 2 for names in merged)
    print(
        f"\n{title}: distinct pairs equal up to numbers: {pairs}",
        *(" ~ ".join(n) for n in merged[:10]),
    )
    return merged


def python_doc(
    root: Path, limit: int | None
) -> tuple[dict[str, dict[str, int | None]], dict[str, list[tuple[int | None, ...]]]]:
    """Fingerprints of each page, and per variation the (main, body) distances of its pairs."""
    pages: dict[str, dict[str, int | None]] = {}
    pairs: dict[str, list[tuple[int | None, ...]]] = {name: [] for name in VARIATIONS}
    paths = sorted(root.rglob("*.html"))[:limit]
    for number, path in enumerate(paths):
        source = path.read_bytes()
        name = str(path.relative_to(root))
        original = _render(source, None)
        pages[name] = _texts(original)
        size = len(main_text(html.document_fromstring(original)).encode())
        for variation, (before, after) in VARIATIONS.items():
            a, b = _texts(_render(source, before)), _texts(_render(source, after))
            pairs[variation].append(
                (
                    *(
                        None if a[t] is None or b[t] is None else distance(a[t], b[t])  # type: ignore[arg-type]
                        for t in ("main", "body")
                    ),
                    size,
                )
            )
        if number % 100 == 0:
            print(f"  {number}/{len(paths)} pages", file=sys.stderr)
    return pages, pairs


def demo() -> tuple[dict[str, dict[str, int | None]], dict[str, list[tuple[int | None, ...]]]]:
    from scrapy_urlunify.demo.site import DemoSite

    site = DemoSite()
    pages = {page_id: _texts(site.render(page_id)) for page_id in sorted(site.unique_pages)}
    pairs: dict[str, list[tuple[int | None, ...]]] = {"clock views": [], "print/mirror": []}
    for page_id in sorted(site.clock_pages):
        a, b = _texts(site.render(page_id, view=1)), _texts(site.render(page_id, view=2))
        pairs["clock views"].append(tuple(distance(a[t], b[t]) for t in ("main", "body")))  # type: ignore[arg-type]
    for copy, original in sorted(site.content_duplicates.items()):
        a, b = _texts(site.render(copy)), _texts(site.render(original))
        pairs["print/mirror"].append(tuple(distance(a[t], b[t]) for t in ("main", "body")))  # type: ignore[arg-type]
    return pages, pairs


def _get(url: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=120) as response:  # loopback only (--wiki)
        return response.read()


def _api(base: str, **params: str) -> dict[str, Any]:
    from urllib.parse import urlencode

    return json.loads(
        _get(f"{base}/w/api.php?{urlencode({'format': 'json', 'formatversion': '2', **params})}")
    )


def mediawiki(
    base: str, limit: int | None
) -> tuple[dict[str, dict[str, int | None]], dict[str, list[tuple[int | None, ...]]]]:
    """A real MediaWiki (``--wiki``): each article against its Permanent link (``oldid`` of its
    latest revision: the "Revision as of" banner), its printable view, and its views through
    each redirect to it ("(Redirected from ...)"); the previous revision, a real edit, is shown
    apart (it is another text, not another view). Distinct pairs: every pair of articles."""
    from urllib.parse import quote

    titles = [
        p["title"]
        for p in _api(
            base,
            action="query",
            list="allpages",
            apnamespace="0",
            apfilterredir="nonredirects",
            aplimit="max",
        )["query"]["allpages"]
    ][:limit]
    redirects: dict[str, list[str]] = {}
    for page in _api(
        base,
        action="query",
        list="allpages",
        apnamespace="0",
        apfilterredir="redirects",
        aplimit="max",
    )["query"]["allpages"]:
        target = _api(base, action="query", titles=page["title"], redirects="1")["query"][
            "redirects"
        ][0]["to"]
        redirects.setdefault(target, []).append(page["title"])
    pages: dict[str, dict[str, int | None]] = {}
    pairs: dict[str, list[tuple[int | None, ...]]] = {
        "permanent link": [],
        "printable": [],
        "redirect": [],
        "diff": [],
        "previous revision": [],
    }
    for number, title in enumerate(titles):
        revisions = _api(
            base, action="query", prop="revisions", titles=title, rvprop="ids", rvlimit="2"
        )
        ids = [r["revid"] for r in revisions["query"]["pages"][0]["revisions"]]
        page = _get(f"{base}/wiki/{quote(title.replace(' ', '_'))}")
        pages[title] = _texts(page)
        views = {
            "permanent link": [f"{base}/w/index.php?title={quote(title)}&oldid={ids[0]}"],
            "printable": [f"{base}/w/index.php?title={quote(title)}&printable=yes"],
            "redirect": [
                f"{base}/wiki/{quote(r.replace(' ', '_'))}" for r in redirects.get(title, [])
            ],
            # the latest edit's diff: the change above the article as it is now
            "diff": [f"{base}/w/index.php?title={quote(title)}&diff=prev&oldid={ids[0]}"][
                : len(ids) - 1
            ],
            "previous revision": [
                f"{base}/w/index.php?title={quote(title)}&oldid={i}" for i in ids[1:]
            ],
        }
        size = len(main_text(html.document_fromstring(page)).encode())
        for name, urls in views.items():
            for url in urls:
                other = _texts(_get(url))
                pairs[name].append(
                    (
                        *(
                            None
                            if pages[title][t] is None or other[t] is None
                            else distance(pages[title][t], other[t])  # type: ignore[arg-type]
                            for t in ("main", "body")
                        ),
                        size,
                    )
                )
        if number % 50 == 0:
            print(f"  {number}/{len(titles)} articles", file=sys.stderr)
    return pages, pairs


def distinct_distances(
    pages: dict[str, dict[str, int | None]], text: str
) -> tuple[Counter[int], list[tuple[int, str, str]]]:
    """Distances of every pair of distinct pages (equal fingerprints count as distance 0), and
    the closest pairs."""
    items = [(name, fp[text]) for name, fp in pages.items() if fp[text] is not None]
    histogram: Counter[int] = Counter()
    closest: list[tuple[int, str, str]] = []
    for i, (name_a, a) in enumerate(items):
        for name_b, b in items[i + 1 :]:
            bits = (a ^ b).bit_count()  # type: ignore[operator]
            histogram[bits] += 1
            if bits <= 12:
                closest.append((bits, name_a, name_b))
    closest.sort()
    return histogram, closest[:25]


def table(
    title: str,
    pages: dict[str, dict[str, int | None]],
    pairs: dict[str, list[tuple[int | None, ...]]],
    text: str,
) -> dict[str, object]:
    column = ("main", "body").index(text)
    histogram, closest = distinct_distances(pages, text)
    n_distinct = sum(histogram.values())
    print(
        f"\n### {title}, {text} text: {len(pages)} pages, {n_distinct} distinct pairs, "
        f"{sum(len(v) for v in pairs.values())} near-duplicate pairs\n"
    )
    names = list(pairs)
    print(
        "| ≤ bits | "
        + " | ".join(f"({n})" if n in APART else n for n in names)
        + " | all recall | distinct merged | precision |"
    )
    print("|---:|" + "---:|" * (len(names) + 3))
    rows = []
    for limit in THRESHOLDS:
        recalls = []
        true_positive = total = 0
        for name in names:
            found = [d for d in (p[column] for p in pairs[name]) if d is not None]
            hits = sum(d <= limit for d in found)
            if name not in APART:
                true_positive += hits
                total += len(found)
            recalls.append(hits / len(found) if found else float("nan"))
        merged = sum(count for bits, count in histogram.items() if bits <= limit)
        precision = (
            true_positive / (true_positive + merged) if true_positive + merged else float("nan")
        )
        rows.append(
            {
                "bits": limit,
                "recall": dict(zip(names, recalls, strict=True)),
                "all": true_positive / total,
                "distinct_merged": merged,
                "precision": precision,
            }
        )
        print(
            f"| {limit} | "
            + " | ".join(f"{r:.3f}" for r in recalls)
            + f" | {true_positive / total:.3f} | {merged} | {precision:.4f} |"
        )
    sized = [p for pairs_ in pairs.values() for p in pairs_ if len(p) > 2 and p[column] is not None]
    if sized:
        print("\nrecall by size of the main text, at ≤ 3 / ≤ 6 / ≤ 10 bits: ", end="")
        for low, high in ((0, 4000), (4000, 16000), (16000, 1 << 40)):
            chosen = [p[column] for p in sized if low <= p[2] < high]  # type: ignore[operator]
            if chosen:
                print(
                    f"{low // 1000}-{high // 1000 if high < 1 << 40 else '∞'} KB ({len(chosen)} pairs): "
                    + " / ".join(
                        f"{sum(d <= k for d in chosen) / len(chosen):.2f}" for k in (3, 6, 10)
                    ),  # type: ignore[operator]
                    end="; ",
                )
        print()
    print("\nclosest distinct pairs:", ", ".join(f"{b} bits {x} ~ {y}" for b, x, y in closest[:10]))
    return {"rows": rows, "closest": closest, "min_distinct": min(histogram) if histogram else None}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument(
        "--limit", type=int, default=None, help="only the first N pages of python3-doc"
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--no-python-doc", action="store_true")
    parser.add_argument(
        "--wiki", help="base URL of a MediaWiki on loopback (http://127.0.0.1:PORT)"
    )
    args = parser.parse_args()
    results: dict[str, object] = {}
    if not args.no_python_doc:
        doc_pages, doc_pairs = python_doc(args.root, args.limit)
        for text in ("main", "body"):
            results[f"python3-doc/{text}"] = table("python3-doc", doc_pages, doc_pairs, text)
        results["python3-doc/folded"] = folded_merges("python3-doc", doc_pages)
    if args.wiki:
        wiki_pages, wiki_pairs = mediawiki(args.wiki.rstrip("/"), args.limit)
        for text in ("main", "body"):
            results[f"mediawiki/{text}"] = table("MediaWiki", wiki_pages, wiki_pairs, text)
        results["mediawiki/folded"] = folded_merges("MediaWiki", wiki_pages)
    if not args.no_demo:
        demo_pages, demo_pairs = demo()
        for text in ("main", "body"):
            results[f"demo/{text}"] = table("demo site", demo_pages, demo_pairs, text)
        results["demo/folded"] = folded_merges("demo site", demo_pages)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
