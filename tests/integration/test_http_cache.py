"""Scrapy's HTTP cache with the add-on: its entries are keyed on the crawl's request
fingerprints, which merge what the crawl's rules merge. A probation sample is fetched to check a
learned rule against the site: answered from the cache entry of the page the rule merged it
into, it would always agree, and a wrong rule would lose pages.

A real crawl of a hand-written site on loopback, Scrapy's filesystem cache in a temporary
directory.
"""

from __future__ import annotations

import minisite
import pytest_twisted
from minicrawl import crawl_site
from variantsite import VariantSite

PAGES = 3


def _start():  # type: ignore[no-untyped-def]
    # /e/N, then /e/N?v=y: under the rule "v does not matter", the second's fingerprint is the
    # first's
    site = VariantSite(PAGES, e_queries=("", "?v=y"))
    port, base = minisite.listen(site)
    return site, port, base


@pytest_twisted.inlineCallbacks
def test_a_probation_sample_is_fetched_from_the_site_not_the_cache(tmp_path):  # type: ignore[no-untyped-def]
    """Each ``/e/N?v=y`` is a sample of the rule: its fingerprint under the rule is ``/e/N``'s,
    whose response the cache holds. Served from there, the samples agreed, the rule stayed and
    the three variants were never asked of the site."""
    settings = {"URLUNIFY_LEARN": True, "HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path)}
    site, stats, items = yield crawl_site(_start, "/", settings)
    assert stats["finish_reason"] == "finished"
    assert stats.get("urlunify/learned/params") == 1, stats
    assert [p for n in range(PAGES) if not site.hits[p := f"/e/{n}?v=y"]] == []
    assert stats.get("urlunify/learned/revoked") == 1, stats
    assert {f"page /e/{n} variant y" for n in range(PAGES)} <= {i["title"] for i in items}
