"""A tiny hand-written site on loopback for signature tests: pages whose URL variants no rule
predicts (``?ref=``, ``?print=1``), distinct pages with equal text (empty search results, a
soft 404), a listing page with many items, and declared canonicals."""

from __future__ import annotations

from collections import Counter
from typing import Any

from twisted.internet import reactor
from twisted.web import resource, server


def page(title: str, body: str, head: str = "", noise: str = "") -> bytes:
    # `noise` changes from view to view (a timestamp in a comment, a session id in a link):
    # the body text signature must not see it
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{head}</head><body>"
        f"<!-- {noise} --><script>var t='{noise}';</script>{body}"
        f"<a href='/home;jsessionid={noise}'>home</a></body></html>"
    ).encode()


def declared_page(title: str, main: str, canonical: str = "") -> bytes:
    """A page whose main content is ``main``, declaring ``canonical`` (if given) its canonical."""
    link = f"<link rel='canonical' href='{canonical}'>" if canonical else ""
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{link}</head>"
        f"<body><main><h1>{title}</h1>{main}</main></body></html>"
    ).encode()


ARTICLE = "<article><h1>{t}</h1><p class='text'>{x}</p></article>"


def links_page(title: str, links: list[str]) -> bytes:
    """A page of links only (a list, a sitemap), ``declared_page``'s markup."""
    return declared_page(title, "".join(f"<a href='{u}'>{u}</a> " for u in links))


def not_found(request: Any) -> bytes:
    """A 404 page for ``request`` (a Twisted request)."""
    request.setResponseCode(404)
    return declared_page("Not found", "<p>No such page.</p>")


class CountingSite(resource.Resource):
    """A hand-written test site that counts the requests of each URL (``hits``) and all views."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.hits: Counter[str] = Counter()
        self.views = 0

    def count(self, request) -> tuple[str, dict[str, str]]:  # type: ignore[no-untyped-def]
        """Count ``request`` and answer HTML; its path and its query parameters."""
        path = request.uri.decode()
        self.hits[path] += 1
        self.views += 1
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        base, _, query = path.partition("?")
        return base, dict(p.partition("=")[::2] for p in query.split("&") if p)


def listen(site: resource.Resource) -> tuple[object, str]:
    """Serve ``site`` on a free loopback port: the port and the site's base URL."""
    port = reactor.listenTCP(0, server.Site(site), interface="127.0.0.1")
    return port, f"http://127.0.0.1:{port.getHost().port}"


class MiniSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        noise = f"view-{self.views}"
        if base == "/":
            links = "".join(f"<a href='/a?ref={i}'>a</a>" for i in (1, 2, 3))
            links += "<a href='/next'>next</a><a href='/list'>list</a><a href='/search?q=zz'>s</a>"
            links += "<a href='/search?q=yy'>s</a><a href='/gone-1'>x</a><a href='/gone-2'>y</a>"
            links += "<a href='/c'>c</a><a href='/doc'>d</a><a href='/doc?print=1'>p</a>"
            return page("home", "<p>Welcome home</p>" + links, noise=noise)
        if base == "/next":
            links = "".join(f"<a href='/a?ref={i}'>a</a>" for i in (4, 5, 6, 7, 8))
            return page("next", "<p>More links</p>" + links, noise=noise)
        if base == "/a":  # ?ref= changes nothing
            return page("A", ARTICLE.format(t="Article A", x="The text of A."), noise=noise)
        if base == "/doc":  # ?print=1 is the same text in a print layout
            return page(
                "Doc" + (" (print)" if params.get("print") else ""),
                ARTICLE.format(t="Doc", x="The doc text."),
                noise=noise,
            )
        if base == "/list":
            items = "".join(ARTICLE.format(t=f"Item {i}", x=f"Text {i}") for i in range(5))
            return page("list", items, noise=noise)
        if base == "/search":  # every empty result page has the same text
            return page("search", "<p>No results.</p>", noise=noise)
        if base.startswith("/gone-"):  # a soft 404: status 200, the same text
            return page("not found", "<p>Page not found.</p>", noise=noise)
        if base == "/c":  # declares /a as its canonical, and has A's text
            return page(
                "C",
                ARTICLE.format(t="Article A", x="The text of A.") + "<a href='/a'></a>",
                head="<link rel='canonical' href='/a'>",
                noise=noise,
            )
        if base == "/learn":  # ?ref= on several pages: what URLUNIFY_LEARN can learn from
            links = "".join(f"<a href='/{x}?ref={i}'>{x}</a>" for x in "bef" for i in (1, 2))
            links += "".join(f"<a href='/p?page={i}'>p</a>" for i in (1, 2, 3))
            return page("learn", "<p>Learning</p>" + links, noise=noise)
        if base == "/later":  # reached after the pages above: ref variants that need no fetch
            links = "".join(f"<a href='/{x}?ref={i}'>{x}</a>" for x in "befg" for i in (3, 4, 5))
            return page("later", "<p>Later</p>" + links + "<a href='/p?page=4'>p</a>", noise=noise)
        if base in ("/b", "/e", "/f", "/g"):
            return page(base, f"<p>Page {base[1:]} says something of its own.</p>", noise=noise)
        if base == "/p":  # ?page= matters: every page has its own text; the last links further
            more = "<a href='/later'>later</a>" if params.get("page") == "3" else ""
            more += "<a href='/claim'>claim</a>" if params.get("page") == "2" else ""
            more += "<a href='/hdr'>hdr</a>" if params.get("page") == "1" else ""
            return page("p", f"<p>Listing page {params.get('page')}</p>{more}", noise=noise)
        if base == "/plearn":  # /print/... views of /docs/... pages: what path learning sees
            links = "".join(
                f"<a href='/docs/{x}'>d</a><a href='/print/docs/{x}'>p</a>" for x in "abc"
            )
            links += "<a href='/deeper'>deeper</a>"  # its link, /pnext, is crawled after the above
            return page("plearn", "<p>Docs and their print views</p>" + links, noise=noise)
        if base == "/deeper":
            return page("deeper", "<p>Deeper</p><a href='/pnext'>next</a>", noise=noise)
        if base.startswith(("/docs/", "/print/docs/")):
            name = base.rsplit("/", 1)[1]
            return page("doc", f"<p>Documentation page {name}.</p>", noise=noise)
        if base == "/pnext":
            links = "".join(
                f"<a href='/print/docs/{x}'>p</a><a href='/docs/{x}'>d</a>" for x in "def"
            )
            return page("pnext", "<p>More docs</p>" + links, noise=noise)
        if base == "/hdr":  # declares /doc its canonical in an HTTP Link header
            request.setHeader(b"Link", b'</doc>; rel="canonical"')
            return page(
                "hdr", "<p>Another spelling of the doc.</p><a href='/doc'></a>", noise=noise
            )
        if base == "/claim":  # declares /home its canonical, but /home (fetched before) differs
            return page(
                "claim",
                "<p>A page of its own.</p>",
                head="<link rel='canonical' href='/home'>",
                noise=noise,
            )
        if base == "/home":
            return page("home link", "<p>Home link</p>", noise=noise)
        request.setResponseCode(404)
        return b"not found"


def start() -> tuple[MiniSite, object, str]:
    site = MiniSite()
    return (site, *listen(site))
