"""What a crawl records as seen (:class:`SeenKeys`: the seen store with the crawl's keys and its
JOBDIR resume log), and the scheduler's question "seen?" asked of it (:class:`SeenCheck`): the two
halves of the dupefilter (docs/stores.md, "In a crawl: the fingerprinter and the dupefilters").

The learning session and probation record pages through :class:`SeenKeys` too. :class:`SeenCheck`
lets a redirect back to its own page through, may fetch anyway a request a rule on probation
merged, and queues a request unrecorded when the store fails.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.utils.request import referer_str

from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.integration.crawl._faults import STORE_FAULTS, StoreFaults
from scrapy_urlunify.integration.crawl._internals import has_receivers
from scrapy_urlunify.integration.crawl._meta import (
    BATCH_CALL_META,
    HELD_META,
    PROBATION_META,
    RESUMED_META,
    UNRECORDED_META,
    meta_of,
)
from scrapy_urlunify.integration.crawl._stats import UnifyStats
from scrapy_urlunify.integration.seen._identifiers import Identifiers
from scrapy_urlunify.integration.seen._keys import RequestKeys
from scrapy_urlunify.integration.seen._resume import follow_crawl, queue_losses, scrapy_scheduler
from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._jobdir import JobdirSeenStore
from scrapy_urlunify.stores._memory import MemorySeenStore

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.rules._probation import Probation
    from scrapy_urlunify.integration.seen._resume import ResumeLog
    from scrapy_urlunify.stores._base import SeenStore

logger = logging.getLogger(__name__)
#: the duplicate lines go where Scrapy's RFPDupeFilter logs them, so a project's logging
#: configuration for them keeps working
dupes_logger = logging.getLogger("scrapy.dupefilters")


class SeenKeys:
    """The seen store, keyed by the crawl's
    :class:`~scrapy_urlunify.integration.seen._keys.RequestKeys`, with its JOBDIR resume log."""

    def __init__(
        self,
        store: SeenStore,
        keys: RequestKeys,
        faults: StoreFaults,
        stats: UnifyStats,
        *,
        resume_log: ResumeLog | None = None,
        debug: bool = False,
    ) -> None:
        self.store = store
        self.keys = keys
        self.faults = faults
        self.stats = stats
        self.resume_log = resume_log
        self.debug = debug
        #: a store of this process only (memory, JOBDIR), not one shared by a fleet (Redis)
        self.local = isinstance(store, (MemorySeenStore, JobdirSeenStore))
        #: ``key_of(request)``: the key of a request (see :meth:`use_fingerprints`)
        self.key_of: Callable[[Request], int] = keys.of
        self._own_keys = True
        #: DUPEFILTER_DEBUG only: which URL first had each key, to name it in the log
        self.first_url: dict[int, str] | None = {} if debug else None

    def use_fingerprints(self, key_of: Callable[[Request], int]) -> None:
        """Key requests with ``key_of``: a dupefilter whose ``request_fingerprint()`` a
        subclass overrides, or scrapy-redis replaces on the instance (deprecated ways)."""
        self.key_of = key_of
        self._own_keys = False

    @property
    def direct(self) -> bool:
        """Keys come straight from identifiers: an identifier or a URL gives its key."""
        return self._own_keys and self.keys.direct

    def scheduled_before(self, request: Request) -> bool:
        """A request of a resumed JOBDIR job that an earlier run scheduled already: Scrapy asks
        for start URLs again on every run, bypassing the dupefilter. (After a kill, an earlier
        run's unanswered requests are scheduled again by the resume itself.)"""
        log = self.resume_log
        return log is not None and log.resumed and self.key_of(request) in self.store

    def record_url(self, url: str) -> bool:
        """Count the page of ``url`` (a GET) as seen, without a request: a declared canonical,
        the other spellings of a page a learned rule unified. True if it was new."""

        def add() -> bool:
            try:
                key = self.keys.of_url(url) if self.direct else self.key_of(Request(url))
            except ValueError:  # not a URL a Request accepts
                return False
            return self.store.add(key)

        return self.faults.guarded(add, False, self.fail)

    def holds_identifier(self, identifier: str) -> bool:
        """Whether the seen store holds the key of a GET of ``identifier``. False when the keys
        come from another fingerprinter: they cannot be computed from an identifier."""
        return self.direct and self.keys.of_identifier(identifier) in self.store

    def holds_identifiers(self, identifiers: list[str]) -> list[bool] | None:
        """For each of ``identifiers``, whether the seen store holds the key of its GET, in one
        call (one round trip to a shared store). None when that is not known: the keys come
        from another fingerprinter, the store cannot say in one call, or it failed (which
        closes the crawl, as any failure of it)."""
        if not self.direct:
            return None
        keys = [self.keys.of_identifier(identifier) for identifier in identifiers]
        store = self.store
        if self.local:
            return [key in store for key in keys]
        many = getattr(store, "contains_many", None)  # RedisSeenStore's
        if many is None:
            return None
        found: list[bool] | None = self.faults.guarded(lambda: many(keys), None, self.fail)
        return found

    def add(self, request: Request, key: int, spider: Spider | None) -> bool:
        """Record ``key`` as seen and, with JOBDIR, ``request`` as scheduled: both or neither
        (:meth:`ResumeLog.add <scrapy_urlunify.integration.seen._resume.ResumeLog.add>`)."""
        log = self.resume_log
        if log is None:
            new = self.store.add(key)
        else:
            new = log.add(self.store, key, request, spider, shared=not self.local)
        if new and self.first_url is not None:
            self.first_url[key] = request.url
        return new

    @property
    def jobdir_failed(self) -> bool:
        """A JOBDIR file could not be written, by any store (:attr:`StoreFaults.jobdir_failed`)."""
        return self.faults.jobdir_failed

    @jobdir_failed.setter
    def jobdir_failed(self, failed: bool) -> None:
        self.faults.jobdir_failed = failed

    def fail(self, error: Exception) -> None:
        """A store call failed: the crawl closes. When it was a write to the JOBDIR files (disk
        full), nothing more is marked done and the job is not closed cleanly: the next run
        resumes as after a kill, and fetches again every page whose links may not have been
        recorded. (A failing Redis leaves the JOBDIR log intact: the requests queued unrecorded
        meanwhile are in Scrapy's queue, saved at the clean close.)"""
        self.faults.unavailable(error)

    def mark_done(self, request: Request) -> None:
        """The request is handled: a resume after a crash must not fetch it again."""
        if self.resume_log is None or self.jobdir_failed:
            return
        # (not guarded: after a Redis failure the JOBDIR log is intact and still kept)
        try:
            self.resume_log.done(self.key_of(request))
        except STORE_FAULTS as e:
            self.fail(e)


class PreRecorded:
    """Keys a link batch recorded in the shared seen store, each waiting for its request at the
    scheduler (:meth:`take`); the keys of requests that never get there are removed from the
    store again (``SREM``), so a later link to their page fetches it."""

    def __init__(self, seen: SeenKeys, faults: StoreFaults, stats: UnifyStats) -> None:
        self.seen = seen
        self.store: Any = seen.store
        self.faults = faults
        self.stats = stats
        #: key -> the pre-recorded request the scheduler has not taken yet
        self.pending: dict[int, weakref.KeyedRef] = {}  # type: ignore[type-arg]
        # requests that died untaken (appended by weakref callbacks, at any moment)
        self._dead: list[weakref.KeyedRef] = []  # type: ignore[type-arg]
        self.released = 0

    def __bool__(self) -> bool:
        return bool(self.pending)

    def take(self, key: int) -> bool:
        """``request_seen``: whether ``key`` was pre-recorded (new, recorded, logged); once."""
        return self.pending.pop(key, None) is not None

    def add(self, key: int, request: Request) -> None:
        # weakly: a request dropped on its way to the scheduler is noticed when it dies
        self.pending[key] = weakref.KeyedRef(request, self._died, key)

    def _died(self, ref: weakref.KeyedRef) -> None:  # type: ignore[type-arg]
        self._dead.append(ref)

    def untaken(self) -> list[int]:
        """Keys whose request died before the scheduler took it."""
        keys = []
        while self._dead:
            ref = self._dead.pop()
            if self.pending.get(ref.key) is ref:
                del self.pending[ref.key]
                keys.append(ref.key)
        return keys

    def released_now(self, keys: list[int], why: str) -> None:
        if not keys:
            return
        self.released += len(keys)
        self.stats.inc("redis/released", len(keys))
        logger.debug("Removed %d links from the seen set: recorded, but %s", len(keys), why)

    def release(self, keys: list[int], why: str) -> None:
        def discard() -> bool:
            self.store.discard_many(keys)
            return True

        if not keys:
            return
        if self.faults.guarded(discard, False, self.seen.fail):
            self.released_now(keys, why)

    def idle(self, spider: Any = None) -> None:
        self.release(self.untaken(), "their requests never reached the scheduler")

    def close(self) -> None:
        """The scheduler is closing: what it never took will not reach it."""
        keys = self.untaken() + list(self.pending)
        self.pending.clear()
        self.release(keys, "their requests never reached the scheduler before the crawl closed")
        self.stats.inc("redis/link_batches", getattr(self.store, "batches", 0))


class SeenCheck:
    """The scheduler's "seen?" (``request_seen``), and the same answer given earlier for a link
    (:meth:`drop_known`), with Scrapy's duplicate lines and stats."""

    #: its ``request_scheduled`` handler records ``dont_filter`` requests, never offsite ones
    urlunify_link_safe = True

    def __init__(
        self,
        seen: SeenKeys,
        policies: CrawlPolicies | None,
        faults: StoreFaults,
        stats: UnifyStats,
        crawler: Crawler | None,
        *,
        probation: Probation | None = None,
        pre_recorded: PreRecorded | None = None,
        done_on_response: bool = True,
        redirected: Callable[[str, str], None] | None = None,
    ) -> None:
        self.seen = seen
        self.store = seen.store
        self.policies = policies
        self.faults = faults
        self.stats = stats
        self.crawler = crawler
        self.probation = probation
        self.pre_recorded = pre_recorded
        #: told ``(first URL, redirect target)`` of each redirect (a shortlink's check)
        self.redirected = redirected
        self.debug = seen.debug
        self.logdupes = True
        self.logger = dupes_logger
        #: :meth:`drop_known` asks the store only when it is in this process, where a membership
        #: test costs far less than a fingerprint (a shared store would cost a round trip per link)
        self.early_drop = seen.local
        # keys queued unrecorded since the store became unavailable: each page is queued once
        self._unrecorded: set[int] = set()
        #: requests let into the scheduler in this run (new ones, and those it does not filter)
        self.admitted = 0
        # whether the scheduler started from a queue saved by the previous run (audit_queue)
        self._queue_restored = False
        log = seen.resume_log
        if crawler is not None:
            crawler.signals.connect(self.record_unfiltered, signal=signals.request_scheduled)
            if log is not None:
                follow_crawl(crawler, log, seen.mark_done if done_on_response else None, stats)
                if scrapy_scheduler(crawler):
                    self._queue_restored = log.resumed and not log.crashed
                    crawler.signals.connect(self.audit_queue, signal=signals.spider_idle)

    @classmethod
    def standalone(cls, store: SeenStore, *, debug: bool = False) -> SeenCheck:
        """The check of a dupefilter built outside a crawl (scrapy-redis's
        ``RFPDupeFilter(server, key)``): the default policy, no scope, no learned rules."""
        stats = UnifyStats(None)
        faults = StoreFaults(None, stats)
        seen = SeenKeys(store, RequestKeys(Identifiers()), faults, stats, debug=debug)
        return cls(seen, None, faults, stats, None)

    def _spider(self) -> Spider | None:
        return getattr(self.crawler, "spider", None)

    def _merged_on_probation(self, meta: dict | None) -> bool:  # type: ignore[type-arg]
        probation = self.probation
        return probation is not None and (probation.active or bool(meta and PROBATION_META in meta))

    # -- early, for a link -------------------------------------------------------------------

    def drop_known(
        self,
        request: Request,
        spider: Spider | None = None,
        scheduled: Callable[[], Request] | None = None,
    ) -> bool:
        """Drop ``request`` now if the scheduler would drop it as a duplicate: its key is in the
        store already. Read-only (nothing is recorded: a new request is recorded when it is
        scheduled, as usual), and counted and logged as :meth:`log` does.

        The link middleware asks this before it builds the rewritten request, so the 80-90% of
        links a crawl has already seen cost a lookup only. ``scheduled`` builds the request as
        the scheduler would have got it (rewritten, with its ``Referer``): for the log line and
        ``request_dropped`` receivers. Requests the scheduler does not filter (``dont_filter``),
        redirects (which may be let through) and a failed store are left to the scheduler."""
        meta = meta_of(request)
        if (
            not self.early_drop
            or request.dont_filter
            or (meta and "redirect_urls" in meta)
            or self.faults.failed
        ):
            return False
        if self._merged_on_probation(meta):
            return False  # a learned rule on probation may let it through: the scheduler asks
        if scheduled is not None and not self.seen.direct:
            # another fingerprinter keys the URL as given: ask about the one the scheduler gets
            # (ours keys the identifier, the same for both URLs)
            request = scheduled()
            scheduled = None
        try:
            if self.seen.key_of(request) not in self.store:
                return False
        except STORE_FAULTS:
            return False  # the scheduler's own call handles the outage
        crawler = self.crawler
        receivers = crawler is not None and has_receivers(crawler, signals.request_dropped)
        if scheduled is not None and (self.debug or self.logdupes or receivers):
            request = scheduled()
        spider = spider if spider is not None else self._spider()
        self.log(request, spider)
        if receivers:
            crawler.signals.send_catch_log(  # type: ignore[union-attr]
                signals.request_dropped, request=request, spider=spider
            )
        return True

    # -- at the scheduler --------------------------------------------------------------------

    def request_seen(self, request: Request) -> bool:
        seen = self._seen(request)
        if not seen:
            self.admitted += 1
        return seen

    def _seen(self, request: Request) -> bool:
        # the store calls are guarded here without faults.guarded(): its closure would cost every
        # scheduled request, and a failure queues the request unrecorded rather than answering
        if request.meta.get(HELD_META) == request.url:
            return False  # held back once by the frontier: scheduled, and recorded, before
        pre_recorded = self.pre_recorded
        if (
            pre_recorded
            and "redirect_urls" not in request.meta
            and pre_recorded.take(self.seen.key_of(request))
        ):
            return False  # checked and recorded (and logged as scheduled) with its page's links
        if self.faults.failed:
            return self._seen_unrecorded(request, doubt=False)
        try:
            return self._request_seen(request)
        except STORE_FAULTS as e:
            # neither "seen" (the page would be lost) nor "new and recorded": the request goes to
            # the queue unrecorded (a resume checks it), and the crawl closes
            self.seen.fail(e)
            return self._seen_unrecorded(request, doubt=True)

    def _seen_unrecorded(self, request: Request, *, doubt: bool) -> bool:
        """The store is gone and the crawl is closing: queue each page once, marked, so the run
        that resumes the queue asks the store before fetching it (:meth:`recheck`). ``doubt``:
        this request's own store call was cut off and may have recorded it without answering."""
        key = self.seen.key_of(request)
        if key in self._unrecorded:
            return True
        self._unrecorded.add(key)
        # a link batch cut off the same way marked its requests "doubt" before they came here
        doubted = doubt or request.meta.get(UNRECORDED_META) == "doubt"
        request.meta[UNRECORDED_META] = "doubt" if doubted else True
        return False

    def recheck(self, request: Request) -> bool:
        """A request queued unrecorded by a run whose store was unavailable, about to be fetched
        by a later run: record it now. True if its page was recorded meanwhile (skip it)."""
        marker = request.meta.pop(UNRECORDED_META, None)
        call = request.meta.pop(BATCH_CALL_META, None)
        if marker is None:
            return False

        def seen() -> bool:
            if marker == "doubt":
                # a link batch cut off: Redis knows what it did, if it ran (stores/_redis_seen.py)
                answer = getattr(self.store, "batch_answer", None)
                added = answer(call) if call and answer is not None else True
                if added is not None:  # (a lone request: maybe recorded by its own lost call)
                    if added:  # fetch it in any case
                        self.seen.add(request, self.seen.key_of(request), self._spider())
                    return not added
            return self._request_seen(request)

        return self.faults.guarded(seen, False, self.seen.fail)

    def _request_seen(self, request: Request) -> bool:
        meta = meta_of(request)
        seen = self.seen
        key = seen.key_of(request)
        log = seen.resume_log
        if log is not None and meta and "redirect_urls" in meta:
            # the URLs of a redirect chain that led to another page need no fetch on resume
            for source in seen.keys.of_chain(request, None if seen.direct else seen.key_of):
                if source != key:
                    log.done(source)
        redirect_urls = meta.get("redirect_urls") if meta else None
        if redirect_urls and self.redirected is not None:
            self.redirected(str(redirect_urls[0]), request.url)
        if seen.add(request, key, self._spider()):
            return self._scheduled_before_rules(request, key)
        if redirect_urls and self._same_page_as_chain(request, redirect_urls):
            self.stats.inc("redirects/same_page")
            return False
        if not self._merged_on_probation(meta):
            return True
        # merged under a learned rule on probation: a sample to check it, or kept in case it goes
        return not self.probation.fetch_anyway(request)  # type: ignore[union-attr]

    def _scheduled_before_rules(self, request: Request, key: int) -> bool:
        """A request new under the learned rules whose URL was scheduled before they were learned
        (its key under the settings' policy is in the store): the same URL twice. Rules only
        merge, so the page it names is queued already under that key; without this a link met
        again after a rule, both copies dequeued before either was fetched, made one page two
        downloads and its items twice. (``key``: the request's key, just recorded.)"""
        policies = self.policies
        if (
            policies is None
            or policies.policy is policies.base_policy
            or not self.seen.direct
            or request.method != "GET"
        ):
            return False
        try:
            base_identifier = policies.base_unifier.identify(request.url)
        except InvalidURL:
            return False
        base_key = self.seen.keys.of_identifier(base_identifier)
        return base_key != key and base_key in self.store

    def _same_page_as_chain(self, request: Request, chain: list[str]) -> bool:
        identifiers = self.seen.keys.identifiers
        identifier = identifiers.of_request(request)
        unifier = identifiers.unifier
        for url in chain:
            try:
                if unifier.identify(url) == identifier:
                    return True
            except InvalidURL:
                continue
        return False

    def record_unfiltered(self, request: Request, spider: Spider | None = None) -> None:
        """``request_scheduled`` handler: record what the scheduler will not ask about."""
        if not request.dont_filter:
            return
        self.admitted += 1
        if request.meta.get(RESUMED_META) or request.meta.get(HELD_META):
            return
        if self.faults.failed:
            request.meta[UNRECORDED_META] = "doubt"  # fetched on resume, and recorded then
            return
        seen = self.seen
        if self.faults.guarded(
            lambda: seen.add(request, seen.key_of(request), self._spider()), False, seen.fail
        ):
            self.stats.inc("recorded_unfiltered")

    def audit_queue(self, spider: Spider | None = None) -> None:
        """``spider_idle`` with JOBDIR and Scrapy's scheduler: a request its disk queue lost (a
        write failed) is seen, and logged as scheduled, and never fetched; the crawl would end
        "finished" without it, and the clean close would keep the next run from fetching it.
        Closes the crawl as a JOBDIR store that fails does (``urlunify_store_error``, no clean
        close: the next run fetches every page scheduled and not done)."""
        crawler = self.crawler
        if self.seen.jobdir_failed or crawler is None:
            return
        engine = crawler.engine
        emptied = not self._queue_restored and engine is not None and engine.spider_is_idle()
        lost = queue_losses(crawler, self.admitted, emptied=emptied)
        if lost:
            self.seen.jobdir_failed = True
            self.faults.unavailable(
                StoreError(
                    f"Scrapy's disk queue in JOBDIR lost {lost} of the {self.admitted} requests "
                    "scheduled in this run (a write failed: a full disk? its OSError is in the "
                    "log above)"
                )
            )

    def close(self, reason: str) -> None:
        if self.pre_recorded is not None:
            self.pre_recorded.close()
        seen = self.seen
        log = seen.resume_log
        crawler = self.crawler
        if (
            log is not None
            and not seen.jobdir_failed
            and crawler is not None
            and scrapy_scheduler(crawler)
            and queue_losses(crawler, self.admitted, emptied=False)
        ):
            seen.jobdir_failed = True  # a push failed: the saved queue lacks a request
            logger.error(
                "Scrapy's disk queue in JOBDIR lost requests of this run (a write failed): "
                "the next run resumes as after a kill"
            )
        # the scheduler saved its queue before closing us: a clean stop, whatever the reason,
        # unless the store failed (the next run then resumes as after a kill)
        if log is not None:
            try:
                log.close(clean=not seen.jobdir_failed)
            except OSError as e:
                logger.error(
                    "Could not close %s cleanly (%s): the next run resumes as after a kill",
                    log.path,
                    e,
                )
        self.faults.count_outages(self.store)
        self.store.close()
        if self.probation is not None:
            # its JOBDIR file is this check's too: a scheduler built and closed alone (Scrapy's
            # own tests) must leave the job to the next one; nothing keeps a request after it
            self.probation.close()

    def log(self, request: Request, spider: Spider | None) -> None:
        """A duplicate dropped: Scrapy's stat and log line (``DUPEFILTER_DEBUG``: every one, with
        the URL it was unified with when that is another URL)."""
        self.stats.inc_scrapy("dupefilter/filtered")
        self.stats.inc("duplicates")
        if self.debug:
            msg = "Filtered duplicate request: %(request)s (referer: %(referer)s)"
            args = {"request": request, "referer": referer_str(request)}
            first_url = self.seen.first_url
            earlier = first_url.get(self.seen.key_of(request)) if first_url is not None else None
            if earlier is not None and earlier != request.url:  # the unification merged them
                msg += " - same page as %(earlier)s (identifier %(identifier)s)"
                identifier = self.seen.keys.identifiers.of_request(request)
                args.update(earlier=earlier, identifier=identifier)
            self.logger.debug(msg, args, extra={"spider": spider})
        elif self.logdupes:
            self.logger.debug(
                "Filtered duplicate request: %(request)s - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)",
                {"request": request},
                extra={"spider": spider},
            )
            self.logdupes = False
