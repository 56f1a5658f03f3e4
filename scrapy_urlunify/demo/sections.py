"""The main site's sections: its plain pages, the links between them and its redirects.

Home, contact, docs (+ guide, PDFs), a paginated blog with article (item) pages, three session
areas (``;jsessionid=`` / ``PHPSESSID=`` / ``sid=``), an https-only ``/secure/`` area and the
``/moved`` redirect, all under one navigation bar. The home page carries the variant gallery
(:mod:`.variants`).
"""

from __future__ import annotations

from dataclasses import dataclass

from scrapy_urlunify.demo.builder import SiteBuilder, page_id_for
from scrapy_urlunify.demo.hosts import SITE
from scrapy_urlunify.demo.hrefs import canonical_url, relative_path
from scrapy_urlunify.demo.model import SID_PLACEHOLDER, Document, Link, Page, Redirect
from scrapy_urlunify.demo.plan import Plan
from scrapy_urlunify.demo.variants import variant_gallery

SESSION_AREAS = (
    # (directory, page stem, session style, item pages?)
    ("/shop/", "item", "jsessionid", True),
    ("/forum/", "thread", "PHPSESSID", False),
    ("/support/", "faq", "sid", False),
)


@dataclass
class Sections:
    """The main site's pages the other parts link to or from."""

    home: Page
    contact: Page
    docs_index: Page
    guide: Page
    docs: list[Page]
    chapters: list[Page]
    listings: list[Page]
    articles: list[Page]
    #: The navigation bar: (target, text, href).
    nav: list[tuple[Page, str, str]]


def build_sections(builder: SiteBuilder, plan: Plan) -> Sections:
    """Add the main site's pages, links and redirects."""
    b = builder
    home = b.add(SITE, "/", "home", "Welcome to Site Test")
    contact = b.add(SITE, "/contact.html", "contact", "Contact us")
    new = b.add(SITE, "/new", "moved", "The page that moved")
    b.redirects[(SITE, "/moved")] = Redirect(location=canonical_url(SITE, "/new"))
    b.redirects[(SITE, "/loop")] = Redirect(flip_scheme=True)

    docs_index = b.add(SITE, "/docs/", "docs-index", "Documentation")
    b.redirects[(SITE, "/docs")] = Redirect(add_slash=True)
    docs = [
        b.add(SITE, f"/docs/page-{i}.html", "doc", f"Docs page {i}: {b.words(2)}")
        for i in range(1, plan.docs + 1)
    ]
    guide = b.add(SITE, "/docs/guide/", "guide-index", "The guide")
    chapters = [
        b.add(SITE, f"/docs/guide/ch-{i}.html", "chapter", f"Guide chapter {i}: {b.words(2)}")
        for i in range(1, plan.chapters + 1)
    ]
    pdfs = []
    for i in range(1, plan.pdfs + 1):
        report = Document(
            id=page_id_for(SITE, f"/files/report-{i}.pdf"),
            site=SITE,
            path=f"/files/report-{i}.pdf",
            title=f"Annual report {i}",
        )
        b.documents[report.id] = report
        pdfs.append(report)

    listings = [
        b.add(SITE, "/blog/", "listing", f"Blog, page {n}", (("page", str(n)),) if n > 1 else ())
        for n in range(1, plan.listings + 1)
    ]
    b.param_defaults[(SITE, "/blog/")] = {"page": "1"}
    b.redirects[(SITE, "/blog")] = Redirect(add_slash=True)
    articles = [
        b.add(SITE, f"/blog/post-{i}.html", "article", f"Post {i}: {b.words(3)}", is_item=True)
        for i in range(1, plan.articles + 1)
    ]

    areas: list[tuple[Page, list[Page], str]] = []
    for (directory, stem, style, items), count in zip(SESSION_AREAS, plan.area_pages, strict=True):
        name = directory.strip("/")
        entry = b.add(
            SITE, directory, f"{name}-index", f"{name.capitalize()} start", session_style=style
        )
        members = [
            b.add(
                SITE,
                f"{directory}{stem}-{i}.html",
                name,
                f"{name.capitalize()} {stem} {i}",
                is_item=items,
                session_style=style,
            )
            for i in range(1, count + 1)
        ]
        areas.append((entry, members, style))

    account = b.add(SITE, "/secure/account.html", "secure", "Your account")
    settings = b.add(SITE, "/secure/settings.html", "secure", "Account settings")
    for page in (account, settings):
        b.redirects[(SITE, page.path)] = Redirect(to_https=True)

    public = [home, contact, docs_index, guide, *docs, *chapters, *listings, *articles]
    nav = [
        (home, "Home", "/"),
        (docs_index, "Docs", "/docs/"),
        (listings[0], "Blog", "/blog/index.html"),
        *[(entry, entry.heading.split()[0], entry.path) for entry, _, _ in areas],
        (contact, "Contact", "/contact.html"),
    ]

    # Home: a sampler of every special case.
    home.links += [
        b.link(home, docs_index, "Documentation", "relative"),
        Link(href="http://site.test/moved", text="What's new (moved)", target=new.id),
        Link(
            href="http://www.site.test/secure/account.html", text="Your account", target=account.id
        ),
        b.link(home, pdfs[0], "Annual report (PDF)", "root"),
        b.link(home, listings[0], "Blog front page", "tracking"),
    ]
    if len(listings) > 1:
        home.links.append(b.link(home, listings[1], "Older posts", "tracking"))
    home.links += [b.link(home, b.other(public, home), f"See also {n}") for n in range(3)]
    home.links += variant_gallery(b, home, public)

    contact.links += [
        Link(href="mailto:info@site.test", text="Write to us", target=None, kind="external"),
        Link(href="tel:+15550100", text="Call us", target=None, kind="external"),
        Link(href="javascript:void(0)", text="Open chat", target=None, kind="external"),
        Link(href="javascript:window.print()", text="Print", target=None, kind="external"),
        Link(
            href=canonical_url(SITE, settings.path), text="Change your settings", target=settings.id
        ),
    ]
    new.links.append(b.link(new, b.other(docs, new), "Read the docs"))
    account.links.append(b.link(account, settings, "Settings", "relative"))
    settings.links.append(b.link(settings, account, "Back to account", "relative"))

    docs_index.links += [b.link(docs_index, d, d.heading) for d in docs]
    docs_index.links.append(
        b.link(docs_index, guide, "Guide", b.rng.choice(("relative", "dot", "index")))
    )
    docs_index.links += [b.link(docs_index, pdf, pdf.title) for pdf in pdfs]
    for i, doc in enumerate(docs):
        doc.links.append(
            b.link(
                doc,
                docs_index,
                "Up to the docs",
                b.rng.choice(("relative", "dot", "index", "root")),
            )
        )
        doc.links.append(b.link(doc, docs[(i + 1) % len(docs)], "Next page"))
        doc.links += [b.link(doc, b.other(public, doc), "Related") for _ in range(2)]
        if i % 3 == 0:
            doc.links.append(b.link(doc, pdfs[i % len(pdfs)], "Download PDF"))

    guide.links.append(b.link(guide, docs_index, "Back to docs", "dot"))
    guide.links += [
        b.link(guide, ch, ch.heading, b.rng.choice(("relative", "backslash", "root")))
        for ch in chapters
    ]
    for i, ch in enumerate(chapters):
        ch.links.append(b.link(ch, guide, "Guide contents"))
        ch.links.append(b.link(ch, chapters[(i + 1) % len(chapters)], "Next chapter"))
        ch.links.append(b.link(ch, docs_index, "All docs", "backslash"))
    # Backslash links from the docs index into the guide (a real subdirectory).
    if chapters:
        docs_index.links.append(b.link(docs_index, chapters[0], "First chapter", "backslash"))

    build_blog(b, plan, listings, articles, public)
    for entry, members, style in areas:
        build_session_area(b, entry, members, style, home)
    return Sections(home, contact, docs_index, guide, docs, chapters, listings, articles, nav)


def build_blog(
    builder: SiteBuilder, plan: Plan, listings: list[Page], articles: list[Page], public: list[Page]
) -> None:
    """Paginated listing: every ``?page=N`` is a distinct page, each listing
    is the only place its articles are linked from (besides siblings)."""
    b, per = builder, plan.per_listing
    for n, listing in enumerate(listings):
        chunk = articles[n * per : (n + 1) * per]
        listing.links += [b.link(listing, a, a.heading) for a in chunk]
        if n + 1 < len(listings):
            listing.links.append(b.link(listing, listings[n + 1], "Next page", "relative"))
        if n > 0:
            listing.links.append(b.link(listing, listings[n - 1], "Previous page"))
        for m in b.rng.sample(range(len(listings)), min(3, len(listings))):
            if m == 0 and b.traps:  # the pager spells the default out: /blog/?page=1 is /blog/
                listing.links.append(Link("?page=1", "1", listings[0].id))
            else:
                listing.links.append(b.link(listing, listings[m], f"{m + 1}"))
        for a in chunk:
            a.links.append(b.link(a, listing, "Back to the listing"))
            a.links += [
                b.link(a, sib, "Related post")
                for sib in b.rng.sample(chunk, min(2, len(chunk)))
                if sib is not a
            ]
            a.links.append(b.link(a, b.other(public, a), "You may also like"))


def build_session_area(
    builder: SiteBuilder, entry: Page, members: list[Page], style: str, home: Page
) -> None:
    """Links inside an area carry the session id (``{sid}``) of the current view."""

    def with_sid(href: str) -> str:
        if style == "jsessionid":
            path, _, query = href.partition("?")
            return f"{path};jsessionid={SID_PLACEHOLDER}" + (f"?{query}" if query else "")
        sep = "&" if "?" in href else "?"
        return f"{href}{sep}{style}={SID_PLACEHOLDER}"

    b = builder
    area = [entry, *members]
    for page in area:
        targets = [entry, *b.rng.sample(members, min(3, len(members)))]
        if page is entry:
            targets = list(members)
        for target in targets:
            if target is page:
                continue
            href = relative_path(page.base, target.path)
            if b.rng.random() < 0.3:
                href = target.path
            page.links.append(Link(href=with_sid(href), text=target.heading, target=target.id))
        page.links.append(b.link(page, home, "Leave", "root"))


def share_nav(builder: SiteBuilder, sections: Sections, news_index: Page) -> None:
    """Every page of the main site shares the same navigation bar (print views have none)."""
    for page in builder.pages.values():
        if page.site == SITE and page.kind != "print":
            page.nav = [
                Link(href=href, text=text, target=target.id) for target, text, href in sections.nav
            ]
            page.nav.append(Link(href="http://news.acme.test/", text="News", target=news_index.id))
