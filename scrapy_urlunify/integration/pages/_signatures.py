"""``SignatureMiddleware``: duplicate pages stop the chain, and teach the unifier.

A downloader middleware (the add-on enables it at 20, on the engine side of Scrapy's redirect
and retry middlewares, so it sees each final response once). For every 2xx response:

1. its signature (:mod:`scrapy_urlunify.learning.page_signature`: MD5 of the body text) goes to
   ``response.meta["urlunify_signature"]`` (hex), before the spider callback;
2. the signature index of its site (``URLUNIFY_SIGNATURE_GRANULARITY``: ``site``, the
   registrable domain after aliases, by default; or ``host``, or ``scope``) maps signature ->
   base identifier of the first page seen with it. A response whose signature was first seen on
   a page with *another* identifier is a duplicate page: ``meta["urlunify_duplicate_of"]`` names
   that page, stats ``urlunify/signature/duplicates``, one debug log line; with
   ``URLUNIFY_DROP_DUPLICATE_RESPONSES`` (default on) it never reaches the callback (no items,
   no links followed: the seed's "will not be further processed"): :class:`DuplicatePageGate`
   drops it (below);
3. with ``URLUNIFY_NEAR_DUPLICATES`` (default on), an HTML page (up to 4 MiB) that is not a duplicate page gets
   a near-duplicate fingerprint of its main text, read from the same tree (:mod:`._near_duplicates`):
   a page within ``URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE`` of an earlier page of another identifier
   is a near-duplicate page, ``meta["urlunify_near_duplicate_of"]`` and
   ``meta["urlunify_resemblance"]``, stats ``urlunify/signature/near_duplicates``; it reaches the
   callback (its links are followed: only the exact signature stops a page);
4. with ``URLUNIFY_LEARN`` (default off), the page goes to the crawl's learning session
   (:mod:`scrapy_urlunify.integration.rules`: the learner, the fetched pages, rule probation);
5. with ``URLUNIFY_CANONICALS`` (default on), a declared canonical goes to :mod:`._canonicals`,
   which trusts a site's canonicals once verified: the canonical URL is then recorded as seen,
   and is evidence for learning.

**Where a duplicate page is dropped: where Scrapy drops a response.** It was downloaded, so it
counts toward every budget of responses (``CLOSESPIDER_PAGECOUNT``, ``CLOSESPIDER_PAGECOUNT_NO_ITEM``,
``response_received_count``, ``scrapy urlunify learn --pages``): those count the
``response_received`` signal, which the engine sends only for a response that leaves the
downloader middlewares. So the middleware marks it (the response flag ``urlunify_duplicate``,
shown in Scrapy's "Crawled (200)" log line) and lets it through, and
:class:`DuplicatePageGate`, a spider middleware first in the spider's input chain, drops it, as
Scrapy's ``HttpErrorMiddleware`` drops a 404: the request's errback gets a :class:`DuplicatePage`
failure, no other spider middleware and no callback sees the response, nothing is logged as an
error. A ``response_received`` handler of the project sees it, as it sees a 404 the spider never
gets: that signal says "downloaded", not "given to the spider" (``meta["urlunify_duplicate_of"]``
tells the two apart). Without the gate (the components enabled by hand, without it), the
middleware drops the page itself, as before: then it counts toward no budget.

Settings: ``URLUNIFY_SIGNATURES`` (default on), ``URLUNIFY_SIGNATURE_MAX_BYTES`` (32 MiB: larger
bodies are hashed raw, and never teach the learner), ``URLUNIFY_SIGNATURE_GRANULARITY``, ``URLUNIFY_DROP_DUPLICATE_RESPONSES``,
``URLUNIFY_LEARN``, ``URLUNIFY_LEARN_MIN_PAIRS`` (3), ``URLUNIFY_CANONICALS``, ``URLUNIFY_NEAR_DUPLICATES``
and its thresholds.
"""

from __future__ import annotations

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


class DuplicatePage(IgnoreRequest):
    """A response whose body text was already seen on another page of the site."""


class DuplicatePageGate:
    """Spider middleware (the add-on enables it at 1: first in the spider's input chain): a
    response :class:`SignatureMiddleware` flagged as a duplicate page stops here, after the engine
    counted it as received (see the module's doc)."""

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
    """Downloader middleware: page signatures and duplicate pages (:class:`~._checks.PageChecks`)."""

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
        earlier = self.pages.check(request, response)
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
