"""The DUST store of ``tools/sites/storesite.py`` (``benchmarks/bench_dust.py --site store``): its
ground truth is self-consistent (every spelling of a page shows its page id and its text, the
parameters that matter make pages of their own exactly when the content differs, the floor is
the same for a seed), the server answers as a forward proxy for the store's hosts, and two real
crawls of a small instance, the add-on alone and with what a careful user configures, fetch
every page, yield no item twice and learn none of the store's traps.
"""

from __future__ import annotations

import html
import http.client
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "sites"))
import storesite
from generated_crawl import crawl_shop

#: a small instance: every kind of DUST and trap, 200 pages
SIZE = {"seed": 3, "categories": 5, "products": 60}
W = "http://www.store.test"


@pytest.fixture(scope="module")
def site() -> storesite.StoreSite:
    return storesite.StoreSite(**SIZE)


def _text(site: storesite.StoreSite, url: str) -> str:
    """The visible text of the page ``url`` shows: its body without tags, spaces collapsed."""
    status, page = site.render(url)
    assert status == 200, url
    body = re.search(r"<body[^>]*>(.*)</body>", page.decode(), re.S)
    assert body is not None
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", body[1])).split())


def _same_page(site: storesite.StoreSite, page: str, spellings: list[str]) -> None:
    """Every spelling shows ``page`` (its first spelling) and its text."""
    ids = {url: site.page_id(url) for url in [page, *spellings]}
    assert set(ids.values()) == {site.page_id(page)}, ids
    assert site.page_id(page) is not None
    text = _text(site, page)
    for url in spellings:
        assert _text(site, url) == text, url


def _reviewed(site: storesite.StoreSite, more_than: int) -> storesite.Product:
    return next(p for p in site.products.values() if len(p.reviews) > more_than)


def test_every_product_spelling_shows_its_page(site: storesite.StoreSite) -> None:
    p = _reviewed(site, 0)
    other = next(q for q in site.products if q != p.pid)
    cat = site.terms["cat", p.category]
    pretty = f"/product/{p.slug}/"
    _same_page(
        site,
        W + pretty,
        [
            *(f"http://{host}{pretty}" for host in storesite.HOSTS),
            f"{W}/?post_type=product&p={p.pid}",
            f"http://m.store.test/?p={p.pid}",
            f"{W}/shop/{cat.slug}/{p.slug}/",
            f"{W}{pretty}amp/",
            f"{W}{pretty}comment-page-1/",
            f"{W}{pretty}?add-to-cart={p.pid}",
            f"{W}{pretty}?add-to-cart={other}",
            f"{W}{pretty}?add_to_wishlist={p.pid}",
            f"{W}{pretty}?v={site.geo}",
            f"{W}{pretty}?utm_source=newsletter&utm_medium=email&utm_campaign=x",
        ],
    )
    # the AMP copy: lighter markup, its canonical the plain page
    _, amp = site.render(f"{W}{pretty}amp/")
    _, full = site.render(W + pretty)
    assert len(amp) < len(full)
    assert f'<link rel="canonical" href="{W}{pretty}">'.encode() in amp
    assert f'<link rel="amphtml" href="{W}{pretty}amp/">'.encode() in full
    _, query = site.render(f"{W}/?post_type=product&p={p.pid}")
    assert f'<link rel="canonical" href="{W}{pretty}">'.encode() in query
    # what is not the product
    wrong = next(t for t in site.terms.values() if t.kind == "cat" and t.tid != p.category)
    for url in (
        f"{W}/shop/{wrong.slug}/{p.slug}/",
        f"{W}/product/{p.slug}-x/",
        f"{W}/product/{p.slug}",
        f"http://other.test{pretty}",
        f"https://www.store.test{pretty}",
        f"{W}/?post_type=product&p=99999",
    ):
        assert site.page_id(url) is None, url


def test_later_comment_pages_are_pages_of_their_own(site: storesite.StoreSite) -> None:
    p = _reviewed(site, storesite.REVIEWS_PER_PAGE)
    base = f"{W}/product/{p.slug}/"
    assert site.page_id(base + "comment-page-1/") == f"product:{p.pid}"
    second = base + "comment-page-2/"
    assert site.page_id(second) == f"reviews:{p.pid}:2"
    assert _text(site, second) != _text(site, base)
    assert site.page_id(f"{base}comment-page-{p.review_pages + 1}/") is None
    few = next(q for q in site.products.values() if 0 < len(q.reviews) <= 5)
    assert site.page_id(f"{W}/product/{few.slug}/comment-page-2/") is None
    # the product page links both, as real review pagers do
    _, page = site.render(base)
    assert b"comment-page-1/" in page
    assert b"comment-page-2/" in page


def test_every_post_spelling_shows_its_page(site: storesite.StoreSite) -> None:
    post = next(p for p in site.posts.values() if p.comments)
    pretty = f"{W}/blog/{post.slug}/"
    _same_page(
        site,
        pretty,
        [
            f"{W}/?p={post.pid}",
            pretty + "amp/",
            f"{pretty}?replytocom={post.comments[0][0]}",
            f"http://store.test/blog/{post.slug}/?v={site.geo}",
        ],
    )
    _, short = site.render(f"{W}/?p={post.pid}")
    assert f'<link rel="canonical" href="{pretty}">'.encode() in short


def test_listing_spellings_show_their_page(site: storesite.StoreSite) -> None:
    big = max((t for t in site.terms.values() if t.kind == "cat"), key=lambda t: len(t.products))
    assert len(big.products) > storesite.PER_PAGE
    other = big.products[0]
    base = W + big.base
    _same_page(
        site,
        base,
        [
            f"{W}/?product_cat={big.slug}",
            base + "?orderby=menu_order",
            base + "?orderby=no-such-order",
            f"{base}?add-to-cart={other}",
            f"{base}?v={site.geo}",
            f"{base}page/1/",
            f"http://m.store.test{big.base}",
        ],
    )
    _same_page(
        site,
        f"{base}page/2/?orderby=price",
        [
            f"{base}?orderby=price&paged=2",
            f"{base}page/2/?orderby=price&add-to-cart={other}",
            f"{W}/?product_cat={big.slug}&orderby=price&paged=2",
        ],
    )
    pages = {
        site.page_id(url)
        for url in [
            base,
            base + "page/2/",
            *(f"{base}?orderby={o}" for o in storesite.ORDERS[1:]),
            base + "page/2/?orderby=price",
        ]
    }
    assert len(pages) == 2 + len(storesite.ORDERS)
    last = site.pages(len(big.products))
    assert site.page_id(f"{base}page/{last + 1}/") is None
    assert site.page_id(f"{base}?paged={last + 1}") is None


def test_filters_make_pages_exactly_when_the_listing_differs(site: storesite.StoreSite) -> None:
    cats = [t for t in site.terms.values() if t.kind == "cat"]
    for term in cats:
        base = W + term.base
        colors = {site.products[p].color for p in term.products}
        for color in colors:
            url = f"{base}?filter_color={color}"
            same = len(colors) == 1
            assert (site.page_id(url) == site.page_id(base)) is same, url
            assert (_text(site, url) == _text(site, base)) is same, url
        for lo, hi in storesite.PRICE_RANGES:
            url = f"{base}?min_price={lo}&max_price={hi}"
            inside = [p for p in term.products if lo * 100 <= site.products[p].price <= hi * 100]
            if not inside:
                continue
            same = len(inside) == len(term.products)
            assert (site.page_id(url) == site.page_id(base)) is same, url
            assert (_text(site, url) == _text(site, base)) is same, url
    # both traps occur in the small instance: a one-colour category, a category inside a range
    assert any(len({site.products[p].color for p in t.products}) == 1 for t in cats)
    assert any(
        all(lo * 100 <= site.products[p].price <= hi * 100 for p in t.products)
        for t in cats
        for lo, hi in storesite.PRICE_RANGES
    )
    assert any(len({site.products[p].color for p in t.products}) > 1 for t in cats)


def test_noise_the_store_adds(site: storesite.StoreSite) -> None:
    # a per-view nonce on the compare links, the compare page one page whatever its nonce
    best = site.bestsellers[0]
    nonces = set()
    for _ in range(2):
        _, page = site.render(W + "/")
        nonces.update(re.findall(rf"/compare/\?products={best}&amp;_wpnonce=(\w+)", page.decode()))
    assert len(nonces) == 2
    _same_page(
        site,
        f"{W}/compare/?products={best}",
        [f"{W}/compare/?products={best}&_wpnonce={n}" for n in nonces],
    )
    # the geolocation hash: one value, on every link of a third of the pages
    truth = site.reachable()
    tagged = [url for url in truth.values() if f"v={site.geo}".encode() in site.render(url)[1]]
    assert 0.2 < len(tagged) / len(truth) < 0.45
    for url in tagged[:20]:
        links = re.findall(r'<a href="([^"]*)"', site.render(url)[1].decode())
        assert all(f"v={site.geo}" in href for href in links), url
    # the events calendar: every month without events is one page, for ever
    months = ("2026-11", "2027-03", "2031-07", "1999-01", "0001-01", "9999-12")
    empty = [f"{W}/events/?month={m}" for m in months]
    _same_page(site, empty[0], empty[1:])
    assert site.page_id(empty[0]) == "events:none"
    assert (
        site.page_id(f"{W}/events/") == site.page_id(f"{W}/events/?month=2026-12") != "events:none"
    )
    assert site.page_id(f"{W}/events/?month=2027-13") is None


def test_every_page_text_depends_on_its_id_only(site: storesite.StoreSite) -> None:
    truth = site.reachable()
    again = storesite.StoreSite(**SIZE)
    for page, url in truth.items():
        assert again.page_id(url) == page
        assert _text(again, url) == _text(site, url)
        assert f'<meta name="page-id" content="{page}">'.encode() in site.render(url)[1]
    # the ground truth of a seed is the same in another instance (the URLs found too, but for
    # their per-view nonces), and another seed's differs
    nonce = re.compile(r"_wpnonce=\w+")
    assert {k: nonce.sub("", u) for k, u in again.reachable().items()} == {
        k: nonce.sub("", u) for k, u in truth.items()
    }
    assert set(storesite.StoreSite(4, 5, 60).reachable().values()) != set(truth.values())
    kinds = {page.split(":")[0] for page in truth}
    assert {"home", "product", "reviews", "list", "post", "blog", "archive", "events"} <= kinds
    assert {"compare", "about", "shipping", "contact", "cart", "account"} <= kinds


def test_default_floor() -> None:
    for seed in (1, 2):
        floor = storesite.StoreSite(seed).floor()
        assert 800 <= floor <= 1200, (seed, floor)


@pytest.fixture(scope="module")
def proxy(site: storesite.StoreSite) -> Iterator[tuple[str, int]]:
    server = storesite.serve(site, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1", server.server_address[1]
    server.shutdown()
    server.server_close()


def _get(address: tuple[str, int], target: str, host: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(*address, timeout=10)
    try:
        conn.request("GET", target, headers={"Host": host} if host else {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_the_server_answers_as_a_proxy(site: storesite.StoreSite, proxy: tuple[str, int]) -> None:
    p = next(iter(site.products.values()))
    path = f"/product/{p.slug}/"
    for host in storesite.HOSTS:  # absolute form: the host name from the request line
        status, body = _get(proxy, f"http://{host}{path}")
        assert status == 200
        assert f'content="product:{p.pid}"'.encode() in body
    status, body = _get(proxy, path, host="m.store.test:80")  # origin form: the Host header
    assert status == 200
    assert f'content="product:{p.pid}"'.encode() in body
    assert _get(proxy, f"http://other.test{path}")[0] == 404
    assert _get(proxy, "http://www.store.test/no-such-page/")[0] == 404


def _crawl(address: tuple[str, int], **settings: Any):  # type: ignore[no-untyped-def]
    """One crawl with the add-on in Scrapy's default order: (stats, items, downloaded URLs)."""
    proxy = "http://{}:{}".format(*address)
    return crawl_shop(proxy, list(storesite.HOSTS), storesite.shop_spider(), **settings)


def _check_items(site: storesite.StoreSite, items: list[dict[str, str]]) -> None:
    """Every page has one item, none twice: a one-page category in another order too (the same
    products, reordered: a near-duplicate whose items are kept, as a list sorted otherwise)."""
    pages = [item["page_id"] for item in items]
    assert len(pages) == len(set(pages)), "an item twice"
    assert set(site.reachable()) - set(pages) == set()


def _fetched_again(site: storesite.StoreSite, downloads: list[str]) -> list[str]:
    """The URLs downloaded for a page downloaded before."""
    seen: set[str | None] = set()
    again = []
    for url in downloads:
        if site.page_id(url) in seen:
            again.append(url)
        seen.add(site.page_id(url))
    return again


@pytest_twisted.inlineCallbacks
def test_the_addon_alone_fetches_every_page(site: storesite.StoreSite, proxy: tuple[str, int]):  # type: ignore[no-untyped-def]
    stats, items, downloads = yield _crawl(proxy)
    assert stats["finish_reason"] == "finished"
    assert set(site.reachable()) - {site.page_id(url) for url in downloads} == set()
    _check_items(site, items)
    learned = {
        k.split("/", 3)[3] for k in stats if k.startswith("urlunify/learned/") and k.count("/") >= 4
    }
    # the buttons, "Reply" links and nonces are action parameters (docs/rules.md): nothing to
    # learn, and no page fetched again under one of them
    assert not any(re.search("add-to-cart|add_to_wishlist|replytocom", r) for r in learned)
    action = re.compile(r"(?<=[?&])(add-to-cart|add_to_wishlist|replytocom|_wpnonce)=[^&]*&?")
    spellings = [action.sub("", url).rstrip("?&") for url in downloads]
    assert len(spellings) == len(set(spellings)), "a page fetched again under an action"
    # no form that would take a later comment page
    assert not any(rule.startswith("store.test//product/{s1}/*") for rule in learned), learned
    assert {"store.test/v", "m.store.test/store.test"} <= learned, learned
    # a view segment is the product: a suffix rule, or the form its canonicals teach (whichever
    # has its evidence first)
    for view in ("amp", "comment-page-1"):
        assert {f"store.test/{view}", f"store.test//product/{{s1}}/{view}"} & learned, learned
    # the traps: parameters that matter, and later comment pages, are never merged
    for name in ("orderby", "paged", "filter_color", "min_price", "max_price", "month"):
        assert f"store.test/{name}" not in learned, learned
    assert not any(
        rule.startswith("store.test/comment-page-") and rule != "store.test/comment-page-1"
        for rule in learned
    )


@pytest_twisted.inlineCallbacks
def test_careful_settings_refetch_only_what_no_url_rule_knows(
    site: storesite.StoreSite, proxy: tuple[str, int]
):  # type: ignore[no-untyped-def]
    stats, items, downloads = yield _crawl(proxy, **storesite.CAREFUL_SETTINGS)
    assert stats["finish_reason"] == "finished"
    assert set(site.reachable()) - {site.page_id(url) for url in downloads} == set()
    _check_items(site, items)
    again = _fetched_again(site, downloads)
    # fetched again: query forms, the category path form, pagers and filters that coincide,
    # empty months; never a spelling the settings name
    named = re.compile(
        r"m\.store\.test|/amp/|comment-page-1/|add-to-cart|add_to_wishlist|[?&]v=|replytocom|_wpnonce"
    )
    assert [url for url in again if named.search(url)] == []
