"""``DequeueMiddleware``: a request queued before a learned rule is checked again as it leaves
the scheduler.

Scrapy's queues hold requests checked by the dupefilter under the policy of the moment they
were queued. Rules are learned in the first seconds of a crawl, while thousands of other
spellings of the pages that taught them already wait in the queue (LIFO by default: fetched
last). A downloader middleware at the engine end of the chain (the add-on enables it at 15,
with ``URLUNIFY_LEARN``) sees each request as it is about to be downloaded: when a page with
its identifier *under the current policy* was fetched already, the request is dropped (stats
``urlunify/dropped_at_dequeue``, one debug line). Memory, JOBDIR and Redis crawls alike: the
check asks the learning session, which keeps the identifiers of recently fetched pages and
recomputes them whenever a rule is adopted or revoked; with Redis it also asks the scope's set
of pages fetched by every process (one round trip, see ``stores.redis_tables.RedisFetchedStore``).

What a check costs: as the scheduler takes a request, it is stamped with the learned rules in
force (``POLICY_META``, a digest; nothing while there are none). The stamp travels with the
request (a JOBDIR queue, scrapy-redis's shared queue), so it means the same in every process.
Without learned rules, and for a request stamped with the rules in force, nothing is asked.
The round trip to Redis is made for a request stamped with other rules, and for the
``SHARED_WINDOW`` requests dequeued after one: a request judged new under the current rules
may still be another spelling of a page some older request, judged under the older rules, was
queued for and has fetched since (the local look-up, free, covers every request under learned
rules). Requests a resume schedules again were judged by the run that queued them: checked too.

The same middleware asks the frontier (``URLUNIFY_FRONTIER``) whether a request that would test a
candidate rule may go now (``integration.frontier``, "Evidence a page at a time"): a request held
back goes back to the scheduler, lower.

A drop is not a download error: Scrapy's ``DownloaderStats`` (at 850) counts every exception
that goes through the downloader middlewares' ``process_exception`` chain
(``downloader/exception_type_count/...``), and that chain runs from the highest priority down.
:class:`DequeueDropGate` (the add-on enables it at 990, above every built-in middleware) passes
a :class:`DroppedAtDequeue` straight on to the request's errback, as the end of the chain would,
so only ``urlunify/dropped_at_dequeue`` counts it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured

from scrapy_urlunify.core.url import InvalidURL, host_of
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._meta import (
    HELD_META,
    POLICY_META,
    PROBATION_META,
    QUEUE_ID_META,
    RESUMED_META,
)

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.queue._frontier import Frontier
    from scrapy_urlunify.integration.rules._session import LearningSession
    from scrapy_urlunify.integration.seen._seen import SeenKeys


logger = logging.getLogger(__name__)

#: requests dequeued after one judged under other rules that are still checked in the shared store
SHARED_WINDOW = 1000


class DroppedAtDequeue(IgnoreRequest):
    """A queued request whose page was fetched (under another spelling) while it waited."""


class DequeueMiddleware:
    """Downloader middleware: drop a queued request whose page a learned rule says was fetched."""

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

    def process_request(self, request: Request, spider: Spider | None = None) -> Request | None:
        learning = self.learning
        meta = request.meta
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
        if other_rules or token:  # learned rules now, or when it was queued
            self._drop_fetched(request, other_rules)
        frontier = self.frontier
        if frontier is None or HELD_META in meta or PROBATION_META in meta or QUEUE_ID_META in meta:
            return None  # held once at most; a probation sample is the check; a reliable queue's entry is in flight
        seen = self.seen
        if seen is None or seen.resume_log is not None:
            # JOBDIR: a request is in the resume log once, as scheduled, never queued twice;
            # and without the add-on's dupefilter nothing would let it through a second time
            return None
        host = host_of(request.url)
        if not host:
            return None
        try:
            identity_host = self.policies.unifier.host_rules(host).identity_host
        except InvalidURL:
            return None
        if frontier.admit(request, learning.learner.open_questions(request.url, identity_host)):
            return None
        self.stats.inc("frontier/held")
        logger.debug(
            "Held back: %s (it would test a candidate rule other requests are testing)", request.url
        )
        # scheduled again, and let through by the dupefilter for its own key only: a redirect
        # of it (which copies its meta) is checked as any request is
        return request.replace(
            priority=request.priority - frontier.penalty,
            meta={**meta, HELD_META: seen.key_of(request)},
        )

    def _drop_fetched(self, request: Request, other_rules: bool) -> None:
        """Raise :class:`DroppedAtDequeue` when the page of ``request`` under the current rules
        was fetched while it waited (``other_rules``: it was queued under other rules)."""
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
            "Dropped at dequeue: %s (its page %s was fetched while it waited)",
            request.url,
            identifier,
        )
        if self.seen is not None and self.seen.resume_log is not None:
            self.seen.mark_done(request)  # handled: a resume must not fetch it again
        raise DroppedAtDequeue(f"{request.url}: its page {identifier} was fetched while it waited")

    def left_downloader(self, request: Request, spider: Spider | None = None) -> None:
        """``request_left_downloader``: its response is not judged yet (the signature middleware's
        ``process_response`` comes after)."""
        if self.frontier is not None:
            self.frontier.left_downloader(id(request))

    def landed(self, request: Request) -> None:
        """No longer testing: its response was judged, or it failed."""
        if self.frontier is not None:
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
