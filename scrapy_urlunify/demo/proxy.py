"""Scrapy glue: send requests for the demo hosts through the demo server.

The demo server is also a forward proxy (absolute-form requests for http,
``CONNECT`` + TLS for https), so pointing ``request.meta["proxy"]`` at it is
all Scrapy needs to reach ``http://www.site.test/`` and friends: no DNS, no
/etc/hosts, no privileged ports.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.httpobj import urlparse_cached

from scrapy_urlunify.demo.hosts import DEMO_HOSTS

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

#: Runs before HttpProxyMiddleware (750), so a proxy from the environment
#: (http_proxy/https_proxy) never takes precedence for demo hosts.
DEMO_PROXY_MIDDLEWARE_PRIORITY = 740
MIDDLEWARE_PATH = "scrapy_urlunify.demo.proxy.DemoProxyMiddleware"


class DemoProxyMiddleware:
    """Downloader middleware setting ``meta["proxy"]`` for demo hosts.

    Settings: ``URLUNIFY_DEMO_PROXY`` (required, e.g. ``DemoServer.proxy_url``;
    the middleware disables itself when it is unset) and
    ``URLUNIFY_DEMO_HOSTS`` (optional list, defaults to every demo host).
    A request that already has a ``proxy`` meta key is left alone.
    """

    def __init__(self, proxy_url: str, hosts: Iterable[str] = DEMO_HOSTS) -> None:
        self.proxy_url = proxy_url
        self.hosts = frozenset(h.lower() for h in hosts)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DemoProxyMiddleware:
        proxy_url = crawler.settings.get("URLUNIFY_DEMO_PROXY")
        if not proxy_url:
            raise NotConfigured("URLUNIFY_DEMO_PROXY is not set")
        hosts = crawler.settings.getlist("URLUNIFY_DEMO_HOSTS") or DEMO_HOSTS
        return cls(proxy_url, hosts)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        host = (urlparse_cached(request).hostname or "").rstrip(".")
        if host in self.hosts and "proxy" not in request.meta:
            request.meta["proxy"] = self.proxy_url


def demo_settings(proxy_url: str, **extra: Any) -> dict[str, Any]:
    """Settings that route a crawl to the demo server (merge into yours)."""
    settings: dict[str, Any] = {
        "URLUNIFY_DEMO_PROXY": proxy_url,
        "DOWNLOADER_MIDDLEWARES": {MIDDLEWARE_PATH: DEMO_PROXY_MIDDLEWARE_PRIORITY},
    }
    settings.update(extra)
    return settings
