"""Which requests of scrapy-redis's shared queue are done: a popped request is done once its
callback's (or errback's) output is handled, every request through the scheduler, every item out
of the pipelines; then the queue acknowledges it (docs/redis_queue.md)."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any, Protocol
from weakref import WeakKeyDictionary

from scrapy import Request
from scrapy.utils.misc import arg_to_iter

from scrapy_urlunify.integration.crawl._meta import QUEUE_ID_META

if TYPE_CHECKING:
    from collections.abc import Callable


class Queue(Protocol):
    """What the tracker asks of the crawl's queue (``RedisQueue``)."""

    watched: set[str]

    def ack(self, entry_id: str) -> None: ...


class QueueErrback:
    """The errback of a popped request while it is in flight: ``handler(self, failure)`` sees
    its final failure (download error, ``IgnoreRequest`` from a downloader middleware, an error
    of the spider middlewares' input) and calls ``original`` (re-raising when there is none, which
    Scrapy handles as a request without errback). :meth:`RedisQueue.push` puts ``original`` back
    on a redirect or retry, so the queue stores the spider's own errback."""

    __slots__ = ("__weakref__", "entry_id", "handler", "original")

    def __init__(
        self,
        entry_id: str,
        original: Callable[..., Any] | None,
        handler: Callable[[QueueErrback, Any], Any],
    ) -> None:
        self.entry_id = entry_id
        self.original = original
        self.handler = handler

    def __call__(self, failure: Any) -> Any:
        return self.handler(self, failure)

    @property
    def __name__(self) -> str:  # Scrapy names the errback in some warnings
        return getattr(self.original, "__name__", "errback")


class Handling:
    """One response's (or failure's) output: how much of it is not handled yet."""

    __slots__ = ("done", "entry_id", "exhausted", "pending", "source", "started")

    def __init__(self, source: Any, entry_id: str) -> None:
        self.source = source
        self.entry_id = entry_id
        self.pending = 0
        self.started = False
        self.exhausted = False
        self.done = False


class QueueTracker:
    """The crawl's open handlings, shared by the two middlewares that open them
    (:class:`QueueDoneMiddleware` feeds it the signals)."""

    def __init__(self) -> None:
        #: the crawl's queue, once scrapy-redis's scheduler built it (it builds the queue itself,
        #: with its own arguments: the queue hands itself over then)
        self.queue: Queue | None = None
        #: id(response or failure) -> its handling (item signals name the response)
        self.open: dict[int, Handling] = {}
        #: entry id -> its open handling
        self.by_entry: dict[str, Handling] = {}
        #: requests yielded and not yet through the scheduler -> their handling
        self.requests: WeakKeyDictionary[Request, Handling] = WeakKeyDictionary()

    def start(self, source: Any, entry_id: str) -> Handling:
        handling = Handling(source, entry_id)
        self.open[id(source)] = handling
        self.by_entry[entry_id] = handling
        queue = self.queue
        if queue is not None:
            queue.watched.add(entry_id)
        return handling

    def handling(self, source: Any) -> Handling | None:
        handling = self.open.get(id(source))
        return handling if handling is not None and handling.source is source else None

    def track(self, handling: Handling, output: Any) -> None:
        if output is None:
            return
        handling.pending += 1
        if isinstance(output, Request):
            self.requests[output] = handling

    def end(self, handling: Handling) -> None:
        """The output has no more to give (exhausted, or the callback raised)."""
        handling.exhausted = True
        self.check(handling)

    def release(self, handling: Handling) -> None:
        handling.pending -= 1
        self.check(handling)

    def check(self, handling: Handling) -> None:
        if handling.done or not handling.exhausted or handling.pending > 0:
            return
        handling.done = True
        if self.open.get(id(handling.source)) is handling:
            del self.open[id(handling.source)]
        if self.by_entry.get(handling.entry_id) is handling:
            del self.by_entry[handling.entry_id]
        queue = self.queue
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

    def wrap(self, handling: Handling, result: Iterable[Any]) -> Iterable[Any]:
        handling.started = True
        try:
            for output in result:
                self.track(handling, output)
                yield output
        finally:
            self.end(handling)

    async def wrap_async(
        self, handling: Handling, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        handling.started = True
        try:
            async for output in result:
                self.track(handling, output)
                yield output
        finally:
            self.end(handling)
