"""``Downstream``: what the spider middlewares after ``LinkMiddleware`` in the output chain would
have done with a link it drops.

``LinkMiddleware`` (and its Redis link batch) drops a known duplicate or an offsite link before
the middlewares after it see it, exactly as the scheduler would drop it. Scrapy's
``DepthMiddleware`` (stats), ``UrlLengthMiddleware`` (a link too long is left to it) and
``RefererMiddleware`` (the ``Referer`` header of the dupefilter's log line) are accounted for
here; any other middleware there that processes spider output turns the early drop off, as it
would see duplicates the scheduler drops. Scrapy's ``OffsiteMiddleware`` (a downloader
middleware, run when a request is scheduled) is asked here too, when nothing else could tell
the difference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.depth import DepthMiddleware
from scrapy.spidermiddlewares.httperror import HttpErrorMiddleware
from scrapy.spidermiddlewares.referer import RefererMiddleware
from scrapy.spidermiddlewares.start import StartSpiderMiddleware
from scrapy.spidermiddlewares.urllength import UrlLengthMiddleware

from .context import UnifyContext
from .dequeue import DequeueMiddleware
from .dupefilter import DupeFilter
from .internals import downloader_middlewares, receiver_owners, spider_middlewares
from .meta import meta_of
from .redis_queue_done import DoneMiddleware as QueueDoneMiddleware
from .resume import DoneMiddleware

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["Downstream", "link_depth"]

#: spider middlewares with nothing to do with a link from a page (start requests only, input only;
#: the DoneMiddlewares of JOBDIR resume and of the reliable Redis queue track what reaches the engine)
_INERT = frozenset(
    {StartSpiderMiddleware, HttpErrorMiddleware, DoneMiddleware, QueueDoneMiddleware}
)


class Downstream:
    """The spider middlewares after one middleware (``LinkMiddleware``) in the output chain, and
    what they would have done with a link it drops."""

    def __init__(self, crawler: Crawler, middlewares: tuple[Any, ...], offsite: Any = None) -> None:
        self.crawler = crawler
        self.depth: DepthMiddleware | None = None
        self.maxlength = 0
        self.referer: RefererMiddleware | None = None
        #: the other middlewares after this one that process spider output, by class name
        self.unknown: list[str] = []
        for mw in middlewares:
            cls = type(mw)
            if cls is DepthMiddleware:
                self.depth = mw
            elif cls is UrlLengthMiddleware:
                self.maxlength = mw.maxlength
            elif cls is RefererMiddleware:
                self.referer = mw
            elif cls in _INERT:
                continue
            elif getattr(mw, "process_spider_output", None) or getattr(
                mw, "process_spider_output_async", None
            ):
                self.unknown.append(f"{cls.__module__}.{cls.__qualname__}")
        self.maxdepth = self.depth.maxdepth if self.depth is not None else 0
        self.early_drop = not self.unknown
        #: Scrapy's OffsiteMiddleware, when it may drop offsite links here (see _offsite_here)
        self.offsite = offsite if self.early_drop else None
        #: the highest request_depth_max given to the stats collector from here
        self._depth_max = -1
        #: the page of the last link dropped (its depth is accounted for)
        self._response: Any = None

    @classmethod
    def of(cls, crawler: Crawler, middleware: Any) -> Downstream:
        """The spider middlewares after ``middleware`` in the crawl's output chain (none outside
        a crawl, or before the engine has its middlewares)."""
        middlewares = spider_middlewares(crawler) or ()
        after = middlewares[: middlewares.index(middleware)] if middleware in middlewares else ()
        return cls(crawler, after, _offsite_here(crawler))

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
            UnifyContext.of(self.crawler).stats.inc_scrapy(f"request_depth_count/{depth}")
        elif response is self._response:
            return  # the links of one page have one depth, or 0 (depth_reset)
        else:
            depth = link_depth(request, response)
            if depth:  # not reset: the depth of all the page's links but the reset ones
                self._response = response
        if depth > self._depth_max:  # max_value is a costly call: only when it may change the stat
            self._depth_max = depth
            self.crawler.stats.max_value("request_depth_max", depth)

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


def _offsite_here(crawler: Crawler) -> OffsiteMiddleware | None:
    """The crawl's ``OffsiteMiddleware`` (Scrapy's own class), when an offsite link may be
    dropped by the link middleware rather than when the engine schedules it: nothing else
    listens to ``request_scheduled`` but the add-on's components with nothing to do for a request
    the offsite filter drops: the dupefilter (records ``dont_filter`` requests, which are never
    offsite), the DoneMiddlewares of resume and of the reliable queue (they track the requests that
    reached them, after this one) and
    DequeueMiddleware (stamps a request for the queue it never reaches)."""
    offsite = next(
        (mw for mw in downloader_middlewares(crawler) if type(mw) is OffsiteMiddleware), None
    )
    if offsite is None:
        return None
    for owner in receiver_owners(crawler, signals.request_scheduled):
        if owner is not offsite and not isinstance(
            owner, (DupeFilter, DoneMiddleware, QueueDoneMiddleware, DequeueMiddleware)
        ):
            return None
    return offsite


def link_depth(request: Request, response: Response) -> int:
    """The depth ``DepthMiddleware`` gives a link of ``response``."""
    meta = meta_of(request)
    return 0 if meta and meta.get("depth_reset") else response.meta.get("depth", 0) + 1
