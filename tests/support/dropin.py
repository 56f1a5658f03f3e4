"""Real crawls for the drop-in tests: the mini site or a recording server, with the add-on."""

from __future__ import annotations

from typing import Any

import minisite
import pytest_twisted
from scrapy import signals
from scrapy.crawler import CrawlerRunner
from twisted.internet import reactor
from twisted.web import resource, server

SETTINGS = {
    "ADDONS": {"scrapy_urlunify.Addon": 0},
    "ROBOTSTXT_OBEY": False,
    "CONCURRENT_REQUESTS": 1,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "DEBUG",
}


@pytest_twisted.inlineCallbacks
def run(spidercls, settings=None, site=None, **kwargs):  # type: ignore[no-untyped-def]
    """Crawl the mini site (or start_urls given in kwargs); returns (site, crawler, items)."""
    site, port, base = minisite.start() if site is None else site
    items: list = []
    try:
        runner = CrawlerRunner({**SETTINGS, **(settings or {})})
        crawler = runner.create_crawler(spidercls)

        def scraped(item, **kw):  # type: ignore[no-untyped-def]
            items.append(item)

        crawler.signals.connect(scraped, signal=signals.item_scraped)
        kwargs.setdefault("start_urls", [base + "/"])
        yield runner.crawl(crawler, **kwargs)
    finally:
        yield port.stopListening()
    return site, crawler, items


class Recorder(resource.Resource):
    """Answers every request with a page of its own; remembers (method, path as sent, body)."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, str, bytes]] = []
        self.base = ""

    def render(self, request):  # type: ignore[no-untyped-def]
        body = request.content.read() if request.content is not None else b""
        self.log.append((request.method.decode(), request.uri.decode(), body))
        request.setHeader(b"Content-Type", b"text/html")
        return f"<html><body>page {request.uri.decode()} ({len(self.log)})</body></html>".encode()

    def paths(self) -> list[str]:
        return [uri for _, uri, _ in self.log]


def recorder() -> tuple[Recorder, Any, str]:
    rec = Recorder()
    port = reactor.listenTCP(0, server.Site(rec), interface="127.0.0.1")
    return rec, port, f"http://127.0.0.1:{port.getHost().port}"
