"""When a request taken from :class:`~scrapy_urlunify.integration.queue._redis_queue.RedisQueue`
is done, so the queue can forget it (``QueueDoneMiddleware``, ``QueueFailureMiddleware``), and the
links of a page given back by a dead worker (``QueueGivenBackMiddleware``): docs/redis_queue.md,
"When a request is done" and "A page given back: its links". ``RedisQueue`` refuses to open
without all three; the add-on enables them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals

from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._meta import GIVEN_BACK_META, QUEUE_ID_META, RESCUE_META
from scrapy_urlunify.integration.queue._tracker import QueueErrback

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.queue._tracker import QueueTracker


class QueueDoneMiddleware:
    """Spider middleware (at 2): acknowledges a response's request once its output is handled
    (and an errback's, for :class:`QueueFailureMiddleware`). It listens to ``request_scheduled``
    only for the requests that reached it, and to the item signals."""

    urlunify_role = "queue_done"
    #: it tracks the output that reaches it: a link dropped before is none of its business
    urlunify_link_safe = True

    def __init__(self, crawler: Crawler, tracker: QueueTracker) -> None:
        self.tracker = tracker
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
        return cls(crawler, UnifyCrawl.of(crawler).queue_tracker)

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
    :class:`~._tracker.QueueErrback` on the request, so its final failure, from wherever it
    comes, is done once its errback's output is handled."""

    urlunify_role = "queue_failure"

    def __init__(self, tracker: QueueTracker) -> None:
        self.tracker = tracker

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QueueFailureMiddleware:
        return cls(UnifyCrawl.of(crawler).queue_tracker)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        entry_id = request.meta.get(QUEUE_ID_META)
        if entry_id and not isinstance(request.errback, QueueErrback):
            request.errback = QueueErrback(entry_id, request.errback, self.tracker.failed)


class QueueGivenBackMiddleware:
    """Spider middleware (at 960, above ``LinkMiddleware``): the links of a page given back by
    a dead worker skip the seen set and are queued only if no worker ever queued them."""

    urlunify_role = "queue_given_back"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QueueGivenBackMiddleware:
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
