"""``LinkMiddleware``: filters and standardizes every request a spider yields (FO-flt, FO-res).

Enable it in ``SPIDER_MIDDLEWARES`` (the add-on does, at 600). For each request from the spider's
start requests and callbacks:

1. a request with ``meta["urlunify"] = False`` passes untouched;
2. a link that must not be followed (:func:`~scrapy_urlunify.filter_reason`) is dropped: stats
   ``urlunify/filtered/<reason>`` (``scheme:mailto``, ``extension:pdf``, ``trap``...), one debug
   log line each; but a request whose scheme Scrapy can download (one with a handler in
   ``DOWNLOAD_HANDLERS``/``DOWNLOAD_HANDLERS_BASE``: ``ftp``, ``file``, ``s3``, ``data``) passes
   untouched, as there is nothing to unify in it;
3. an on-page anchor (the page being parsed plus a fragment) is dropped
   (``urlunify/filtered/anchor``);
4. with ``URLUNIFY_REWRITE`` (default on) its URL becomes ``standardize(url)``; the URL the spider
   asked for is kept in ``request.meta["urlunify_original_url"]`` (stats ``urlunify/rewritten``).
   A request with ``meta["verbatim_url"]`` (sent exactly as written) is never rewritten;
5. a request to a domain alias or sister domain of one of the spider's ``allowed_domains``
   gets ``meta["allow_offsite"] = True``, so Scrapy's offsite filter lets it through: the
   other hosts of a multi-domain site are part of the crawl without listing them all
   (stats ``urlunify/allowed_offsite``).

Stats ``urlunify/links`` counts every request the middleware saw.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from ..core.domains import within
from ..core.rules import fragment_is_route
from ..core.url import host_of
from .context import ItemOrigin, UnifyContext
from .fingerprinter import VERBATIM_META
from .signatures import DUPLICATE_OF_META

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    # typing.Self requires Python 3.11
    from typing_extensions import Self

__all__ = ["OPT_OUT_META", "ORIGINAL_URL_META", "LinkMiddleware"]

logger = logging.getLogger(__name__)

ORIGINAL_URL_META = "urlunify_original_url"
OPT_OUT_META = "urlunify"
ANCHOR = "anchor"


class LinkMiddleware(BaseSpiderMiddleware):
    """Spider middleware: drop links not worth following, standardize the URL of the rest."""

    def __init__(self, crawler: Crawler, context: UnifyContext) -> None:
        super().__init__(crawler)
        self.context = context
        spider = getattr(crawler, "spider", None)
        allowed = getattr(spider, "allowed_domains", None) or ()
        self._allowed = tuple(d.lower().lstrip(".") for d in allowed if isinstance(d, str) and d)
        self._offsite_alias: dict[str, bool] = {}
        #: the "scheme:<name>" reasons of the schemes Scrapy has a download handler for
        self._downloadable = frozenset(
            "scheme:" + str(scheme).lower()
            for scheme, handler in crawler.settings.getwithbase("DOWNLOAD_HANDLERS").items() if handler
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        context = UnifyContext.of(crawler)
        if not context.enabled:
            raise NotConfigured("URLUNIFY_ENABLED is off")
        context.connect_summary()
        context.marks_done = True
        return cls(crawler, context)

    # A response is "done" for a resume after a crash (scrapy_urlunify.integration.resume) only once every
    # request its callback yielded has been scheduled, i.e. when its output is exhausted: marked
    # earlier, a kill between the two would lose the links of that page.

    def process_spider_output(self, response: Response | None, result: Iterable[Any],
                              spider: Any = None) -> Iterable[Any]:
        yield from super().process_spider_output(response, result)
        self._done(response)

    async def process_spider_output_async(self, response: Response | None, result: AsyncIterator[Any],
                                          spider: Any = None) -> AsyncIterator[Any]:
        async for o in super().process_spider_output_async(response, result):
            yield o
        self._done(response)

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if response is not None and self.context.signatures is not None:
            try:
                identifier = self.context.unifier.identify(response.url)
            except ValueError:
                return item
            self.context.item_origins.add(item, ItemOrigin(identifier, response.meta.get(DUPLICATE_OF_META)))
        return item

    def _done(self, response: Response | None) -> None:
        df = self.context.dupefilter
        if response is not None and df is not None and df.resume_log is not None:
            df.mark_done(response.request)

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        if request.meta.get(OPT_OUT_META) is False:
            return request
        ctx = self.context
        if response is None and request.dont_filter and self._crawled_before(request):
            ctx.inc("resume/start_skipped")
            logger.debug("Skipped start request %s: crawled by an earlier run of this job", request)
            return None
        unifier = ctx.unifier
        url = request.url
        ctx.inc("links")
        reason = unifier.filter_reason(url)
        if reason is not None:
            if reason in self._downloadable:
                return request
            ctx.inc("filtered/" + reason)
            logger.debug("Filtered %s link %s (from %s)", reason, url, response.url if response else "start")
            return None
        if response is not None and "#" in url and _is_anchor(url, response.url, unifier):
            ctx.inc("filtered/" + ANCHOR)
            logger.debug("Filtered on-page anchor %s (on %s)", url, response.url)
            return None
        if self._allowed and self._is_offsite_alias(unifier.standardize(url)):
            request.meta["allow_offsite"] = True
            ctx.inc("allowed_offsite")
        if not ctx.rewrite or request.meta.get(VERBATIM_META):
            return request
        fetch = unifier.standardize(url)
        if fetch == url:
            return request
        ctx.inc("rewritten")
        meta = dict(request.meta)
        meta.setdefault(ORIGINAL_URL_META, url)
        return request.replace(url=fetch, meta=meta)

    def _crawled_before(self, request: Request) -> bool:
        """A start request of a resumed JOBDIR crawl that an earlier run already scheduled:
        Scrapy asks for start URLs again on every run, bypassing the dupefilter. (After a kill,
        an earlier run's unanswered requests are scheduled again by the dupefilter itself.)"""
        df = self.context.dupefilter
        if df is None or df.resume_log is None or not df.resume_log.resumed:
            return False
        return df.request_key(request.replace(url=self.context.unifier.standardize(request.url))
                      if self.context.rewrite else request) in df.store

    def _is_offsite_alias(self, fetch_url: str) -> bool:
        """Whether the host of ``fetch_url`` is outside ``allowed_domains`` while the host it is
        unified with (alias, sister suffix, ``www``) is inside: computed once per host."""
        host = host_of(fetch_url)
        if host.startswith("["):
            return False
        verdict = self._offsite_alias.get(host)
        if verdict is None:
            identity_host = self.context.unifier.host_rules(host).identity_host
            verdict = (not any(within(host, d) for d in self._allowed)
                       and any(within(identity_host, d) for d in self._allowed))
            self._offsite_alias[host] = verdict
        return verdict


def _is_anchor(url: str, page_url: str, unifier) -> bool:  # type: ignore[no-untyped-def]
    """``url`` is ``page_url`` plus a fragment that names no other content (not a ``#!`` route)."""
    fragment = url.partition("#")[2]
    if fragment_is_route(fragment):
        return False
    try:
        return unifier.standardize(url) == unifier.standardize(page_url)
    except ValueError:
        return False
