"""Our unifier against test vectors written by other projects (``../shared/conformance``, or
``URLUNIFY_CONFORMANCE_DIR``; without them these tests skip, except in CI, where they fail).

* ``resolve`` against the WHATWG URL tests (web-platform-tests) and RFC 3986 section 5.4.
* ``identify`` against the equivalence facts of urlnorm, url-normalize, w3lib, courlan and surt:
  each disagreement must be listed in ``tests/data/conformance_deviations.json`` with a category
  that ``docs/conformance.md`` explains, and nothing listed there may have become agreement
  silently (regenerate with ``tools/conformance_deviations.py`` after a deliberate change).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conformance import EQUIVALENCE_SOURCES, ROOT, default_http_pairs, load

from scrapy_urlunify import InvalidURL, identify, resolve

DEVIATIONS = json.loads(
    (Path(__file__).parents[1] / "data" / "conformance_deviations.json").read_text("utf-8")
)
DOCS = (ROOT / "docs" / "conformance.md").read_text("utf-8")


def _resolve_or_none(href: str, base: str | None) -> str | None:
    try:
        return resolve(href, base)
    except InvalidURL:
        return None


def test_wpt_url_tests_pass():
    records = load("wpt_resolve.jsonl")
    failures = [
        (r["input"], r["base"], r["expected"], got)
        for r in records
        if (got := _resolve_or_none(r["input"], r["base"])) != r["expected"]
    ]
    rate = 1 - len(failures) / len(records)
    print(f"WPT urltestdata: {len(records) - len(failures)}/{len(records)} ({rate:.2%})")
    assert len(records) == 757
    assert rate >= 0.99, failures[:10]


def test_wpt_failures_raise_invalid_url():
    # "failure" cases must raise InvalidURL, never another exception or a made-up URL
    for r in load("wpt_resolve.jsonl"):
        if r["failure"]:
            with pytest.raises(InvalidURL):
                resolve(r["input"], r["base"])


def test_rfc3986_examples_in_their_whatwg_reading():
    records = load("rfc3986_resolve.jsonl")
    assert len(records) == 42
    for r in records:
        expected = r.get("whatwg_expected") or r["expected"]
        got = _resolve_or_none(r["input"], r["base"])
        assert got == expected or got in r.get("expected_alternatives", []), (
            r["input"],
            got,
            expected,
        )


def _ours_same(a: str, b: str) -> bool:
    try:
        return identify(a) == identify(b)
    except InvalidURL:
        return False


@pytest.mark.parametrize("source", EQUIVALENCE_SOURCES)
def test_peer_equivalence_disagreements_are_all_documented(source):
    pairs = default_http_pairs(source)
    wrong = [(r["a"], r["b"], r["same"]) for r in pairs if _ours_same(r["a"], r["b"]) != r["same"]]
    disagree = set(wrong)
    listed = {(d["a"], d["b"], d["peer_same"]) for d in DEVIATIONS if d["source"] == source}
    print(
        f"{source}: agree on {len(pairs) - len(wrong)}/{len(pairs)} ({1 - len(wrong) / len(pairs):.1%})"
    )
    assert disagree - listed == set(), (
        "new disagreements: classify them (tools/conformance_deviations.py)"
    )
    assert listed - disagree == set(), (
        "listed disagreements now agree: regenerate the deviations file"
    )


def test_every_deviation_category_is_explained_in_the_docs():
    categories = Counter(d["category"] for d in DEVIATIONS)
    assert "UNCLASSIFIED" not in categories
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", DOCS, re.M))
    assert set(categories) <= documented, set(categories) - documented


def test_agreement_floors_per_source():
    # the rates quoted in docs/conformance.md; a drop means a rule changed behaviour
    floors = {
        "urlnorm_equiv.jsonl": 0.97,
        "url_normalize_equiv.jsonl": 0.96,
        "w3lib_canonicalize_equiv.jsonl": 0.95,
        "surt_equiv.jsonl": 0.89,
        "courlan_equiv.jsonl": 0.60,
    }
    for source, floor in floors.items():
        pairs = default_http_pairs(source)
        agree = sum(_ours_same(r["a"], r["b"]) == r["same"] for r in pairs)
        assert agree / len(pairs) >= floor, (source, agree, len(pairs))


def _run_without_vectors(tmp_path, ci: bool):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["URLUNIFY_CONFORMANCE_DIR"] = str(tmp_path / "nowhere")
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            str(Path(__file__)),
            "-k",
            "wpt_url_tests_pass",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_without_the_vectors_the_tests_skip_with_one_reason(tmp_path):
    # a fresh clone has no ../shared: its `make test` must pass, saying what was skipped and why
    run = _run_without_vectors(tmp_path, ci=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout
    assert (
        "conformance vectors not found" in run.stdout and "URLUNIFY_CONFORMANCE_DIR" in run.stdout
    )


def test_without_the_vectors_the_tests_fail_in_ci(tmp_path):
    run = _run_without_vectors(tmp_path, ci=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed" in run.stdout
    assert "CI is set" in run.stdout
