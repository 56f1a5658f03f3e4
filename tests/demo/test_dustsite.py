"""The DUST shop of ``tools/sites/dustsite.py`` (the measuring stick of ``benchmarks/bench_dust.py``):
its ground truth, and one real crawl of a small instance with the add-on alone (nothing missed)
and with what a careful user configures (the URL floor, give or take the spellings no URL rule
can know).
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "sites"))
import dustsite
from generated_crawl import crawl_shop

#: a small instance: every failure mode, ~80 pages
SIZE = {"seed": 3, "categories": 4, "products": 40}


@pytest.fixture(scope="module")
def site() -> dustsite.DustSite:
    return dustsite.DustSite(**SIZE)


def _product(site: dustsite.DustSite, slugged: bool) -> dustsite.Product:
    return next(p for p in site.products.values() if (p.slug is not None) == slugged)


def test_every_dust_spelling_shows_its_page(site: dustsite.DustSite) -> None:
    p = _product(site, slugged=True)
    pretty = f"/product/{p.pid}-{p.slug}"
    page = f"product:{p.pid}"
    spellings = [f"http://{host}{pretty}" for host in dustsite.HOSTS]
    spellings += [
        f"http://www.shop.test{pretty}?{q}"
        for q in (
            "print=1",
            "view=gallery",
            "ref=p7",
            "utm_source=home&utm_medium=banner",
            "sessionid=abc",
        )
    ]
    spellings += [f"http://shop.test/index.php?route=product/view&id={p.pid}&sort=price"]
    assert {site.page_id(url) for url in spellings} == {page}
    assert (
        site.page_id("http://www.shop.test/events/calendar;jsessionid=AB12?date=2027-01-01")
        == "calendar"
    )
    assert site.page_id(f"http://www.shop.test{pretty}-x") is None
    assert site.page_id(f"http://other.test{pretty}") is None


def test_listing_parameters_matter_unless_the_listing_is_the_same(site: dustsite.DustSite) -> None:
    big = next(c for c in site.categories.values() if len(c.products) > 12)
    small = next(c for c in site.categories.values() if len(c.products) <= 12)

    def url(cid: int, **kw: Any) -> str:
        return "http://www.shop.test" + site.category_href(cid, **kw)

    first = site.page_id(url(big.cid))
    others = {
        site.page_id(url(big.cid, **kw)) for kw in ({"page": 2}, {"limit": 24}, {"sort": "price"})
    }
    assert first not in others
    assert len(others) == 3
    assert site.page_id(url(big.cid, filt="sale,instock")) == first
    # a category of at most 12 products: limit=24 shows the very same listing (a learner's trap)
    assert site.page_id(url(small.cid, limit=24)) == site.page_id(url(small.cid))
    # filters the shop ignores: the same text (links differ only by their per-view session ids)
    assert _text(site, url(big.cid, filt="sale")) == _text(site, url(big.cid))
    assert _text(site, url(big.cid, page=2)) != _text(site, url(big.cid))


def _text(site: dustsite.DustSite, url: str) -> str:
    return re.sub(r"<[^>]*>", " ", site.render(url)[1].decode())


@pytest.fixture(scope="module")
def proxy(site: dustsite.DustSite):  # type: ignore[no-untyped-def]
    server = dustsite.serve(site, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest_twisted.inlineCallbacks
def _crawl(proxy: str, **settings: Any):  # type: ignore[no-untyped-def]
    """One crawl in Scrapy's default order: (stats, page ids of the items, downloaded URLs)."""
    stats, items, downloads = yield crawl_shop(
        proxy, list(dustsite.HOSTS), dustsite.shop_spider(), **settings
    )
    return stats, [item["page_id"] for item in items], downloads


@pytest_twisted.inlineCallbacks
def test_the_addon_alone_misses_no_page(site: dustsite.DustSite, proxy: str):  # type: ignore[no-untyped-def]
    stats, items, _ = yield _crawl(proxy)
    truth = site.reachable()
    assert stats["finish_reason"] == "finished"
    assert set(truth) - set(items) == set()
    # what a careful user writes, learned: print=1 from pages with and without it (one value),
    # sort on the route's product pages only (it orders a listing)
    learned = {k.split("/", 3)[3] for k in stats if k.startswith("urlunify/learned/param/")}
    assert {"shop.test/print", "shop.test/index.php?route=product%2Fview/sort"} <= learned, learned
    assert "shop.test/sort" not in learned


@pytest_twisted.inlineCallbacks
def test_careful_settings_fetch_each_page_once(site: dustsite.DustSite, proxy: str):  # type: ignore[no-untyped-def]
    stats, items, downloads = yield _crawl(proxy, **dustsite.CAREFUL_SETTINGS)
    truth = site.reachable()
    assert stats["finish_reason"] == "finished"
    assert set(truth) - set(items) == set()
    assert len(items) == len(set(items)), "an item twice"
    # what no URL rule of the add-on can know: a product of the home page's "new products" box
    # fetched by its route form after its pretty URL, and limit=24 on a category of <= 12 products
    small = sum(len(c.products) <= 12 for c in site.categories.values())
    assert (
        len(truth)
        <= stats["downloader/response_count"]
        <= len(truth) + len(site.newest) + small * 3
    )
    refetched = [
        url for url in downloads if "print=1" in url or "mirror." in url or "filter=" in url
    ]
    assert refetched == []
