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

PAGES = 3


class VariantSite(minisite.CountingSite):
    """``/`` links ``/a/N?v=a`` and ``?v=b`` (``v`` changes nothing there: the learner adopts
    "``v`` does not matter"), then ``/e/N`` and ``/e/N?v=y``, where ``v`` shows another text."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            links = [f"/a/{n}?v={v}" for n in range(PAGES) for v in "ab"]
            links += [f"/e/{n}{q}" for n in range(PAGES) for q in ("", "?v=y")]
            body = "".join(f"<a href='{h}'>{h}</a>" for h in links)
            return minisite.page("home", "<p>Welcome home</p>" + body)
        text = f"page {base}" + (f" variant {params.get('v')}" if base.startswith("/e/") else "")
        return minisite.page(
            text, minisite.ARTICLE.format(t=text, x=f"The text of {text}, long enough to sign.")
        )


def _start():  # type: ignore[no-untyped-def]
    site = VariantSite()
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
