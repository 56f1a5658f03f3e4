"""A corpus of real links: every ``<a href>`` of a tree of real HTML pages, in document order.

Default: Debian's ``python3-doc`` package (``/usr/share/doc/python3-doc/html``, ~530 pages,
~164,000 links), each page mapped onto ``https://docs.python.org/3/<path>``. Any other HTML
tree works with ``--root DIR --base URL``. The corpus is cached as JSON Lines under
``benchmarks/data/`` (``{"page", "href", "abs"}``; ``abs`` is the browser-resolved link).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import ada_url
import lxml.html

DEFAULT_ROOT = Path("/usr/share/doc/python3-doc/html")
DEFAULT_BASE = "https://docs.python.org/3/"
CACHE = Path(__file__).parent / "data"


def build(root: Path, base: str) -> list[dict[str, str]]:
    if not root.is_dir():
        sys.exit(
            f"no HTML tree at {root}: install Debian's python3-doc (apt-get install python3-doc) "
            "or pass --root DIR --base URL"
        )
    links = []
    for path in sorted(root.rglob("*.html")):
        page = base + path.relative_to(root).as_posix()
        try:
            doc = lxml.html.parse(str(path)).getroot()
        except (OSError, ValueError):
            continue
        if doc is None:
            continue
        page_base = page
        for b in doc.iter("base"):
            if b.get("href"):
                page_base = ada_url.join_url(page, b.get("href"))
                break
        for a in doc.iter("a"):
            href = a.get("href")
            if href is None:
                continue
            try:
                absolute = ada_url.join_url(page_base, href)
            except ValueError:
                absolute = ""
            links.append({"page": page_base, "href": href, "abs": absolute})
    return links


def load(root: Path = DEFAULT_ROOT, base: str = DEFAULT_BASE) -> list[dict[str, str]]:
    """The corpus for ``root``, built once and cached."""
    CACHE.mkdir(exist_ok=True)
    cache = CACHE / f"links-{root.name or 'root'}.jsonl"
    if cache.exists():
        with open(cache, encoding="utf-8") as f:
            return [json.loads(line) for line in f]
    links = build(root, base)
    with open(cache, "w", encoding="utf-8") as f:
        for link in links:
            f.write(json.dumps(link, ensure_ascii=False) + "\n")
    return links


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--base", default=DEFAULT_BASE)
    args = ap.parse_args()
    links = load(args.root, args.base)
    absolute = [link["abs"] for link in links if link["abs"]]
    print(f"{len(links)} links, {len(set(absolute))} distinct absolute URLs")


if __name__ == "__main__":
    main()
