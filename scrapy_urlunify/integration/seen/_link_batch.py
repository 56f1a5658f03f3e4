"""The links of one response checked and recorded in Redis in one round trip (a *link batch*,
:class:`LinkBatch`), instead of one round trip per link at the scheduler (docs/stores.md, "Redis",
"Speed: one round trip per page"): a seen link is dropped as the dupefilter would drop it, a new
one goes on with its key pre-recorded for the scheduler's ``request_seen``, and a batch that fails
queues its requests "in doubt" for the run that resumes them (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from scrapy import Request, signals

from scrapy_urlunify.integration.crawl._faults import STORE_FAULTS
from scrapy_urlunify.integration.crawl._internals import has_receivers
from scrapy_urlunify.integration.crawl._meta import (
    BATCH_CALL_META,
    OPT_OUT_META,
    PROBATION_META,
    UNRECORDED_META,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.crawl._faults import StoreFaults
    from scrapy_urlunify.integration.rules._probation import Probation
    from scrapy_urlunify.integration.seen._seen import PreRecorded, SeenCheck, SeenKeys

logger = logging.getLogger(__name__)

#: Links checked per round trip at most: a page with more is checked in several batches. It
#: also bounds what is held back: at most this many outputs (links and items) wait for a batch.
BATCH_LINKS = 500


class LinkHandler(Protocol):
    """What the batch asks of the link middleware's handling of one output (a link or an item)."""

    def get_processed_request(
        self, request: Request, response: Response | None
    ) -> Request | None: ...

    def get_processed_item(self, item: Any, response: Response | None) -> Any: ...


class LinkBatch:
    """The batched "seen?" of one crawl's links."""

    def __init__(
        self,
        seen: SeenKeys,
        check: SeenCheck,
        pre_recorded: PreRecorded,
        faults: StoreFaults,
        crawler: Crawler | None,
        *,
        probation: Probation | None = None,
    ) -> None:
        self.seen = seen
        self.seen_check = check
        self.store: Any = seen.store
        self.pre_recorded = pre_recorded
        self.faults = faults
        self.crawler = crawler
        self.probation = probation
        if crawler is not None:
            crawler.signals.connect(pre_recorded.idle, signal=signals.spider_idle)

    def output(
        self, handler: LinkHandler, after: Any, response: Response | None, result: Iterable[Any]
    ) -> Iterator[Any]:
        """The link middleware's ``process_spider_output`` with the links checked in batches;
        ``after``: what the known middlewares after it do to a request (a
        :class:`~scrapy_urlunify.integration.links._downstream.Downstream`)."""
        held = _Held(self, handler, after, response)
        try:
            for o in result:
                yield from held.add(o)
        except Exception:
            yield from held.flush()  # what the callback yielded before it failed goes on
            raise
        yield from held.flush()

    async def output_async(
        self,
        handler: LinkHandler,
        after: Any,
        response: Response | None,
        result: AsyncIterator[Any],
    ) -> AsyncIterator[Any]:
        held = _Held(self, handler, after, response)
        try:
            async for o in result:
                for out in held.add(o):
                    yield out
        except Exception:
            for out in held.flush():
                yield out
            raise
        for out in held.flush():
            yield out

    def check(
        self,
        outputs: list[Any],
        checked: list[tuple[int, Request, int]],
        after: Any,
        response: Response | None,
    ) -> list[Any]:
        """One round trip for the requests ``checked`` (index in ``outputs``, request, key):
        ``outputs`` without the seen ones, the new ones pre-recorded."""
        seen, check = self.seen, self.seen_check
        if self.faults.failed:
            return outputs  # the crawl is closing: the scheduler queues them unrecorded
        released = self.pre_recorded.untaken()
        try:
            new = self.store.add_batch([key for _, _, key in checked], released)
        except STORE_FAULTS as e:
            # as request_seen: nothing counts as seen, and the script may have run without its
            # reply arriving, so the run that resumes them fetches them in any case
            seen.fail(e)
            for n, (_, request, _) in enumerate(checked):
                request.meta[UNRECORDED_META] = "doubt"
                request.meta[BATCH_CALL_META] = self.store.batch_call(
                    n
                )  # the resume asks what the call did
            return outputs
        self.pre_recorded.released_now(released, "their requests never reached the scheduler")
        spider = self.crawler.spider if self.crawler is not None else None
        unlogged = self._log_scheduled(checked, new, spider, after, response)
        probation = self.probation
        drop: set[int] = set()
        receivers = self.crawler is not None and has_receivers(
            self.crawler, signals.request_dropped
        )
        for (i, request, key), is_new in zip(checked, new, strict=True):
            if is_new:
                if i in unlogged:
                    continue  # removed from Redis again: the scheduler queues it unrecorded
                self.pre_recorded.add(key, request)
                if seen.first_url is not None:
                    seen.first_url[key] = request.url
            elif probation is not None and (probation.active or PROBATION_META in request.meta):
                continue  # merged under a rule on probation: the scheduler's request_seen decides
            else:
                # counted and logged as the scheduler would: the request as it would reach it
                drop.add(i)
                scheduled = (
                    after.as_scheduled(request, response)
                    if check.debug or check.logdupes or receivers
                    else request
                )
                check.log(scheduled, spider)
                if receivers:
                    self.crawler.signals.send_catch_log(  # type: ignore[union-attr]
                        signals.request_dropped, request=scheduled, spider=spider
                    )
                after.dropped(request, response)
        if not drop:
            return outputs
        return [o for i, o in enumerate(outputs) if i not in drop]

    def _log_scheduled(
        self,
        checked: list[tuple[int, Request, int]],
        new: list[bool],
        spider: Any,
        after: Any,
        response: Response | None,
    ) -> set[int]:
        """With JOBDIR, the ``S`` record of each new request, before it goes on (a kill before the
        scheduler gets it must not lose it), as the scheduler will get it. A write that fails
        takes the keys not logged out of Redis again (scheduled first, seen last, as the
        dupefilter does) and closes the crawl; returns their indexes."""
        log = self.seen.resume_log
        if log is None:
            return set()
        fresh = [
            (i, request, key)
            for (i, request, key), is_new in zip(checked, new, strict=True)
            if is_new
        ]
        for n, (_, request, key) in enumerate(fresh):
            try:
                log.scheduled(key, _as_scheduled(request, after, response), spider)
            except OSError as e:
                rest = fresh[n:]
                # (if Redis fails too, the write error closes the crawl anyway, and the resume
                # fetches again the page whose links these are)
                with contextlib.suppress(*STORE_FAULTS):
                    self.store.discard_many([k for _, _, k in rest])
                self.seen.fail(e)
                return {i for i, _, _ in rest}
        return set()


def _as_scheduled(request: Request, after: Any, response: Response | None) -> Request:
    """``request`` as the scheduler will get it from the middlewares after LinkMiddleware: the
    ``Referer`` of ``RefererMiddleware`` (set on it: that middleware sets the same, if unset),
    the depth and priority of ``DepthMiddleware`` (on a copy: it changes the priority itself)."""
    request = after.as_scheduled(request, response)
    depth_mw = after.depth
    if depth_mw is None or response is None:
        return request
    meta = dict(request.meta)
    depth = 0 if meta.pop("depth_reset", False) else response.meta.get("depth", 0) + 1
    meta["depth"] = depth
    return request.replace(meta=meta, priority=request.priority - depth * depth_mw.prio)


class _Held:
    """The spider output of one response waiting for its batch: every output (items too) after
    the first link to check waits, so the order the spider yielded them in is kept."""

    __slots__ = ("after", "batch", "checked", "handler", "outputs", "response")

    def __init__(
        self, batch: LinkBatch, handler: LinkHandler, after: Any, response: Response | None
    ) -> None:
        self.batch = batch
        self.handler = handler
        self.after = after
        self.response = response
        self.outputs: list[Any] = []
        self.checked: list[tuple[int, Request, int]] = []

    def add(self, o: Any) -> list[Any]:
        """What can go on now (usually nothing, or the whole batch once it is full)."""
        response = self.response
        if isinstance(o, Request):
            o = self.handler.get_processed_request(o, response)
            if o is None:
                return []
            meta = o.meta
            # (a link beyond DEPTH_LIMIT or URLLENGTH_LIMIT is left to the middleware that drops it)
            if (
                not o.dont_filter
                and "redirect_urls" not in meta
                and meta.get(OPT_OUT_META) is not False
                and not self.after.drops_itself(o, response)
            ):
                try:
                    key = self.batch.seen.key_of(o)
                except ValueError:
                    key = None  # the scheduler's request_seen meets it as it would have
                if key is not None:
                    self.checked.append((len(self.outputs), o, key))
        else:
            o = self.handler.get_processed_item(o, response)
            if o is None:
                return []
        if not self.checked:
            return [o]  # nothing to wait for
        self.outputs.append(o)
        if len(self.outputs) >= BATCH_LINKS:
            return self.flush()
        return []

    def flush(self) -> list[Any]:
        outputs, checked = self.outputs, self.checked
        self.outputs, self.checked = [], []
        if not checked:
            return outputs
        return self.batch.check(outputs, checked, self.after, self.response)
