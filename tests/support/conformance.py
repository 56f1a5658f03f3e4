"""Access to the shared conformance vectors: other projects' test data, never copied into this
repository.

Tests read them from ``../shared/conformance`` beside the checkout, or from the folder that
``URLUNIFY_CONFORMANCE_DIR`` names. Without either, the tests that need them skip with one
reason, except in CI (``CI`` set), where they fail: CI always has the vectors, and a silently
skipped conformance suite would hide a broken checkout.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISSING = (
    "conformance vectors not found in {}: put the shared/ folder beside the repository "
    "or set URLUNIFY_CONFORMANCE_DIR"
)


def conformance_dir() -> Path:
    """The folder of the vectors; otherwise skip the test, or fail it when ``CI`` is set."""
    env = os.environ.get("URLUNIFY_CONFORMANCE_DIR")
    d = Path(env) if env else ROOT.parent / "shared" / "conformance"
    if not (d / "README.md").is_file():
        if os.environ.get("CI"):
            pytest.fail(
                MISSING.format(d) + " (CI is set: the conformance tests must run, not skip)",
                pytrace=False,
            )
        pytest.skip(MISSING.format(d))
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
