"""``Downstream``: what the spider middlewares after ``LinkMiddleware`` in the output chain would
have done with a link it drops early (Scrapy's depth, URL length, referer and offsite
middlewares), and whether another one there turns the early drop off (docs/rules.md, "In a
crawl: the link middleware").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest

from scrapy_urlunify.integration.crawl._internals import (
    LINK_SAFE,
    middleware_role,
    offsite_middleware,
    receiver_owners,
    spider_middlewares,
)
from scrapy_urlunify.integration.crawl._meta import meta_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.crawl._stats import UnifyStats

logger = logging.getLogger(__name__)


class Downstream:
    """The spider middlewares after one middleware (``LinkMiddleware``) in the output chain, and
    what they would have done with a link it drops."""

    def __init__(
        self,
        crawler: Crawler,
        stats: UnifyStats,
        middlewares: tuple[Any, ...],
        offsite: Any = None,
        listeners: tuple[str, ...] = (),
    ) -> None:
        self.crawler = crawler
        self.stats = stats
        self.depth: Any = None
        self.maxlength = 0
        self.referer: Any = None
        #: the other middlewares after this one that process spider output, by class name
        self.unknown: list[str] = []
        for mw in middlewares:
            role = middleware_role(mw)
            if role == "depth":
                self.depth = mw
            elif role == "url_length":
                self.maxlength = mw.maxlength
            elif role == "referer":
                self.referer = mw
            elif role == "inert" or getattr(mw, LINK_SAFE, False):
                continue
            elif getattr(mw, "process_spider_output", None) or getattr(
                mw, "process_spider_output_async", None
            ):
                cls = type(mw)
                self.unknown.append(f"{cls.__module__}.{cls.__qualname__}")
        # a request_scheduled receiver of the project's sees every request the engine gets, a
        # duplicate too (the scheduler drops it after the signal): it would miss those dropped here
        self.unknown += [f"{name} (it receives request_scheduled)" for name in listeners]
        self.maxdepth = self.depth.maxdepth if self.depth is not None else 0
        self.early_drop = not self.unknown
        #: Scrapy's OffsiteMiddleware, when it may drop offsite links here (see _offsite_here)
        self.offsite = offsite if self.early_drop else None
        #: the highest request_depth_max given to the stats collector from here
        self._depth_max = -1
        #: the page of the last link dropped (its depth is accounted for)
        self._response: Any = None

    @classmethod
    def of(cls, crawler: Crawler, stats: UnifyStats, middleware: Any) -> Downstream:
        """The spider middlewares after ``middleware`` in the crawl's output chain (none outside
        a crawl, or before the engine has its middlewares)."""
        middlewares = spider_middlewares(crawler) or ()
        after = middlewares[: middlewares.index(middleware)] if middleware in middlewares else ()
        offsite = offsite_middleware(crawler)
        downstream = cls(crawler, stats, after, offsite, _scheduled_listeners(crawler, offsite))
        if downstream.unknown:
            logger.info(
                "Known duplicate and offsite links are left to the scheduler: %s would not see "
                "them (a spider middleware after LinkMiddleware: give it a priority above "
                "LinkMiddleware's to let LinkMiddleware drop them first)",
                ", ".join(downstream.unknown),
            )
        return downstream

    def drops_itself(self, request: Request, response: Response | None) -> bool:
        """A later middleware drops ``request`` (and counts it its own way): too long, too deep."""
        if self.maxlength and len(request.url) > self.maxlength:
            return True
        return bool(
            self.maxdepth and response is not None and link_depth(request, response) > self.maxdepth
        )

    def dropped(self, request: Request, response: Response | None) -> None:
        """``request`` was dropped here: ``DepthMiddleware``'s stats, as if it had seen it."""
        depth_mw = self.depth
        if depth_mw is None or response is None:
            return
        if depth_mw.verbose_stats:
            depth = link_depth(request, response)
            self.stats.inc_scrapy(f"request_depth_count/{depth}")
        elif response is self._response:
            return  # the links of one page have one depth, or 0 (depth_reset)
        else:
            depth = link_depth(request, response)
            if depth:  # not reset: the depth of all the page's links but the reset ones
                self._response = response
        if depth > self._depth_max:  # max_value is a costly call: only when it may change the stat
            self._depth_max = depth
            self.crawler.stats.max_value("request_depth_max", depth)  # type: ignore[union-attr]

    def drops_offsite(self, request: Request) -> bool:
        """Scrapy's ``OffsiteMiddleware`` drops ``request`` (the request to schedule), counted and
        logged by it, as when the engine schedules it (``request_scheduled``)."""
        if self.offsite is None:
            return False
        try:
            self.offsite.process_request(request)
        except IgnoreRequest:
            return True
        return False

    def as_scheduled(self, request: Request, response: Response | None) -> Request:
        """``request`` with the ``Referer`` header ``RefererMiddleware`` would give it (for the
        dupefilter's log line and ``request_dropped`` receivers)."""
        if self.referer is not None and response is not None:
            return self.referer.get_processed_request(request, response) or request
        return request


def _scheduled_listeners(crawler: Crawler, offsite: Any) -> tuple[str, ...]:
    """The receivers of ``request_scheduled`` that would see a link dropped here missing: any
    but Scrapy's ``OffsiteMiddleware`` (asked here, see :meth:`Downstream.drops_offsite`) and
    the components that declare a request dropped before the scheduler none of their business
    (``urlunify_link_safe``: the add-on's dupefilter, which records ``dont_filter`` requests;
    the done middlewares of resume and of the reliable queue, which track what reached them; the
    dequeue check, which stamps what it will judge)."""
    names = []
    for owner in receiver_owners(crawler, signals.request_scheduled):
        if owner is not offsite and not getattr(owner, LINK_SAFE, False):
            cls = type(owner)
            names.append(f"{cls.__module__}.{cls.__qualname__}")
    return tuple(dict.fromkeys(names))


def link_depth(request: Request, response: Response) -> int:
    """The depth ``DepthMiddleware`` gives a link of ``response``."""
    meta = meta_of(request)
    return 0 if meta and meta.get("depth_reset") else response.meta.get("depth", 0) + 1
