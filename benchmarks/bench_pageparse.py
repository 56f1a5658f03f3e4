"""One parse per page: the CPU a page's signature adds to what the spider's parse costs.

On python3-doc's HTML pages (~530), each as a fresh ``HtmlResponse`` per run, CPU time of the
process (``time.process_time``), best of ``--rounds`` (default 3), gc disabled in the timed loops:

* **spider alone** (plain Scrapy): ``response.css("a::attr(href)").getall()``, which parses the
  page into the tree of ``response.selector``;
* **signature, own parse**: the signature as the add-on computed it before 2026-12-01 (its own
  lxml parse of the page, scripts and styles stripped from that copy), then the spider's work;
* **signature, from the selector's tree**: what ``SignatureMiddleware`` does now
  (``page_signature(..., tree=lambda: response.selector.root)``: the tree is built there and
  the spider's ``response.css`` reuses it), then the spider's work.

Each run is a process of its own (a run after another in one process is slowed by the heap the
other's trees left: the third of three ran 2x slower, whichever it was); runs alternate. Both
signature rows give the same MD5 for every page (checked here too).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path("/usr/share/doc/python3-doc/html")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.root.is_dir():
        print(f"no HTML tree at {args.root}: apt-get install python3-doc")
        return 1
    from scrapy.http import HtmlResponse

    from scrapy_urlunify.learning._page_signature import page_signature

    pages = [
        (f"https://docs.python.org/3/{p.relative_to(args.root).as_posix()}", p.read_bytes())
        for p in sorted(args.root.rglob("*.html"))
    ]
    headers = {"Content-Type": "text/html; charset=utf-8"}

    def spider(response: Any) -> None:
        response.css("a::attr(href)").getall()

    def alone(response: Any) -> Any:
        spider(response)

    def own_parse(response: Any) -> Any:
        sig = page_signature(response.body, "text/html", response.text)
        spider(response)
        return sig

    def from_tree(response: Any) -> Any:
        sig = page_signature(
            response.body, "text/html", response.text, tree=lambda: response.selector.root
        )
        spider(response)
        return sig

    contenders = {
        "spider alone": alone,
        "signature, own parse": own_parse,
        "signature, from the tree": from_tree,
    }
    if args.child:
        responses = [HtmlResponse(url, body=body, headers=headers) for url, body in pages]
        run = contenders[args.child]
        gc.disable()
        t = time.process_time()
        sigs = [run(r) for r in responses]
        seconds = time.process_time() - t
        gc.enable()
        print(
            json.dumps({"seconds": seconds, "sigs": [s.digest.hex() if s else None for s in sigs]})
        )
        return 0
    best = dict.fromkeys(contenders, float("inf"))
    digests: dict[str, list[Any]] = {}
    for _ in range(args.rounds):
        for name in contenders:
            out = subprocess.run(
                [sys.executable, __file__, "--root", str(args.root), "--child", name],
                capture_output=True,
                text=True,
                check=True,
            )
            res = json.loads(out.stdout.strip().splitlines()[-1])
            best[name] = min(best[name], res["seconds"])
            digests[name] = res["sigs"]
    assert digests["signature, own parse"] == digests["signature, from the tree"], (
        "the signatures differ"
    )
    n = len(pages)
    print(f"CPU ms per page, {n} python3-doc pages, best of {args.rounds}\n")
    base = best["spider alone"]
    result: dict[str, Any] = {"pages": n}
    for name, seconds in best.items():
        extra = (seconds - base) / n * 1e3
        print(
            f"{name:28s} {seconds / n * 1e3:6.2f} ms/page   signature adds {extra:5.2f} ms/page "
            f"({seconds / base:.2f}x the spider's parse)"
        )
        result[name] = {
            "ms_per_page": seconds / n * 1e3,
            "added_ms": extra,
            "ratio": seconds / base,
        }
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
