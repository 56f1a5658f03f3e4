"""Every stat key the package writes is listed in docs/stats.md (a stat nobody
documented, ``urlunify/recorded_unfiltered``, is one a user cannot read)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: stats.inc("links"), inc_scrapy(f"request_depth_count/{depth}"), .set("resume/rescheduled", n),
#: ctx.inc("filtered/" + reason), and the stat names given as defaults or chosen in a branch
WRITES = re.compile(r"""\.(inc|inc_scrapy|set)\(\s*(f?)["']([a-zA-Z_/:{}.\[\] ]+)["']""")
NAMED = re.compile(r"""\bstat\b[^=\n]*=\s*["']([a-z_/]+)["']|stat = ([^\n]+)""")


def written_keys() -> set[str]:
    keys: set[str] = set()
    for path in (ROOT / "scrapy_urlunify" / "integration").rglob("*.py"):
        text = path.read_text("utf-8")
        for kind, f, key in WRITES.findall(text):
            if key[:1].isupper():
                continue  # settings.set("LOG_LEVEL", ...)
            key = re.sub(r"\{[^}]*\}", "<>", key) if f else key
            if key.endswith("/"):
                key += "<>"  # "filtered/" + reason
            keys.add(key if kind == "inc_scrapy" else "urlunify/" + key)
        for m in re.finditer(r"""stat: str \| None = ["']([a-z_/]+)["']""", text):
            keys.add("urlunify/" + m.group(1))
        for m in re.finditer(r"""reason, what, stat = [^\n]*?["']([a-z_]+)["']\s*$""", text, re.M):
            keys.add("urlunify/" + m.group(1))
    return keys


def documented(doc: str, key: str) -> bool:
    pattern = re.escape(key).replace("<>", "<[a-z]+>")
    return re.search(f"`{pattern}`", doc) is not None


def test_every_stat_key_is_documented():
    keys = written_keys()
    assert {
        "urlunify/links",
        "urlunify/recorded_unfiltered",
        "urlunify/filtered/<>",
        "dupefilter/filtered",
        "urlunify/learned/<>/<>/<>",
        "urlunify/store_error",
        "urlunify/store_unavailable",
        "urlunify/learned/probation/rescheduled",
        "urlunify/seen_before",
    } <= keys, sorted(keys)
    doc = (ROOT / "docs" / "stats.md").read_text("utf-8")
    missing = sorted(k for k in keys if not documented(doc, k))
    assert not missing, missing
