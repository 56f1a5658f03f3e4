"""Action parameters (docs/rules.md, "Action parameters"): a WordPress shop's "Reply" links
(``?replytocom=``), add-to-cart and wishlist buttons and nonces are the page they act from.
A real crawl of a loopback shop, with only the ``ADDONS`` line, against the same crawl with the
list off (``URLUNIFY_IGNORE_ACTION_PARAMS = False``), which fetches them until it learns. A page
reached by its button alone is fetched under it, and its item cited without it."""

from __future__ import annotations

import hashlib

import pytest_twisted
from minicrawl import PageSpider, run
from minisite import CountingSite, listen
from wikisite import article_text

POSTS = 12


class ShopBlog(CountingSite):
    """A home page linking twelve products (a thirteenth by its add-to-cart button only); each
    product page links its own add-to-cart and wishlist buttons, a "Reply" link under each of
    its three reviews, and a compare page with a nonce of the view. Every such link answers the
    product page itself, with its notice."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, query = self.count(request)
        if path == "/":
            links = " ".join(f"<a href='/product/p{n}/'>Product {n}</a>" for n in range(POSTS))
            # a product of the week, linked by its button only
            links += f" <a href='/product/p{POSTS}/?add-to-cart={POSTS}'>Buy it now</a>"
            return f"<html><body><main><h1>Shop</h1>{links}</main></body></html>".encode()
        if path.startswith("/compare/"):
            n = int(query.get("products", "0"))
            return f"<html><body><main>Compare product {n}</main></body></html>".encode()
        n = int(path.strip("/").removeprefix("product/p"))
        nonce = hashlib.md5(f"{n}-{self.views}".encode()).hexdigest()[:10]
        reviews = "".join(
            f"<li>Review {n}-{r}: {article_text(f'review {n} {r}', 12)}"
            f" <a href='/product/p{n}/?replytocom={n * 10 + r}#respond'>Reply</a></li>"
            for r in range(3)
        )
        buttons = (
            f"<a href='/product/p{n}/?add-to-cart={n}'>Add to cart</a>"
            f" <a href='/product/p{n}/?add_to_wishlist={n}'>Add to wishlist</a>"
            f" <a href='/compare/?products={n}&amp;_wpnonce={nonce}'>Compare</a>"
            f" <a href='/product/p{(n + 1) % POSTS}/?add-to-cart={n}'>Also bought</a>"
        )
        notice = "Added to your cart. " if "add-to-cart" in query else ""
        return (
            f"<html><body><main><h1>Product {n}</h1><p>{notice}</p>"
            f"{article_text(f'product {n}')}<ol>{reviews}</ol>{buttons}</main></body></html>"
        ).encode()


def start() -> tuple[ShopBlog, object, str]:
    site = ShopBlog()
    port, base = listen(site)
    return site, port, base


def _fetched_again(site: ShopBlog) -> int:
    """Requests of a page beyond its first: a product is its path, a compare page its
    ``products`` (whatever the action or the nonce)."""
    pages = [
        url.partition("?")[0] if url.startswith("/product/") else url.partition("&")[0]
        for url, n in site.hits.items()
        for _ in range(n)
        if url != "/"
    ]
    return len(pages) - len(set(pages))


@pytest_twisted.inlineCallbacks
def test_action_links_are_not_fetched_again_for_a_page_already_fetched():
    site, crawler, items, _ = yield run(start, "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    products = {i["url"]: i["canonical_url"] for i in items if "/product/" in i["url"]}
    # every product once, the one of the week fetched under its button, and cited without it
    assert sorted(c.partition("/product/")[2] for c in products.values()) == sorted(
        f"p{n}/" for n in range(POSTS + 1)
    )
    assert f"/product/p{POSTS}/?add-to-cart={POSTS}" in " ".join(products)
    # no product fetched again, each compare page once (under the nonce of its first link)
    assert _fetched_again(site) == 0, site.hits


@pytest_twisted.inlineCallbacks
def test_with_the_list_off_the_crawl_fetches_them():
    site, crawler, items, _ = yield run(
        start, "/", {"URLUNIFY_IGNORE_ACTION_PARAMS": False}, PageSpider
    )
    assert crawler.stats.get_value("finish_reason") == "finished"
    # each product's reply views and buttons are new URLs until a rule is learned and confirmed
    assert _fetched_again(site) > 10, site.hits
