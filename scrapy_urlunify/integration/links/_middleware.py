"""``LinkMiddleware``: filters and standardizes every request a spider yields, and drops the
links the crawl has seen already before the scheduler is asked (docs/rules.md, "In a crawl:
the link middleware").

Its steps, in order: the opt-out (``meta["urlunify"] = False``), pages that declare ``nofollow``
(:mod:`._robots_meta`), the filters (:func:`~scrapy_urlunify.filter_reason`), on-page anchors, the
rewrite to the URL to fetch, hosts let past Scrapy's offsite filter (:mod:`._hosts`), and the early
drop of known duplicates, with what later middlewares would do done here (:mod:`._downstream`).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from scrapy_urlunify.core._rules import fragment_is_route
from scrapy_urlunify.core._url import host_of
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._internals import request_with_url
from scrapy_urlunify.integration.crawl._meta import (
    DUPLICATE_OF_META,
    OPT_OUT_META,
    ORIGINAL_URL_META,
    VERBATIM_META,
    meta_of,
)
from scrapy_urlunify.integration.links._downstream import Downstream, link_depth
from scrapy_urlunify.integration.links._hosts import ALIAS, OFFSITE, CrawlHosts
from scrapy_urlunify.integration.links._nofollow_links import NofollowLinks
from scrapy_urlunify.integration.links._robots_meta import NOFOLLOW, RobotsMeta
from scrapy_urlunify.integration.pages._items import ItemOrigin

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    # typing.Self requires Python 3.11
    from typing_extensions import Self


logger = logging.getLogger(__name__)

ANCHOR = "anchor"


class LinkMiddleware(BaseSpiderMiddleware):
    """Spider middleware: drop links not worth following, standardize the URL of the rest."""

    urlunify_role = "links"

    def __init__(self, crawler: Crawler, crawl: UnifyCrawl) -> None:
        super().__init__(crawler)
        self.policies = crawl.policies
        self.stats = crawl.stats
        self.rewrite: bool = crawl.settings["URLUNIFY_REWRITE"]
        #: where items are told the page they came from, when the page checks may drop them
        self.item_origins = crawl.item_origins if crawl.checks_pages else None
        #: the crawl's "seen?" check, when its dupefilter is ours
        self.seen = crawl.seen_check() if crawl.seen is not None else None
        self.link_batch = crawl.link_batch
        #: the requests plain Scrapy would make for the links met (estimated: the summary's)
        self.plain = crawl.plain_requests
        self.frontier = crawl.frontier
        #: what each host is to the crawl (inside, an alias of a host inside, offsite)
        self.hosts = CrawlHosts(crawler, crawl.policies)
        #: the "scheme:<name>" reasons of the schemes Scrapy has a download handler for
        self._downloadable = frozenset(
            "scheme:" + str(scheme).lower()
            for scheme, handler in crawler.settings.getwithbase("DOWNLOAD_HANDLERS").items()
            if handler
        )
        #: the spider middlewares after this one in the output chain (known once the engine is)
        self.downstream: Downstream | None = None
        #: (response, unifier, its standardized URL): the last page whose links were processed
        self._page: tuple[Any, Any, str | None] = (None, None, None)
        #: the pages whose links are not followed for their robots nofollow, when that is on
        self.robots = RobotsMeta() if crawl.settings["URLUNIFY_ROBOTS_NOFOLLOW"] else None
        #: the links each page marks rel="nofollow", which the frontier schedules later
        self.nofollow_links = NofollowLinks()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        crawl = UnifyCrawl.of(crawler)
        if not crawl.enabled:
            raise NotConfigured("URLUNIFY_ENABLED is off")
        return cls(crawler, crawl)

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if response is not None and self.item_origins is not None:
            try:
                identifier = self.policies.unifier.identify(response.url)
            except ValueError:
                return item
            self.item_origins.add(item, ItemOrigin.of(identifier, response))
        return item

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        meta = meta_of(request)  # None for most links: no dict made to look into
        if meta and meta.get(OPT_OUT_META) is False:
            return request
        after = self.downstream or self._chain_downstream()
        url = request.url
        if (after.maxlength and len(url) > after.maxlength) or (
            after.maxdepth
            and response is not None
            and link_depth(request, response) > after.maxdepth
        ):
            return request  # beyond URLLENGTH_LIMIT or DEPTH_LIMIT: theirs to drop and count
        stats = self.stats
        if (
            response is None
            and request.dont_filter
            and self.seen is not None
            and self.seen.seen.scheduled_before(
                request.replace(url=self.policies.unifier.standardize(request.url))
                if self.rewrite
                else request
            )
        ):
            stats.inc("resume/start_skipped")
            logger.debug("Skipped start request %s: crawled by an earlier run of this job", request)
            return None
        unifier = self.policies.unifier
        stats.inc("links")
        # a link is a GET: a POST a callback builds (a log-in form on a nofollow log-in page) is
        # an action of the spider's, not a link the page asks robots not to follow
        if (
            response is not None
            and self.robots is not None
            and request.method == "GET"
            and self.robots.nofollow(response, after.depth is not None)
        ):
            self.plain.add(_plain_key(request))  # plain Scrapy follows them
            stats.inc("filtered/" + NOFOLLOW)
            logger.debug("Filtered nofollow link %s (from %s)", url, response.url)
            after.dropped(request, response)
            return None
        reason = unifier.filter_reason(url)
        if reason is not None:
            if reason in self._downloadable:
                return request
            if not reason.startswith("scheme:"):  # a link plain Scrapy would request
                self.plain.add(_plain_key(request))
            stats.inc("filtered/" + reason)
            logger.debug(
                "Filtered %s link %s (from %s)", reason, url, response.url if response else "start"
            )
            after.dropped(request, response)
            return None
        fetch = unifier.standardize(url)  # valid: an invalid URL has a filter reason
        if (
            response is not None
            and "#" in url
            and fetch == self._page_fetch_url(response, unifier)
            and not fragment_is_route(url.partition("#")[2])
        ):
            # an on-page anchor: the page itself plus a fragment that names no other content
            stats.inc("filtered/" + ANCHOR)
            logger.debug("Filtered on-page anchor %s (on %s)", url, response.url)
            after.dropped(request, response)
            return None
        rewrite = self.rewrite and fetch != url and not (meta and meta.get(VERBATIM_META))
        if rewrite:
            stats.inc("rewritten")
        if self.hosts.allowed:
            host = host_of(fetch)
            verdict = self.hosts.known.get(host) or self.hosts.verdict(
                host, rewritten(request, fetch) if rewrite else request, after
            )
            if verdict is ALIAS:
                request.meta["allow_offsite"] = True
                stats.inc("allowed_offsite")
            elif verdict is OFFSITE and after.drops_offsite(
                rewritten(request, fetch) if rewrite else request
            ):
                # dropped, counted and logged by Scrapy's OffsiteMiddleware, as when it is scheduled
                after.dropped(request, response)
                return None
        self.plain.add(_plain_key(request))
        seen = self.seen
        if (
            seen is not None
            and seen.early_drop
            and after.early_drop
            and not request.dont_filter
            and seen.drop_known(
                request,
                self.crawler.spider,
                lambda: after.as_scheduled(
                    rewritten(request, fetch) if rewrite else request, response
                ),
            )
        ):
            after.dropped(request, response)
            return None
        out = rewritten(request, fetch) if rewrite else request
        if self.frontier is not None:
            # its priority, after its URL pattern's yield and whether its page marks it nofollow
            nofollow = response is not None and self.nofollow_links.marked(url, response)
            self.frontier.schedule(out, response, nofollow, _duplicate_page(response))
        return out

    def _page_fetch_url(self, response: Response, unifier: Any) -> str | None:
        """The standardized URL of the page being parsed (its links ask in a row), or None."""
        page = self._page
        if page[0] is response and page[1] is unifier:
            return page[2]
        try:
            fetch: str | None = unifier.standardize(response.url)
        except ValueError:
            fetch = None
        self._page = (response, unifier, fetch)
        return fetch

    def _chain_downstream(self) -> Downstream:
        """The spider middlewares after this one in the output chain, once the engine has them."""
        self.downstream = after = Downstream.of(self.crawler, self.stats, self)
        return after

    # With a shared store (Redis), a response's links are checked in one round trip, not one
    # per link at the scheduler (seen/_link_batch.py); otherwise BaseSpiderMiddleware's.
    # Not when another middleware after this one would see the duplicates the batch drops.
    def process_spider_output(
        self, response: Response | None, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        batch = self.link_batch
        if batch is not None and (after := self.downstream or self._chain_downstream()).early_drop:
            return batch.output(self, after, response, result)
        return super().process_spider_output(response, result)

    async def process_spider_output_async(
        self,
        response: Response | None,
        result: AsyncIterator[Any],
        spider: Spider | None = None,
    ) -> AsyncIterator[Any]:
        batch = self.link_batch
        if batch is not None and (after := self.downstream or self._chain_downstream()).early_drop:
            async for o in batch.output_async(self, after, response, result):
                yield o
            return
        get_processed = self._get_processed
        async for o in result:
            if (o := get_processed(o, response)) is not None:
                yield o


def _duplicate_page(response: Response | None) -> bool:
    """Whether ``response`` is a duplicate page given to the spider for its own rows
    (``integration/pages/_duplicate_rows.py``)."""
    request = response.request if response is not None else None
    meta = meta_of(request) if request is not None else None
    return bool(meta and meta.get(DUPLICATE_OF_META))


def _plain_key(request: Request) -> str:
    """What tells two requests apart for plain Scrapy's dupefilter, near enough for a count:
    its URL without the fragment (and its method and body, if any)."""
    url = request.url.partition("#")[0]
    if request.method == "GET" and not request.body:
        return url
    return f"{request.method} {url} {request.body!r}"


def rewritten(request: Request, fetch: str) -> Request:
    """``request`` with the URL ``fetch``, and the URL it had in ``meta[ORIGINAL_URL_META]``;
    built without ``Request.__init__`` where that would store ``fetch`` unchanged
    (:data:`SAFE_URL`)."""
    meta = dict(request.meta)
    meta.setdefault(ORIGINAL_URL_META, request.url)
    if SAFE_URL(fetch) is not None:
        return request_with_url(request, fetch, meta)
    return request.replace(url=fetch, meta=meta)


#: Matches a URL made only of characters w3lib's safe_url_string leaves alone, with an ASCII host
#: name (no IDNA, no IPv6): Request(url) would store it unchanged (tests/integration/test_links.py
#: checks it against safe_url_string). Standardized URLs are WHATWG-serialized, so most are.
SAFE_URL = re.compile(
    r"https?://[a-z0-9.\-]+(?::[0-9]+)?/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*"
    r"(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*)?(?:#[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]*)?\Z"
).match
