"""The add-on with scrapy-zyte-api's and scrapy-poet's fingerprinters: real crawls, no network.

Each plugin keeps its own distinctions (Zyte API parameters, page-object dependencies) and its
base/fallback fingerprinter is ours, so plain URL spellings of one page are still one request.
Zyte API is a local stand-in answering ``POST /v1/extract`` (``ZYTE_API_URL``).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import pytest_twisted
import scrapy
from dropin import recorder, run
from scrapy_poet import DummyResponse  # noqa: F401  (scrapy-poet is a test dependency)
from twisted.internet import reactor
from twisted.web import resource, server
from web_poet import WebPage

from scrapy_urlunify.integration.seen._fingerprinter import Fingerprinter

OURS = "scrapy_urlunify.Fingerprinter"


class FakeZyteAPI(resource.Resource):
    """Answers Zyte API extract calls from local pages; remembers each call's parameters."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[str, Any]] = []

    def render_POST(self, request):  # type: ignore[no-untyped-def]
        params = json.loads(request.content.read())
        self.calls.append(params)
        html = f"<html><body>{params['url']}</body></html>"
        out: dict[str, Any] = {"url": params["url"], "statusCode": 200}
        if params.get("browserHtml"):
            out["browserHtml"] = html
        if params.get("httpResponseBody"):
            out["httpResponseBody"] = base64.b64encode(html.encode()).decode()
            out["httpResponseHeaders"] = [{"name": "content-type", "value": "text/html"}]
        request.setHeader(b"Content-Type", b"application/json")
        return json.dumps(out).encode()


class ZyteSpider(scrapy.Spider):
    name = "zyte"

    def parse(self, response):  # type: ignore[no-untyped-def]
        base = response.url.rsplit("/", 1)[0]
        page = base + "/p"
        yield scrapy.Request(page, meta={"zyte_api": {"browserHtml": True}}, callback=self.done)
        yield scrapy.Request(
            page, meta={"zyte_api": {"httpResponseBody": True}}, callback=self.done
        )
        # the same parameters for another spelling of the page: the middleware rewrites it first
        yield scrapy.Request(
            page + "?utm_source=x", meta={"zyte_api": {"browserHtml": True}}, callback=self.done
        )
        # not Zyte API requests: the fallback fingerprinter (ours) unifies them
        yield scrapy.Request(base + "/q", callback=self.done)
        yield scrapy.Request(base + "/q/index.html", callback=self.done)

    def done(self, response):  # type: ignore[no-untyped-def]
        return None


@pytest.mark.parametrize("zyte_priority", [500, -500], ids=["ours-first", "zyte-first"])
@pytest_twisted.inlineCallbacks
def test_zyte_api_requests_keep_their_parameters_and_plain_requests_are_unified(zyte_priority):
    api = FakeZyteAPI()
    api_port = reactor.listenTCP(0, server.Site(api), interface="127.0.0.1")
    settings = {
        "ADDONS": {"scrapy_urlunify.Addon": 0, "scrapy_zyte_api.Addon": zyte_priority},
        "ZYTE_API_KEY": "a-key",
        "ZYTE_API_URL": f"http://127.0.0.1:{api_port.getHost().port}/v1/",
        "ZYTE_API_TRANSPARENT_MODE": False,
    }
    try:
        rec, port, base = recorder()
        _, crawler, _ = yield run(
            ZyteSpider, settings, site=(rec, port, base), start_urls=[base + "/start"]
        )
    finally:
        yield api_port.stopListening()
    assert crawler.settings["ZYTE_API_FALLBACK_REQUEST_FINGERPRINTER_CLASS"] == OURS
    fingerprinter = crawler.request_fingerprinter
    assert type(fingerprinter).__name__ == "ScrapyZyteAPIRequestFingerprinter"
    assert isinstance(fingerprinter._fallback_request_fingerprinter, Fingerprinter)
    # two sets of parameters for one page: two calls; the third request was the first again
    assert sorted(sorted(k for k in c if k != "url") for c in api.calls) == [
        ["browserHtml"],
        ["httpResponseBody"],
    ]
    assert {c["url"] for c in api.calls} == {base + "/p"}
    assert rec.paths().count("/q") == 1
    assert "/q/index.html" not in rec.paths()


class PageA(WebPage):
    pass


class PageB(WebPage):
    pass


class PoetSpider(scrapy.Spider):
    name = "poet"

    def parse(self, response):  # type: ignore[no-untyped-def]
        base = response.url.rsplit("/", 1)[0]
        yield scrapy.Request(base + "/p", callback=self.parse_a)
        yield scrapy.Request(
            base + "/p", callback=self.parse_b
        )  # other page object: another request
        yield scrapy.Request(base + "/p/index.html", callback=self.parse_a)  # the first again

    def parse_a(self, response, page: PageA):  # type: ignore[no-untyped-def]
        yield {"page": "A", "url": page.url}

    def parse_b(self, response, page: PageB):  # type: ignore[no-untyped-def]
        yield {"page": "B", "url": page.url}


@pytest_twisted.inlineCallbacks
def test_poet_page_objects_stay_apart_and_urls_are_unified():
    settings = {"ADDONS": {"scrapy_urlunify.Addon": 0, "scrapy_poet.Addon": 300}}
    rec, port, base = recorder()
    _, crawler, items = yield run(
        PoetSpider, settings, site=(rec, port, base), start_urls=[base + "/start"]
    )
    assert crawler.settings["SCRAPY_POET_REQUEST_FINGERPRINTER_BASE_CLASS"] == OURS
    assert type(crawler.request_fingerprinter).__name__ == "ScrapyPoetRequestFingerprinter"
    assert sorted(i["page"] for i in items) == ["A", "B"]
    assert rec.paths().count("/p") == 2
    assert "/p/index.html" not in rec.paths()
