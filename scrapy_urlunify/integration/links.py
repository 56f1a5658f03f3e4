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

A link the crawl has already seen (its key is in the dupefilter's store) is dropped here, before
the rewritten request is built and scheduled, exactly as the scheduler would drop it: same
``dupefilter/filtered`` and ``urlunify/duplicates`` counts, same ``DUPEFILTER_DEBUG`` lines
(:meth:`~scrapy_urlunify.integration.dupefilter.DupeFilter.drop_known`). On a documentation
site 80-90% of links are such repeats.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import Headers
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from ..core.domains import within
from ..core.rules import fragment_is_route
from ..core.url import host_of
from .context import ItemOrigin, UnifyContext
from .fingerprinter import VERBATIM_META
from .signatures import DUPLICATE_OF_META

if TYPE_CHECKING:
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
        return cls(crawler, context)

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if response is not None and self.context.signatures is not None:
            try:
                identifier = self.context.unifier.identify(response.url)
            except ValueError:
                return item
            self.context.item_origins.add(item, ItemOrigin(identifier, response.meta.get(DUPLICATE_OF_META)))
        return item

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        if request.meta.get(OPT_OUT_META) is False:
            return request
        ctx = self.context
        if response is None and request.dont_filter and self._crawled_before(request):
            ctx.inc("resume/start_skipped")
            logger.debug("Skipped start request %s: crawled by an earlier run of this job", request)
            return None
        unifier = ctx.unifier
        stats = ctx.stats
        url = request.url
        stats.inc("links")
        reason = unifier.filter_reason(url)
        if reason is not None:
            if reason in self._downloadable:
                return request
            stats.inc("filtered/" + reason)
            logger.debug("Filtered %s link %s (from %s)", reason, url, response.url if response else "start")
            return None
        if response is not None and "#" in url and _is_anchor(url, response.url, unifier):
            stats.inc("filtered/" + ANCHOR)
            logger.debug("Filtered on-page anchor %s (on %s)", url, response.url)
            return None
        fetch = unifier.standardize(url)  # valid: an invalid URL has a filter reason
        if self._allowed and self._is_offsite_alias(fetch):
            request.meta["allow_offsite"] = True
            stats.inc("allowed_offsite")
        rewrite = ctx.rewrite and fetch != url and not request.meta.get(VERBATIM_META)
        if rewrite:
            stats.inc("rewritten")
        df = ctx.dupefilter
        if df is not None and df.early_drop and not request.dont_filter and df.drop_known(
                request, self.crawler.spider, (lambda: _rewritten(request, fetch)) if rewrite else None):
            return None
        return _rewritten(request, fetch) if rewrite else request

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


def _rewritten(request: Request, fetch: str) -> Request:
    """``request`` with the URL ``fetch``, and the URL it had in ``meta[ORIGINAL_URL_META]``."""
    meta = dict(request.meta)
    meta.setdefault(ORIGINAL_URL_META, request.url)
    if _FAST_COPY and type(request) is Request and _SAFE_URL(fetch) is not None:
        return _with_safe_url(request, fetch, meta)
    return request.replace(url=fetch, meta=meta)


# A URL made only of characters w3lib's safe_url_string leaves alone, with an ASCII host name (no
# IDNA, no IPv6): Request(url) would store it unchanged (tests/integration/test_links.py checks
# this predicate against safe_url_string). Standardized URLs are WHATWG-serialized, so most are.
_SAFE_URL = re.compile(
    r"https?://[a-z0-9.\-]+(?::[0-9]+)?/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*"
    r"(?:\?[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*)?(?:#[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]*)?\Z"
).match

# The slots _with_safe_url fills: if Scrapy's Request has others, the fast path is off
_REQUEST_SLOTS = frozenset({"__weakref__", "_body", "_cb_kwargs", "_cookies", "_encoding", "_flags", "_headers",
                            "_meta", "_url", "callback", "dont_filter", "errback", "method", "priority"})
_FAST_COPY = frozenset(getattr(Request, "__slots__", ())) == _REQUEST_SLOTS and Request.attributes == (
    "url", "headers", "body", "cookies", "meta", "encoding", "flags", "cb_kwargs",
    "callback", "dont_filter", "errback", "method", "priority")


def _with_safe_url(request: Request, url: str, meta: dict[str, Any]) -> Request:
    """What ``request.replace(url=url, meta=meta)`` returns, without ``Request.__init__``: its
    ``safe_url_string`` (a third of a Request's cost) would return ``url`` unchanged, and the other attributes are
    copied the way ``__init__`` copies them."""
    new = Request.__new__(Request)  # object_ref.__new__: tracked by scrapy.utils.trackref too
    new._encoding = encoding = request._encoding
    new.method = request.method
    new._meta = meta
    new._url = url
    new._body = request._body
    new.priority = request.priority
    new.callback = request.callback
    new.errback = request.errback
    new.dont_filter = request.dont_filter
    new._cookies = request._cookies or None
    headers = request._headers
    new._headers = Headers(headers, encoding=encoding) if headers else None
    new._cb_kwargs = dict(request._cb_kwargs) if request._cb_kwargs else None
    new._flags = list(request._flags) if request._flags else None
    return new
