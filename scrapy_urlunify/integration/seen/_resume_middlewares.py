"""The Scrapy components of a resumed JOBDIR job (:mod:`._resume`): each request downloaded once
after a kill, and a page "done" only once its output is handled (docs/reliability.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.job import job_dir

from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._meta import PROBATION_META, UNRECORDED_META
from scrapy_urlunify.integration.crawl._stores import uses_redis

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.seen._seen import SeenCheck, SeenKeys


class ResumeMiddleware:
    """Downloader middleware: after a crash, each request is downloaded once; and a request
    queued while a shared store was unavailable is checked against the store before it is
    fetched (it may have been recorded meanwhile by another process).

    Only active in a run that resumes a killed one; otherwise it costs one attribute test.
    Stats ``urlunify/resume/skipped`` count the copies it dropped.
    """

    urlunify_role = "resume"

    def __init__(self, check: SeenCheck, stats: UnifyStats) -> None:
        self.check = check
        self.seen = check.seen
        self.stats = stats
        self._claimed: set[int] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ResumeMiddleware:
        if not job_dir(crawler.settings) and not uses_redis(crawler.settings):
            raise NotConfigured  # nothing to resume (silently: this is the common case)
        crawl = UnifyCrawl.of(crawler)
        if crawl.seen is None:
            raise NotConfigured("the crawl's dupefilter is not scrapy-urlunify's")
        return cls(crawl.seen_check(), crawl.stats)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if UNRECORDED_META in request.meta and self.check.recheck(request):
            self.stats.inc("resume/skipped_unrecorded")
            raise IgnoreRequest(f"recorded while the store was unavailable: {request.url}")
        log = self.seen.resume_log
        if log is None or not log.crashed:
            return
        meta = request.meta
        # a probation sample has the key of the page it checks, fetched on purpose a second time
        if meta.get("retry_times") or meta.get("redirect_urls") or PROBATION_META in meta:
            return
        key = self.seen.key_of(request)
        if key in log.pending_keys:
            log.pending_keys.discard(key)
            self._claimed.add(key)
            return
        if key in self._claimed or key in log.done_before:
            self.stats.inc("resume/skipped")
            raise IgnoreRequest(
                f"already fetched, or being fetched, since before the resume: {request.url}"
            )
        return


class ResumeDoneMiddleware:
    """Spider middleware: a response is "done" for the resume log only once its spider output is
    handled: every request it yielded has gone through the scheduler (and its dupefilter, which
    recorded it as scheduled), and every item has left the item pipelines.

    Since Scrapy 2.13 the scraper takes the whole output of a callback first and schedules its
    requests and runs its items in worker tasks afterwards: a page marked done when its output is
    exhausted, and killed before those tasks ran, would lose its links for good. Enabled by the
    add-on with ``JOBDIR``, at 5 (closest to the engine: it sees what the engine gets).
    """

    urlunify_role = "resume_done"
    #: it tracks the output that reaches it: a link dropped before is none of its business
    urlunify_link_safe = True

    def __init__(self, crawler: Crawler, seen: SeenKeys) -> None:
        self.seen = seen
        #: id(response) -> what is left of its output (item signals name the response)
        self._handling: dict[int, _Handling] = {}
        #: requests yielded and not yet scheduled -> the output they belong to
        self._requests: WeakKeyDictionary[Request, _Handling] = WeakKeyDictionary()
        crawler.signals.connect(self._scheduled, signal=signals.request_scheduled)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self._item_left, signal=signal)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ResumeDoneMiddleware:
        if not job_dir(crawler.settings):
            raise NotConfigured
        crawl = UnifyCrawl.of(crawler)
        if crawl.seen is None:
            raise NotConfigured("the crawl's dupefilter is not scrapy-urlunify's")
        return cls(crawler, crawl.seen)

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Spider | None = None
    ) -> Iterable[Any]:
        handling = self._open(response)
        try:
            for output in result:
                self._track(handling, output)
                yield output
        except BaseException:
            # the callback failed: not done (a resume fetches the page again); forget it
            self._handling.pop(id(response), None)
            raise
        handling.exhausted = True
        self._check(handling)

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Spider | None = None
    ) -> AsyncIterator[Any]:
        handling = self._open(response)
        try:
            async for output in result:
                self._track(handling, output)
                yield output
        except BaseException:
            self._handling.pop(id(response), None)
            raise
        handling.exhausted = True
        self._check(handling)

    def _open(self, response: Response) -> _Handling:
        handling = _Handling(response)
        self._handling[id(response)] = handling
        return handling

    def _track(self, handling: _Handling, output: Any) -> None:
        if output is None:
            return
        handling.pending += 1
        if isinstance(output, Request):
            self._requests[output] = handling

    def _scheduled(self, request: Request, spider: Spider | None = None) -> None:
        handling = self._requests.pop(request, None)
        if handling is not None:
            # request_scheduled comes before the scheduler (and the dupefilter, which logs the
            # request as scheduled): count it handled right after, not before
            from twisted.internet import reactor
            from twisted.internet.task import deferLater

            deferLater(reactor, 0, self._release, handling)

    def _item_left(self, item: Any = None, response: Any = None, **kwargs: Any) -> None:
        handling = self._handling.get(id(response))
        if handling is not None and handling.response is response:
            self._release(handling)

    def _release(self, handling: _Handling) -> None:
        handling.pending -= 1
        self._check(handling)

    def _check(self, handling: _Handling) -> None:
        if not handling.exhausted or handling.pending > 0:
            return
        response = handling.response
        if self._handling.get(id(response)) is handling:
            del self._handling[id(response)]
        if response.request is not None:
            self.seen.mark_done(response.request)


class _Handling:
    """One response's spider output: how many of its requests and items are not handled yet."""

    __slots__ = ("exhausted", "pending", "response")

    def __init__(self, response: Response) -> None:
        self.response = response
        self.pending = 0
        self.exhausted = False
