"""A site whose every page is linked in eight spellings, as a new user's first crawl meets it:
``http://www.manual.test/doc/<i>/`` is also reached as ``.../doc/<i>/index.html``, with a session
id, with ``?ref=sidebar``, as the print view ``/print/doc/<i>/``, on the mirror host
``mirror.manual.test``, with a tracker, and on the bare host ``manual.test`` with a fragment.
Every spelling serves the page's own body. ``canonical(i)`` is the URL a careful user cites.

``start_held_out`` serves the same pages under eight other spellings, none of them named in the
tests' settings or in the add-on's lists of the first site: ``index.php``, ``index.jsp`` with a
``;jsessionid``, ``?from=related``, a ``print.html`` and an ``amp/`` copy below the page, the
mobile host ``m.manual.test``, a click id, and the bare host with a fragment.

Host names on loopback: the server is also a forward proxy for http, as the demo server is;
``SETTINGS`` route a crawl to it."""

from __future__ import annotations

import hashlib
from typing import Callable

from minisite import CountingSite, listen

from scrapy_urlunify.demo.proxy import demo_settings

PAGES = 96
BASE = "http://www.manual.test"
MIRROR = "http://mirror.manual.test"
BARE = "http://manual.test"
MOBILE = "http://m.manual.test"


def held_out(i: int, k: int) -> str:
    """Page ``i`` in the held-out spelling ``k`` (0-7)."""
    path = f"/doc/{i}/"
    token = hashlib.md5(f"{i}-{k}".encode()).hexdigest().upper()
    return [
        BASE + path,
        BASE + path + "index.php",
        BASE + path + f"index.jsp;jsessionid={token}",
        BASE + path + "?from=related",
        BASE + path + "print.html",
        MOBILE + path,
        BASE + path + f"?gclid={token[:12]}",
        BASE + path + "amp/",
    ][k % 8]


def spelled(i: int, k: int) -> str:
    """Page ``i`` in the spelling ``k`` (0-7)."""
    path = f"/doc/{i}/"
    session = hashlib.md5(f"{i}-{k}".encode()).hexdigest()
    return [
        BASE + path,
        BASE + path + "index.html",
        BASE + path + f"?sessionid={session}",
        BASE + path + "?ref=sidebar",
        BASE + "/print" + path,
        MIRROR + path,
        BASE + path + "?utm_source=feed",
        BARE + path + "#comments",
    ][k % 8]


class SpellingSite(CountingSite):
    def __init__(self, spell: Callable[[int, int], str] = spelled) -> None:
        super().__init__()
        self.spell = spell

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        request.uri = b"/" + request.uri.split(b"://", 1)[-1].partition(b"/")[2]
        path, _ = self.count(request)
        if path == "/":
            links = [self.spell(i, i) for i in range(PAGES)]
            return _html("Contents", "<p>All the pages of the manual.</p>", links)
        path = path.partition(";")[0].removeprefix("/print")
        for suffix in ("index.html", "index.php", "index.jsp", "print.html", "amp/"):
            path = path.removesuffix(suffix)
        parts = path.strip("/").split("/")
        if len(parts) != 2 or parts[0] != "doc" or not parts[1].isdigit():
            request.setResponseCode(404)
            return b"not found"
        i = int(parts[1])
        if i >= PAGES:
            request.setResponseCode(404)
            return b"not found"
        # page i + d in the spelling i + 2d: each page linked from seven others, each time
        # in another spelling (and from the contents page in an eighth)
        links = [self.spell((i + d) % PAGES, i + 2 * d) for d in range(1, 8)]
        text = f"<article><h1>Chapter {i}</h1><p class='text'>{_words(i)}</p></article>"
        return _html(f"Chapter {i}", text, links)

    def canonical(self, i: int) -> str:
        return f"{BASE}/doc/{i}/"


def _words(i: int) -> str:
    return " ".join(hashlib.sha1(f"{i}:{n}".encode()).hexdigest()[:7] for n in range(40))


def _html(title: str, body: str, links: list[str]) -> bytes:
    anchors = "".join(f"<a href='{u}'>link</a> " for u in links)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}"
        f"<nav>{anchors}</nav></body></html>"
    ).encode()


def start() -> tuple[SpellingSite, object, str]:
    """The site, its port, and its start URL's base (the crawl's settings: ``settings(port)``)."""
    site = SpellingSite()
    port, _ = listen(site)
    return site, port, BASE


def start_held_out() -> tuple[SpellingSite, object, str]:
    """The site in its held-out spellings (:func:`held_out`), as :func:`start`."""
    site = SpellingSite(held_out)
    port, _ = listen(site)
    return site, port, BASE


def settings(port: object, **extra: object) -> dict[str, object]:
    """Settings that route a crawl to the site's server on ``port``."""
    proxy = f"http://127.0.0.1:{port.getHost().port}"  # type: ignore[attr-defined]
    hosts = [u.partition("://")[2] for u in (BASE, MIRROR, BARE, MOBILE)]
    return demo_settings(proxy, URLUNIFY_DEMO_HOSTS=hosts, **extra)
