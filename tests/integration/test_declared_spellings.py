"""A page the site declares under two paths is evidence for learning, as a page on one path is: a
real crawl of a small shop (tests/support/routesite.py) whose products have a CMS route and a
pretty URL, with the add-on alone."""

from __future__ import annotations

from collections import Counter
from functools import partial
from urllib.parse import parse_qsl, urlsplit

import pytest_twisted
import routesite
from minicrawl import PageSpider, run
from minisite import CountingSite, declared_page, links_page, listen, not_found


def _page(url: str) -> str | None:
    parts = urlsplit(url)
    return routesite.page_of(parts.path, dict(parse_qsl(parts.query)))


@pytest_twisted.inlineCallbacks
def test_views_of_a_page_on_two_declared_paths_teach_their_parameter():
    site, crawler, items, dropped = yield run(routesite.start, "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    # each product's text is on its route and its pretty path; the route declares the pretty URL
    # canonical, so the text is no soft 404 and its views' pairs are evidence
    assert stats.get("urlunify/learned/param/127.0.0.1/view") == 3
    views = sum(n for url, n in site.hits.items() if "view=" in url)
    assert views <= 10  # three products' two views, three probation samples (of 24)
    # nothing lost, nothing twice
    shown = Counter(_page(item["url"]) for item in items)
    products = {f"/product/{n}" for n in range(1, routesite.PRODUCTS + 1)}
    assert set(shown) == {"/", "/category", *products}
    assert max(shown.values()) == 1


class _SortedFirstSite(CountingSite):
    """Five pages whose variants declare them canonical (the site's canonicals verified, then
    trusted), and a product linked sorted before plain: ``/b?sort=price`` declares ``/b``."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        if path == "/":
            links = [f"/a/{n}" for n in range(1, 6)]
            # one parameter name each: nothing to learn, no rule in force
            links += [f"/a/{n}?v{n}=1" for n in range(1, 6)]
            links += ["/b?sort=price", "/b"]
            return links_page("Home", links)
        if path.startswith("/a/"):
            return declared_page(f"Article {path}", f"<p>The article {path}.</p>", canonical=path)
        if path == "/b":
            return declared_page("Product b", "<p>A kettle of ten cups.</p>", canonical="/b")
        return not_found(request)


def _serve(site_class: type[CountingSite]) -> tuple[CountingSite, object, str]:
    site = site_class()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def test_a_page_obtained_under_its_trusted_canonical_is_not_fetched_again_from_the_queue():
    site, crawler, items, dropped = yield run(
        partial(_serve, _SortedFirstSite), "/", {}, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert stats.get("urlunify/canonical/verified") == 5
    # /b was queued before /b?sort=price, which declares it, was fetched: its page was obtained
    assert site.hits["/b?sort=price"] == 1
    assert site.hits["/b"] == 0
    assert stats.get("urlunify/dropped_at_dequeue") == 1
    assert [urlsplit(i["url"]).path for i in items].count("/b") == 1


class _ClaimsFirstSite(CountingSite):
    """Eight pages fetched first under another path, ``/alt/<n>``, which declares ``/item/<n>``
    canonical; the first five ``/item/<n>`` linked next (the site's canonicals verified, then
    trusted), the last three only from ``/more``, fetched after."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, _ = self.count(request)
        links: list[str] = []
        if path == "/":
            links = [f"/alt/{n}" for n in range(1, 9)] + [f"/item/{n}" for n in range(1, 6)]
            links.append("/more")
        elif path == "/more":
            links = [f"/item/{n}" for n in range(6, 9)]
        elif path.startswith(("/alt/", "/item/")) and path[-1] in "12345678":
            n = path[-1]
            return declared_page(f"Item {n}", f"<p>The item {n}.</p>", canonical=f"/item/{n}")
        else:
            return not_found(request)
        return links_page(path, links)


@pytest_twisted.inlineCallbacks
def test_claims_made_before_their_site_was_trusted_count_once_it_is():
    site, crawler, items, _ = yield run(partial(_serve, _ClaimsFirstSite), "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    assert stats.get("urlunify/canonical/verified") == 5
    # /alt/6-8 claimed /item/6-8 before the site was trusted: once it is, their pages are
    # obtained, as a claim made then would be; their links, found later, are not fetched
    assert stats.get("urlunify/canonical/released") == 3
    assert [site.hits[f"/item/{n}"] for n in range(6, 9)] == [0, 0, 0]
    # every item once: the first five under /alt, dropped as duplicates under /item
    shown = Counter(urlsplit(i["url"]).path[-1] for i in items if "/more" not in i["url"])
    assert shown == Counter({**{str(n): 1 for n in range(1, 9)}, "/": 1})


class _ObtainedFirstSite(CountingSite):
    """Items 1-5 verify the site's canonicals (``/alt/<n>`` declares ``/item/<n>``, both linked);
    items 6-17 are then obtained under a query form, ``/?p=<n>``, which declares ``/item/<n>``
    (never linked itself), and linked from ``/list`` by a category path, ``/shop/c<k>/<n>``,
    which declares it too."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        links: list[str] = []
        n = params.get("p", path.rpartition("/")[2])
        if path == "/" and not params:
            links = [f"/alt/{n}" for n in range(1, 6)] + [f"/item/{n}" for n in range(1, 6)]
            links += [f"/?p={n}" for n in range(6, 18)] + ["/list"]
        elif path == "/list":
            links = [f"/shop/c{n % 3}/{n}" for n in range(6, 18)]
        elif n.isdigit() and (
            path in ("/alt/" + n, "/item/" + n, "/") or path.startswith("/shop/")
        ):
            return declared_page(f"Item {n}", f"<p>The item {n}.</p>", canonical=f"/item/{n}")
        else:
            return not_found(request)
        return links_page(path, links)


@pytest_twisted.inlineCallbacks
def test_a_page_obtained_under_a_trusted_canonical_pairs_with_its_other_spellings():
    site, crawler, items, _ = yield run(partial(_serve, _ObtainedFirstSite), "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    assert stats.get("urlunify/canonical/on_probation") == 5
    # /item/6-17 are never fetched: obtained from /?p=<n>. Each category path declaring one of
    # them with the text of its query form is a pair of that page, so six of them (three
    # categories) make the form rule; three more are its samples, the last three not fetched
    assert [site.hits[f"/item/{n}"] for n in range(6, 18)] == [0] * 12
    assert stats.get("urlunify/learned/form/127.0.0.1//shop/*/{s2}") == 6
    assert sum(n for url, n in site.hits.items() if url.startswith("/shop/")) <= 9
    shown = Counter(i["url"].rpartition("/")[2].rpartition("=")[2] for i in items)
    assert {k: v for k, v in shown.items() if k.isdigit()} == {str(n): 1 for n in range(1, 18)}
