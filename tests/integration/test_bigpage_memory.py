"""A crawl with a huge HTML page costs the add-on no more memory than plain Scrapy: the
peak RSS of the crawl process (``ru_maxrss``), each crawl in its own process, measured by
benchmarks/bench_bigpage.py (one round: memory, unlike time, barely moves between runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_bigpage import measure


@pytest.mark.parametrize(("mib", "limit"), [(50, 1.10), (30, 1.20)])
def test_a_huge_page_costs_the_addon_no_more_peak_memory_than_plain_scrapy(mib, limit):
    """50 MiB: above the signature size limit (MD5 of the bytes; the canonical looked up in the
    head). 30 MiB: its body text is extracted for the signature: 3.3x plain Scrapy's peak before
    the text was hashed piece by piece; 1.09x now (the signature's tree, freed before the
    spider's, leaves a heap the spider's parse does not fully reuse), hence its looser limit."""
    best = measure(1, mib, verbose=False)
    plain, addon = best["plain"], best["addon"]
    assert addon["pages"] >= plain["pages"] - 1 and addon["items"] >= 21, (plain, addon)
    ratio = addon["maxrss_mib"] / plain["maxrss_mib"]
    assert ratio <= limit, (
        f"with a {mib} MiB page the add-on's crawl peaked at {addon['maxrss_mib']:.0f} MiB, plain Scrapy's at "
        f"{plain['maxrss_mib']:.0f} MiB: {ratio:.2f}x > {limit}x. Run benchmarks/bench_bigpage.py with "
        "BENCH_BIGPAGE_SETTINGS='{\"URLUNIFY_SIGNATURES\": false}' (or another component off) to find where it goes."
    )
