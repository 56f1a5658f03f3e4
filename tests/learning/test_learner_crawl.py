"""The learner in a real crawl: a request its new rule merges is a probation sample only when the
rule alone merged it, never when the settings' policy knows its page was fetched already."""

from __future__ import annotations

import pytest_twisted
from minicrawl import crawl_site
from minisite import CountingSite, listen

PAGES = 4


def _html(title: str, links: list[str]) -> bytes:
    anchors = "".join(f"<a href='{h}'>{h}</a>" for h in links)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        f"<article><h1>{title}</h1><p class='text'>The text of {title}.</p></article>{anchors}"
        "</body></html>"
    ).encode()


class RefSite(CountingSite):
    """``ref`` does not matter on /pN; /next, crawled once the rule is learned, links the very
    URLs fetched already (the way a sister host's www and bare spellings are one page)."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _params = self.count(request)
        if base == "/":
            return _html("home", [f"/p{i}?ref={v}" for i in range(PAGES) for v in "xy"] + ["/next"])
        if base == "/next":
            return _html(
                "next",
                [f"/p{i}?ref=x" for i in range(PAGES)] + [f"/p{i}?ref=x#top" for i in range(PAGES)],
            )
        if base.startswith("/p"):
            return _html(f"page {base[2:]}", [])
        request.setResponseCode(404)
        return b"not found"


def _start() -> tuple[RefSite, object, str]:
    site = RefSite()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def test_a_page_fetched_already_is_never_a_probation_sample():
    site, stats, items = yield crawl_site(_start, "/", {"URLUNIFY_LEARN": True})
    assert stats["urlunify/learned/param/127.0.0.1/ref"] >= 3
    # /p0?ref=x is one page under the settings alone: fetched once, one item, though the new
    # rule on probation samples the requests it merges (a second fetch was a second item)
    assert all(site.hits[f"/p{i}?ref=x"] == 1 for i in range(PAGES)), sorted(site.hits.items())
    titles = [i["title"] for i in items]
    assert sorted(titles) == sorted({*titles}), titles
    assert {f"page {i}" for i in range(PAGES)} <= set(titles)
