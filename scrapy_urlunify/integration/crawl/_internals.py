"""Every reach of the add-on into another library's internals, one small function each: what
each buys (a measured cost, a behaviour no public API gives) is in its docstring, and how they
are pinned to the supported versions in docs/architecture.md ("The integration layer").
"""

from __future__ import annotations

import functools
import weakref
from typing import TYPE_CHECKING, Any

from pydispatch import dispatcher  # type: ignore[import-untyped]
from pydispatch.saferef import BoundMethodWeakref  # type: ignore[import-untyped]
from scrapy import Request
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.http import Headers
from scrapy.spidermiddlewares.depth import DepthMiddleware
from scrapy.spidermiddlewares.httperror import HttpErrorMiddleware
from scrapy.spidermiddlewares.referer import RefererMiddleware
from scrapy.spidermiddlewares.start import StartSpiderMiddleware
from scrapy.spidermiddlewares.urllength import UrlLengthMiddleware

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler


def spider_middlewares(crawler: Crawler) -> tuple[Any, ...] | None:
    """The spider middlewares of the crawl, in output-chain order; None outside a crawl.

    The link middleware drops a known duplicate only when no middleware after it would have
    seen the link, and the signature middleware leaves a duplicate page to ``DuplicatePageGate``
    only when the gate is there: Scrapy has no public list of a crawl's middlewares."""
    try:
        return tuple(crawler.engine.scraper.spidermw.middlewares)  # type: ignore[union-attr]
    except (AttributeError, RuntimeError):
        return None


#: the attribute by which a component (or a signal receiver's owner) of the add-on declares that
#: a link dropped before it reaches the scheduler is none of its business
LINK_SAFE = "urlunify_link_safe"


def middleware_role(middleware: Any) -> str | None:
    """What one of Scrapy's own spider middlewares does to a link from a page, known by its exact
    class (a subclass may do more): ``"depth"`` (``DepthMiddleware``: depth stats, drops beyond
    ``DEPTH_LIMIT``), ``"url_length"`` (``UrlLengthMiddleware``: drops beyond
    ``URLLENGTH_LIMIT``), ``"referer"`` (``RefererMiddleware``: a ``Referer`` header),
    ``"inert"`` (``StartSpiderMiddleware``, ``HttpErrorMiddleware``: nothing); None for any other.
    The link middleware drops a known duplicate early only when it can do what those after it
    would have done with it."""
    cls = type(middleware)
    if cls is DepthMiddleware:
        return "depth"
    if cls is UrlLengthMiddleware:
        return "url_length"
    if cls is RefererMiddleware:
        return "referer"
    if cls in (StartSpiderMiddleware, HttpErrorMiddleware):
        return "inert"
    return None


def offsite_middleware(crawler: Crawler) -> Any:
    """The crawl's ``OffsiteMiddleware`` (Scrapy's own class, a downloader middleware since
    Scrapy 2.13, run when a request is scheduled), or None."""
    return next(
        (mw for mw in downloader_middlewares(crawler) if type(mw) is OffsiteMiddleware), None
    )


def downloading(crawler: Crawler) -> bool:
    """Whether the crawl's downloader has requests in flight (or waiting in its slots): the
    engine's own idle test. Items waiting for their page's claim are let go when it has none,
    since nothing still to come can settle the claim; Scrapy has no public signal for it."""
    try:
        return bool(crawler.engine.downloader.active)  # type: ignore[union-attr]
    except AttributeError:
        return False


def downloader_middlewares(crawler: Crawler) -> tuple[Any, ...]:
    """The downloader middlewares of the crawl (empty outside a crawl)."""
    try:
        return tuple(crawler.engine.downloader.middleware.middlewares)  # type: ignore[union-attr]
    except (AttributeError, RuntimeError):
        return ()


def receiver_owners(crawler: Crawler, signal: object) -> list[Any]:
    """The objects whose bound methods receive ``signal`` from the crawl (a plain function
    receiver is its own owner): Scrapy's ``SignalManager`` does not list receivers."""
    owners = []
    for receiver in dispatcher.getAllReceivers(crawler.signals.sender, signal):
        # how PyDispatcher keeps bound methods, and plain functions
        if isinstance(receiver, (BoundMethodWeakref, weakref.ReferenceType)):
            receiver = receiver()
            if receiver is None:  # collected: it receives nothing any more
                continue
        owners.append(getattr(receiver, "__self__", receiver))
    return owners


def has_receivers(crawler: Crawler, signal: object) -> bool:
    """Whether anybody listens to ``signal`` from the crawl: sending ``request_dropped`` costs
    more than the rest of a drop, and nothing in Scrapy itself listens to it. Read straight from
    PyDispatcher's table, as ``getAllReceivers`` would, without building the list."""
    for sender in (crawler.signals.sender, dispatcher.Any):
        receivers = dispatcher.connections.get(id(sender))
        if receivers and receivers.get(signal):
            return True
    return False


# The slots request_with_url fills: if Scrapy's Request has others, it takes the public way.
_REQUEST_SLOTS = frozenset(
    {
        "__weakref__",
        "_body",
        "_cb_kwargs",
        "_cookies",
        "_encoding",
        "_flags",
        "_headers",
        "_meta",
        "_url",
        "callback",
        "dont_filter",
        "errback",
        "method",
        "priority",
    }
)
#: whether :func:`request_with_url` copies a ``Request`` without ``Request.__init__``
FAST_REQUEST_COPY = frozenset(
    getattr(Request, "__slots__", ())
) == _REQUEST_SLOTS and Request.attributes == (
    "url",
    "headers",
    "body",
    "cookies",
    "meta",
    "encoding",
    "flags",
    "cb_kwargs",
    "callback",
    "dont_filter",
    "errback",
    "method",
    "priority",
)


def request_with_url(request: Request, url: str, meta: dict[str, Any]) -> Request:
    """What ``request.replace(url=url, meta=meta)`` returns, for a URL ``safe_url_string``
    leaves unchanged (the caller checks that): without ``Request.__init__``, whose
    ``safe_url_string`` is a third of a Request's cost, copying the other attributes the way
    ``__init__`` copies them. Another request class, or a Scrapy whose ``Request`` has other
    slots, takes ``replace()``."""
    if not FAST_REQUEST_COPY or type(request) is not Request:
        return request.replace(url=url, meta=meta)
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


def flush_before_reads(
    stats: Any,
    flush: Callable[[], None],
    names: tuple[str, ...] = ("get_value", "get_stats", "close_spider"),
) -> None:
    """Make the stats collector call ``flush()`` before each of its methods ``names``.

    Instance attributes rather than a subclass: the collector is the project's ``STATS_CLASS``,
    whatever it is. Scrapy 2.19's collector caches its wrapped methods in ``_cached_<name>``
    instance attributes: those are dropped so the lookup finds ours."""
    for name in names:
        original = getattr(type(stats), name, None)
        if original is None:
            continue
        vars(stats).pop("_cached_" + name, None)
        setattr(stats, name, _flushing(flush, original.__get__(stats)))


def _flushing(flush: Callable[[], None], method: Any) -> Any:
    # wraps: the engine inspects close_spider's signature (does it require ``spider``?)
    @functools.wraps(method)
    def flushed(*args: Any, **kwargs: Any) -> Any:
        flush()
        return method(*args, **kwargs)

    return flushed


def twisted_stderr_printer(replace: Callable[[Any], Any] | None = None) -> Any:
    """Twisted's temporary stderr printer of critical events (used until someone begins
    Twisted's logging, which Scrapy never does), or None when there is none (logging begun,
    another Twisted). With ``replace``: the printer is swapped for ``replace(printer)``, which
    ``beginLoggingTo()`` then removes in its place; the new one is returned."""
    from twisted.logger import globalLogBeginner, globalLogPublisher

    printer = getattr(globalLogBeginner, "_temporaryObserver", None)
    if printer is None or replace is None:
        return printer
    new = replace(printer)
    globalLogPublisher.removeObserver(printer)
    globalLogPublisher.addObserver(new)
    globalLogBeginner._temporaryObserver = new
    return new
