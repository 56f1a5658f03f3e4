"""Our unifier against test vectors written by other projects (``../shared/conformance``).

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
from _conformance import EQUIVALENCE_SOURCES, ROOT, default_http_pairs, load

from scrapy_urlunify import InvalidURL, Policy, Unifier, identify, resolve

DEVIATIONS = json.loads((Path(__file__).parents[1] / "data" / "conformance_deviations.json").read_text("utf-8"))
DOCS = (ROOT / "docs" / "conformance.md").read_text("utf-8")


def _resolve_or_none(href: str, base: str | None) -> str | None:
    try:
        return resolve(href, base)
    except InvalidURL:
        return None


def test_wpt_url_tests_pass():
    records = load("wpt_resolve.jsonl")
    failures = [(r["input"], r["base"], r["expected"], got) for r in records
                if (got := _resolve_or_none(r["input"], r["base"])) != r["expected"]]
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
        assert got == expected or got in r.get("expected_alternatives", []), (r["input"], got, expected)


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
    print(f"{source}: agree on {len(pairs) - len(wrong)}/{len(pairs)} ({1 - len(wrong) / len(pairs):.1%})")
    assert disagree - listed == set(), "new disagreements: classify them (tools/conformance_deviations.py)"
    assert listed - disagree == set(), "listed disagreements now agree: regenerate the deviations file"


def test_every_deviation_category_is_explained_in_the_docs():
    categories = Counter(d["category"] for d in DEVIATIONS)
    assert "UNCLASSIFIED" not in categories
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", DOCS, re.M))
    assert set(categories) <= documented, set(categories) - documented


def test_agreement_floors_per_source():
    # the rates quoted in docs/conformance.md; a drop means a rule changed behaviour
    floors = {"urlnorm_equiv.jsonl": 0.97, "url_normalize_equiv.jsonl": 0.96,
              "w3lib_canonicalize_equiv.jsonl": 0.95, "surt_equiv.jsonl": 0.89, "courlan_equiv.jsonl": 0.60}
    for source, floor in floors.items():
        pairs = default_http_pairs(source)
        agree = sum(_ours_same(r["a"], r["b"]) == r["same"] for r in pairs)
        assert agree / len(pairs) >= floor, (source, agree, len(pairs))


def _corpus_urls() -> list[str]:
    urls = [r["expected"] for r in load("wpt_resolve.jsonl") if r["expected"]]
    urls += [r["input"] for r in load("wpt_resolve.jsonl") if r["base"] is None]
    for source in EQUIVALENCE_SOURCES:
        for r in load(source):
            urls += [r["a"], r["b"]]
    urls += [r["url"] for r in load("urlnorm_raw.jsonl")]
    return list(dict.fromkeys(urls))


POLICIES = [
    Policy(),
    Policy(scope="job", ignore_scheme=False, strip_host_prefixes=["www", "m", "wwwN"]),
    Policy(key_params={"youtube.com": ["v"]}, remove_params=["ref*", "fb_ref"], ignore_params={"bbc.com": ["at_*"]},
           domain_aliases=[["example.com", "example.org"]], sister_suffixes=["bbc.co.uk"]),
    Policy(strip_session_ids=False, strip_tracking_params=False, index_pages=[], route_fragments=False,
           ignore_path_prefixes={"*": ["print", "en"]}),
]


@pytest.mark.parametrize("policy", POLICIES, ids=["default", "scoped", "configured", "minimal"])
def test_fast_path_agrees_with_the_plain_rule_loop(policy):
    """The short paths of Unifier.result skip steps that cannot apply; they must give what
    running every step in order gives (Unifier.explain), on every URL of the conformance corpora."""
    fast = Unifier(policy)
    urls = _corpus_urls()
    assert len(urls) > 2000
    for url in urls:
        f, p = fast.result(url), fast.explain(url).result
        assert (f.fetch_url, f.identifier) == (p.fetch_url, p.identifier), url
        assert fast.filter_reason(url) == p.filter_reason, url


def test_direct_ada_binding_matches_the_public_functions():
    import ada_url

    from scrapy_urlunify.core.rules import ada_join, ada_normalize

    for r in load("wpt_resolve.jsonl"):
        def public():
            return ada_url.normalize_url(r["input"]) if r["base"] is None else ada_url.join_url(r["base"], r["input"])

        def ours():
            return ada_normalize(r["input"]) if r["base"] is None else ada_join(r["base"], r["input"])

        results = []
        for fn in (public, ours):
            try:
                results.append(fn())
            except ValueError:
                results.append(None)
        assert results[0] == results[1], r
