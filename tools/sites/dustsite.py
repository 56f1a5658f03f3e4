"""A generated web shop on loopback with the DUST of real shop software, and its ground truth.

DUST: "different URLs, similar text". The shop imitates what an OpenCart-like PHP shop behind a
few host names does, from ``random.Random(seed)``:

* **a CMS route and pretty URLs**: a product is ``/product/N-slug`` and also
  ``/index.php?route=product/view&id=N`` (the "new products" box on the home page builds the
  route form, as shop modules that bypass the SEO-URL builder do); a product without an SEO
  keyword (a fifth of them) is linked by its route form only, and from a sorted listing with the
  listing's ``&sort=`` (which does not change a product page); every product page declares its
  pretty URL as ``rel=canonical``;
* **three hosts**: ``www.shop.test`` (the start), ``shop.test`` (every footer links its home) and
  ``mirror.shop.test`` (a mirror serving the same bytes; every product page links its copy
  there, and the home page the mirror's home);
* **noise parameters**: ``utm_*`` on the home page's featured products, ``ref=pN`` on related
  products, a per-view ``sessionid=`` on the cart and account links of every page, a per-view
  ``;jsessionid=`` on the event calendar's links (its booking widget is a servlet),
  ``print=1`` (the page with a one-line banner: a near-duplicate, always the same value),
  ``view=gallery|details`` on product pages (rendered client-side: the same text);
* **parameters that matter**: a listing's ``page=N``, ``limit=12|24`` (the same listing when a
  category has at most 12 products: a learner's counter-example trap) and ``sort=price|name``;
* **spaces that never end, made of DUST only**: listing filters ``filter=instock,sale,...``
  that the shop ignores (an ordered combination space on every listing), and the calendar's
  ``date=`` with next/previous-day links for ever (the same calendar page for any date).

Ground truth: :meth:`DustSite.page_id` of any URL is the page it shows (``None``: a 404).
A listing's id is its content (the products it shows, in order, from which rank), so two
spellings showing the same products are one page, whatever their pager says. The URL floor is
:meth:`DustSite.floor`: the number of distinct page ids reachable from the start URL. Page text
depends only on the page id, but for the print banner and a listing's pager; links may carry
per-view noise.

Host names on loopback: the server is also a forward proxy for http (requests in absolute form,
``GET http://www.shop.test/ HTTP/1.1``), as the demo server is; a crawler points
``request.meta["proxy"]`` at it (the demo's ``DemoProxyMiddleware`` with
``URLUNIFY_DEMO_HOSTS = HOSTS``), so real names reach it without DNS. A direct request is
answered by its ``Host`` header.

    python tools/sites/dustsite.py serve --port 8090 [--seed 1 --products 600 --categories 20]
    python tools/sites/dustsite.py truth [--seed 1 ...]      # JSON: floor and page ids
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import itertools
import random
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import generated_site
from generated_site import page_spider, slug
from generated_site import serve as serve  # the tests' and the benchmark's server


def _words(text: str) -> list[str]:
    return text.split()


HOSTS = ("www.shop.test", "shop.test", "mirror.shop.test")
CANONICAL = "http://www.shop.test"
MIRROR = "http://mirror.shop.test"
BARE = "http://shop.test"
START = CANONICAL + "/"
SORTS = ("", "price", "name")  # "": the shop's own order
LIMITS = (12, 24)
FILTERS = ("instock", "sale", "freeship")
TODAY = dt.date(2026, 12, 2)
DEFAULT_PORT = 8090

#: The mirror named in a crawl's settings: what a user who noticed it writes.
MIRROR_SETTINGS: dict[str, Any] = {"URLUNIFY_DOMAIN_ALIASES": [["shop.test", "mirror.shop.test"]]}
#: What a careful user writes for this shop after reading a few of its pages: the route's
#: identifying parameters (so ``sort`` and the like do not tell route URLs apart, while a
#: listing's ``sort`` still does), the parameters that never change a page, and the mirror.
CAREFUL_SETTINGS: dict[str, Any] = {
    "URLUNIFY_KEY_PARAMS": ["route", "id"],
    "URLUNIFY_REMOVE_PARAMS": ["ref", "print", "view", "filter", "date"],
    **MIRROR_SETTINGS,
}

WORDS = _words("""sturdy light compact classic modern steel oak cotton wool leather ceramic glass
handmade portable waterproof quiet fast warm soft bright matte polished durable folding
adjustable slim large small travel kitchen garden office outdoor winter summer premium basic
set kit pack pair edition model series version design finish colour size weight warranty
delivery includes features made with for and the a of in is it to its from this that""")
NOUNS = _words("""kettle lamp chair table desk mug bottle jacket boot scarf bag backpack tent stove
knife pan pot clock radio speaker headphones camera tripod bicycle helmet glove blanket pillow
towel candle vase shelf mirror rug basket umbrella notebook pen watch wallet belt hat""")
ADJECTIVES = _words("""red blue green black white grey amber silver golden copper nordic alpine
coastal urban rustic royal tiny grand swift calm bold""")
CATEGORY_NAMES = _words("""Kitchen Garden Outdoor Office Travel Lighting Furniture Clothing Footwear
Audio Photo Cycling Bedding Bath Decor Storage Stationery Accessories Camping Gifts Tools
Toys Sports Pets Books Music Crafts Baby Health Beauty""")


@dataclass(frozen=True)
class Product:
    pid: int
    name: str
    slug: str | None  # None: no SEO keyword, linked by its route form only
    price: int  # cents
    category: int
    text: str
    related: tuple[int, ...]


@dataclass(frozen=True)
class Category:
    cid: int
    name: str
    slug: str
    products: tuple[int, ...]  # in the shop's own order


#: what a page's view gives: its title, canonical path (None: none declared), body and links
Rendered = tuple[str, "str | None", str, "list[tuple[str, str]]"]


class DustSite:
    """The shop of one seed and size: its pages, what each URL shows, and how it is rendered."""

    def __init__(
        self, seed: int = 1, categories: int = 20, products: int = 600, new_on_home: int = 4
    ) -> None:
        rng = random.Random(seed)
        self.seed = seed
        names = rng.sample(CATEGORY_NAMES, min(categories, len(CATEGORY_NAMES)))
        names += [f"Section {i}" for i in range(len(names), categories)]
        # category sizes vary: a few small ones (<= 12 products: limit=24 shows the same listing)
        weights = [rng.choice((1, 1, 3, 4, 5)) for _ in names]
        cats_of = [rng.choices(range(1, categories + 1), weights)[0] for _ in range(products)]
        for c in range(categories):  # every category has at least three products
            for k in range(3):
                cats_of[(c * 3 + k) % products] = c + 1
        used: set[str] = set()
        self.products: dict[int, Product] = {}
        for pid in range(1, products + 1):
            while True:
                name = f"{rng.choice(ADJECTIVES).capitalize()} {rng.choice(WORDS[:37])} {rng.choice(NOUNS)}"
                if name not in used:
                    used.add(name)
                    break
            # most descriptions are long, a quarter one or two lines (a print banner weighs more there)
            words = rng.randint(30, 60) if rng.random() < 0.25 else rng.randint(120, 220)
            text = " ".join(rng.choice(WORDS) for _ in range(words))
            related = tuple(rng.sample([p for p in range(1, products + 1) if p != pid], 3))
            self.products[pid] = Product(
                pid,
                name,
                None if rng.random() < 0.2 else slug(name),
                rng.randint(199, 49999),
                cats_of[pid - 1],
                text.capitalize() + ".",
                related,
            )
        self.categories: dict[int, Category] = {}
        for c, name in enumerate(names, start=1):
            members = [p for p in self.products.values() if p.category == c]
            rng.shuffle(members)
            self.categories[c] = Category(c, name, slug(name), tuple(p.pid for p in members))
        self.featured = tuple(rng.sample(sorted(self.products), min(6, products)))
        slugged = [p for p in sorted(self.products, reverse=True) if self.products[p].slug]
        self.newest = tuple(slugged[:new_on_home])
        self.events = {
            k: (
                f"{rng.choice(ADJECTIVES).capitalize()} {w} day",
                TODAY + dt.timedelta(days=rng.randint(3, 60)),
            )
            for k, w in enumerate(("workshop", "market", "tasting"), start=1)
        }
        self._labels = {c: self._listing_labels(cat) for c, cat in self.categories.items()}
        self._views = itertools.count(1)

    # --- listings ------------------------------------------------------------------------------

    def _ordered(self, cat: Category, sort: str) -> list[int]:
        if sort == "price":
            return sorted(cat.products, key=lambda p: (self.products[p].price, p))
        if sort == "name":
            return sorted(cat.products, key=lambda p: (self.products[p].name, p))
        return list(cat.products)

    @staticmethod
    def pages(cat: Category, limit: int) -> int:
        return max(1, -(-len(cat.products) // limit))

    def _shown(self, cat: Category, sort: str, limit: int, page: int) -> tuple[int, ...]:
        return tuple(self._ordered(cat, sort)[(page - 1) * limit : page * limit])

    def _content_key(self, cat: Category, sort: str, limit: int, page: int) -> tuple[Any, ...]:
        # the products shown, in order, and from where: two pagers showing them are one page
        # (``?limit=24&page=3`` = ``?page=5``), though their "(N pages)" differ
        return (self._shown(cat, sort, limit, page), (page - 1) * limit)

    def _listing_labels(self, cat: Category) -> dict[tuple[Any, ...], str]:
        """Content of each listing page -> the page id of the first spelling showing it."""
        labels: dict[tuple[Any, ...], str] = {}
        for sort in SORTS:
            for limit in LIMITS:
                for page in range(1, self.pages(cat, limit) + 1):
                    labels.setdefault(
                        self._content_key(cat, sort, limit, page),
                        f"list:{cat.cid}:{sort or 'own'}:{limit}:{page}",
                    )
        return labels

    # --- what a URL shows ----------------------------------------------------------------------

    def resolve(self, url: str) -> tuple[str, tuple[Any, ...], bool] | None:
        """``(kind, arguments, print view)`` of the page ``url`` shows; ``None`` for a 404."""
        parts = urlsplit(url)
        if (parts.hostname or "") not in HOSTS or parts.scheme != "http":
            return None
        path = re.sub(
            r";jsessionid=[^/?]*", "", parts.path, flags=re.I
        )  # the servlet's URL rewriting
        q = dict(parse_qsl(parts.query, keep_blank_values=True))
        printed = q.get("print") == "1"
        if path in ("/", "/index.php"):
            route = q.get("route")
            if path == "/" or route in (None, "common/home"):
                return "home", (), printed
            if (
                route == "product/view"
                and q.get("id", "").isdigit()
                and int(q["id"]) in self.products
            ):
                return "product", (int(q["id"]),), printed
            return None
        simple = {
            "/about": "about",
            "/cart": "cart",
            "/account/login": "account",
            "/events/": "events",
            "/events/calendar": "calendar",
        }
        if path in simple:
            return simple[path], (), printed
        m = re.fullmatch(r"/events/(\d+)-([a-z0-9-]+)", path)
        if m and int(m[1]) in self.events and slug(self.events[int(m[1])][0]) == m[2]:
            return "event", (int(m[1]),), printed
        m = re.fullmatch(r"/product/(\d+)-([a-z0-9-]+)", path)
        if m and int(m[1]) in self.products and self.products[int(m[1])].slug == m[2]:
            return "product", (int(m[1]),), printed
        m = re.fullmatch(r"/category/(\d+)-([a-z0-9-]+)", path)
        if m and int(m[1]) in self.categories and self.categories[int(m[1])].slug == m[2]:
            cat = self.categories[int(m[1])]
            sort, limit, page = q.get("sort", ""), q.get("limit", "12"), q.get("page", "1")
            if (
                sort not in SORTS
                or not limit.isdigit()
                or int(limit) not in LIMITS
                or not page.isdigit()
            ):
                return None
            if not 1 <= int(page) <= self.pages(cat, int(limit)):
                return None
            return "listing", (cat.cid, sort, int(limit), int(page)), printed
        return None

    def page_id(self, url: str) -> str | None:
        """The page ``url`` shows (its ground truth), or ``None`` when it is a 404."""
        view = self.resolve(url)
        if view is None:
            return None
        kind, args, _ = view
        if kind == "listing":
            cid, sort, limit, page = args
            return self._labels[cid][self._content_key(self.categories[cid], sort, limit, page)]
        return ":".join([kind, *map(str, args)])

    # --- links ---------------------------------------------------------------------------------

    def product_href(self, pid: int, **params: str) -> str:
        p = self.products[pid]
        if p.slug is None:
            return "/index.php?" + urlencode({"route": "product/view", "id": pid, **params})
        return f"/product/{pid}-{p.slug}" + ("?" + urlencode(params) if params else "")

    def category_href(
        self, cid: int, sort: str = "", limit: int = 12, page: int = 1, filt: str = ""
    ) -> str:
        cat = self.categories[cid]
        params = {
            k: v
            for k, v in (
                ("sort", sort),
                ("limit", "" if limit == 12 else str(limit)),
                ("page", "" if page == 1 else str(page)),
                ("filter", filt),
            )
            if v
        }
        return f"/category/{cid}-{cat.slug}" + ("?" + urlencode(params, safe=",") if params else "")

    def _token(self, n: int, size: int = 26) -> str:
        return hashlib.md5(f"{self.seed}:{n}".encode()).hexdigest()[:size]

    # --- rendering -----------------------------------------------------------------------------

    def render(self, url: str) -> tuple[int, bytes]:
        """The status and HTML body a request for ``url`` gets (one page view)."""
        view = self.resolve(url)
        if view is None:
            return (
                404,
                b"<!DOCTYPE html><html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>",
            )
        kind, args, printed = view
        title, canonical, body, links = getattr(self, "_" + kind)(
            *args, query=dict(parse_qsl(urlsplit(url).query))
        )
        n = next(self._views)
        head = [f'<meta name="page-id" content="{self.page_id(url)}">']
        if canonical:
            head.append(f'<link rel="canonical" href="{CANONICAL}{html.escape(canonical)}">')
        nav = " ".join(
            f'<a href="{html.escape(self.category_href(c))}">{html.escape(cat.name)}</a>'
            for c, cat in self.categories.items()
        )
        header = (
            f'<header><a href="/">Shop</a> <a href="/cart?sessionid={self._token(n)}">Cart</a> '
            f'<a href="/account/login?sessionid={self._token(n)}">Account</a><nav>{nav}</nav></header>'
        )
        banner = "<p class='print'>Printer-friendly version of this page.</p>" if printed else ""
        anchors = " ".join(
            f'<a href="{html.escape(href)}">{html.escape(text)}</a>' for href, text in links
        )
        footer = (
            f'<footer><a href="{BARE}/">shop.test</a> <a href="/about">About us</a> '
            f'<a href="/events/">Events</a></footer>'
        )
        page = (
            f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)} - Shop</title>"
            f"{''.join(head)}</head><body>{header}{banner}<main><h1>{html.escape(title)}</h1>{body}"
            f"<div class='links'>{anchors}</div></main>{footer}</body></html>"
        )
        return 200, page.encode()

    def _home(self, query: dict[str, str]) -> Rendered:
        utm = {"utm_source": "home", "utm_medium": "banner", "utm_campaign": "winter-sale"}
        links = [(self.product_href(p, **utm), self.products[p].name) for p in self.featured]
        links += [
            ("/index.php?" + urlencode({"route": "product/view", "id": p}), self.products[p].name)
            for p in self.newest
        ]  # the "new products" box builds the route form
        links += [
            (f"/events/calendar?date={TODAY.isoformat()}", "Calendar"),
            (MIRROR + "/", "EU mirror"),
        ]
        return (
            "Welcome to the shop",
            "/",
            "<p>Featured products and the newest arrivals.</p>",
            links,
        )

    def _about(self, query: dict[str, str]) -> Rendered:
        text = "<p>We are a small shop selling useful things since 2009. Subscribe to our newsletter.</p>"
        return (
            "About us",
            "/about",
            text,
            [(CANONICAL + "/?utm_source=newsletter&utm_medium=email", "Newsletter")],
        )

    def _cart(self, query: dict[str, str]) -> Rendered:
        return (
            "Shopping cart",
            None,
            "<p>Your shopping cart is empty.</p>",
            [("/", "Continue shopping")],
        )

    def _account(self, query: dict[str, str]) -> Rendered:
        return (
            "Account login",
            None,
            "<p>Returning customer: e-mail and password. New customer: register.</p>",
            [],
        )

    def _events(self, query: dict[str, str]) -> Rendered:
        items = "".join(
            f"<li>{html.escape(name)}, {day:%d %B %Y}</li>" for name, day in self.events.values()
        )
        links = [(f"/events/{k}-{slug(name)}", name) for k, (name, _) in self.events.items()]
        links.append((f"/events/calendar?date={TODAY.isoformat()}", "Calendar"))
        return "Events", "/events/", f"<ul>{items}</ul>", links

    def _event(self, k: int, query: dict[str, str]) -> Rendered:
        name, day = self.events[k]
        text = f"<p>{html.escape(name)} on {day:%d %B %Y} in the shop. Free entry, all welcome.</p>"
        return (
            name,
            f"/events/{k}-{slug(name)}",
            text,
            [(f"/events/calendar?date={day.isoformat()}", "In the calendar")],
        )

    def _calendar(self, query: dict[str, str]) -> Rendered:
        try:
            day = dt.date.fromisoformat(query.get("date", ""))
        except ValueError:
            day = TODAY
        session = self._token(next(self._views), 32).upper()
        # the widget highlights the day client-side: the page text is the same for every date
        items = "".join(f"<li>{html.escape(name)}</li>" for name, _ in self.events.values())
        links = [
            (f"/events/calendar;jsessionid={session}?date={d.isoformat()}", label)
            for d, label in (
                (day - dt.timedelta(days=1), "Previous day"),
                (day + dt.timedelta(days=1), "Next day"),
            )
        ]
        links += [(f"/events/{k}-{slug(name)}", name) for k, (name, _) in self.events.items()]
        return "Event calendar", None, f"<p>Upcoming events:</p><ul>{items}</ul>", links

    def _product(self, pid: int, query: dict[str, str]) -> Rendered:
        p = self.products[pid]
        cat = self.categories[p.category]
        canonical = f"/product/{pid}-{p.slug}" if p.slug else self.product_href(pid)
        related = "".join(f"<li>{html.escape(self.products[r].name)}</li>" for r in p.related)
        body = (
            f"<p class='crumbs'>{html.escape(cat.name)}</p><p class='price'>{p.price / 100:.2f} EUR</p>"
            f"<p>{html.escape(p.text)}</p><h2>Related products</h2><ul>{related}</ul>"
        )
        base = self.product_href(pid)
        join = "&" if "?" in base else "?"
        links = [(self.category_href(p.category), cat.name)]
        links += [(self.product_href(r, ref=f"p{pid}"), self.products[r].name) for r in p.related]
        links += [
            (f"{base}{join}view=gallery", "Gallery"),
            (f"{base}{join}view=details", "Details"),
            (f"{base}{join}print=1", "Print"),
            (MIRROR + base, "On the EU mirror"),
        ]
        return p.name, canonical, body, links

    def _listing(
        self, cid: int, sort: str, limit: int, page: int, query: dict[str, str]
    ) -> Rendered:
        cat = self.categories[cid]
        shown = self._shown(cat, sort, limit, page)
        first = (page - 1) * limit
        rows = "".join(
            f"<li>{html.escape(self.products[p].name)}: {self.products[p].price / 100:.2f} EUR</li>"
            for p in shown
        )
        body = (
            f"<p>Showing {first + 1} to {first + len(shown)} of {len(cat.products)} "
            f"({self.pages(cat, limit)} pages)</p><ul>{rows}</ul>"
        )
        # a product without an SEO keyword keeps the listing's sort in its route form
        links = [
            (
                self.product_href(
                    p, **({"sort": sort} if sort and not self.products[p].slug else {})
                ),
                self.products[p].name,
            )
            for p in shown
        ]
        links += [(self.category_href(cid, s, limit), f"Sort: {s or 'default'}") for s in SORTS]
        links += [(self.category_href(cid, sort, lim), f"Show {lim}") for lim in LIMITS]
        links += [
            (self.category_href(cid, sort, limit, n), str(n))
            for n in range(1, self.pages(cat, limit) + 1)
        ]
        chosen = [f for f in query.get("filter", "").split(",") if f in FILTERS]
        # the filter plug-in is off: every combination shows the same listing, with the same links
        links += [
            (
                self.category_href(
                    cid, sort, limit, page, ",".join(chosen if f in chosen else [*chosen, f])
                ),
                f"Filter: {f}",
            )
            for f in FILTERS
        ]
        return cat.name, self.category_href(cid, sort, limit, page), body, links

    # --- ground truth --------------------------------------------------------------------------

    def reachable(self, start: str = START) -> dict[str, str]:
        """Every page id reachable from ``start``, with the first URL found showing it."""
        return generated_site.reachable(self, start)

    def floor(self, start: str = START) -> int:
        """The URL floor: one fetch per distinct page reachable from ``start``."""
        return len(self.reachable(start))


# --- serving -------------------------------------------------------------------------------------


def shop_spider() -> type:
    """The spider a naive user writes for the shop: every link followed from :data:`START`,
    an item ``{url, page_id}`` per page (``generated_site.page_spider``)."""
    return page_spider("shop", "shop.test", START)


def main() -> None:
    generated_site.main(DustSite, __doc__, HOSTS, DEFAULT_PORT)


if __name__ == "__main__":
    main()
