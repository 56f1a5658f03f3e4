"""The demo site: ground truth, the real server/proxy, and a real plain Scrapy crawl."""

from __future__ import annotations

import json
import re
import select
import socket
import subprocess
import sys
from collections import Counter
from urllib.parse import urljoin

import ada_url
import pytest
import pytest_twisted
from twisted.internet import defer, protocol
from w3lib.url import safe_url_string

from scrapy_urlunify.demo.hosts import canonical_origin
from scrapy_urlunify.demo.render import NO_SESSION
from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite

SIZE = 50


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE)


# --------------------------------------------------------------------------
# Ground truth (pure Python)
# --------------------------------------------------------------------------


def test_size_and_basic_inventory(site: DemoSite) -> None:
    assert 40 <= len(site.pages) <= 60
    assert site.page_id(site.start_urls[0]) == "site:/"
    assert site.items and site.items <= site.pages
    assert all(site.is_item(p) for p in site.items)
    assert {
        "site.test",
        "www.site.test",
        "news.acme.test",
        "termomont.rs",
        "termomont.co.rs",
        "mirror.site.test",
    } <= set(site.hosts)
    kinds = Counter(site.page(p).kind for p in site.pages)
    for kind in (
        "doc",
        "chapter",
        "listing",
        "article",
        "print",
        "mirror",
        "news",
        "product",
        "shop",
    ):
        assert kinds[kind] >= 1, kind


@pytest.mark.parametrize(
    "url",
    [
        "https://www.site.test/docs/page-3.html",
        "http://site.test/docs/page-3.html",
        "HTTP://WWW.Site.TEST:80/docs/page-3.html",
        "https://site.test:443/docs/page-3.html",
        "http://site.test./docs/page-3.html",
        "http://www.site.test/docs//page-3.html",
        "http://www.site.test//docs///page-3.html",
        "http://www.site.test/docs/./guide/../page-3.html",
        "http://www.site.test/docs\\page-3.html",
        "http://www.site.test/docs%5Cpage-3.html",
        "http://www.site.test/docs/page-3.html;jsessionid=0123456789ABCDEF0123456789ABCDEF",
        "http://www.site.test/docs/page-3.html?PHPSESSID=abc123&utm_source=x&utm_medium=y",
        "http://www.site.test/docs/page-3.html?sid=Zz09&fbclid=IwAR123",
        "http://www.site.test/docs/page-3.html?gclid=Cj0K999",
        "http://www.site.test/docs/page-3.html#top",
        "http://www.site.test/docs/page-3.html#!/tab/details",
    ],
)
def test_variants_map_to_one_page(site: DemoSite, url: str) -> None:
    assert site.page_id(url) == "site:/docs/page-3.html"


def test_index_pages_and_slash_redirect(site: DemoSite) -> None:
    for url in (
        "https://www.site.test/docs/",
        "http://site.test/docs/index.html",
        "http://site.test/docs//",
    ):
        assert site.page_id(url) == "site:/docs/"
    assert site.page_id("http://site.test/docs") is None  # a 301, not a page
    assert site.resolve("http://site.test/docs").location == "http://site.test/docs/"
    assert site.page_id("http://site.test/docs", follow_redirects=True) == "site:/docs/"


def test_pagination_pages_are_distinct(site: DemoSite) -> None:
    p2 = site.page_id("https://www.site.test/blog/?page=2")
    assert p2 == "site:/blog/?page=2" and p2 in site.pages
    assert site.page_id("http://site.test/blog/index.html?utm_source=x&page=2") == p2
    assert site.page_id("https://www.site.test/blog/?page=1") == site.page_id(
        "https://www.site.test/blog/"
    )
    listings = sorted(p for p in site.pages if site.page(p).kind == "listing")
    assert len(listings) >= 2 and len(set(listings)) == len(listings)
    assert site.page_id("https://www.site.test/blog/?page=999") is None


def test_news_cid_matters_inifile_and_arglink_do_not(site: DemoSite) -> None:
    news = sorted(p for p in site.pages if site.page(p).kind == "news")
    cid = news[0].rsplit("=", 1)[1]
    urls = [
        f"http://news.acme.test/servlet/ContentServer?inifile=futuretense.ini&cid={cid}&arglink=home-1",
        f"https://news.acme.test/servlet/ContentServer?arglink=sport-XYZ&cid={cid}",
        f"http://news.acme.test/servlet/ContentServer?cid={cid}",
    ]
    assert {site.page_id(u) for u in urls} == {news[0]}
    assert site.page_id(site.canonical_url(news[1])) == news[1] != news[0]
    assert (
        site.page_id("http://news.acme.test/servlet/ContentServer?inifile=futuretense.ini") is None
    )


def test_sister_domain_serves_the_same_pages(site: DemoSite) -> None:
    product = next(p for p in sorted(site.pages) if site.page(p).kind == "product")
    path = site.page(product).path
    hosts = ("termomont.rs", "www.termomont.rs", "termomont.co.rs", "www.termomont.co.rs")
    assert {
        site.page_id(f"{scheme}://{h}{path}") for h in hosts for scheme in ("http", "https")
    } == {product}


def test_print_views_and_mirrors_are_content_duplicates(site: DemoSite) -> None:
    dups = dict(site.content_duplicates)
    kinds = Counter(site.page(d).kind for d in dups)
    assert kinds["print"] >= 1 and kinds["mirror"] >= 1
    for dup, original in dups.items():
        assert dup != original and dup in site.pages and original in site.pages
        assert site.body_text(dup) == site.body_text(original)
        assert site.page(dup).title != site.page(original).title  # only the body is equal
    # Every other pair of pages differs in body text (no accidental duplicates).
    texts = Counter(site.body_text(p) for p in site.unique_pages)
    assert max(texts.values()) == 1
    article = next(o for d, o in dups.items() if site.page(d).kind == "print")
    url = site.canonical_url(article)
    assert site.page_id(url + "?print=1") == article + "?print=1"
    assert site.page_id(url + "?print=0") == article
    mirror = next(d for d in dups if d.startswith("mirror:"))
    assert site.page_id("http://mirror.site.test" + site.page(mirror).path) == mirror


def test_redirects_and_https_only_pages(site: DemoSite) -> None:
    assert site.page_id("http://site.test/moved") is None
    assert site.resolve("http://site.test/moved").location == "https://www.site.test/new"
    assert site.page_id("http://site.test/moved", follow_redirects=True) == "site:/new"
    res = site.resolve("http://site.test:80/secure/account.html?x=1")
    assert (res.status, res.location) == (301, "https://site.test/secure/account.html?x=1")
    assert site.page_id("https://site.test/secure/account.html") == "site:/secure/account.html"


def test_non_pages(site: DemoSite) -> None:
    assert site.page_id("http://unknown.example/") is None
    assert not site.resolve("http://unknown.example/").known_host
    assert site.page_id("http://site.test:8080/") is None  # the demo only has default ports
    assert site.page_id("ftp://site.test/") is None
    assert site.page_id("https://www.site.test/no-such-page.html") is None
    pdf = site.resolve("http://site.test/files/report-1.pdf")
    assert pdf.document_id in site.documents and pdf.page_id is None
    assert site.render_document(pdf.document_id).startswith(b"%PDF-")
    assert site.page_id("http://site.test/robots.txt") is None


def test_variant_only_and_session_pages(site: DemoSite) -> None:
    assert site.variant_only < site.pages
    assert "site:/new" in site.variant_only  # only reachable through /moved
    shop_items = {p for p in site.pages if site.page(p).kind == "shop"}
    assert shop_items and shop_items <= site.variant_only & site.session_pages & site.items
    assert {p for p in site.pages if site.page(p).kind == "news"} <= site.variant_only
    assert "site:/" not in site.variant_only and "site:/docs/" not in site.variant_only


def _hrefs(site: DemoSite):
    for page_id in sorted(site.pages):
        page = site.page(page_id)
        base = canonical_origin(page.site) + page.base
        for link in page.all_links:
            if link.kind != "external":
                yield page_id, base, link


def test_every_link_resolves_to_its_target_with_both_url_parsers(site: DemoSite) -> None:
    """WHATWG (ada) and Scrapy's urljoin+safe_url_string reach the same page."""
    checked = 0
    for page_id, base, link in _hrefs(site):
        href = link.href.replace("{sid}", NO_SESSION)
        for url in (ada_url.join_url(base, href), safe_url_string(urljoin(base, href))):
            if link.kind == "page":
                assert site.page_id(url, follow_redirects=True) == link.target, (
                    page_id,
                    link.href,
                    url,
                )
            else:
                assert site.resolve(url).document_id == link.target, (page_id, link.href, url)
            checked += 1
    assert checked > 500


def test_links_use_every_variant(site: DemoSite) -> None:
    hrefs = [link.href for _, _, link in _hrefs(site)]
    html = b"".join(site.render(p) for p in site.pages).decode()
    patterns = {
        "bare http": r"^http://site\.test/",
        "bare https": r"^https://site\.test",
        "www http": r"^http://www\.",
        "port 80": r":80/",
        "port 443": r":443/",
        "upper host": r"://WWW\.Site\.TEST/",
        "protocol-relative": r"^//",
        "index.html": r"/index\.html",
        "dot": r"(^|/)\.\.?/",
        "double slash": r"[^:/]//",
        "backslash": r"\\",
        "fragment": r"#[a-z]",
        "hashbang": r"#!/",
        "jsessionid": r";jsessionid=",
        "PHPSESSID": r"PHPSESSID=",
        "sid": r"[?&]sid=",
        "utm": r"utm_source=",
        "fbclid": r"fbclid=",
        "gclid": r"gclid=",
        "news": r"ContentServer\?.*arglink=",
        "sister": r"termomont\.co\.rs",
        "mirror": r"mirror\.site\.test",
        "print": r"print=1",
        "pdf": r"\.pdf$",
        "page": r"page=\d",
    }
    for name, pattern in patterns.items():
        assert any(re.search(pattern, h) for h in hrefs), name
    for scheme in ("mailto:", "tel:", "javascript:"):
        assert f'href="{scheme}' in html


def test_generation_is_deterministic() -> None:
    a, b, c = DemoSite(size=40, seed=7), DemoSite(size=40, seed=7), DemoSite(size=40, seed=8)
    assert a.pages == b.pages
    assert all(a.render(p) == b.render(p) for p in a.pages)
    assert any(a.render(p) != c.render(p) for p in a.pages & c.pages)


# --------------------------------------------------------------------------
# The server (raw sockets, no Scrapy)
# --------------------------------------------------------------------------


class _Collect(protocol.Protocol):
    """Send ``payload``, collect everything until the server closes."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.data = b""
        self.done: defer.Deferred[bytes] = defer.Deferred()

    def connectionMade(self) -> None:
        self.transport.write(self.payload)

    def dataReceived(self, data: bytes) -> None:
        self.data += data

    def connectionLost(self, reason: object = None) -> None:
        self.done.callback(self.data)


def _exchange(port: int, payload: bytes, tls: object = None) -> defer.Deferred[bytes]:
    from twisted.internet import reactor

    proto = _Collect(payload)
    factory = protocol.ClientFactory()
    factory.buildProtocol = lambda addr: proto  # type: ignore[method-assign]
    if tls is None:
        reactor.connectTCP("127.0.0.1", port, factory)
    else:
        reactor.connectSSL("127.0.0.1", port, factory, tls)
    return proto.done


@pytest_twisted.inlineCallbacks
def test_server_proxy_direct_and_errors(site: DemoSite):
    from twisted.internet import ssl

    server = DemoServer(site).start()
    try:
        raw = yield _exchange(
            server.http_port,
            b"GET http://WWW.Site.TEST:80/docs/ HTTP/1.1\r\nHost: www.site.test\r\nConnection: close\r\n\r\n",
        )
        assert raw.startswith(b"HTTP/1.1 200") and b"<title>Documentation</title>" in raw
        raw = yield _exchange(
            server.http_port,
            b"GET /contact.html HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n",
        )
        assert raw.startswith(b"HTTP/1.1 200")
        raw = yield _exchange(
            server.http_port,
            b"GET http://unknown.example/ HTTP/1.1\r\nHost: unknown.example\r\nConnection: close\r\n\r\n",
        )
        assert raw.startswith(b"HTTP/1.1 502")
        raw = yield _exchange(server.http_port, b"CONNECT unknown.example:443 HTTP/1.1\r\n\r\n")
        assert raw.startswith(b"HTTP/1.1 502")
        raw = yield _exchange(
            server.http_port,
            b"GET http://site.test/moved HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n",
        )
        assert raw.startswith(b"HTTP/1.1 301") and b"Location: https://www.site.test/new" in raw
        # The direct HTTPS port, with certificate verification against our own cert.
        trust = ssl.Certificate.loadPEM(server.cert_path.read_bytes())
        options = ssl.optionsForClientTLS("site.test", trustRoot=trust)
        raw = yield _exchange(
            server.https_port,
            b"GET /docs/index.html HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n",
            tls=options,
        )
        assert raw.startswith(b"HTTP/1.1 200") and b"<title>Documentation</title>" in raw
    finally:
        yield server.stop()
    log = [(r.method, r.url, r.status, r.via) for r in server.log]
    assert log == [
        ("GET", "http://WWW.Site.TEST:80/docs/", 200, "proxy"),  # exactly as the client asked
        ("GET", "http://site.test/contact.html", 200, "direct"),
        ("GET", "http://unknown.example/", 502, "proxy"),
        ("CONNECT", "unknown.example:443", 502, "proxy"),
        ("GET", "http://site.test/moved", 301, "proxy"),
        ("GET", "https://site.test/docs/index.html", 200, "direct-tls"),
    ]
    assert server.log[0].page_id == server.log[-1].page_id == "site:/docs/"


@pytest_twisted.inlineCallbacks
def test_session_ids_change_per_view_until_the_cap(site: DemoSite):
    server = DemoServer(site, session_cap=3).start()
    sids = []
    try:
        for _ in range(4):
            raw = yield _exchange(
                server.http_port,
                b"GET http://site.test/shop/ HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n",
            )
            sids.append(set(re.findall(rb";jsessionid=([0-9A-F]{32})", raw)))
        raw = yield _exchange(
            server.http_port,
            b"GET http://site.test/shop/;jsessionid="
            + b"A" * 32
            + b" HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n",
        )
        kept = set(re.findall(rb";jsessionid=([0-9A-F]{32})", raw))
    finally:
        yield server.stop()
    assert all(len(s) == 1 for s in sids)  # one session per view ...
    assert len(set.union(*sids[:3])) == 3  # ... a fresh one each view ...
    assert sids[3] == sids[0]  # ... until the cap, then they repeat
    assert kept == {b"A" * 32}  # a view that carries an id keeps it


def test_standalone_server_subprocess() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_urlunify.demo.server", "--size", "40"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        assert ready, "server printed nothing"
        info = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        assert info["proxy_url"] == f"http://127.0.0.1:{info['http_port']}"
        with socket.create_connection(("127.0.0.1", info["http_port"]), timeout=10) as sock:
            sock.sendall(
                b"GET http://site.test/ HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n"
            )
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        assert data.startswith(b"HTTP/1.1 200") and b"Welcome to Site Test" in data
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]


# --------------------------------------------------------------------------
# A real plain Scrapy crawl through the proxy
# --------------------------------------------------------------------------

PLAIN_SETTINGS = {
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "ROBOTSTXT_OBEY": False,
    "RETRY_ENABLED": False,
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
    "DOWNLOAD_TIMEOUT": 10,
    "CLOSESPIDER_TIMEOUT": 25,  # a runaway crawl ends with reason "closespider_timeout"
}


@pytest_twisted.inlineCallbacks
def test_plain_scrapy_crawl_sees_every_page_and_fetches_redundantly(site: DemoSite):
    from scrapy import signals
    from scrapy.crawler import CrawlerRunner

    from scrapy_urlunify.demo.proxy import demo_settings
    from scrapy_urlunify.demo.spider import DemoSpider

    server = DemoServer(site).start()
    items: list[dict] = []
    try:
        runner = CrawlerRunner(demo_settings(server.proxy_url, **PLAIN_SETTINGS))
        crawler = runner.create_crawler(DemoSpider)

        def collect(item: dict, **kwargs: object) -> None:
            items.append(item)

        # Scrapy holds signal receivers weakly: keep ``collect`` alive in this frame.
        crawler.signals.connect(collect, signal=signals.item_scraped)
        yield runner.crawl(crawler, start_urls=list(site.start_urls))
    finally:
        yield server.stop()

    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"  # bounded: ended on its own
    assert stats.get("log_count/ERROR", 0) == 0
    log = server.log
    assert not [r for r in log if r.status >= 400], "plain Scrapy hit errors"

    # Plain Scrapy sees every distinct page ...
    fetches = server.page_fetches()
    assert site.pages - set(fetches) == set()
    assert set(fetches) <= site.pages
    # ... and the ground truth agrees with what the server logged, URL by URL.
    assert all(site.page_id(r.url) == r.page_id for r in log if r.method == "GET")

    # ... but fetches many of them more than once (the point of the demo).
    redundant = sum(fetches.values()) - len(fetches)
    assert redundant > len(site.pages)
    assert fetches["site:/"] > 1

    # https went through CONNECT tunnels, plain http as absolute-form proxy requests.
    https = [r for r in log if r.url.startswith("https://")]
    plain = [r for r in log if r.url.startswith("http://")]
    assert https and plain
    assert {r.via for r in https} == {"connect"} and {r.via for r in plain} == {"proxy"}
    tunnels = {r.connection: r.url for r in log if r.method == "CONNECT"}
    assert {r.connection for r in https} <= set(tunnels)
    for record in https:  # each tunnel carries requests for the host it was opened to
        assert (
            tunnels[record.connection].split(":")[0]
            == record.url.split("/")[2].split(":")[0].lower()
        )

    # Session ids: plain Scrapy follows every minted id, but the cap bounds it.
    assert sum(1 for r in log if ";jsessionid=" in r.url) > len(
        [p for p in site.session_pages if site.page(p).kind == "shop"]
    )
    assert server.sessions.minted["jsessionid"] >= 2

    # Items: one per fetch of an item page; every item page yielded at least one.
    assert {site.page_id(i["url"]) for i in items} == set(site.items)
    assert len(items) == sum(fetches[p] for p in site.items)
    assert all(i["title"] and i["text"] for i in items)
