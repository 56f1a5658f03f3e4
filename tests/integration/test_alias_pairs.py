"""Alias pairs under the policy in force (docs/learning.md, "alias"): a mobile host's page and
its site's page are one identifier once the rules merge what their links differ by, though no
path and query as fetched is on both hosts. A real crawl of a loopback shop whose links carry a
session parameter on its own host only, and the learner's part on its own."""

from __future__ import annotations

import hashlib

import pytest_twisted
from minicrawl import PageSpider, run
from minisite import CountingSite, listen
from wikisite import article_text

from scrapy_urlunify.demo.proxy import demo_settings
from scrapy_urlunify.learning._learner import Learner

PRODUCTS = 24
SITE = "http://www.shop.test"
MOBILE = "http://m.shop.test"


def _sid(n: int) -> str:
    return hashlib.md5(f"sid{n}".encode()).hexdigest()[:12]


class MobileSite(CountingSite):
    """``www.shop.test`` links its products with ``?sid=`` (each link another value); each product
    links its copy on ``m.shop.test``, which serves the same page without it."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        host = request.uri.split(b"://", 1)[-1].partition(b"/")[0].decode()
        request.uri = b"/" + request.uri.split(b"://", 1)[-1].partition(b"/")[2]
        path, _ = self.count(request)
        self.hits[host + path] += 1
        if path == "/":
            links = "".join(f"<a href='/p/{n}/?sid={_sid(n)}'>{n}</a> " for n in range(PRODUCTS))
            return f"<html><body><main>Products {links}</main></body></html>".encode()
        n = int(path.strip("/").removeprefix("p/"))
        links = f"<a href='{MOBILE}/p/{n}/'>mobile</a> <a href='/p/{(n + 1) % PRODUCTS}/?sid={_sid(n + 99)}'>next</a>"
        return (
            f"<html><body><main>{article_text(f'product {n}')}</main>{links}</body></html>".encode()
        )


def start() -> tuple[MobileSite, object, str]:
    site = MobileSite()
    port, _ = listen(site)
    return site, port, SITE


def settings(port):  # type: ignore[no-untyped-def]
    proxy = f"http://127.0.0.1:{port.getHost().port}"
    return demo_settings(
        proxy, URLUNIFY_DEMO_HOSTS=["www.shop.test", "m.shop.test"], URLUNIFY_IGNORE_PARAMS=["sid"]
    )


@pytest_twisted.inlineCallbacks
def test_a_mobile_host_is_learned_from_pages_one_identifier_apart():
    site, crawler, items, _ = yield run(start, "/", settings, PageSpider)
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    products = {f"/p/{n}/" for n in range(PRODUCTS)}
    assert products <= {i["url"].partition("shop.test")[2].partition("?")[0] for i in items}
    assert stats["urlunify/learned/alias/m.shop.test/shop.test"] >= 3
    # three pairs, three probation samples and what was in flight; before, no product was on
    # both hosts as fetched (its ?sid=), no alias was learned and every copy was fetched
    mobile = sum(n for key, n in site.hits.items() if key.startswith("m.shop.test/"))
    assert mobile <= 8, site.hits


def test_pairs_under_the_policy_count_and_contradict():
    learner = Learner(min_pairs=3, sites=["shop.test"])
    for n in range(3):
        learner.observe(f"http://shop.test/p/{n}?sid=a{n}", "shop.test", f"page {n}".encode())
    # as fetched, no path and query is on both hosts: nothing to pair
    learner.observe("http://m.shop.test/p/0", "m.shop.test", b"page 0")
    assert learner.rules == ()
    for n in (1, 2):
        twin = [(f"http://shop.test/p/{n}?sid=a{n}", "shop.test")]
        learner.observe(f"http://m.shop.test/p/{n}", "m.shop.test", f"page {n}".encode(), (), twin)
    assert learner.rules == ()  # two pairs
    learner.observe("http://shop.test/p/5?sid=b", "shop.test", b"page 5")
    twin = [("http://shop.test/p/5?sid=b", "shop.test")]
    learner.observe("http://m.shop.test/p/5", "m.shop.test", b"page 5", (), twin)
    assert [(r.kind, r.host, r.name) for r in learner.rules] == [
        ("alias", "m.shop.test", "shop.test")
    ]


def test_a_page_of_another_text_under_one_identifier_is_a_counter_example():
    learner = Learner(min_pairs=3, sites=["shop.test"])
    for n in range(4):
        learner.observe(f"http://shop.test/p/{n}?sid=a", "shop.test", f"page {n}".encode())
    twin = [("http://shop.test/p/0?sid=a", "shop.test")]
    learner.observe("http://m.shop.test/p/0", "m.shop.test", b"a mobile home", (), twin)
    for n in (1, 2, 3):
        twin = [(f"http://shop.test/p/{n}?sid=a", "shop.test")]
        learner.observe(f"http://m.shop.test/p/{n}", "m.shop.test", f"page {n}".encode(), (), twin)
    assert learner.rules == ()  # blocked by the first pair's other text
    # a URL the learner never observed (a page without text) is no pair
    learner2 = Learner(min_pairs=3, sites=["shop.test"])
    for n in range(3):
        twin = [(f"http://shop.test/p/{n}?sid=a", "shop.test")]
        learner2.observe(f"http://m.shop.test/p/{n}", "m.shop.test", f"page {n}".encode(), (), twin)
    assert learner2.rules == ()
