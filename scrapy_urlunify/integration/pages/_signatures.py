"""``SignatureMiddleware``: duplicate pages stop the chain, and teach the unifier; and
``DuplicatePageGate``, which drops a duplicate page once the engine counted it as received
(docs/rules.md, "In a crawl: page signatures and duplicate items"; docs/stats.md).

The middleware is a thin adapter: the checks of each page (its signature, its near-duplicate
signature, its declared canonical, then the learning session and the frontier) are the crawl's
:class:`~scrapy_urlunify.integration.pages._checks.PageChecks`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import IgnoreRequest, NotConfigured

from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._meta import DUPLICATE_OF_META

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.pages._checks import PageChecks


#: the flag (``Response.flags``) of a duplicate page the gate is to drop
DUPLICATE_FLAG = "urlunify_duplicate"


logger = logging.getLogger(__name__)


class DuplicatePage(IgnoreRequest):
    """A response whose body text was already seen on another page of the site."""


class DuplicatePageGate:
    """Spider middleware (the add-on enables it at 1: first in the spider's input chain): a
    response :class:`SignatureMiddleware` flagged as a duplicate page stops here, after the engine
    counted it as received, as Scrapy's ``HttpErrorMiddleware`` drops a 404."""

    urlunify_role = "duplicate_gate"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DuplicatePageGate:
        if not _gates(UnifyCrawl.of(crawler)):
            raise NotConfigured
        return cls()

    def process_spider_input(self, response: Response) -> None:
        if DUPLICATE_FLAG in response.flags:
            raise DuplicatePage(
                f"{response.url} has the body text of {response.meta.get(DUPLICATE_OF_META)}"
            )

    def process_spider_exception(
        self, response: Response, exception: Exception
    ) -> Iterable[Any] | None:
        # the request's errback has had it; without one, it ends here, as HttpError does
        return [] if isinstance(exception, DuplicatePage) else None


class SignatureMiddleware:
    """Downloader middleware: page signatures and duplicate pages
    (:class:`~._checks.PageChecks`)."""

    urlunify_role = "signatures"

    def __init__(self, pages: PageChecks, *, gate: bool = False) -> None:
        self.pages = pages
        #: DuplicatePageGate drops the duplicate pages (else this middleware drops them)
        self.gate = gate

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SignatureMiddleware:
        crawl = UnifyCrawl.of(crawler)
        pages = crawl.pages
        if pages is None:
            raise NotConfigured
        return cls(pages, gate=_gates(crawl))

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        try:
            earlier = self.pages.check(request, response)
        except Exception:
            # a fault of ours must not lose the page: raised here, it would be the download's
            # failure, which a CrawlSpider's rule without an errback drops without a word
            logger.exception("Page checks failed on %s: it goes to the spider unchecked", request)
            self.pages.stats.inc("signature/check_errors")
            return response
        if earlier is None or not self.pages.drop:
            return response
        self.pages.dropped(request)
        if not self.gate:
            raise DuplicatePage(f"{response.url} has the body text of {earlier}")
        response.flags.append(DUPLICATE_FLAG)  # received, then dropped by the gate
        return response


def _gates(crawl: UnifyCrawl) -> bool:
    """Whether the crawl's duplicate pages are dropped by :class:`DuplicatePageGate`."""
    s = crawl.settings
    return (
        crawl.checks_pages
        and s["URLUNIFY_DROP_DUPLICATE_RESPONSES"]
        and crawl.configured("SPIDER_MIDDLEWARES", "duplicate_gate")
    )
