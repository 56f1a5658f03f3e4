"""The other sites the main site links to, each with its own way of spelling a URL.

``news``       a ContentServer news section on ``news.acme.test`` (``cid`` matters, ``inifile``
               and ``arglink`` do not);
``termomont``  a product catalogue served identically on ``termomont.rs`` and its sister
               ``termomont.co.rs`` (both with and without www).
"""

from __future__ import annotations

from scrapy_urlunify.demo.builder import SiteBuilder
from scrapy_urlunify.demo.hosts import NEWS, TERMOMONT
from scrapy_urlunify.demo.hrefs import relative_path
from scrapy_urlunify.demo.model import Link, Page

NEWS_PATH = "/servlet/ContentServer"
NEWS_INIFILE = "futuretense.ini"
NEWS_FIRST_CID = 1166000000000


# -- news.acme.test ------------------------------------------------------
def news_href(builder: SiteBuilder, base: str, cid: int, source: str) -> str:
    """ContentServer URL: ``cid`` identifies the article, the rest is noise."""
    rng = builder.rng
    params = [
        ("inifile", NEWS_INIFILE),
        ("cid", str(cid)),
        ("arglink", f"{source}-{builder.hrefs.token(6)}"),
    ]
    if rng.random() < 0.3:
        rng.shuffle(params)
    prefix = NEWS_PATH if rng.random() < 0.5 else relative_path(base, NEWS_PATH)
    return prefix + "?" + "&".join(f"{k}={v}" for k, v in params)


def build_news(builder: SiteBuilder, home: Page, count: int) -> Page:
    """``count`` news articles (the index has a clock, each article a form token, when the site
    has traps); returns the news index."""
    b = builder
    index = b.add(NEWS, "/", "news-index", "ACME News")
    index.clock = b.traps
    articles: list[tuple[int, Page]] = []
    for i in range(count):
        cid = NEWS_FIRST_CID + 37 * i + 5
        page = b.add(
            NEWS,
            NEWS_PATH,
            "news",
            f"News {i + 1}: {b.words(3)}",
            (("cid", str(cid)),),
            is_item=True,
        )
        page.token = b.traps
        articles.append((cid, page))
    index.links += [
        Link(href=news_href(b, index.base, cid, "index"), text=p.heading, target=p.id)
        for cid, p in articles
    ]
    index.links.append(b.link(index, home, "Back to Site Test"))
    for _cid, page in articles:
        page.links.append(Link(href="/", text="News home", target=index.id))
        for other_cid, other in b.rng.sample(articles, min(2, len(articles))):
            if other is not page:
                page.links.append(
                    Link(
                        href=news_href(b, page.base, other_cid, "related"),
                        text=other.heading,
                        target=other.id,
                    )
                )
        page.links.append(
            b.link(
                page,
                b.rng.choice([p for p in b.pages.values() if p.kind == "article"]),
                "From our partner",
            )
        )
    home.links.append(Link(href="http://news.acme.test/", text="ACME News", target=index.id))
    return index


# -- termomont.rs / termomont.co.rs --------------------------------------
def build_termomont(builder: SiteBuilder, home: Page, count: int) -> None:
    """Home, contact and a catalogue of ``count`` products; half the products are linked only
    through the sister domain."""
    b = builder
    t_home = b.add(TERMOMONT, "/", "tm-home", "Termomont d.o.o.")
    catalogue = b.add(TERMOMONT, "/proizvodi/", "tm-catalogue", "Proizvodi")
    contact = b.add(TERMOMONT, "/kontakt.html", "tm-contact", "Kontakt")
    products = [
        b.add(
            TERMOMONT,
            f"/proizvodi/p-{i}.html",
            "product",
            f"Proizvod {i}: {b.words(2)}",
            is_item=True,
        )
        for i in range(1, count + 1)
    ]
    t_home.links += [
        b.link(t_home, catalogue, "Proizvodi", "relative"),
        b.link(t_home, contact, "Kontakt", "relative"),
        Link(href="http://termomont.co.rs/", text="termomont.co.rs", target=t_home.id),
        b.link(t_home, home, "Partner: Site Test"),
    ]
    contact.links += [
        Link(href="tel:+381111234567", text="Pozovite nas", target=None, kind="external"),
        Link(href="mailto:prodaja@termomont.rs", text="Pišite nam", target=None, kind="external"),
        b.link(contact, t_home, "Početna", "root"),
    ]
    for i, product in enumerate(products):
        if i % 2 == 0:
            href = b.hrefs.same_site(catalogue.base, TERMOMONT, product.path, (), "relative")
        else:
            # Only ever linked on the sister domain: reachable through a variant only.
            host = b.rng.choice(("termomont.co.rs", "www.termomont.co.rs"))
            href = f"{b.rng.choice(('http', 'https'))}://{host}{product.path}"
        catalogue.links.append(Link(href=href, text=product.heading, target=product.id))
        product.links.append(
            b.link(product, catalogue, "Svi proizvodi", b.rng.choice(("relative", "index", "dot")))
        )
        product.links.append(
            b.link(product, products[(i + 1) % len(products)], "Sledeći", "absolute")
        )
    home.links.append(Link(href="https://termomont.rs/", text="Termomont", target=t_home.id))
    home.links.append(
        Link(href="http://www.termomont.co.rs/", text="Termomont (co.rs)", target=t_home.id)
    )
