"""Items under their canonical URL: a crawl of a site whose pages are each linked in eight
spellings (tests/support/spellingsite.py) hands the user each page's item once, carrying the URL a
careful user would cite, however the page was first fetched."""

from __future__ import annotations

import pytest_twisted
import spellingsite
import wikisite
from minicrawl import PageSpider, run
from minisite import CountingSite, declared_page, listen, not_found
from scrapy import Spider
from scrapy.linkextractors import LinkExtractor

from scrapy_urlunify.integration.crawl._build import UnifyCrawl

#: the rules a careful user configures for the site
CONFIGURED = {
    "URLUNIFY_DOMAIN_ALIASES": [["manual.test", "mirror.manual.test"]],
    "URLUNIFY_IGNORE_PARAMS": ["ref"],
    "URLUNIFY_IGNORE_PATH_PREFIXES": ["print"],
}


class ManualSpider(Spider):
    name = "manual"

    def parse(self, response):  # type: ignore[no-untyped-def]
        title = response.css("h1::text").get()
        if title:
            yield {"url": response.url, "title": title}
        yield from response.follow_all(css="nav a")


class WikiSpider(Spider):
    name = "wiki"

    def parse(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url, "title": response.css("h1::text").get()}
        yield from response.follow_all(LinkExtractor().extract_links(response))


def page_of(item: dict) -> int:  # type: ignore[type-arg]
    return int(item["title"].split()[1])


def cited(site: spellingsite.SpellingSite, items: list) -> float:  # type: ignore[type-arg]
    """The share of ``items`` under their page's canonical URL."""
    return sum(i["canonical_url"] == site.canonical(page_of(i)) for i in items) / len(items)


@pytest_twisted.inlineCallbacks
def test_with_only_the_addon_the_items_are_under_their_canonical_url():
    """Out of the box no rule knows ``ref``, ``/print`` or the mirror host when the contents
    page links a third of the pages under them: the frontier fetches such spellings after the
    others (the mirror host in the start host's download slot), so each page's plain spelling,
    linked from another page, is fetched first and its item kept (docs/frontier.md)."""
    site, crawler, items, _ = yield run(
        spellingsite.start, "/", spellingsite.settings, ManualSpider
    )
    assert sorted(page_of(i) for i in items) == list(range(spellingsite.PAGES))
    assert cited(site, items) >= 0.95  # 1.0 measured; 0.76 in link order
    final = UnifyCrawl.of(crawler).canonical_urls
    assert all(final.of(i["canonical_url"]) == site.canonical(page_of(i)) for i in items)
    assert crawler.stats.get_value("urlunify/frontier/variant_spellings") > 0


@pytest_twisted.inlineCallbacks
def test_the_held_out_spellings_too():
    """Other names for the same kinds of spelling (``?from=``, ``print.html``, ``amp/``, the
    ``m.`` host, ``index.php``, ``;jsessionid``, a click id): out of the box each page's item
    once, under its canonical URL."""
    site, crawler, items, _ = yield run(
        spellingsite.start_held_out, "/", spellingsite.settings, ManualSpider
    )
    assert sorted(page_of(i) for i in items) == list(range(spellingsite.PAGES))
    assert cited(site, items) >= 0.95
    # the spider's own field is the spider's: the spelling fetched
    assert any(i["url"] != i["canonical_url"] for i in items)
    # the two views below the page were learned as suffix rules, and confirmed
    stats = crawler.stats.get_stats()
    for name in ("print.html", "amp"):
        assert stats[f"urlunify/learned/suffix/manual.test/{name}"] >= 3
    assert stats["urlunify/learned/confirmed"] >= 2


@pytest_twisted.inlineCallbacks
def test_the_held_out_spellings_configured_each_page_is_fetched_once():
    def settings(port):  # type: ignore[no-untyped-def]
        return spellingsite.settings(
            port,
            URLUNIFY_DOMAIN_ALIASES=[["manual.test", "m.manual.test"]],
            URLUNIFY_IGNORE_PARAMS=["from"],
            URLUNIFY_IGNORE_PATH_SUFFIXES=["print.html", "amp"],
        )

    site, crawler, items, _ = yield run(spellingsite.start_held_out, "/", settings, ManualSpider)
    assert sorted(page_of(i) for i in items) == list(range(spellingsite.PAGES))
    assert cited(site, items) == 1.0
    assert sum(n for path, n in site.hits.items() if path.startswith("/doc/")) == spellingsite.PAGES


@pytest_twisted.inlineCallbacks
def test_in_link_order_an_item_keeps_the_spelling_the_rules_of_its_time_made():
    """With the frontier off, a page first fetched under ``?ref=`` before the rule was learned
    keeps that spelling, which the crawl's final rules cite as its page (docs/rules.md)."""

    def settings(port):  # type: ignore[no-untyped-def]
        return spellingsite.settings(port, URLUNIFY_FRONTIER=False)

    site, crawler, items, _ = yield run(spellingsite.start, "/", settings, ManualSpider)
    assert sorted(page_of(i) for i in items) == list(range(spellingsite.PAGES))
    assert 0.5 <= cited(site, items) < 0.95
    final = UnifyCrawl.of(crawler).canonical_urls
    assert all(final.of(i["canonical_url"]) == site.canonical(page_of(i)) for i in items)
    # the spider's own field is the spider's: the spelling fetched
    assert any(i["url"] != i["canonical_url"] for i in items)


@pytest_twisted.inlineCallbacks
def test_configured_every_item_is_under_its_canonical_url():
    def settings(port):  # type: ignore[no-untyped-def]
        return spellingsite.settings(port, **CONFIGURED)

    site, crawler, items, _ = yield run(spellingsite.start, "/", settings, ManualSpider)
    assert sorted(page_of(i) for i in items) == list(range(spellingsite.PAGES))
    assert cited(site, items) == 1.0


@pytest_twisted.inlineCallbacks
def test_a_callback_reads_the_canonical_url_from_the_response():
    seen = []

    class Reading(ManualSpider):
        name = "reading"

        def parse(self, response):  # type: ignore[no-untyped-def]
            if response.css("h1::text").get():
                seen.append((response.url, response.meta["urlunify_canonical_url"]))
            yield from super().parse(response)

    def settings(port):  # type: ignore[no-untyped-def]
        return spellingsite.settings(port, URLUNIFY_CANONICAL_URL_FIELD=None, **CONFIGURED)

    site, crawler, items, _ = yield run(spellingsite.start, "/", settings, Reading)
    assert items and all("canonical_url" not in i for i in items)
    assert sorted(c for _, c in seen) == sorted(map(site.canonical, range(spellingsite.PAGES)))
    assert any(url != canonical for url, canonical in seen)


@pytest_twisted.inlineCallbacks
def test_a_verified_declared_canonical_is_the_items_canonical_url():
    """/claims/N is article N under a banner and declares /wiki/AN canonical; /claims/3 declares
    /wiki/A4 but has A3's text: that claim is not trusted, its item keeps its own URL."""
    site, crawler, items, _ = yield run(
        lambda: wikisite.start((3,), 1236, False),
        "/",
        {"URLUNIFY_DROP_NEAR_DUPLICATE_ITEMS": False},
        WikiSpider,
    )
    claims = {
        i["url"].rsplit("/", 1)[1]: i["canonical_url"] for i in items if "/claims/" in i["url"]
    }
    base = "/".join(items[0]["url"].split("/")[:3])
    assert len(claims) == 10
    assert claims.pop("3") == f"{base}/claims/3"
    assert claims == {n: f"{base}/wiki/A{n}" for n in claims}


def test_an_alias_host_never_spells_its_site():
    """A mirror's page fetched first does not make the mirror the site's spelling: the alias
    group's first host is cited, spelled as a page of that host itself was fetched."""
    from scrapy_urlunify import Policy
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs

    policies = CrawlPolicies(Policy(domain_aliases=[["shop.test", "mirror.test"]]))
    canonical = CanonicalURLs(policies, ["https://www.site.test/"])
    canonical.home("http://www.mirror.test/p/1")
    assert canonical.of("http://www.mirror.test/p/1") == "http://shop.test/p/1"
    canonical.home("https://www.shop.test/p/2")
    assert canonical.of("http://www.mirror.test/p/1") == "https://www.shop.test/p/1"


def test_a_learned_alias_is_cited_under_the_host_the_user_named_first():
    """A learned alias group is headed by the first of its hosts met (``termomont.co.rs``);
    its pages are cited under the host the spider names first (a start URL's, else in
    ``allowed_domains`` order), spelled as a page of that host was fetched. A configured
    group keeps its head, and so does a group whose hosts the user named alike."""
    from scrapy_urlunify import Policy
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs

    def cite(allowed, starts=(), configured=(), url="http://www.termomont.co.rs/p/1"):
        policies = CrawlPolicies(Policy(domain_aliases=[list(g) for g in configured]))
        canonical = CanonicalURLs(policies, starts, allowed)
        policies.set_learned({}, [["termomont.co.rs", "termomont.rs"]])
        canonical.home("https://www.termomont.rs/")
        canonical.home(url)
        return canonical.of(url)

    named = ["site.test", "termomont.rs", "termomont.co.rs"]
    assert cite(named) == "https://www.termomont.rs/p/1"
    assert cite(list(reversed(named))) == "http://www.termomont.co.rs/p/1"
    assert cite(["site.test"]) == "http://www.termomont.co.rs/p/1"
    assert cite(["rs"]) == "http://www.termomont.co.rs/p/1"  # one rank for both hosts
    assert cite(named[::-1], starts=["https://termomont.rs/"]) == "https://termomont.rs/p/1"
    configured = [("termomont.co.rs", "termomont.rs")]
    assert cite(named, configured=configured) == "http://www.termomont.co.rs/p/1"


#: categories of _CmsShop whose products are linked both ways; the others by the path form only
LINKED_BOTH = 6


class _CmsShop(CountingSite):
    """Eight categories ``/index.php?cat=<c>``, each declaring itself canonical as the CMS
    spells it, list eight products each. The first six link a product by its pretty URL
    ``/product/<slug>/`` and by its category's path ``/shop/<c>/<slug>/`` (the same page,
    declaring the pretty URL); the last two by the path only."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        parts = path.strip("/").split("/")
        if path == "/" and not params:
            links = "".join(f"<a href='/index.php?cat={c}'>Category {c}</a> " for c in range(8))
            return declared_page("Home", f"<p>Our categories.</p>{links}")
        if path == "/index.php" and params.get("cat", "").isdigit() and len(params) == 1:
            c = int(params["cat"])
            rows = "".join(
                (f"<a href='/product/p{c}-{n}/'>p{c}-{n}</a> " if c < LINKED_BOTH else "")
                + f"<a href='/shop/{c}/p{c}-{n}/'>(in category {c})</a> "
                for n in range(8)
            )
            return declared_page(f"Category {c}", rows, canonical=f"/index.php?cat={c}")
        if parts[0] in ("product", "shop") and len(parts) == (2 if parts[0] == "product" else 3):
            slug = parts[-1]
            text = f"<p>The product {slug}, a thing of category {slug[1]}.</p>"
            return declared_page(f"Product {slug}", text, canonical=f"/product/{slug}/")
        return not_found(request)


@pytest_twisted.inlineCallbacks
def test_a_canonical_the_rules_make_the_page_is_cited_as_the_site_spells_it():
    """A page's declared canonical that the rules in force make that page is its citation: a
    category cites ``/index.php?cat=<c>`` (the rules alone would drop the index page), and a
    product fetched under its category's path once that form was learned cites its pretty URL
    (the form's target, slash and all)."""
    site, crawler, items, _ = yield run(lambda: (s := _CmsShop(), *listen(s)), "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    assert stats.get("urlunify/learned/form/127.0.0.1//shop/*/{s2}"), stats
    base = "/".join(items[0]["url"].split("/")[:3])
    cited = {i["url"][len(base) :]: i["canonical_url"][len(base) :] for i in items}
    assert {u: c for u, c in cited.items() if "cat=" in u} == {
        f"/index.php?cat={c}": f"/index.php?cat={c}" for c in range(8)
    }
    path_only = {u: c for u, c in cited.items() if u.startswith(f"/shop/{LINKED_BOTH}/")}
    assert len(path_only) == 8  # fetched under the path: no other link to them
    assert path_only == {u: f"/product/{u.split('/')[3]}/" for u in path_only}


def test_a_form_cites_its_target_with_the_slash_of_the_url():
    """A configured form is written without the trailing slash the identity leaves out; a
    citation keeps the slash, and the form still applies."""
    from scrapy_urlunify import Policy
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs

    forms = {"shop.test": {"/shop/*/{slug}": "/product/{slug}", "/?cat={c}": "/category/{c}"}}
    canonical = CanonicalURLs(CrawlPolicies(Policy(url_forms=forms)), ["https://shop.test/"])
    assert canonical.of("https://shop.test/shop/hats/cap/") == "https://shop.test/product/cap/"
    assert canonical.of("https://shop.test/shop/hats/cap") == "https://shop.test/product/cap"
    assert canonical.of("https://shop.test/?cat=hats") == "https://shop.test/category/hats"


def test_a_canonical_that_echoes_the_url_is_cleaned_as_the_url():
    """A site that echoes the URL requested as its canonical (session id and all) is not cited
    with it: the declared spelling is cleaned by the crawl's rules, its index page kept."""
    from scrapy_urlunify import Policy
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs

    policies = CrawlPolicies(Policy())
    canonical = CanonicalURLs(policies, ["https://site.test/"])
    for url in (
        "https://site.test/doc/?sessionid=0123456789abcdef",
        "https://site.test/x/index.php?id=7",
    ):
        canonical.spelled(policies.unifier.identify(url), url, url)
    assert canonical.of("https://site.test/doc/?sessionid=0123456789abcdef") == (
        "https://site.test/doc/"
    )
    assert canonical.of("https://site.test/x/?id=7") == "https://site.test/x/index.php?id=7"


@pytest_twisted.inlineCallbacks
def test_in_scrapys_default_order_items_wait_for_their_pages_claim():
    """Scrapy's defaults (depth-first, 16 requests at a time): the path-only categories are
    crawled first, and their products hand over items while the site's canonicals are still on
    probation. Each such item waits until its page's claim is checked (its target fetched, or
    the site's canonicals trusted), and is cited as the page declares."""
    default_order = {
        "CONCURRENT_REQUESTS": 16,
        "DEPTH_PRIORITY": 0,
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue",
    }
    site, crawler, items, _ = yield run(
        lambda: (s := _CmsShop(), *listen(s)), "/", default_order, PageSpider
    )
    base = "/".join(items[0]["url"].split("/")[:3])
    products = {
        i["url"][len(base) :]: i["canonical_url"][len(base) :] for i in items if "/p" in i["url"]
    }
    assert len(products) == 64
    wrong = {u: c for u, c in products.items() if c != f"/product/{u.strip('/').split('/')[-1]}/"}
    assert wrong == {}


class _GoneClaims(CountingSite):
    """``items`` items ``/item/<n>/`` (forty), each declaring ``/gone/<n>/`` canonical: a page
    nobody links and the site answers 404."""

    def __init__(self, items: int = 40) -> None:
        super().__init__()
        self.items = items

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, _ = self.count(request)
        if path == "/":
            links = "".join(f"<a href='/item/{n}/'>Item {n}</a> " for n in range(self.items))
            return declared_page("Home", f"<p>Our items.</p>{links}")
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "item" and parts[1].isdigit():
            text = f"<p>Item number {parts[1]}, a thing of its own.</p>"
            return declared_page(f"Item {parts[1]}", text, canonical=f"/gone/{parts[1]}/")
        return not_found(request)


@pytest_twisted.inlineCallbacks
def test_items_whose_claim_is_never_checked_are_let_go_under_their_own_url():
    """No claim of the site is ever checked (its canonicals are never fetched): the items that
    waited for them are let go (when too many pages wait, or when nothing is in flight), each
    under its own URL, and the crawl finishes with all of them."""
    site, crawler, items, _ = yield run(
        lambda: (s := _GoneClaims(), *listen(s)), "/", {"CONCURRENT_REQUESTS": 16}, PageSpider
    )
    base = "/".join(items[0]["url"].split("/")[:3])
    cited = sorted(i["canonical_url"][len(base) :] for i in items if "/item/" in i["url"])
    assert cited == sorted(f"/item/{n}/" for n in range(40))
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert stats["urlunify/canonical/held_items_unsettled"] == 40


@pytest_twisted.inlineCallbacks
def test_items_wait_for_a_bounded_number_of_pages():
    """Two hundred items whose claims are never checked: at most 128 pages' items wait, so the
    oldest go on while the crawl still fetches the others, not all of them at its end."""
    from scrapy import signals

    events: list[str] = []

    class Logging(PageSpider):
        name = "logging"

        @classmethod
        def from_crawler(cls, crawler, *args, **kwargs):  # type: ignore[no-untyped-def]
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.scraped, signal=signals.item_scraped)
            return spider

        def scraped(self, item, **kwargs):  # type: ignore[no-untyped-def]
            events.append("scraped")

        def parse_page(self, response):  # type: ignore[no-untyped-def]
            events.append("parsed")
            yield from super().parse_page(response)

    site, crawler, items, _ = yield run(
        lambda: (s := _GoneClaims(200), *listen(s)), "/", {"CONCURRENT_REQUESTS": 16}, Logging
    )
    assert len(items) == 201 and crawler.stats.get_value("finish_reason") == "finished"
    last_parsed = len(events) - events[::-1].index("parsed")
    # 72 go on before the last page is fetched; an item let go resumes its pipelines in a
    # reactor turn of its own, so the last of them may come after the crawl's last pages (65
    # of 72 before the last page is parsed, measured): without the bound, only the home page's
    assert events[:last_parsed].count("scraped") >= 40


#: the orders a listing of _SortedShop links its products under (a product's page ignores it)
SORTS = ("price", "name", "rating", "date", "model", "stock", "colour", "size")


class _SortedShop(CountingSite):
    """Eight categories of six products. A product's page is ``/index.php?route=product&id=<n>``
    and declares that spelling canonical (the CMS writes its script); its category links it with
    an order, ``&sort=<order>``, which the page ignores. ``held``: each product is linked under
    two orders, and a sitemap, linked last, links every product as the CMS spells it, so the
    site's canonicals are on probation while the products are fetched. Else the home page
    first links eight information pages, each also with ``&tab=main`` (the same page, declaring
    it), which make the site's canonicals trusted; then only the first three products are
    linked under two orders."""

    def __init__(self, held: bool) -> None:
        super().__init__()
        self.held = held

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        route = params.get("route") if path == "/index.php" else None
        if path == "/" and not params:
            links = "".join(
                f"<a href='/index.php?route=info&page={k}'>Info {k}</a> "
                f"<a href='/index.php?route=info&page={k}&tab=main'>(main)</a> "
                for k in range(0 if self.held else 8)
            )
            links += "".join(
                f"<a href='/index.php?route=category&cat={c}'>{c}</a> " for c in range(8)
            )
            if self.held:
                links += "<a href='/sitemap'>Sitemap</a>"
            return declared_page("Home", f"<p>Our categories.</p>{links}")
        if path == "/sitemap" and self.held:
            links = "".join(
                f"<a href='/index.php?route=product&id={n}'>P{n}</a> " for n in range(48)
            )
            return declared_page("Sitemap", links)
        if route == "info" and params.get("page", "").isdigit():
            k = int(params["page"])
            text = f"<p>Information page {k}: shipping takes {k + 2} days, returns {k * 5 + 7}.</p>"
            return declared_page(f"Info {k}", text, canonical=f"/index.php?route=info&page={k}")
        if route == "category" and params.get("cat", "").isdigit():
            c = int(params["cat"])
            twice = range(6 * c, 6 * c + 6) if self.held else range(6 * c, min(6 * c + 6, 3))
            rows = "".join(
                f"<a href='/index.php?route=product&id={n}&sort={SORTS[(n + 1) % 8]}'>P{n}</a> "
                for n in twice
            )
            rows += "".join(
                f"<a href='/index.php?route=product&id={n}&sort={SORTS[n % 8]}'>P{n}</a> "
                for n in range(6 * c, 6 * c + 6)
            )
            return declared_page(
                f"Category {c}", rows, canonical=f"/index.php?route=category&cat={c}"
            )
        if route == "product" and params.get("id", "").isdigit():
            n = int(params["id"])
            text = f"<p>The product number {n}, of category {n // 6}, weighs {n * 7 + 3} grams.</p>"
            return declared_page(f"Product {n}", text, canonical=f"/index.php?route=product&id={n}")
        return not_found(request)


@pytest_twisted.inlineCallbacks
def test_a_rule_learned_after_a_pages_claim_keeps_its_citation_as_the_site_spells_it():
    """A rule learned while a page's claim is pending makes its declared canonical the page
    itself: ``sort`` does not matter, so ``/index.php?route=product&id=5&sort=stock`` is the page
    of ``/index.php?route=product&id=5``. Whether the rule came from that very page's trusted
    claim (the site's canonicals trusted) or later, while the page's items waited for a target
    now never fetched (on probation), each product is cited as the site spells it, not as the
    rules alone write it (``/?route=product&id=5``: no index page)."""
    for held in (False, True):
        site, crawler, items, _ = yield run(
            lambda held=held: (s := _SortedShop(held), *listen(s)), "/", {}, PageSpider
        )
        stats = crawler.stats.get_stats()
        assert any(k.startswith("urlunify/learned/param/") and k.endswith("sort") for k in stats)
        assert bool(stats.get("urlunify/canonical/held_items")) is held, stats
        base = "/".join(items[0]["url"].split("/")[:3])
        products = {
            i["url"][len(base) :]: i["canonical_url"][len(base) :]
            for i in items
            if "route=product" in i["url"]
        }
        assert len(products) == 48, (held, sorted(products))
        wrong = {
            u: c
            for u, c in products.items()
            if c != "/index.php?route=product&id=" + u.split("id=")[1].split("&")[0]
        }
        assert wrong == {}, held


class _TwiceClaimed(CountingSite):
    """``items`` items, each shown at ``/a/<n>`` and ``/b/<n>`` (one page, linked both ways
    from the home page), declaring ``/item/<n>`` canonical: the page itself, which only a page
    linked last (``/more``) links."""

    def __init__(self, items: int = 12) -> None:
        super().__init__()
        self.items = items

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, _ = self.count(request)
        parts = path.strip("/").split("/")
        if path == "/":
            links = "".join(
                f"<a href='/{way}/{n}'>Item {n}</a> " for way in "ab" for n in range(self.items)
            )
            return declared_page("Home", f"<p>Our items.</p>{links}<a href='/more'>More</a>")
        if path == "/more":
            links = "".join(f"<a href='/item/{n}'>Item {n}</a> " for n in range(self.items))
            return declared_page("More", links)
        if len(parts) == 2 and parts[0] in ("a", "b", "item") and parts[1].isdigit():
            text = f"<p>Item number {parts[1]}, a thing of its own, weighs {parts[1]}7 grams.</p>"
            return declared_page(f"Item {parts[1]}", text, canonical=f"/item/{parts[1]}")
        return not_found(request)


@pytest_twisted.inlineCallbacks
def test_a_claim_made_again_by_a_duplicate_page_is_still_checked_for_the_first():
    """Two spellings of a page declare its canonical before it is fetched; the second, a
    duplicate page, claims it again. The canonical's fetch shows both claims true: the first
    page's items are cited under it, not under the spelling they were fetched with (they were,
    before the site's canonicals were trusted: the fetch checked the second claim only)."""
    site, crawler, items, _ = yield run(
        lambda: (s := _TwiceClaimed(), *listen(s)), "/", {}, PageSpider
    )
    base = "/".join(items[0]["url"].split("/")[:3])
    cited = {i["url"][len(base) :]: i["canonical_url"][len(base) :] for i in items}
    firsts = {u: c for u, c in cited.items() if u.startswith("/a/")}
    assert len(firsts) == 12
    assert firsts == {f"/a/{n}": f"/item/{n}" for n in range(12)}
    assert not [u for u in cited if u.startswith(("/b/", "/item/"))]  # duplicates: dropped
