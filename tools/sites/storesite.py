"""A generated WooCommerce-on-WordPress store on loopback with the DUST of real WordPress shops,
and its ground truth: the second measuring stick of ``benchmarks/bench_dust.py`` (``--site store``),
built unlike the OpenCart-like shop of ``dustsite.py`` so that results tuned to one show on the
other.

Its pages: the home page, category listings (16 products a page, six orders, colour and price
filters), tag listings, products and the later pages of their reviews, a blog of 30 posts (10 a
page, monthly archives), about, shipping and contact pages, cart and account, a compare page for
each of a dozen products, and an events calendar. DUST: "different URLs, similar text". The
store imitates what WordPress, WooCommerce and their usual plug-ins do, from
``random.Random(seed)``:

* **a query form and pretty URLs**: a product is ``/product/<slug>/`` and also
  ``/?post_type=product&p=<id>`` (the "recently viewed" widget builds it), answered with the page
  itself (200, no redirect); half of the categories link their products by the category path
  form ``/shop/<category>/<slug>/``; a blog post is ``/blog/<slug>/`` and ``/?p=<id>`` (its
  visible short link); a category's first page is also ``/?product_cat=<slug>`` (the categories
  widget of the home page). Every page declares its pretty URL as ``rel=canonical`` (but an
  empty month of the calendar, which has none of its own), and a product or post, as
  WordPress does, its shortlink ``/?p=<id>`` as ``rel=shortlink`` (its later review pages too,
  which are other pages: WordPress declares a post's shortlink on each of its comment pages);
* **view segments**: AMP copies ``/product/<slug>/amp/`` and ``/blog/<slug>/amp/`` (the same
  visible text in lighter markup, canonical to the plain page; a visible "AMP" link besides
  ``rel=amphtml``), and ``/product/<slug>/comment-page-1/``, the product page itself (its reviews
  block links it), while ``comment-page-2/`` and on are pages of their own (a tenth of the
  products have 6-15 reviews, five a page): a learner's trap for a ``comment-page-*`` rule;
* **three hosts**: ``www.store.test`` (the start), ``store.test`` (every footer links its home)
  and ``m.store.test``, a mobile host serving the same bytes for every path (every footer links
  its home, every product page its copy there);
* **noise parameters**: ``?add-to-cart=<id>`` on every listing row and product page (the page
  the button is on, with any product's id), ``?add_to_wishlist=<id>`` on product pages,
  WooCommerce's geolocation cache buster ``?v=<8 hex>`` (one value per store, from the seed)
  appended to every link of a third of the pages, a per-view ``_wpnonce=`` on "compare" links,
  ``utm_*`` on the home page's newsletter links, ``?replytocom=<n>`` on the "Reply" links of a
  post's comments, and a listing's ``?orderby=menu_order`` (the ordering dropdown's default);
* **pagination twice**: a listing's page N is ``/product-category/<slug>/page/N/`` (the pager)
  and ``/product-category/<slug>/?paged=N`` (the "load more" button);
* **parameters that matter**: ``orderby=popularity|rating|date|price|price-desc`` (another order,
  paged under each order), the layered navigation's ``filter_color=<colour>`` and the price
  filter's ``min_price=A&max_price=B`` (three fixed ranges). They are traps for a learner: on a
  category whose products all have one colour, filtering by it shows the very same listing, and
  on a category priced inside one range, that range does too;
* **a space that never ends, made of DUST only**: the events calendar ``/events/?month=YYYY-MM``
  with previous/next month links for ever, every month without events showing the same "no
  events" page.

Ground truth: :meth:`StoreSite.page_id` of any URL is the page it shows (``None``: a 404).
A listing's id is its content (its term, the products it shows in order, from which rank, out
of how many results), so two spellings showing the same products are one page: the filtered
listing of a one-colour category is its unfiltered listing. The URL floor is
:meth:`StoreSite.floor`: the number of distinct page ids reachable from the start URL. Page text
depends only on the page id (every spelling of a page, its AMP copy included, shows the same
text); links may carry per-view noise (the nonce, an empty month's neighbours).

Host names on loopback: the server is also a forward proxy for http (requests in absolute form,
``GET http://www.store.test/ HTTP/1.1``), as the demo server and ``dustsite.py`` are; a crawler
points ``request.meta["proxy"]`` at it (the demo's ``DemoProxyMiddleware`` with
``URLUNIFY_DEMO_HOSTS = HOSTS``). A direct request is answered by its ``Host`` header.

    python tools/sites/storesite.py serve --port 8092 [--seed 1 --products 600 --categories 20]
    python tools/sites/storesite.py truth [--seed 1 ...]      # JSON: floor and page ids
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import itertools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit

import generated_site
from generated_site import page_spider, slug
from generated_site import serve as serve  # the tests' and the benchmark's server


def _words(text: str) -> list[str]:
    return text.split()


HOSTS = ("www.store.test", "store.test", "m.store.test")
CANONICAL = "http://www.store.test"
BARE = "http://store.test"
MOBILE = "http://m.store.test"
START = CANONICAL + "/"
DEFAULT_PORT = 8092
PER_PAGE = 16
REVIEWS_PER_PAGE = 5
POSTS_PER_PAGE = 10
#: WooCommerce's orderings; ``menu_order`` is the default (no ``orderby`` in the URL)
ORDERS = ("menu_order", "popularity", "rating", "date", "price", "price-desc")
ORDER_LABELS = {
    "menu_order": "Default sorting",
    "popularity": "Sort by popularity",
    "rating": "Sort by average rating",
    "date": "Sort by latest",
    "price": "Sort by price: low to high",
    "price-desc": "Sort by price: high to low",
}
COLORS = ("black", "white", "red", "blue", "green")
#: the price filter widget's ranges, in euros
PRICE_RANGES = ((0, 25), (25, 100), (100, 500))
#: a category's price band in euros: the first and the fourth fit inside one range of the filter
BANDS = ((3, 20), (10, 90), (30, 480), (120, 450), (5, 95))
TODAY = dt.date(2026, 12, 2)
#: the months of the events (one month between them empty: the same page as every other)
EVENT_MONTHS = ((2026, 12), (2026, 12), (2027, 1), (2027, 2))

#: The mobile host named in a crawl's settings: what a user who noticed it writes.
MIRROR_SETTINGS: dict[str, Any] = {"URLUNIFY_DOMAIN_ALIASES": [["store.test", "m.store.test"]]}
#: What a careful user writes for this store after reading a few of its pages: the parameters
#: that never change a page (removed: nobody wants ``add-to-cart`` sent; the nonce only ignored,
#: since a real compare page checks it), the AMP and first comment-page segments (not ``comment-page-*``:
#: the later ones are pages), and the mobile host. What no such rule can say stays: the query
#: forms, the category path form, ``paged=`` and ``orderby=menu_order`` (the declared canonicals'
#: business), and filters that happen to show a whole category.
CAREFUL_SETTINGS: dict[str, Any] = {
    "URLUNIFY_REMOVE_PARAMS": ["add-to-cart", "add_to_wishlist", "v", "replytocom"],
    "URLUNIFY_IGNORE_PARAMS": ["_wpnonce"],
    "URLUNIFY_IGNORE_PATH_SUFFIXES": ["amp", "comment-page-1"],
    **MIRROR_SETTINGS,
}

WORDS = _words("""durable lightweight handcrafted sustainable premium everyday compact elegant
robust versatile timeless cosy practical stylish waterproof breathable organic recycled natural
smooth sturdy gentle quick easy clean perfect ideal the a and with for of in on to your our every
this that is it from by made designed crafted finished tested packed shipped includes""")
MATERIALS = _words("""bamboo walnut linen canvas enamel marble brass felt cork copper rattan
porcelain stoneware merino denim""")
NOUNS = _words("""teapot grinder planter cushion throw lantern tray stool bench journal satchel
tote poncho beanie sneaker sandal flask tumbler skillet colander whisk easel puzzle kite frisbee
yoga-mat dumbbell leash feeder hammock""")
ADJECTIVES = _words("""nordic coastal urban alpine meadow harbour cedar maple willow juniper
amber ivory slate saffron indigo""")
CATEGORY_NAMES = _words("""Kitchenware Gardening Camping Lighting Furniture Clothing Shoes Audio
Cameras Cycling Bedding Bathroom Decor Storage Stationery Accessories Tools Toys Sports Pets
Books Music Crafts Baby Health Beauty Jewellery Watches Tea Coffee""")
TAG_NAMES = _words("""gift-idea bestseller eco new-in handmade limited family premium compact
classic vegan travel""")
AUTHORS = _words("""Anna Ben Chloe David Emma Finn Grace Hugo Iris Jack Kate Liam""")
POST_TITLES = (
    "How to choose a {adj} {noun}",
    "Ten uses for a {noun}",
    "Caring for your {noun}",
    "The {adj} {noun}: a short story",
    "Why we love the {noun}",
    "A guide to {adj} living",
)
MONTHS = _words("""January February March April May June July August September October
November December""")


class Review(NamedTuple):
    author: str
    stars: int
    text: str


@dataclass(frozen=True)
class Product:
    pid: int
    name: str
    slug: str
    price: int  # cents
    category: int
    color: str
    tags: tuple[int, ...]
    text: str
    related: tuple[int, ...]
    recent: tuple[int, ...]  # the "recently viewed" widget on its page
    reviews: tuple[Review, ...]
    sales: int
    added: dt.date

    @property
    def rating(self) -> float:
        return sum(r.stars for r in self.reviews) / len(self.reviews) if self.reviews else 0.0

    @property
    def review_pages(self) -> int:
        return max(1, -(-len(self.reviews) // REVIEWS_PER_PAGE))


@dataclass(frozen=True)
class Term:
    """A product category (``kind`` "cat") or product tag ("tag")."""

    kind: str
    tid: int
    name: str
    slug: str
    products: tuple[int, ...]  # in the store's own order (menu_order)

    @property
    def base(self) -> str:
        return f"/product-{'category' if self.kind == 'cat' else 'tag'}/{self.slug}/"


@dataclass(frozen=True)
class Post:
    pid: int  # WordPress post id, apart from the products' ids
    title: str
    slug: str
    date: dt.date
    author: str
    text: str
    products: tuple[int, ...]
    comments: tuple[tuple[int, str, str], ...]  # (comment id, author, text)


class Listing(NamedTuple):
    """What a listing URL asks for: a term, an order, a colour ("" none), a price range."""

    term: tuple[str, int]
    orderby: str
    color: str
    prange: tuple[int, int] | None
    page: int


#: what a page's view gives: its title, canonical path (None: none declared), AMP path, body
Rendered = tuple[str, "str | None", "str | None", str]


def _price(cents: int) -> str:
    return f"{cents / 100:.2f} &euro;"


def _month(y: int, m: int) -> str:
    return f"{MONTHS[m - 1]} {y}"


def _with(href: str, **params: Any) -> str:
    """``href`` with ``params`` added to its query (names such as ``add-to-cart`` via ``**``)."""
    return href + ("&" if "?" in href else "?") + urlencode(params)


class _View:
    """One rendering of one page: its links (with the store's ``v`` hash when the page is one of
    those that carry it) and its markup, full or AMP. The AMP copy keeps every element that holds
    text and drops the attributes and pure wrappers, so both show one text."""

    def __init__(self, amp: bool, v: str, nonce: str) -> None:
        self.amp, self.v, self.nonce = amp, v, nonce

    def a(self, href: str, text: str, cls: str = "") -> str:
        if self.v:
            href = _with(href, v=self.v)
        attr = "" if self.amp or not cls else f' class="{cls}"'
        return f'<a href="{html.escape(href)}"{attr}>{text}</a>'

    def el(self, tag: str, cls: str, inner: str) -> str:
        return f"<{tag}>{inner}</{tag}>" if self.amp else f'<{tag} class="{cls}">{inner}</{tag}>'

    def wrap(self, cls: str, inner: str) -> str:
        """A wrapper of elements only (never of bare text): gone in the AMP copy."""
        return inner if self.amp else f'<div class="{cls}">{inner}</div>'


class StoreSite:
    """The store of one seed and size: its pages, what each URL shows, and how it is rendered."""

    def __init__(self, seed: int = 1, categories: int = 20, products: int = 600) -> None:
        rng = random.Random(seed)
        self.seed = seed
        names = rng.sample(CATEGORY_NAMES, min(categories, len(CATEGORY_NAMES)))
        names += [f"Section {i}" for i in range(len(names), categories)]
        weights = [rng.choice((1, 2, 3, 4, 5)) for _ in names]
        cats_of = [rng.choices(range(1, categories + 1), weights)[0] for _ in range(products)]
        for c in range(categories):  # every category has at least three products
            for k in range(3):
                cats_of[(c * 3 + k) % products] = c + 1
        shuffled = list(range(1, categories + 1))
        rng.shuffle(shuffled)
        # bands in turn over the shuffled categories: every kind of band occurs from 5 categories
        self.band = {c: BANDS[k % len(BANDS)] for k, c in enumerate(shuffled)}
        # a fifth of the categories sell one colour only (the layered navigation's trap)
        self.mono = {c: rng.choice(COLORS) for c in rng.sample(shuffled, max(1, categories // 5))}
        used: set[str] = set()
        self.products: dict[int, Product] = {}
        everyone = list(range(1, products + 1))
        for pid in everyone:
            while True:
                name = f"{rng.choice(ADJECTIVES).capitalize()} {rng.choice(MATERIALS)} {rng.choice(NOUNS)}"
                if name not in used:
                    used.add(name)
                    break
            cat = cats_of[pid - 1]
            lo, hi = self.band[cat]
            r = rng.random()
            tags = (
                tuple(sorted(rng.sample(range(1, len(TAG_NAMES) + 1), 2 if r < 0.05 else 1)))
                if r < 0.35
                else ()
            )
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 140)))
            others = [p for p in everyone if p != pid]
            related = tuple(rng.sample(others, min(3, len(others))))
            recent = tuple(rng.sample(others, min(3, len(others))))
            r = rng.random()
            count = rng.randint(6, 15) if r < 0.1 else rng.randint(1, 5) if r < 0.45 else 0
            reviews = tuple(
                Review(
                    rng.choice(AUTHORS),
                    rng.randint(1, 5),
                    " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 35))).capitalize()
                    + ".",
                )
                for _ in range(count)
            )
            self.products[pid] = Product(
                pid,
                name,
                slug(name),
                rng.randint(lo, hi) * 100 - 1,
                cat,
                self.mono.get(cat) or rng.choice(COLORS),
                tags,
                text.capitalize() + ".",
                related,
                recent,
                reviews,
                rng.randint(0, 999),
                TODAY - dt.timedelta(days=rng.randint(0, 900)),
            )
        self.terms: dict[tuple[str, int], Term] = {}
        for c, name in enumerate(names, start=1):
            members = [p for p in self.products.values() if p.category == c]
            rng.shuffle(members)
            self.terms["cat", c] = Term("cat", c, name, slug(name), tuple(p.pid for p in members))
        for t, name in enumerate(TAG_NAMES, start=1):
            members = [p for p in self.products.values() if t in p.tags]
            rng.shuffle(members)
            self.terms["tag", t] = Term(
                "tag", t, name.replace("-", " ").capitalize(), name, tuple(p.pid for p in members)
            )
        self.by_slug = {(t.kind, t.slug): t for t in self.terms.values()}
        self.product_by_slug = {p.slug: p for p in self.products.values()}
        # half of the categories link their products by the category path form
        self.path_form = {c for c in range(1, categories + 1) if c % 2 == 0}
        self.featured = tuple(rng.sample(everyone, min(8, products)))
        self.bestsellers = tuple(
            sorted(everyone, key=lambda p: (-self.products[p].sales, p))[: min(4, products)]
        )
        self.comparable = frozenset(self.featured + self.bestsellers)
        self.recent_home = tuple(rng.sample(everyone, min(4, products)))
        self._make_blog(rng)
        self.events = tuple(
            (
                f"{rng.choice(ADJECTIVES).capitalize()} {what} evening",
                dt.date(y, m, rng.randint(1, 28)),
            )
            for (y, m), what in zip(
                EVENT_MONTHS, ("tasting", "repair cafe", "book swap", "workshop"), strict=True
            )
        )
        self.event_months = frozenset((d.year, d.month) for _, d in self.events)
        self.newsletter_cat = rng.choice(sorted(c for kind, c in self.terms if kind == "cat"))
        self.geo = hashlib.md5(f"geolocation:{seed}".encode()).hexdigest()[:8]
        self._orders: dict[tuple[tuple[str, int], str], list[int]] = {}
        self._labels: dict[tuple[Any, ...], str] = {}
        self._specs: dict[str, Listing] = {}
        for term in self.terms.values():
            self._label_listings(term)
        self._views = itertools.count(1)

    def _make_blog(self, rng: random.Random) -> None:
        start = dt.date(2026, 5, 1)
        titles: set[str] = set()
        drafts: list[tuple[dt.date, str]] = []
        while len(drafts) < 30:
            title = rng.choice(POST_TITLES).format(
                adj=rng.choice(ADJECTIVES), noun=rng.choice(NOUNS).replace("-", " ")
            )
            if title in titles:
                continue
            titles.add(title)
            drafts.append((start + dt.timedelta(days=rng.randint(0, (TODAY - start).days)), title))
        drafts.sort()
        self.posts: dict[int, Post] = {}
        comment_ids = itertools.count(1)
        # WordPress numbers posts and products in one sequence: the posts come after
        first = 1000 * (len(self.products) // 1000 + 1) + 1
        for k, (day, title) in enumerate(drafts):
            pid = first + k
            self.posts[pid] = Post(
                pid,
                title,
                slug(title),
                day,
                rng.choice(AUTHORS),
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(120, 220))).capitalize()
                + ".",
                tuple(rng.sample(sorted(self.products), min(2, len(self.products)))),
                tuple(
                    (
                        next(comment_ids),
                        rng.choice(AUTHORS),
                        " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 25))).capitalize()
                        + ".",
                    )
                    for _ in range(rng.randint(0, 6))
                ),
            )
        self.post_by_slug = {p.slug: p for p in self.posts.values()}
        self.newest_posts = sorted(self.posts, key=lambda p: (self.posts[p].date, p), reverse=True)
        self.archives = sorted({(p.date.year, p.date.month) for p in self.posts.values()})

    # --- listings ------------------------------------------------------------------------------

    def _ordered(self, term: Term, orderby: str) -> list[int]:
        key = ((term.kind, term.tid), orderby)
        if key not in self._orders:
            ps = self.products
            sort_key = {
                "popularity": lambda p: (-ps[p].sales, -p),
                "rating": lambda p: (-ps[p].rating, -p),
                "date": lambda p: (-ps[p].added.toordinal(), -p),
                "price": lambda p: (ps[p].price, p),
                "price-desc": lambda p: (-ps[p].price, -p),
            }.get(orderby)
            order = list(term.products)
            self._orders[key] = sorted(order, key=sort_key) if sort_key else order
        return self._orders[key]

    def _matching(self, spec: Listing) -> list[int]:
        lo, hi = spec.prange or (0, 10**9)
        return [
            p
            for p in self._ordered(self.terms[spec.term], spec.orderby)
            if (not spec.color or self.products[p].color == spec.color)
            and lo * 100 <= self.products[p].price <= hi * 100
        ]

    @staticmethod
    def pages(total: int) -> int:
        return max(1, -(-total // PER_PAGE))

    def _content_key(self, spec: Listing) -> tuple[Any, ...]:
        # the products shown, in order, from which rank, out of how many results: spellings
        # showing them are one page (a filter that keeps every product of its category)
        found = self._matching(spec)
        first = (spec.page - 1) * PER_PAGE
        return (spec.term, tuple(found[first : first + PER_PAGE]), first, len(found))

    def _label_listings(self, term: Term) -> None:
        """Name every listing of ``term``: its content -> the id of the first spelling showing it
        (unfiltered first, so a filter showing a whole category takes the category's id)."""
        filters: list[tuple[str, tuple[int, int] | None]] = [("", None)]
        filters += [(c, None) for c in COLORS] + [("", r) for r in PRICE_RANGES]
        filters += [(c, r) for c in COLORS for r in PRICE_RANGES]
        for color, prange in filters:
            for orderby in ORDERS:
                spec = Listing((term.kind, term.tid), orderby, color, prange, 1)
                total = len(self._matching(spec))
                for page in range(1, self.pages(total) + 1):
                    spec = spec._replace(page=page)
                    name = "+".join(x for x in (color, prange and f"{prange[0]}-{prange[1]}") if x)
                    label = f"list:{term.kind}{term.tid}:{orderby}:{name or '-'}:{page}"
                    if self._labels.setdefault(self._content_key(spec), label) == label:
                        self._specs[label] = spec

    def _listing_of(self, term: Term, page: int, q: dict[str, str]) -> Listing | None:
        orderby = q.get("orderby", "menu_order")
        if orderby not in ORDERS:  # WooCommerce falls back to its default order
            orderby = "menu_order"
        color = q.get("filter_color", "")
        if color not in COLORS:  # an unknown term: the filter is not applied
            color = ""
        lo, hi = q.get("min_price", ""), q.get("max_price", "")
        prange = (int(lo), int(hi)) if lo.isdigit() and hi.isdigit() else None
        if prange not in PRICE_RANGES:
            prange = None
        if q.get("paged", "").isdigit() and int(q["paged"]) > 0:  # the query wins over the path
            page = int(q["paged"])
        spec = Listing((term.kind, term.tid), orderby, color, prange, page)
        if not 1 <= page <= self.pages(len(self._matching(spec))):
            return None
        return spec

    # --- what a URL shows ----------------------------------------------------------------------

    def resolve(self, url: str) -> tuple[str, tuple[Any, ...], bool] | None:
        """``(kind, arguments, AMP copy)`` of the page ``url`` shows; ``None`` for a 404."""
        parts = urlsplit(url)
        if (parts.hostname or "") not in HOSTS or parts.scheme != "http":
            return None
        path = parts.path
        q = dict(parse_qsl(parts.query, keep_blank_values=True))
        if path == "/":
            p = q.get("p", "")
            if q.get("post_type") == "product":
                if p.isdigit() and int(p) in self.products:
                    return "product", (int(p), 1), False
                return None
            if "p" in q:  # WordPress finds a post of any type by its id
                if p.isdigit() and int(p) in self.posts:
                    return "post", (int(p),), False
                if p.isdigit() and int(p) in self.products:
                    return "product", (int(p), 1), False
                return None
            if "product_cat" in q:
                term = self.by_slug.get(("cat", q["product_cat"]))
                spec = term and self._listing_of(term, 1, q)
                return ("listing", (spec,), False) if spec else None
            return "home", (), False
        simple = {
            "/about/": "about",
            "/shipping/": "shipping",
            "/contact/": "contact",
            "/cart/": "cart",
            "/my-account/": "account",
        }
        if path in simple:
            return "page", (simple[path],), False
        m = re.fullmatch(r"/product/([a-z0-9-]+)/(?:(amp)/|comment-page-(\d+)/)?", path)
        if m and m[1] in self.product_by_slug:
            product = self.product_by_slug[m[1]]
            n = int(m[3] or 1)
            if not 1 <= n <= product.review_pages:
                return None
            return ("product" if n == 1 else "reviews"), (product.pid, n), bool(m[2])
        m = re.fullmatch(r"/shop/([a-z0-9-]+)/([a-z0-9-]+)/", path)
        if m and m[2] in self.product_by_slug:
            product = self.product_by_slug[m[2]]
            if self.terms["cat", product.category].slug == m[1]:
                return "product", (product.pid, 1), False
            return None
        m = re.fullmatch(r"/product-(category|tag)/([a-z0-9-]+)/(?:page/(\d+)/)?", path)
        if m:
            term = self.by_slug.get(("cat" if m[1] == "category" else "tag", m[2]))
            spec = term and self._listing_of(term, int(m[3] or 1), q)
            return ("listing", (spec,), False) if spec else None
        m = re.fullmatch(r"/blog/(?:page/(\d+)/)?", path)
        if m:
            n = int(m[1] or 1)
            ok = 1 <= n <= max(1, -(-len(self.posts) // POSTS_PER_PAGE))
            return ("blog", (n,), False) if ok else None
        m = re.fullmatch(r"/blog/([a-z0-9-]+)/(amp/)?", path)
        if m and m[1] in self.post_by_slug:
            return "post", (self.post_by_slug[m[1]].pid,), bool(m[2])
        m = re.fullmatch(r"/(\d{4})/(\d{2})/(?:page/(\d+)/)?", path)
        if m and (int(m[1]), int(m[2])) in self.archives:
            y, mo, n = int(m[1]), int(m[2]), int(m[3] or 1)
            ok = 1 <= n <= max(1, -(-len(self._archive_posts(y, mo)) // POSTS_PER_PAGE))
            return ("archive", (y, mo, n), False) if ok else None
        if path == "/compare/":
            p = q.get("products", "")
            if p.isdigit() and int(p) in self.products:
                return "compare", (int(p),), False
            return None
        if path == "/events/":
            m = re.fullmatch(r"(\d{4})-(\d{2})", q.get("month", f"{TODAY:%Y-%m}"))
            if m and int(m[1]) >= 1 and 1 <= int(m[2]) <= 12:
                return "events", (int(m[1]), int(m[2])), False
        return None

    def page_id(self, url: str) -> str | None:
        """The page ``url`` shows (its ground truth), or ``None`` when it is a 404."""
        view = self.resolve(url)
        if view is None:
            return None
        kind, args, _ = view
        if kind == "listing":
            return self._labels[self._content_key(args[0])]
        if kind == "product":
            return f"product:{args[0]}"
        if kind == "events":
            return (
                f"events:{args[0]:04d}-{args[1]:02d}"
                if args in self.event_months
                else "events:none"
            )
        if kind == "page":
            return str(args[0])
        return ":".join([kind, *map(str, args)])

    # --- links ---------------------------------------------------------------------------------

    def product_href(self, pid: int) -> str:
        return f"/product/{self.products[pid].slug}/"

    def listing_href(self, spec: Listing, paged_form: bool = False, dropdown: bool = False) -> str:
        """A listing's URL: the pager's ``/page/N/``, or the "load more" button's ``?paged=N``;
        the ordering dropdown names the default order too."""
        term = self.terms[spec.term]
        path = term.base
        if spec.page > 1 and not paged_form:
            path += f"page/{spec.page}/"
        params: dict[str, Any] = {}
        if spec.orderby != "menu_order" or dropdown:
            params["orderby"] = spec.orderby
        if spec.color:
            params["filter_color"] = spec.color
        if spec.prange:
            params["min_price"], params["max_price"] = spec.prange
        if spec.page > 1 and paged_form:
            params["paged"] = spec.page
        return path + ("?" + urlencode(params) if params else "")

    def post_href(self, pid: int) -> str:
        return f"/blog/{self.posts[pid].slug}/"

    def _archive_posts(self, y: int, m: int) -> list[int]:
        return [
            p
            for p in self.newest_posts
            if (self.posts[p].date.year, self.posts[p].date.month) == (y, m)
        ]

    def _token(self, n: int) -> str:
        return hashlib.md5(f"{self.seed}:nonce:{n}".encode()).hexdigest()[:10]

    def _tagged(self, page_id: str) -> bool:
        """A third of the pages have the geolocation hash on all their links."""
        return int(hashlib.md5(f"{self.seed}:{page_id}".encode()).hexdigest()[:6], 16) % 3 == 0

    # --- rendering -----------------------------------------------------------------------------

    def render(self, url: str) -> tuple[int, bytes]:
        """The status and HTML body a request for ``url`` gets (one page view)."""
        view = self.resolve(url)
        if view is None:
            return (
                404,
                b"<!DOCTYPE html><html><head><title>Page not found</title></head><body><h1>Oops! That page can&rsquo;t be found.</h1></body></html>",
            )
        kind, args, amp = view
        page_id = self.page_id(url)
        assert page_id is not None
        if kind == "listing":  # a listing is shown as its first spelling: one page, one text
            args = (self._specs[page_id],)
        v = _View(amp, self.geo if self._tagged(page_id) else "", self._token(next(self._views)))
        title, canonical, amphtml, body = getattr(self, "_" + kind)(v, *args)
        head = [f'<meta name="page-id" content="{page_id}">']
        if canonical:
            head.append(f'<link rel="canonical" href="{CANONICAL}{html.escape(canonical)}">')
        if amphtml and not amp:
            head.append(f'<link rel="amphtml" href="{CANONICAL}{html.escape(amphtml)}">')
        if kind in ("product", "post") and not amp:  # WordPress's wp_shortlink_wp_head
            head.append(f'<link rel="shortlink" href="{CANONICAL}/?p={args[0]}">')
        nav = "".join(
            f"<li>{v.a(t.base, html.escape(t.name))}</li>"
            for t in self.terms.values()
            if t.kind == "cat"
        )
        header = (
            f"{v.a('/', 'Store', 'site-title')} {v.el('ul', 'menu', nav)} "
            f"{v.a('/blog/', 'Blog')} {v.a('/cart/', 'Cart', 'cart-contents')} "
            f"{v.a('/my-account/', 'My account')}"
        )
        footer = " ".join(
            v.a(href, text)
            for href, text in (
                (BARE + "/", "store.test"),
                (MOBILE + "/", "Mobile site"),
                ("/about/", "About us"),
                ("/shipping/", "Shipping &amp; returns"),
                ("/contact/", "Contact"),
                ("/events/", "Events"),
            )
        )
        page_title = f"<title>{title} &#8211; Store</title>"
        if amp:
            page = (
                f'<!doctype html><html amp lang="en-GB"><head><meta charset="utf-8">{page_title}'
                f"{''.join(head)}"
                '<script async src="https://cdn.ampproject.org/v0.js"></script>'
                "<style amp-custom>body{margin:0 1rem}</style></head>"
                f"<body><header>{header}</header><main><h1>{title}</h1>{body}</main>"
                f"<footer>{footer}</footer></body></html>"
            )
        else:
            page = (
                f'<!DOCTYPE html><html lang="en-GB"><head><meta charset="utf-8">{page_title}'
                f"{''.join(head)}"
                '<link rel="stylesheet" href="/wp-content/themes/storefront/style.css"></head>'
                f'<body class="{kind} woocommerce"><div id="page" class="hfeed site">'
                f'<header id="masthead" class="site-header"><div class="col-full">{header}</div></header>'
                f'<div id="content" class="site-content"><main id="main" class="site-main">'
                f'<h1 class="entry-title">{title}</h1>{body}</main></div>'
                f'<footer class="site-footer"><div class="col-full">{footer}</div></footer>'
                "</div></body></html>"
            )
        return 200, page.encode()

    def _rows(self, v: _View, pids: tuple[int, ...] | list[int], here: str, path_form: bool) -> str:
        """Product rows with their "Add to cart" buttons (``here`` with ``add-to-cart``)."""
        rows = []
        for pid in pids:
            p = self.products[pid]
            href = (
                f"/shop/{self.terms['cat', p.category].slug}/{p.slug}/"
                if path_form
                else self.product_href(pid)
            )
            rows.append(
                v.el(
                    "li",
                    "product type-product",
                    f"{v.a(href, html.escape(p.name), 'woocommerce-LoopProduct-link')} "
                    f"{v.el('span', 'price', _price(p.price))} "
                    f"{v.a(_with(here, **{'add-to-cart': pid}), 'Add to cart', 'button add_to_cart_button')}",
                )
            )
        return v.el("ul", "products columns-4", "".join(rows))

    def _home(self, v: _View) -> Rendered:
        featured = self._rows(v, self.featured, "/", False)
        best = "".join(
            v.el(
                "li",
                "bestseller",
                f"{v.a(self.product_href(p), html.escape(self.products[p].name))} "
                f"{v.a(f'/compare/?products={p}&_wpnonce={v.nonce}', 'Compare')}",
            )
            for p in self.bestsellers
        )
        recent = "".join(
            f"<li>{v.a(f'/?post_type=product&p={p}', html.escape(self.products[p].name))}</li>"
            for p in self.recent_home
        )
        cats = "".join(
            f"<li>{v.a(f'/?product_cat={t.slug}', html.escape(t.name))}</li>"
            for t in self.terms.values()
            if t.kind == "cat"
        )
        tags = " ".join(v.a(t.base, t.name) for t in self.terms.values() if t.kind == "tag")
        posts = "".join(
            f"<li>{v.a(self.post_href(p), html.escape(self.posts[p].title))}</li>"
            for p in self.newest_posts[:3]
        )
        utm = {"utm_source": "newsletter", "utm_medium": "email", "utm_campaign": "winter-sale"}
        letter = " ".join(
            v.a(_with(href, **utm), text)
            for href, text in (
                ("/", "Winter sale"),
                (self.terms["cat", self.newsletter_cat].base, "This week's pick"),
                (self.post_href(self.newest_posts[0]), "From our journal"),
            )
        )
        body = (
            "<p>Welcome to the store: useful things, made well, shipped fast.</p>"
            f"<h2>Featured products</h2>{featured}"
            f"<h2>Best sellers</h2>{v.el('ul', 'bestsellers', best)}"
            f"<h2>Recently viewed</h2>{v.el('ul', 'product_list_widget', recent)}"
            f"<h2>Product categories</h2>{v.el('ul', 'product-categories', cats)}"
            f"<h2>Product tags</h2>{v.el('p', 'tagcloud', tags)}"
            f"<h2>From the blog</h2>{v.el('ul', 'recent-posts', posts)}"
            f"<h2>Newsletter</h2>{v.el('p', 'newsletter', letter)}"
        )
        return "Home", "/", None, body

    def _page(self, v: _View, name: str) -> Rendered:
        pages = {
            "about": (
                "About us",
                "/about/",
                "We are a family business selling useful things since 2011.",
            ),
            "shipping": (
                "Shipping &amp; returns",
                "/shipping/",
                "Free shipping from 50 &euro;. Returns within 30 days, no questions asked.",
            ),
            "contact": (
                "Contact",
                "/contact/",
                "Write to hello@store.test or call us on weekdays.",
            ),
            "cart": ("Cart", "/cart/", "Your cart is currently empty."),
            "account": (
                "My account",
                "/my-account/",
                "Login: username or email address, password. Lost your password?",
            ),
        }
        title, canonical, text = pages[name]
        body = f"<p>{text}</p>"
        if name == "cart":
            body += f"<p>{v.a('/', 'Return to shop', 'button wc-backward')}</p>"
        return title, canonical, None, body

    def _product(self, v: _View, pid: int, n: int) -> Rendered:
        p = self.products[pid]
        cat = self.terms["cat", p.category]
        base = self.product_href(pid)
        actions = [
            v.a(_with(base, **{"add-to-cart": pid}), "Add to cart", "single_add_to_cart_button"),
            v.a(_with(base, add_to_wishlist=pid), "Add to wishlist"),
        ]
        if pid in self.comparable:
            actions.append(v.a(f"/compare/?products={pid}&_wpnonce={v.nonce}", "Compare"))
        actions += [v.a(base + "amp/", "AMP"), v.a(MOBILE + base, "Mobile version")]
        tags = " ".join(v.a(self.terms["tag", t].base, self.terms["tag", t].name) for t in p.tags)
        shown = p.reviews[(n - 1) * REVIEWS_PER_PAGE : n * REVIEWS_PER_PAGE]
        reviews = "".join(
            v.el("li", "review", f"{r.stars} out of 5, {r.author}: {html.escape(r.text)}")
            for r in shown
        )
        heading = f"Reviews ({len(p.reviews)})"
        if p.reviews:
            heading = v.a(base + "comment-page-1/", heading)
            reviews = v.el("ol", "commentlist", reviews)
        else:
            reviews = "<p>There are no reviews yet.</p>"
        if p.review_pages > 1:
            pager = " ".join(
                str(k) if k == n else v.a(f"{base}comment-page-{k}/", str(k))
                for k in range(1, p.review_pages + 1)
            )
            reviews += v.el("nav", "woocommerce-pagination", pager)
        related = self._rows(v, p.related, base, False)
        recent = "".join(
            f"<li>{v.a(f'/?post_type=product&p={r}', html.escape(self.products[r].name))}</li>"
            for r in p.recent
        )
        body = (
            v.el("nav", "woocommerce-breadcrumb", f"{v.a('/', 'Home')} / {v.a(cat.base, cat.name)}")
            + v.wrap(
                "summary entry-summary",
                v.el("p", "price", _price(p.price))
                + v.el("p", "colour", f"Colour: {p.color.capitalize()}")
                + v.el("p", "description", html.escape(p.text)),
            )
            + v.el("p", "actions", " ".join(actions))
            + (v.el("p", "tagged_as", f"Tags: {tags}") if tags else "")
            + v.wrap("woocommerce-Reviews", f"<h2>{heading}</h2>{reviews}")
            + f"<h2>Related products</h2>{related}"
            + f"<h2>Recently viewed</h2>{v.el('ul', 'product_list_widget', recent)}"
        )
        canonical = base if n == 1 else f"{base}comment-page-{n}/"
        return html.escape(p.name), canonical, base + "amp/", body

    def _reviews(self, v: _View, pid: int, n: int) -> Rendered:
        return self._product(v, pid, n)

    def _listing(self, v: _View, spec: Listing) -> Rendered:
        term = self.terms[spec.term]
        found = self._matching(spec)
        pages = self.pages(len(found))
        first = (spec.page - 1) * PER_PAGE
        shown = found[first : first + PER_PAGE]
        here = self.listing_href(spec)
        if not found:
            count = "No products were found matching your selection."
        elif pages == 1:
            count = (
                "Showing the single result"
                if len(found) == 1
                else f"Showing all {len(found)} results"
            )
        else:
            count = f"Showing {first + 1}&ndash;{first + len(shown)} of {len(found)} results"
        filtered = bool(spec.color or spec.prange)
        body = v.el("p", "woocommerce-result-count", count)
        if term.kind == "cat" and not filtered:
            orders = "".join(
                f"<li>{v.a(self.listing_href(spec._replace(orderby=o, page=1), dropdown=True), ORDER_LABELS[o])}</li>"
                for o in ORDERS
            )
            body += v.el("ul", "woocommerce-ordering", orders)
        path_form = term.kind == "cat" and term.tid in self.path_form
        body += self._rows(v, shown, here, path_form)
        if pages > 1:
            pager = " ".join(
                str(k) if k == spec.page else v.a(self.listing_href(spec._replace(page=k)), str(k))
                for k in range(1, pages + 1)
            )
            if spec.page < pages:
                pager += " " + v.a(self.listing_href(spec._replace(page=spec.page + 1)), "&rarr;")
            body += v.el("nav", "woocommerce-pagination", pager)
            if spec.page < pages:
                more = self.listing_href(spec._replace(page=spec.page + 1), paged_form=True)
                body += v.el("p", "load-more", v.a(more, "Load more"))
        if term.kind == "cat" and not filtered:
            everything = Listing(spec.term, "menu_order", "", None, 1)
            colors = [(c, len(self._matching(everything._replace(color=c)))) for c in COLORS]
            ranges = [(r, len(self._matching(everything._replace(prange=r)))) for r in PRICE_RANGES]
            by_color = "".join(
                f"<li>{v.a(self.listing_href(everything._replace(color=c)), c.capitalize())} ({k})</li>"
                for c, k in colors
                if k
            )
            by_price = "".join(
                f"<li>{v.a(self.listing_href(everything._replace(prange=r)), f'{r[0]} &euro; &ndash; {r[1]} &euro;')} ({k})</li>"
                for r, k in ranges
                if k
            )
            body += f"<h2>Filter by colour</h2>{v.el('ul', 'woocommerce-widget-layered-nav-list', by_color)}"
            body += f"<h2>Filter by price</h2>{v.el('ul', 'price_filter', by_price)}"
        elif filtered:
            clear = self.listing_href(Listing(spec.term, spec.orderby, "", None, 1))
            body += v.el("p", "clear-filters", v.a(clear, "Clear filters"))
        return html.escape(term.name), here, None, body

    def _compare(self, v: _View, pid: int) -> Rendered:
        p = self.products[pid]
        row = (
            f"<td>{v.a(self.product_href(pid), html.escape(p.name))}</td><td>{_price(p.price)}</td>"
            f"<td>{p.color.capitalize()}</td><td>{p.rating:.1f} out of 5</td>"
        )
        body = (
            f"{v.el('table', 'compare-list', f'<tr>{row}</tr>')}"
            f"<p>{v.a('/', 'Continue shopping')}</p>"
        )
        return "Compare products", f"/compare/?products={pid}", None, body

    def _sidebar(self, v: _View) -> str:
        recent = "".join(
            f"<li>{v.a(self.post_href(p), html.escape(self.posts[p].title))}</li>"
            for p in self.newest_posts[:5]
        )
        archives = "".join(
            f"<li>{v.a(f'/{y:04d}/{m:02d}/', _month(y, m))}</li>"
            for y, m in reversed(self.archives)
        )
        return v.wrap(
            "widget-area",
            f"<h2>Recent posts</h2>{v.el('ul', 'recent-posts', recent)}"
            f"<h2>Archives</h2>{v.el('ul', 'archives', archives)}",
        )

    def _post_list(self, v: _View, pids: list[int], page: int, href: Callable[[int], str]) -> str:
        shown = pids[(page - 1) * POSTS_PER_PAGE : page * POSTS_PER_PAGE]
        items = "".join(
            v.el(
                "article",
                "post",
                f"<h2>{v.a(self.post_href(p), html.escape(self.posts[p].title))}</h2>"
                f"<p>{self.posts[p].date.day} {_month(self.posts[p].date.year, self.posts[p].date.month)}</p>"
                f"<p>{' '.join(self.posts[p].text.split()[:25])} ...</p>",
            )
            for p in shown
        )
        pages = max(1, -(-len(pids) // POSTS_PER_PAGE))
        if pages > 1:
            items += v.el(
                "nav",
                "pagination",
                " ".join(
                    str(k) if k == page else v.a(href(k), str(k)) for k in range(1, pages + 1)
                ),
            )
        return items + self._sidebar(v)

    def _blog(self, v: _View, page: int) -> Rendered:
        def href(k: int) -> str:
            return "/blog/" + (f"page/{k}/" if k > 1 else "")

        return "Blog", href(page), None, self._post_list(v, self.newest_posts, page, href)

    def _archive(self, v: _View, y: int, m: int, page: int) -> Rendered:
        def href(k: int) -> str:
            return f"/{y:04d}/{m:02d}/" + (f"page/{k}/" if k > 1 else "")

        posts = self._post_list(v, self._archive_posts(y, m), page, href)
        return f"Month: {_month(y, m)}", href(page), None, posts

    def _post(self, v: _View, pid: int) -> Rendered:
        post = self.posts[pid]
        base = self.post_href(pid)
        products = ", ".join(
            v.a(self.product_href(p), html.escape(self.products[p].name)) for p in post.products
        )
        comments = "".join(
            v.el(
                "li",
                "comment",
                f"{c_author}: {html.escape(text)} {v.a(_with(base, replytocom=cid), 'Reply', 'comment-reply-link')}",
            )
            for cid, c_author, text in post.comments
        )
        order = sorted(self.posts)
        k = order.index(pid)
        around = ""
        if k > 0:
            around += v.a(
                self.post_href(order[k - 1]),
                f"Previous: {html.escape(self.posts[order[k - 1]].title)}",
            )
        if k + 1 < len(order):
            around += " " + v.a(
                self.post_href(order[k + 1]), f"Next: {html.escape(self.posts[order[k + 1]].title)}"
            )
        body = (
            v.el(
                "p",
                "entry-meta",
                f"Posted on {post.date.day} {_month(post.date.year, post.date.month)} by {post.author}",
            )
            + v.wrap(
                "entry-content",
                f"<p>{html.escape(post.text)}</p><p>In this post: {products}</p>",
            )
            + v.el("p", "share", f"{v.a(f'/?p={pid}', 'Short link')} {v.a(base + 'amp/', 'AMP')}")
            + f"<h2>Comments ({len(post.comments)})</h2>"
            + (v.el("ol", "comment-list", comments) if comments else "<p>No comments yet.</p>")
            + v.el("nav", "post-navigation", around)
            + self._sidebar(v)
        )
        return html.escape(post.title), base, base + "amp/", body

    def _events(self, v: _View, y: int, m: int) -> Rendered:
        prev = (y, m - 1) if m > 1 else (y - 1, 12)
        after = (y, m + 1) if m < 12 else (y + 1, 1)
        links = [
            # at the ends of the calendar the label stays, unlinked: one text for every empty month
            v.a(f"/events/?month={a:04d}-{b:02d}", text) if 1 <= a <= 9999 else text
            for (a, b), text in ((prev, "&laquo; Previous month"), (after, "Next month &raquo;"))
        ]
        nav = v.el("nav", "tribe-events-nav", " ".join(links))
        if (y, m) not in self.event_months:
            # the month is not named: every empty month is one page, whatever its neighbours
            return "Events", None, None, "<p>There are no events this month.</p>" + nav
        items = "".join(
            f"<li>{html.escape(name)}, {day.day} {_month(day.year, day.month)}</li>"
            for name, day in self.events
            if (day.year, day.month) == (y, m)
        )
        body = v.el("ul", "tribe-events", items) + nav
        return f"Events in {_month(y, m)}", f"/events/?month={y:04d}-{m:02d}", None, body

    # --- ground truth --------------------------------------------------------------------------

    def reachable(self, start: str = START) -> dict[str, str]:
        """Every page id reachable from ``start``, with the first URL found showing it."""
        return generated_site.reachable(self, start)

    def floor(self, start: str = START) -> int:
        """The URL floor: one fetch per distinct page reachable from ``start``."""
        return len(self.reachable(start))


# --- serving -------------------------------------------------------------------------------------


def shop_spider() -> type:
    """The spider a naive user writes for the store: every link followed from :data:`START`,
    an item ``{url, page_id}`` per page (``generated_site.page_spider``)."""
    return page_spider("store", "store.test", START)


def main() -> None:
    generated_site.main(StoreSite, __doc__, HOSTS, DEFAULT_PORT)


if __name__ == "__main__":
    main()
