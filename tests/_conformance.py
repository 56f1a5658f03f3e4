"""Access to the shared conformance vectors (``../shared/conformance`` beside the checkout).

Tests read the files where the project keeps them; ``URLUNIFY_CONFORMANCE_DIR`` points elsewhere.
A missing directory is an error, not a skip: CI always has it, and a silently skipped
conformance suite would hide a broken checkout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def conformance_dir() -> Path:
    env = os.environ.get("URLUNIFY_CONFORMANCE_DIR")
    d = Path(env) if env else ROOT.parent / "shared" / "conformance"
    if not (d / "README.md").is_file():
        raise FileNotFoundError(
            f"conformance vectors not found in {d}: check out the shared/ folder beside the "
            "repository or set URLUNIFY_CONFORMANCE_DIR"
        )
    return d


def load(name: str) -> list[dict[str, Any]]:
    with open(conformance_dir() / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


EQUIVALENCE_SOURCES = (
    "urlnorm_equiv.jsonl",
    "url_normalize_equiv.jsonl",
    "w3lib_canonicalize_equiv.jsonl",
    "courlan_equiv.jsonl",
    "surt_equiv.jsonl",
)


def default_http_pairs(name: str) -> list[dict[str, Any]]:
    """The equivalence facts a Scrapy dupefilter would face: two absolute http(s) URLs, the
    source function called with its defaults."""
    return [r for r in load(name) if r["http_pair"] and not r.get("kwargs")]
