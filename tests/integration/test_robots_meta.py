"""Pages that declare ``nofollow`` (``URLUNIFY_ROBOTS_NOFOLLOW``,
integration/links/_robots_meta.py): the directives a response declares, and real crawls of a
loopback site whose history-like pages say ``noindex,nofollow`` in a meta tag or an
``X-Robots-Tag`` header, as a MediaWiki's do."""

from __future__ import annotations

import logging

import minicrawl
import pytest
import pytest_twisted
import revisionsite
from minisite import CountingSite, listen
from scrapy import FormRequest, Request
from scrapy.http import HtmlResponse, TextResponse
from wikisite import article_text

from scrapy_urlunify.integration.links._robots_meta import (
    Noindex,
    passes_through,
    robots_directives,
)

NOINDEX_NOFOLLOW = "<meta name='robots' content='noindex,nofollow'>"


def html(body: str, headers: dict[str, list[str]] | None = None) -> HtmlResponse:
    return HtmlResponse(
        "http://s.test/p", body=body.encode(), headers=headers, request=Request("http://s.test/p")
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "<html><head><meta name='robots' content='noindex,nofollow'></head><body>x</body></html>",
            {"noindex", "nofollow"},
        ),
        (
            "<html><head><META NAME='Robots' CONTENT=' NoFollow  NOARCHIVE'></head></html>",
            {"nofollow", "noarchive"},
        ),
        (
            "<html><head><meta name='robots' content='none'></head></html>",
            {"none", "noindex", "nofollow"},
        ),
        (
            "<html><head><meta name='robots' content='noindex'><meta name='robots' content='follow'></head></html>",
            {"noindex", "follow"},
        ),
        # one robot's tag, a link's rel: not the page's directives for all robots
        (
            "<html><head><meta name='googlebot' content='nofollow'></head><body><a rel='nofollow' href='/x'>x</a></body>",
            set(),
        ),
        (
            "<meta name='robots' content='nofollow'><p>no head element: the parser makes one</p>",
            {"nofollow"},
        ),
        (
            "<html><body><p>text</p><meta name='robots' content='nofollow'></body></html>",
            set(),
        ),  # not in the head
        ("", set()),
    ],
)
def test_the_meta_directives_of_a_page(body, expected):  # type: ignore[no-untyped-def]
    assert robots_directives(html(body)) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["noindex, nofollow"], {"noindex", "nofollow"}),
        (["NoIndex", "NOFOLLOW"], {"noindex", "nofollow"}),  # several headers
        (["googlebot: nofollow"], set()),  # one robot's
        (["noindex, googlebot: nofollow, noarchive"], {"noindex"}),  # all robots', then googlebot's
        (["max-snippet: 20, nofollow"], {"max-snippet:20", "nofollow"}),  # a value, not a robot
        (
            ["unavailable_after: 25 Jun 2030 15:00:00 PST"],
            {"unavailable_after:25jun203015:00:00pst"},
        ),
    ],
)
def test_the_x_robots_tag_directives_of_a_page(values, expected):  # type: ignore[no-untyped-def]
    assert (
        robots_directives(html("<html><head></head></html>", {"X-Robots-Tag": values})) == expected
    )


@pytest.mark.parametrize(
    ("content", "passes"),
    [
        ("noindex,follow", True),
        ("noindex", True),
        ("noindex,nofollow", False),
        ("none", False),
        ("nofollow", False),
        ("index,follow", False),
    ],
)
def test_a_page_to_pass_through_says_noindex_but_not_nofollow(content, passes):  # type: ignore[no-untyped-def]
    page = html(f"<html><head><meta name='robots' content='{content}'></head><body>x</body></html>")
    assert passes_through(Noindex().directives(page, {"depth": 2})) is passes


def test_a_host_whose_start_page_says_noindex_has_no_noindex_page(caplog):  # type: ignore[no-untyped-def]
    # a staging site that asks robots to keep out everywhere, crawled on purpose: its pages are
    # all the content there is (their items kept, none a page to pass through)
    page = html("<html><head><meta name='robots' content='noindex'></head><body>x</body></html>")
    noindex = Noindex()
    with caplog.at_level(logging.DEBUG):
        assert noindex.directives(page, {"is_start_request": True}) == frozenset()
    assert "declares noindex" in caplog.text
    assert noindex.directives(page, {"depth": 3}) == frozenset()
    other = HtmlResponse(
        "http://other.test/p", body=page.body, request=Request("http://other.test/p")
    )
    assert noindex.directives(other, {"depth": 3}) == {"noindex"}


def test_a_response_that_is_not_html_declares_nothing():
    # a sitemap or a feed sent with X-Robots-Tag: noindex, nofollow still lists its URLs
    text = TextResponse(
        "http://s.test/sitemap.xml",
        body=b"<urlset/>",
        headers={"X-Robots-Tag": "noindex, nofollow"},
    )
    assert robots_directives(text) == frozenset()


class RobotsSite(CountingSite):
    """``/``: an article linking pages that declare nofollow (``/history``: meta; ``/header``:
    ``X-Robots-Tag``), one that declares it for googlebot only (``/googlebot``), and a link with
    ``rel="nofollow"``; each of those links one page behind it (``/behind/...``). ``/closed/``: a
    site whose every page declares ``noindex,nofollow``, three pages in a chain."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _ = self.count(request)
        if base == "/":
            links = (
                "<a href='/history'>history</a><a href='/header'>h</a><a href='/googlebot'>g</a>"
                "<a rel='nofollow' href='/behind/rel'>login</a>"
            )
            return self._page("home", links)
        if base == "/history":
            return self._page(
                "history", "<a href='/behind/meta'>old revision</a>", head=NOINDEX_NOFOLLOW
            )
        if base == "/header":
            request.setHeader(b"X-Robots-Tag", b"noindex, nofollow")
            return self._page("header", "<a href='/behind/header'>diff</a>")
        if base == "/googlebot":
            request.setHeader(b"X-Robots-Tag", b"googlebot: noindex, nofollow")
            return self._page("googlebot", "<a href='/behind/googlebot'>x</a>")
        if base.startswith("/closed/"):
            n = int(base[len("/closed/") :] or 0)
            return self._page(
                base, f"<a href='/closed/{n + 1}'>next</a>" if n < 2 else "", head=NOINDEX_NOFOLLOW
            )
        return self._page(base, "")

    def render_POST(self, request):  # type: ignore[no-untyped-def]
        base, _ = self.count(request)
        return self._page("posted " + base, "")

    @staticmethod
    def _page(name: str, links: str, head: str = "") -> bytes:
        return (
            f"<html><head><title>{name}</title>{head}</head><body><article><h1>{name}</h1>"
            f"<p class='text'>{article_text(name)}</p></article>{links}</body></html>"
        ).encode()


def start() -> tuple[RobotsSite, object, str]:
    site = RobotsSite()
    return (site, *listen(site))


#: the pages of the site from / that are behind a page declaring nofollow for all robots
BEHIND_NOFOLLOW = {"/behind/meta", "/behind/header"}
FROM_HOME = {
    "/",
    "/history",
    "/header",
    "/googlebot",
    "/behind/rel",
    "/behind/googlebot",
    *BEHIND_NOFOLLOW,
}


@pytest_twisted.inlineCallbacks
def crawl(path, settings):  # type: ignore[no-untyped-def]
    site, crawler, items, _ = yield minicrawl.run(start, path, settings)
    return set(site.hits), crawler.stats.get_stats(), {item["title"] for item in items}


@pytest.mark.parametrize("store", ["memory", "redis"])
@pytest_twisted.inlineCallbacks
def test_the_links_of_a_nofollow_page_are_not_followed(store, request, caplog):  # type: ignore[no-untyped-def]
    """With the add-on: the pages behind a meta or a header nofollow are not fetched, each such
    link counted; one INFO line for the host; the links of a googlebot-only nofollow and of a
    rel=nofollow link are followed; the items naming a page that declares noindex are dropped
    (the googlebot-only one is not such a page). With Redis, a page's links go through the link
    batch, which asks the same middleware."""
    settings = (
        {} if store == "memory" else {"URLUNIFY_STORE": request.getfixturevalue("redis_server").url}
    )
    caplog.set_level(logging.INFO, logger="scrapy_urlunify.integration.links._robots_meta")
    fetched, stats, titles = yield crawl("/", settings)
    assert fetched == FROM_HOME - BEHIND_NOFOLLOW
    assert stats["urlunify/filtered/nofollow"] == len(BEHIND_NOFOLLOW)
    assert titles == {"home", "googlebot", "/behind/rel", "/behind/googlebot"}
    assert stats["urlunify/signature/dropped_noindex_items"] == 2
    logged = [r.getMessage() for r in caplog.records if "nofollow" in r.getMessage()]
    assert len(logged) == 1, logged
    assert "URLUNIFY_ROBOTS_NOFOLLOW = False" in logged[0]
    assert "/history" in logged[0] or "/header" in logged[0]
    if store == "redis":
        assert stats["urlunify/redis/link_batches"] >= 1


@pytest_twisted.inlineCallbacks
def test_with_the_setting_off_every_link_is_followed():  # type: ignore[no-untyped-def]
    fetched, stats, _ = yield crawl("/", {"URLUNIFY_ROBOTS_NOFOLLOW": False})
    assert fetched == FROM_HOME
    assert "urlunify/filtered/nofollow" not in stats


@pytest_twisted.inlineCallbacks
def test_with_noindex_items_kept_a_noindex_page_makes_its_item():  # type: ignore[no-untyped-def]
    _fetched, stats, titles = yield crawl("/", {"URLUNIFY_DROP_NOINDEX_ITEMS": False})
    assert {"history", "header"} <= titles
    assert "urlunify/signature/dropped_noindex_items" not in stats


class HeadingSpider(minicrawl.MiniSpider):
    """An item per page: its URL and its heading."""

    name = "heading"

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url, "title": response.css("h1::text").get()}


@pytest_twisted.inlineCallbacks
def test_the_old_revisions_of_a_wiki_make_no_item(caplog):  # type: ignore[no-untyped-def]
    """Each article's old revisions (``noindex,follow``, a wording of their own that no
    signature merges) are fetched and followed; the items naming them are dropped, the
    articles' all kept."""
    caplog.set_level(logging.INFO, logger="scrapy_urlunify.integration.pages._pipelines")
    site, crawler, items, _ = yield minicrawl.run(
        revisionsite.start, "/", {}, spidercls=HeadingSpider
    )
    last = revisionsite.LISTED + revisionsite.RELATED
    revisions = {
        f"/articles/{n}/revisions/{k}"
        for n in range(1, last + 1)
        for k in range(1, revisionsite.REVISIONS + 1)
    }
    assert revisions <= set(site.hits)
    titles = sorted(item["title"] for item in items)
    assert titles == sorted(["Articles", *(f"Article {n}" for n in range(1, last + 1))])
    assert crawler.stats.get_value("urlunify/signature/dropped_noindex_items") == len(revisions)
    # one INFO line for the host: the first page and the setting that keeps them
    logged = [r.getMessage() for r in caplog.records if "declares noindex" in r.getMessage()]
    assert len(logged) == 1, logged
    assert "/revisions/" in logged[0]
    assert "URLUNIFY_DROP_NOINDEX_ITEMS = False" in logged[0]


class StagingSite(CountingSite):
    """``127.0.0.1``: a home page linking ``/old`` (``noindex``) and a staging copy on
    ``localhost`` (the same server), every page of which declares ``noindex`` by its headers:
    ``/staging/0`` to ``/staging/2`` in a chain."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _ = self.count(request)
        port = request.getHost().port
        if base == "/":
            body = f"<a href='/old'>old</a><a href='http://localhost:{port}/staging/0'>staging</a>"
            return f"<html><body><h1>home</h1>{body}</body></html>".encode()
        if base == "/old":
            head = "<meta name='robots' content='noindex,follow'>"
            return f"<html><head>{head}</head><body><h1>old</h1></body></html>".encode()
        n = int(base.rsplit("/", 1)[1])
        request.setHeader(b"X-Robots-Tag", b"noindex")
        link = f"<a href='/staging/{n + 1}'>next</a>" if n < 2 else ""
        return f"<html><body><h1>staging {n}</h1>{link}</body></html>".encode()


def start_staging() -> tuple[StagingSite, object, str]:
    site = StagingSite()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def test_a_host_that_shows_no_indexable_page_keeps_its_items():  # type: ignore[no-untyped-def]
    """A staging site asks every robot to keep out of every page; reached by a link (or with
    its start page fetched by another process of a fleet) its pages are all its content. The
    start host's own noindex page still makes no item."""
    _site, crawler, items, _ = yield minicrawl.run(start_staging, "/", {}, spidercls=HeadingSpider)
    titles = sorted(item["title"] for item in items)
    assert titles == ["home", "staging 0", "staging 1", "staging 2"]
    assert crawler.stats.get_value("urlunify/signature/dropped_noindex_items") == 1


class ListingSpider(minicrawl.MiniSpider):
    """Yields, besides each page's own item, one item a link naming the page it links to (a
    listing's entries) and one item naming no page."""

    name = "listing"

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        yield from super().parse_page(response)
        for href in response.css("a::attr(href)").getall():
            yield {"url": response.urljoin(href), "title": "entry " + href}
        yield {"title": "unnamed " + response.url.split("/", 3)[3]}


@pytest_twisted.inlineCallbacks
def test_only_the_items_naming_a_noindex_page_are_dropped():  # type: ignore[no-untyped-def]
    """A noindex page (an archive, a search result) that lists other pages: the items naming
    those pages, or no page, are kept; the one naming the page itself (any spelling) is not."""
    _site, crawler, items, dropped = yield minicrawl.run(start, "/", {}, spidercls=ListingSpider)
    titles = {item["title"] for item in items}
    assert {
        "entry /behind/meta",
        "entry /behind/header",
        "unnamed history",
        "unnamed header",
    } <= titles
    assert {"history", "header"}.isdisjoint(titles)
    assert sorted(item["title"] for item, _ in dropped if "noindex" in str(_)) == [
        "header",
        "history",
    ]
    assert crawler.stats.get_value("urlunify/signature/dropped_noindex_items") == 2


@pytest_twisted.inlineCallbacks
def test_a_site_whose_start_page_declares_nofollow_is_crawled_whole(caplog):  # type: ignore[no-untyped-def]
    """Crawled on purpose (a staging site, an intranet): the start page's links are followed,
    and so are those of the host's other pages, with one INFO line naming the host and the setting."""
    caplog.set_level(logging.INFO, logger="scrapy_urlunify.integration.links._robots_meta")
    fetched, stats, titles = yield crawl("/closed/", {})
    assert fetched == {"/closed/", "/closed/1", "/closed/2"}
    assert titles == fetched  # noindex everywhere: no page is noindex to the add-on
    assert "urlunify/filtered/nofollow" not in stats
    logged = [r for r in caplog.records if r.name.endswith("robots_meta")]
    assert [r.levelno for r in logged] == [logging.INFO], [r.getMessage() for r in logged]
    warning = logged[0].getMessage()
    assert "127.0.0.1" in warning
    assert "URLUNIFY_ROBOTS_NOFOLLOW" in warning


class FormSpider(minicrawl.MiniSpider):
    """Posts a form from the nofollow page ``/history`` (a log-in form on a log-in page)."""

    name = "form"

    def parse_page(self, response):  # type: ignore[no-untyped-def]
        yield from super().parse_page(response)
        if response.url.endswith("/history"):
            yield FormRequest(
                response.urljoin("/behind/post"), formdata={"user": "me"}, callback=self.parse_page
            )


@pytest_twisted.inlineCallbacks
def test_a_form_posted_from_a_nofollow_page_is_sent():  # type: ignore[no-untyped-def]
    site, _crawler, items, _ = yield minicrawl.run(start, "/", {}, spidercls=FormSpider)
    assert site.hits["/behind/post"] == 1  # the spider's own action, not a link
    assert not site.hits["/behind/meta"]  # the page's links still are not followed
    assert "posted /behind/post" in {item["title"] for item in items}
