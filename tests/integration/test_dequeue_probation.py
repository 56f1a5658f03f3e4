"""A rule on probation merges, at dequeue, requests queued before it was learned: they are its
samples (or kept), as the links it merges in the dupefilter are, never dropped on its word alone.

A real crawl of a hand-written site on loopback, one request at a time, in link order.
"""

from __future__ import annotations

import minisite
import pytest_twisted
from minicrawl import crawl_site
from variantsite import VariantSite

A_PAGES = E_PAGES = 3


def _start():  # type: ignore[no-untyped-def]
    # the /e/N?v=x and ?v=y links are queued before the rule "v does not matter" is learned
    site = VariantSite(A_PAGES)
    port, base = minisite.listen(site)
    return site, port, base


@pytest_twisted.inlineCallbacks
def test_requests_queued_before_a_rule_are_its_samples_at_dequeue():
    """Before the fix the three ``/e/N?v=y`` were dropped at dequeue (their page "fetched" as
    ``?v=x`` under the rule on probation) without being sampled or kept: the rule was never
    checked, and the crawl ended "finished" without them."""
    site, stats, _items = yield crawl_site(_start, "/", {"URLUNIFY_LEARN": True})
    assert stats["finish_reason"] == "finished"
    assert stats.get("urlunify/learned/params") == 1, stats
    never = sorted(
        f"/e/{n}?v={v}" for n in range(E_PAGES) for v in "xy" if not site.hits[f"/e/{n}?v={v}"]
    )
    assert never == []
    assert stats.get("urlunify/learned/revoked") == 1, stats


class InFlightSite(minisite.CountingSite):
    """``/`` links ``/a/N?v=a`` and ``?v=b`` for ten pages (``v`` changes nothing): requested at
    once, most are still in flight when the rule "``v`` does not matter" is adopted."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _params = self.count(request)
        if base == "/":
            body = "".join(f"<a href='/a/{n}?v={v}'>{n}{v}</a>" for n in range(10) for v in "ab")
            return minisite.page("home", "<p>Welcome home</p>" + body)
        return minisite.page(
            f"page {base}", minisite.ARTICLE.format(t=base, x=f"The text of {base}, long enough.")
        )


@pytest_twisted.inlineCallbacks
def test_pages_in_flight_when_a_rule_is_adopted_are_its_verdicts():
    """They were fetched anyway: each is compared with the page the rule merges it with, as a
    sample would be, and the rule is confirmed without fetching a sample of its own."""

    def start():  # type: ignore[no-untyped-def]
        site = InFlightSite()
        port, base = minisite.listen(site)
        return site, port, base

    site, stats, _items = yield crawl_site(
        start,
        "/",
        {"URLUNIFY_LEARN": True, "CONCURRENT_REQUESTS": 32, "CONCURRENT_REQUESTS_PER_DOMAIN": 32},
    )
    assert stats["finish_reason"] == "finished"
    assert stats.get("urlunify/learned/params") == 1, stats
    assert stats.get("urlunify/learned/probation/fetched_verdicts", 0) >= 1, stats
    assert stats.get("urlunify/learned/confirmed") == 1, stats
    assert "urlunify/learned/revoked" not in stats
    assert all(site.hits[f"/a/{n}?v=a"] or site.hits[f"/a/{n}?v=b"] for n in range(10))


class TwoParameterSite(minisite.CountingSite):
    """``/`` links three pages in two spellings of ``v`` and three in two of ``w``, in turn (two
    rules learned together), then six pages ``/d/N`` and each of them with both, ``?v=c&w=c``."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _params = self.count(request)
        if base == "/":
            links = [f"/{p}/{n}?{q}={x}" for n in range(3) for p, q in ("av", "bw") for x in "ab"]
            links += [f"/d/{n}" for n in range(6)] + [f"/d/{n}?v=c&w=c" for n in range(6)]
            body = "".join(f"<a href='{u}'>{u}</a> " for u in links)
            return minisite.page("home", "<p>Welcome home</p>" + body)
        return minisite.page(
            f"page {base}", minisite.ARTICLE.format(t=base, x=f"The text of {base}, long enough.")
        )


@pytest_twisted.inlineCallbacks
def test_a_verdict_on_a_merge_of_two_rules_on_probation_counts_for_both():
    """``/d/N?v=c&w=c`` is merged into ``/d/N`` by both rules: a sample of one that shows the
    page checks the other too. Three of them confirm both; before, each rule took three."""

    def start():  # type: ignore[no-untyped-def]
        site = TwoParameterSite()
        port, base = minisite.listen(site)
        return site, port, base

    site, stats, _items = yield crawl_site(start, "/", {"URLUNIFY_LEARN": True})
    assert stats["finish_reason"] == "finished"
    assert stats.get("urlunify/learned/params") == 2, stats
    assert stats.get("urlunify/learned/confirmed") == 2, stats
    assert stats.get("urlunify/learned/probation/shared_verdicts", 0) >= 1, stats
    assert all(site.hits[f"/d/{n}"] == 1 for n in range(6))
    assert sum(site.hits[f"/d/{n}?v=c&w=c"] for n in range(6)) <= 4, site.hits
