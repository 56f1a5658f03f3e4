"""When a request taken from :class:`~scrapy_urlunify.integration.queue._redis_queue.RedisQueue` is
done, so the queue can forget it; and the links of a page given back by a dead worker.

Done means nothing of the request is left to lose when its worker dies now:

* its response went through the spider callback, every request the callback yielded went
  through the scheduler (queued, or dropped as seen) and every item left the item pipelines.
  Scrapy schedules a callback's requests and runs its items in tasks after the callback's output
  is taken, so the end of the output is not the end (the idea of ``ResumeDoneMiddleware``, for
  JOBDIR, here for the shared queue): :class:`QueueDoneMiddleware` counts what the output holds and
  acknowledges the request when the last of it is handled. A callback that raises is done once
  what it yielded before is handled; a response no callback sees (an exception no middleware
  handles) is done at ``spider_error``;
* its final failure (after retries, an ``IgnoreRequest`` from a downloader middleware's
  ``process_request`` or ``process_response``) went through its errback, with the errback's
  output handled as a callback's, or it has no errback (:class:`QueueFailureMiddleware` gives every
  popped request an errback that sees it);
* a redirect or a retry of it was queued (the queue does it in the same step) or dropped by the
  scheduler (the queue's ``request_dropped`` hook).

The entry id travels in ``Request.meta`` from the pop to the response (redirects and retries
copy it); :class:`QueueDoneMiddleware` takes it out of the meta before the callback runs, so links
that copy ``response.meta`` do not carry it.

:class:`QueueGivenBackMiddleware` sits above ``LinkMiddleware`` (950) and the dupefilter: the links
of a page given back after a death skip the seen set (the dead worker may have recorded them
without queuing them) and are queued only if no worker ever queued them.

All three are needed with ``RedisQueue`` (it refuses to open without any of them)::

    SPIDER_MIDDLEWARES = {"scrapy_urlunify.QueueDoneMiddleware": 2,
                          "scrapy_urlunify.QueueGivenBackMiddleware": 960}
    DOWNLOADER_MIDDLEWARES = {"scrapy_urlunify.QueueFailureMiddleware": 1}

``QueueDoneMiddleware`` and ``QueueFailureMiddleware`` are closest to the engine on their side (2 and 1):
what ``QueueDoneMiddleware`` sees of a callback's output is what the engine gets, and
``QueueFailureMiddleware`` is the first to see a popped request.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import Request, signals
from scrapy.utils.misc import arg_to_iter

from scrapy_urlunify.integration.crawl._meta import GIVEN_BACK_META, QUEUE_ID_META, RESCUE_META
from scrapy_urlunify.integration.queue._redis_queue import (
    QueueErrback,
    queue_of,
    watch_done,
)

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["QueueDoneMiddleware", "QueueFailureMiddleware", "QueueGivenBackMiddleware"]


class _Handling:
    """One response's (or failure's) output: how much of it is not handled yet."""

    __slots__ = ("done", "entry_id", "exhausted", "pending", "source", "started")

    def __init__(self, source: Any, entry_id: str) -> None:
        self.source = source
        self.entry_id = entry_id
        self.pending = 0
        self.started = False
        self.exhausted = False
        self.done = False


class _Tracker:
    """The crawl's open handlings, shared by the two middlewares that open them
    (:class:`QueueDoneMiddleware` feeds it the signals)."""

    _BY_CRAWLER: WeakKeyDictionary[Any, _Tracker] = WeakKeyDictionary()

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        #: id(response or failure) -> its handling (item signals name the response)
        self.open: dict[int, _Handling] = {}
        #: entry id -> its open handling
        self.by_entry: dict[str, _Handling] = {}
        #: requests yielded and not yet through the scheduler -> their handling
        self.requests: WeakKeyDictionary[Request, _Handling] = WeakKeyDictionary()

    @classmethod
    def of(cls, crawler: Crawler) -> _Tracker:
        tracker = cls._BY_CRAWLER.get(crawler)
        if tracker is None:
            tracker = cls._BY_CRAWLER[crawler] = cls(crawler)
        return tracker

    def start(self, source: Any, entry_id: str) -> _Handling:
        handling = _Handling(source, entry_id)
        self.open[id(source)] = handling
        self.by_entry[entry_id] = handling
        queue = queue_of(self.crawler)
        if queue is not None:
            queue.watched.add(entry_id)
        return handling

    def handling(self, source: Any) -> _Handling | None:
        handling = self.open.get(id(source))
        return handling if handling is not None and handling.source is source else None

    def track(self, handling: _Handling, output: Any) -> None:
        if output is None:
            return
        handling.pending += 1
        if isinstance(output, Request):
            self.requests[output] = handling

    def end(self, handling: _Handling) -> None:
        """The output has no more to give (exhausted, or the callback raised)."""
        handling.exhausted = True
        self.check(handling)

    def release(self, handling: _Handling) -> None:
        handling.pending -= 1
        self.check(handling)

    def check(self, handling: _Handling) -> None:
        if handling.done or not handling.exhausted or handling.pending > 0:
            return
        handling.done = True
        if self.open.get(id(handling.source)) is handling:
            del self.open[id(handling.source)]
        if self.by_entry.get(handling.entry_id) is handling:
            del self.by_entry[handling.entry_id]
        queue = queue_of(self.crawler)
        if queue is not None:
            queue.ack(handling.entry_id)

    def scheduled(self, request: Request) -> None:
        handling = self.requests.pop(request, None)
        if handling is not None:
            # request_scheduled comes before the scheduler queues or drops the request, in the
            # same call: count it handled right after
            from twisted.internet import reactor
            from twisted.internet.task import deferLater

            deferLater(reactor, 0, self.release, handling)

    def item_left(self, response: Any) -> None:
        handling = self.handling(response)
        if handling is not None:
            self.release(handling)

    def spider_error(self, response: Any) -> None:
        handling = self.handling(response)
        if handling is not None and not handling.started:
            self.end(handling)  # no middleware output will come: the response never reached it

    def failed(self, errback: QueueErrback, failure: Any) -> Any:
        """A popped request's errback is called: its final failure."""
        original = errback.original
        if errback.entry_id in self.by_entry:
            # an error of a spider middleware's input: the output goes through QueueDoneMiddleware
            return failure.raiseException() if original is None else original(failure)
        request = getattr(failure, "request", None)
        if request is not None:
            request.meta.pop(QUEUE_ID_META, None)  # what the errback yields from it is new
        handling = self.start(failure, errback.entry_id)
        if original is None:
            self.end(handling)  # the scraper only logs the failure
            return failure.raiseException()
        try:
            output = original(failure)
        except BaseException:
            self.end(handling)
            raise
        if hasattr(output, "__aiter__"):
            return self.wrap_async(handling, output)
        if inspect.isawaitable(output):  # an async errback: its output is not followed
            self.end(handling)
            return output
        outputs = arg_to_iter(output)
        if outputs is output:
            return self.wrap(handling, outputs)
        for one in outputs:  # None, or one request or item
            self.track(handling, one)
        self.end(handling)
        return output

    def wrap(self, handling: _Handling, result: Iterable[Any]) -> Iterable[Any]:
        handling.started = True
        try:
            for output in result:
                self.track(handling, output)
                yield output
        finally:
            self.end(handling)

    async def wrap_async(
        self, handling: _Handling, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        handling.started = True
        try:
            async for output in result:
                self.track(handling, output)
                yield output
        finally:
            self.end(handling)


class QueueDoneMiddleware:
    """Spider middleware (at 2): acknowledges a response's request once its output is handled
    (and an errback's, for :class:`QueueFailureMiddleware`). It listens to ``request_scheduled`` only
    for the requests that reached it, and to the item signals."""

    urlunify_role = "queue_done"
    #: it tracks the output that reaches it: a link dropped before is none of its business
    urlunify_link_safe = True

    def __init__(self, crawler: Crawler) -> None:
        self.tracker = _Tracker.of(crawler)
        watch_done(crawler, "QueueDoneMiddleware")
        crawler.signals.connect(self._scheduled, signal=signals.request_scheduled)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self._item_left, signal=signal)
        crawler.signals.connect(self._spider_error, signal=signals.spider_error)

    def _scheduled(self, request: Request, spider: Spider | None = None) -> None:
        self.tracker.scheduled(request)

    def _item_left(self, item: Any = None, response: Any = None, **kwargs: Any) -> None:
        self.tracker.item_left(response)

    def _spider_error(self, failure: Any = None, response: Any = None, **kwargs: Any) -> None:
        self.tracker.spider_error(response)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QueueDoneMiddleware:
        return cls(crawler)

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        request = response.request
        entry_id = request.meta.pop(QUEUE_ID_META, None) if request is not None else None
        if entry_id:
            self.tracker.start(response, entry_id)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        handling = self.tracker.handling(response)
        yield from result if handling is None else self.tracker.wrap(handling, result)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        handling = self.tracker.handling(response)
        async for output in (
            result if handling is None else self.tracker.wrap_async(handling, result)
        ):
            yield output


class QueueFailureMiddleware:
    """Downloader middleware (at 1: the first to see a popped request): puts a
    :class:`~.redis_queue.QueueErrback` on the request, so its final failure, from wherever it
    comes, is done once its errback's output is handled."""

    def __init__(self, crawler: Crawler) -> None:
        self.tracker = _Tracker.of(crawler)
        watch_done(crawler, "QueueFailureMiddleware")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QueueFailureMiddleware:
        return cls(crawler)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        entry_id = request.meta.get(QUEUE_ID_META)
        if entry_id and not isinstance(request.errback, QueueErrback):
            request.errback = QueueErrback(entry_id, request.errback, self.tracker.failed)


class QueueGivenBackMiddleware:
    """Spider middleware (at 960, above ``LinkMiddleware``): the links of a page given back by
    a dead worker skip the seen set and are queued only if no worker ever queued them."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QueueGivenBackMiddleware:
        watch_done(crawler, "QueueGivenBackMiddleware")
        return cls()

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        given_back = response.meta.get(GIVEN_BACK_META)
        for output in result:
            yield _rescue(output) if given_back else output

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        given_back = response.meta.get(GIVEN_BACK_META)
        async for output in result:
            yield _rescue(output) if given_back else output


def _rescue(output: Any) -> Any:
    if isinstance(output, Request) and not output.dont_filter:
        output.dont_filter = True
        output.meta[RESCUE_META] = True
    return output
