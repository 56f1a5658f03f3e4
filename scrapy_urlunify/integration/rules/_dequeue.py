"""``DequeueMiddleware``: a request queued before a learned rule is checked again as it leaves the
scheduler, and dropped when a page with its identifier under the current policy was fetched
meanwhile (docs/learning.md, "Dequeue re-check"); it also asks the frontier whether a request that
would test a candidate rule may go now (docs/frontier.md, "Evidence a page at a time").
``DequeueDropGate`` passes such a drop straight on to the request's errback, so that Scrapy's
``DownloaderStats`` does not count it as a download exception (docs/stats.md).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._meta import (
    ASKED_META,
    HELD_META,
    LEVEL_META,
    POLICY_META,
    PROBATION_META,
    PROBE_META,
    QUEUE_ID_META,
    RESUMED_META,
    meta_of,
)
from scrapy_urlunify.integration.queue._frontier import PAGE, WAIT_SECONDS

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.queue._frontier import Frontier
    from scrapy_urlunify.integration.rules._session import LearningSession
    from scrapy_urlunify.integration.seen._seen import SeenKeys
    from scrapy_urlunify.learning._open_questions import Questions


logger = logging.getLogger(__name__)

#: requests dequeued after one judged under other rules that are still checked in the shared store
SHARED_WINDOW = 1000


class DroppedAtDequeue(IgnoreRequest):
    """A queued request whose page was fetched (under another spelling) while it waited."""


class DequeueMiddleware:
    """Downloader middleware: drop a queued request whose page a learned rule says was fetched
    (or a trusted declared canonical obtained)."""

    urlunify_role = "dequeue"
    #: it stamps a request for the queue: one the offsite filter drops never gets there
    urlunify_link_safe = True

    def __init__(
        self,
        learning: LearningSession,
        policies: CrawlPolicies,
        stats: UnifyStats,
        *,
        frontier: Frontier | None = None,
        seen: SeenKeys | None = None,
    ) -> None:
        self.learning = learning
        self.probation = learning.probation
        self.policies = policies
        self.stats = stats
        self.frontier = frontier
        self.seen = seen
        self._window = 0  # requests left to check in the shared store too

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DequeueMiddleware:
        crawl = UnifyCrawl.of(crawler)
        if crawl.learning is None:
            raise NotConfigured
        mw = cls(
            crawl.learning, crawl.policies, crawl.stats, frontier=crawl.frontier, seen=crawl.seen
        )
        crawler.signals.connect(mw.stamp, signal=signals.request_scheduled)
        crawler.signals.connect(mw.left_downloader, signal=signals.request_left_downloader)
        return mw

    def stamp(self, request: Request, spider: Spider | None = None) -> None:
        """``request_scheduled`` (sent before the scheduler's dupefilter sees the request): the
        policy it is judged under. Requests the dupefilter does not judge keep what they had."""
        learning = self.learning
        if request.dont_filter:
            return
        if learning.policy_token:
            request.meta[POLICY_META] = learning.policy_token
        elif POLICY_META in request.meta:
            del request.meta[POLICY_META]

    def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Coroutine[Any, Any, None] | None:
        learning = self.learning
        meta = request.meta
        if ASKED_META in meta and self.frontier is not None:
            # a redirect or a retry of a request let go with questions: that one came back
            self.frontier.landed(meta.pop(ASKED_META))
        if request.method != "GET":
            return None
        # redirects and retries are the same fetch; a resume's dont_filter is not the spider's
        if (
            meta.get("urlunify") is False
            or (request.dont_filter and not meta.get(RESUMED_META) and not meta.get(HELD_META))
            or "redirect_urls" in meta
            or meta.get("retry_times")
        ):
            return None
        token = learning.policy_token
        other_rules = meta.get(POLICY_META, "") != token
        if other_rules or token or learning.obtained_elsewhere:
            # learned rules now, or when it was queued; or pages obtained under other URLs
            self._drop_fetched(request, other_rules)
        frontier = self.frontier
        if (
            frontier is None
            or PROBATION_META in meta
            or PROBE_META in meta
            or QUEUE_ID_META in meta
        ):
            # a probation sample or a shortlink probe is the check; a reliable queue's entry is
            # in flight
            return None
        seen = self.seen
        if seen is None or seen.resume_log is not None:
            # JOBDIR: a request is in the resume log once, as scheduled, never queued twice;
            # and without the add-on's dupefilter nothing would let it through a second time
            return None
        level = frontier.penalised_since(request) if HELD_META not in meta else 0
        if level:
            # back to the scheduler behind the others, as if scheduled now; the dupefilter
            # lets its own URL through again (HELD_META), as for a held request
            self.stats.inc("frontier/requeued")
            return request.replace(
                priority=request.priority - (level - meta.get(LEVEL_META, 0)) * frontier.penalty,
                meta={**meta, LEVEL_META: level, HELD_META: request.url},
            )
        frontier.rules_in_force(token, learning.identifier)
        questions = learning.questions(request.url, frontier)
        if frontier.admit(request, questions):
            return None
        first = frontier.behind_first(questions, other_rules)
        if HELD_META in meta or first:
            if not frontier.worth_waiting(questions):
                return None
            # held once at most: back while the requests testing its candidates are in flight
            # (nothing else was left at its priority), it waits for them here, as does one
            # behind its URL group's first request (in its place in the queue)
            self.stats.inc("frontier/waited_first" if first else "frontier/waited")
            return self._wait(request, frontier)  # a coroutine: Scrapy awaits it
        self.stats.inc("frontier/held")
        logger.debug(
            "Held back: %s (it would test a candidate rule other requests are testing)", request.url
        )
        # scheduled again, and let through by the dupefilter for its own URL only (a rule
        # learned meanwhile may change its key): a redirect of it, which copies its meta, is
        # checked as any request is
        return request.replace(
            priority=request.priority - frontier.penalty,
            meta={**meta, HELD_META: request.url},
        )

    async def _wait(self, request: Request, frontier: Frontier) -> None:
        """Wait until ``request`` may go, at most :data:`WAIT_SECONDS`: each request landing may
        have decided a rule that drops it (:class:`DroppedAtDequeue`), or freed its question."""
        deadline = time.monotonic() + WAIT_SECONDS
        questions: Questions = self.learning.questions(request.url, frontier)
        while (left := deadline - time.monotonic()) > 0:
            pages = frozenset(q for q, _, _ in questions if q.startswith(PAGE))
            await maybe_deferred_to_future(frontier.landing(left, pages))
            if self.learning.policy_token:
                self._drop_fetched(request, False)
            questions = self.learning.questions(request.url, frontier)
            if frontier.admit(request, questions) or not frontier.worth_waiting(questions):
                return
        if self.learning.policy_token:
            self._drop_fetched(request, False)  # landed as the wait ran out
        frontier.waited_out(questions)

    def _drop_fetched(self, request: Request, other_rules: bool) -> None:
        """Raise :class:`DroppedAtDequeue` when the page of ``request`` under the current rules
        was fetched (or obtained: ``LearningSession.obtained``) while it waited
        (``other_rules``: it was queued under other rules)."""
        if other_rules:
            self._window = SHARED_WINDOW
        elif self._window:
            self._window -= 1
        try:
            identifier = self.policies.unifier.identify(request.url)
        except InvalidURL:
            return
        if not self.learning.fetched(
            identifier, shared=other_rules or self._window > 0
        ) or self.probation.fetch_anyway(request, queued=True):
            return  # new, or a sample of a rule on probation
        self.stats.inc("dropped_at_dequeue")
        logger.debug(
            "Dropped at dequeue: %s (its page %s was fetched, or obtained under a URL that "
            "declared it canonical, while it waited)",
            request.url,
            identifier,
        )
        if self.seen is not None and self.seen.resume_log is not None:
            self.seen.mark_done(request)  # handled: a resume must not fetch it again
        raise DroppedAtDequeue(
            f"{request.url}: its page {identifier} was fetched or obtained while it waited"
        )

    def left_downloader(self, request: Request, spider: Spider | None = None) -> None:
        """``request_left_downloader``: its response is not judged yet (the signature middleware's
        ``process_response`` comes after)."""
        if self.frontier is not None:
            self.frontier.left_downloader(id(request))

    def landed(self, request: Request) -> None:
        """No longer testing: its response was judged, or it failed."""
        if self.frontier is not None:
            meta = meta_of(request)
            if meta:  # (nor is it in the requests a spider makes of ``response.meta``)
                meta.pop(ASKED_META, None)
            self.frontier.landed(id(request))

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        # after the SignatureMiddleware's (a higher order: closer to the downloader): the learner
        # has observed the page; also a response from a middleware (a cache) that never reached
        # the downloader
        self.landed(request)
        return response

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        self.landed(request)


class DequeueDropGate:
    """Downloader middleware: a :class:`DroppedAtDequeue` leaves the ``process_exception`` chain
    here, before ``DownloaderStats`` counts it as a download exception (see the module's doc)."""

    urlunify_role = "dequeue_gate"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DequeueDropGate:
        if UnifyCrawl.of(crawler).learning is None:
            raise NotConfigured
        return cls()

    def process_exception(
        self, request: Request, exception: Exception, spider: Spider | None = None
    ) -> None:
        if isinstance(exception, DroppedAtDequeue):
            # what Scrapy does once no process_exception answers: the request's errback gets it
            raise exception
