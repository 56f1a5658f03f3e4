"""``follow_all``: a spider's links followed the way ``response.follow_all`` does, minus the links
Scrapy cannot make a request of (``mailto:``, ``tel:``, ``javascript:``), which it counts where
``LinkMiddleware`` counts the links it drops (docs/getting-started.md).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from parsel import Selector, SelectorList
from scrapy.link import Link
from w3lib.html import strip_html5_whitespace

from scrapy_urlunify.integration.crawl._build import UnifyCrawl

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.http import TextResponse


logger = logging.getLogger(__name__)


def follow_all(
    response: TextResponse,
    urls: Iterable[str | Link | Selector] | None = None,
    callback: Any = None,
    *,
    spider: Spider,
    css: str | None = None,
    xpath: str | None = None,
    **kwargs: Any,
) -> Iterator[Request]:
    """The requests of ``response.follow_all(urls, callback, css=..., xpath=..., **kwargs)``, but
    a link Scrapy refuses (``mailto:``, ``tel:``, ``javascript:``...) is skipped and counted in
    ``spider``'s crawl (``urlunify/filtered/scheme:mailto``...) instead of ending the page's links
    with a ``ValueError``::

        def parse(self, response):
            yield from follow_all(response, css="a", spider=self)
    """
    if sum(given is not None for given in (urls, css, xpath)) != 1:
        raise ValueError("give exactly one of urls, css or xpath")
    links: Iterable[Any] = (
        urls if urls is not None else (response.css(css) if css else response.xpath(xpath or ""))
    )
    crawl: UnifyCrawl | None = None
    for link in links:
        href = _href(link)
        if href is None:  # an element that is not <a> or <link>, or one without href
            continue
        try:
            yield response.follow(href, callback, **kwargs)
        except ValueError:
            crawl = crawl or UnifyCrawl.of(spider.crawler)
            url = response.urljoin(href)
            reason = crawl.policies.unifier.filter_reason(url) or "invalid"
            crawl.stats.inc("links")
            crawl.stats.inc("filtered/" + reason)
            logger.debug("Filtered link %s (%s) on %s", url, reason, response.url)


def _href(link: Any) -> str | None:
    """The URL of a link as ``response.follow`` would read it."""
    if isinstance(link, Link):
        return link.url
    if isinstance(link, SelectorList):
        link = link[0] if link else None
    if isinstance(link, Selector):
        root = link.root
        if isinstance(root, str):
            return strip_html5_whitespace(root)
        if getattr(root, "tag", None) in ("a", "link"):
            href = root.get("href")
            return strip_html5_whitespace(str(href)) if href is not None else None
        return None
    return link if isinstance(link, str) else None
