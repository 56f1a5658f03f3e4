"""Pages equal up to their numbers are one page for items (``folded_fingerprint``), in a real crawl
of a shop's listings on loopback: ``?limit=24&page=2`` shows what ``?page=3`` shows under another
"(N pages)" and a shorter pager, SimHash puts them 4 to 7 bits apart, beyond the strict item
threshold; the same listing sorted otherwise, or with a product more, is another page."""

from __future__ import annotations

import random

import pytest_twisted
from minicrawl import run
from minisite import CountingSite, listen
from scrapy import Spider
from scrapy.linkextractors import LinkExtractor

_WORDS = [
    "amber",
    "copper",
    "golden",
    "nordic",
    "rustic",
    "silver",
    "swift",
    "tiny",
    "bold",
    "grand",
    "green",
    "blue",
    "steel",
    "oak",
    "linen",
    "wool",
    "glass",
    "stone",
    "kettle",
    "lamp",
    "basket",
    "helmet",
    "bottle",
    "rug",
    "desk",
    "mirror",
    "knife",
    "radio",
    "shelf",
]
LIMITS = (12, 24)
SORTS = ("", "name")


def _products(count: int, seed: int) -> list[tuple[str, str]]:
    draw = random.Random(seed)
    return [
        (
            " ".join(draw.choice(_WORDS) for _ in range(3)).title() + f" {n}",
            " ".join(draw.choice(_WORDS) for _ in range(8)),
        )
        for n in range(count)
    ]


class PagerShop(CountingSite):
    """Two categories (30 products and 13), each listing in two sorts, two page sizes, paged."""

    categories = {"big": _products(30, 1), "small": _products(13, 2)}

    @classmethod
    def shown(cls, cat: str, sort: str, limit: int, page: int) -> tuple[tuple[str, ...], int]:
        """What a listing shows (the products, in order, and from where): the ground truth."""
        ordered = sorted(cls.categories[cat]) if sort else cls.categories[cat]
        return tuple(name for name, _ in ordered[(page - 1) * limit : page * limit]), (
            page - 1
        ) * limit

    @classmethod
    def href(cls, cat: str, sort: str, limit: int, page: int) -> str:
        params = [
            ("sort", sort),
            ("limit", "" if limit == 12 else str(limit)),
            ("page", "" if page == 1 else str(page)),
        ]
        query = "&amp;".join(f"{k}={v}" for k, v in params if v)
        return f"/category/{cat}" + (f"?{query}" if query else "")

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            return (
                "<html><body><main>"
                + "".join(f"<a href='{self.href(c, '', 12, 1)}'>{c}</a>" for c in self.categories)
                + "</main></body></html>"
            ).encode()
        cat = base.rsplit("/", 1)[1]
        sort, limit, page = (
            params.get("sort", ""),
            int(params.get("limit", 12)),
            int(params.get("page", 1)),
        )
        products = self.categories[cat]
        pages = -(-len(products) // limit)
        names, first = self.shown(cat, sort, limit, page)
        text = dict(products)
        rows = "".join(
            f"<li>{name}: {text[name]}, 12.{i}0 EUR</li>" for i, name in enumerate(names)
        )
        links = " ".join(
            f"<a href='{self.href(cat, s, limit, 1)}'>Sort: {s or 'default'}</a>" for s in SORTS
        )
        links += " ".join(f"<a href='{self.href(cat, sort, n, 1)}'>Show {n}</a>" for n in LIMITS)
        links += " ".join(
            f"<a href='{self.href(cat, sort, limit, n)}'>{n}</a>" for n in range(1, pages + 1)
        )
        return (
            f"<html><body><nav>Shop | Cart | Account</nav><main><h1>{cat}</h1><p>Showing {first + 1} to "
            f"{first + len(names)} of {len(products)} ({pages} pages)</p><ul>{rows}</ul>"
            f"<div class='links'>{links}</div></main></body></html>"
        ).encode()


class ShopSpider(Spider):
    name = "shop"

    def parse(self, response):  # type: ignore[no-untyped-def]
        if "/category/" in response.url:
            yield {"url": response.url, "shown": tuple(response.css("li::text").re(r"^(.*?):"))}
        for link in LinkExtractor().extract_links(response):
            yield response.follow(link.url, self.parse)


def _truth() -> dict[tuple[tuple[str, ...], int], list[str]]:
    """Each listing's content -> the URLs showing it."""
    contents: dict[tuple[tuple[str, ...], int], list[str]] = {}
    for cat, products in PagerShop.categories.items():
        for sort in SORTS:
            for limit in LIMITS:
                for page in range(1, -(-len(products) // limit) + 1):
                    href = PagerShop.href(cat, sort, limit, page).replace("&amp;", "&")
                    contents.setdefault(PagerShop.shown(cat, sort, limit, page), []).append(href)
    return contents


@pytest_twisted.inlineCallbacks
def test_a_pager_twin_is_one_page_for_items_and_other_sorts_or_sizes_are_not():
    truth = _truth()
    twins = {tuple(urls) for urls in truth.values() if len(urls) > 1}
    # the shop has twins (the last products of "big" in either size, in either sort), and
    # pages that are almost them: the same products sorted otherwise, one product more or fewer
    assert ("/category/big?page=3", "/category/big?limit=24&page=2") in twins
    settings = {"URLUNIFY_LEARN": False}
    site, crawler, items, dropped = yield run(
        lambda: (lambda s: (s, *listen(s)))(PagerShop()), "/", settings, ShopSpider
    )
    stats = crawler.stats.get_stats()
    kept = {(tuple(item["shown"]), item["url"].split("/", 3)[3]) for item in items}
    by_content: dict[tuple[str, ...], list[str]] = {}
    for shown, url in kept:
        by_content.setdefault(shown, []).append(url)
    # every content the shop shows has its item, once
    assert sorted(by_content) == sorted(shown for shown, _ in truth)
    assert all(len(urls) == 1 for urls in by_content.values()), by_content
    # each twin beyond the first was fetched, its links followed, its item dropped as "100% alike"
    assert len(dropped) == sum(len(urls) - 1 for urls in truth.values())
    assert all("near-duplicate (100.0% alike)" in reason for _, reason in dropped)
    assert stats["urlunify/signature/dropped_near_duplicate_items"] == len(dropped)
    assert all(site.hits[url] == 1 for urls in truth.values() for url in urls)
