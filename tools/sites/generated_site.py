"""What the generated shops share (``tools/sites/dustsite.py``, ``tools/sites/storesite.py``):
the walk that makes their ground truth, the spider a naive user writes for them, their server
(also a forward proxy for http, so that their host names need no DNS) and their command line."""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import re
import sys
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urljoin


def slug(text: str) -> str:
    """A name as the sites write it in a URL (``Nordic copper lamp`` -> ``nordic-copper-lamp``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class GeneratedSite(Protocol):
    """What a generated site answers: the page a URL shows (None: a 404) and its response."""

    def page_id(self, url: str) -> str | None: ...

    def render(self, url: str) -> tuple[int, bytes]: ...

    def reachable(self, start: str = ...) -> dict[str, str]: ...


def reachable(site: GeneratedSite, start: str) -> dict[str, str]:
    """Every page id reachable from ``start`` by the site's links, with the first URL found
    showing it: the site's URL floor is its length."""
    first = site.page_id(start)
    assert first is not None
    found = {first: start}
    todo = [start]
    while todo:
        url = todo.pop()
        _, body = site.render(url)
        for href in re.findall(r'<a href="([^"]*)"', body.decode()):
            target = urljoin(url, html.unescape(href))
            pid = site.page_id(target)
            if pid is not None and pid not in found:
                found[pid] = target
                todo.append(target)
    return found


def page_spider(name: str, domain: str, start: str) -> type:
    """The spider a naive user writes for a site (Scrapy imported here: the sites themselves need
    none): a ``CrawlSpider`` following every link from ``start``, one item ``{url, page_id}``
    per page that names its page id."""
    from scrapy.linkextractors import LinkExtractor
    from scrapy.spiders import CrawlSpider, Rule

    class PageIdSpider(CrawlSpider):
        allowed_domains = [domain]
        start_urls = [start]
        rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

        def parse_start_url(self, response):  # type: ignore[no-untyped-def]
            return self.parse_page(response)

        def parse_page(self, response):  # type: ignore[no-untyped-def]
            page_id = response.css('meta[name="page-id"]::attr(content)').get()
            if page_id:
                yield {"url": response.url, "page_id": page_id}

    PageIdSpider.name = name
    return PageIdSpider


def request_url(target: str, host_header: str | None) -> str:
    """The URL a request asks for: its target in absolute form (a proxy request), else the
    ``Host`` header (without its port) and the target."""
    if target.startswith(("http://", "https://")):
        return target
    return f"http://{(host_header or '').split(':')[0].lower()}{target}"


def handler_for(site: GeneratedSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            status, body = site.render(request_url(self.path, self.headers.get("Host")))
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def serve(site: GeneratedSite, port: int) -> ThreadingHTTPServer:
    """A threading HTTP server (and forward proxy for http) of ``site`` on 127.0.0.1:``port``
    (0: a free port); call ``serve_forever()`` on it."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(site))
    server.daemon_threads = True
    return server


def main(
    make_site: Callable[[int, int, int], GeneratedSite],
    doc: str,
    hosts: Sequence[str],
    default_port: int,
) -> None:
    """A site's command line: ``serve`` it, or print its ``truth`` (floor and page ids) as JSON."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("command", choices=["serve", "truth"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--products", type=int, default=600)
    parser.add_argument("--categories", type=int, default=20)
    parser.add_argument("--port", type=int, default=default_port)
    args = parser.parse_args()
    site = make_site(args.seed, args.categories, args.products)
    if args.command == "truth":
        pages = site.reachable()
        json.dump(
            {
                "seed": args.seed,
                "products": args.products,
                "categories": args.categories,
                "floor": len(pages),
                "pages": pages,
            },
            sys.stdout,
            indent=1,
        )
        print()
        return
    server = serve(site, args.port)
    print(
        f"serving on http://127.0.0.1:{server.server_address[1]} (proxy for {', '.join(hosts)})",
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
