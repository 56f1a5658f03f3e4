"""Write ``tests/data/conformance_deviations.json``: every peer equivalence fact we disagree with,
each with the category of ``docs/conformance.md`` that explains why.

Run it after a deliberate change of the rules (``python tools/conformance_deviations.py``), then
read the diff: a new disagreement must fit a documented category (or get a new one, with its
row in the docs), and a fixed one simply disappears. ``tests/core/test_conformance.py`` fails when
the file and the code drift apart.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

from conformance import EQUIVALENCE_SOURCES, default_http_pairs  # noqa: E402

from scrapy_urlunify import InvalidURL, identify

OUT = ROOT / "tests" / "data" / "conformance_deviations.json"


def ours(url: str) -> str | None:
    try:
        return identify(url)
    except InvalidURL:
        return None


def disagreements() -> list[dict]:
    rows = []
    for name in EQUIVALENCE_SOURCES:
        for r in default_http_pairs(name):
            ia, ib = ours(r["a"]), ours(r["b"])
            we_say_same = ia is not None and ia == ib
            if we_say_same != r["same"]:
                rows.append(
                    {
                        "source": name,
                        "function": r.get("function"),
                        "a": r["a"],
                        "b": r["b"],
                        "peer_same": r["same"],
                    }
                )
    return rows


def classify(row: dict) -> str:
    """The documented reason for one disagreement (``UNCLASSIFIED`` if none fits)."""
    a, b = row["a"], row["b"]
    both = a + " " + b
    if ours(a) is None or ours(b) is None:
        return "invalid-host"
    if re.search(r"//(m|mobile)\.", both):
        return "mobile-host"
    if "referrer=" in both:
        return "empty-param"
    if row["source"] == "urlnorm_equiv.jsonl" and re.search(r"\.(html|pdf|aspx|full)\b", both):
        return "extension-trim"
    if "_escaped_fragment_" in both:
        return "escaped-fragment"
    if "@" in both and not row["peer_same"]:
        return "userinfo"
    if "%C7" in both or "%CC%A7" in both:
        return "unicode-repair"
    if "%3D" in both or "%2c" in both.lower() or "%27" in both:
        return "reserved-escape"
    if re.search(r"[\"<]( |$)", both):
        return "junk-characters"
    if "%25%32%35" in both or "%252" in both:
        return "repeated-unescape"
    if "X=Y" in both:
        return "query-case"
    if re.search(r"[?&](c|1750,4)(&|$| )", both) or "&c=" in both:
        return "bare-key"
    if not row["peer_same"] and ("https://" in both and "http://" in both):
        return "scheme"
    if not row["peer_same"] and "#" in both:
        return "fragment"
    if re.search(r"s_cid|clickid|aftr_source|fb_ref|affiliate|partnerid", both):
        return "tracker-list"
    return "UNCLASSIFIED"


def main() -> int:
    rows = disagreements()
    for row in rows:
        row["category"] = classify(row)
    OUT.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    unclassified = [r for r in rows if r["category"] == "UNCLASSIFIED"]
    for r in unclassified:
        print("UNCLASSIFIED:", r, file=sys.stderr)
    print(f"{len(rows)} disagreements written to {OUT.relative_to(ROOT)}")
    return 1 if unclassified else 0


if __name__ == "__main__":
    sys.exit(main())
