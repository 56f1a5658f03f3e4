"""``DupeFilter``: Scrapy's "seen?" check on unified identities, lean and persistent.

Set ``DUPEFILTER_CLASS = "scrapy_urlunify.DupeFilter"`` (the add-on does). What it does
beyond Scrapy's ``RFPDupeFilter``:

* **Identity.** Requests are keyed through the crawler's fingerprinter
  (``REQUEST_FINGERPRINTER_CLASS``), as Scrapy's filter does. With
  :class:`~scrapy_urlunify.Fingerprinter` (the add-on's) ``http://www.a.test/x/`` and
  ``https://a.test/x`` are one request, in the crawl's scope, and the key is computed from the
  identifier directly; another fingerprinter the project chose (scrapy-zyte-api's, scrapy-poet's,
  its own) is called for each request, and its fingerprint decides. Only Scrapy's default
  fingerprinter, left unchosen, is replaced by ours (``DUPEFILTER_CLASS`` alone unifies).
* **Memory.** A seen URL costs its 8-byte key in an ordered hash table (9.5-11.9 bytes with
  the table's slack) instead of a Python set entry of ~90-100 bytes, and nothing else per URL
  (keys: :mod:`~scrapy_urlunify.integration.keys`).
* **JOBDIR.** Each new key is appended to ``<JOBDIR>/urlunify-seen.log`` with an unbuffered
  write before the request is scheduled; a crawl killed at any moment resumes with exactly the
  seen set it had (a torn last record is dropped), and schedules again, each downloaded once,
  what it had scheduled but never fetched (:mod:`~scrapy_urlunify.integration.resume`, which
  keeps that bookkeeping and warns that Scrapy's ``requests.seen`` cannot be read). A request
  Scrapy's disk queue lost (a full disk) closes the crawl as a JOBDIR write that fails does
  (:meth:`DupeFilter.audit_queue`).
* **Redirects.** A redirect whose target is the same page as a URL of its own redirect chain
  (``http://site.test/`` -> ``https://www.site.test/``) is let through, where Scrapy's filter
  drops it (scrapy#1225); ``REDIRECT_MAX_TIMES`` still ends a loop. The target counts as seen.
* **Start URLs.** Requests with ``dont_filter=True`` (start URLs) are never filtered, but they
  are recorded, so a later link back to a start page is not fetched again.
* **Logging.** Scrapy's lines, on Scrapy's ``scrapy.dupefilters`` logger. ``DUPEFILTER_DEBUG``
  logs every duplicate, followed by the URL it collided with when that is another URL (``- same
  page as ...``); otherwise the first duplicate only. Stats: ``dupefilter/filtered`` (Scrapy's)
  and ``urlunify/duplicates``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from warnings import warn

from scrapy import Request, signals
from scrapy.dupefilters import BaseDupeFilter
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy.utils.deprecate import method_is_overridden
from scrapy.utils.request import referer_str

from ..core.unify import unifier_for
from ..core.url import InvalidURL
from ..stores import JobdirSeenStore, MemorySeenStore, SeenStore, StoreError
from . import refusal
from .context import UnifyContext
from .crawl_stores import (
    STORE_FAULTS,
    count_outages,
    crawl_stores,
    guarded,
    queue_losses,
    scrapy_scheduler,
    store_failed,
    store_unavailable,
)
from .fingerprinter import Fingerprinter
from .internals import has_receivers
from .keys import RequestKeys, crawl_fingerprinters, foreign_key
from .meta import BATCH_CALL_META, HELD_META, PROBATION_META, RESUMED_META, UNRECORDED_META, meta_of
from .resume import ResumeLog, follow_crawl, open_resume_log, warn_scrapy_jobdir
from .stats import UnifyStats

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.utils.request import RequestFingerprinterProtocol

    # typing.Self requires Python 3.11
    from typing_extensions import Self

__all__ = ["DupeFilter"]

logger = logging.getLogger(__name__)
#: the duplicate lines go where Scrapy's RFPDupeFilter logs them, so a project's logging
#: configuration for them keeps working
dupes_logger = logging.getLogger("scrapy.dupefilters")


class DupeFilter(BaseDupeFilter):
    """Duplicate request filter (``DUPEFILTER_CLASS``) on unified URL identities."""

    #: a shared store's link batch (integration/redis_batch.py): the keys it recorded for
    #: requests on their way here; False when the store checks one key per call
    link_batch: Any = None

    def __init__(
        self,
        fingerprinter: Fingerprinter,
        store: SeenStore,
        *,
        debug: bool = False,
        crawler: Crawler | None = None,
        resume_log: ResumeLog | None = None,
        request_fingerprinter: RequestFingerprinterProtocol | None = None,
    ) -> None:
        #: the seen-store key of requests (:mod:`~scrapy_urlunify.integration.keys`)
        self.keys = RequestKeys(fingerprinter, request_fingerprinter)
        #: identifiers (redirect chains, logs, declared canonicals)
        self.fingerprinter = fingerprinter
        #: keys requests: the crawler's fingerprinter (``fingerprinter`` unless another was chosen)
        self.request_fingerprinter = self.keys.request_fingerprinter
        self._legacy_fingerprint = method_is_overridden(
            type(self), DupeFilter, "request_fingerprint"
        )
        if self._legacy_fingerprint:
            warn(
                "Overriding DupeFilter.request_fingerprint() is deprecated, "
                "set the REQUEST_FINGERPRINTER_CLASS setting instead.",
                ScrapyDeprecationWarning,
                stacklevel=2,
            )
        # keys straight from identifiers: an identifier or a URL gives its key
        self._direct = self.keys.direct and not self._legacy_fingerprint
        self.logger = dupes_logger
        self.store = store
        self.resume_log = resume_log
        # a store of this process only (memory, JOBDIR), not one shared by a fleet (Redis)
        self._local_store = isinstance(store, (MemorySeenStore, JobdirSeenStore))
        self.debug = debug
        self.crawler = crawler
        self.logdupes = True
        #: :meth:`drop_known` asks the store only when it is in this process, where a membership
        #: test costs far less than a fingerprint (a shared store would cost a round trip per link)
        self.early_drop = self._local_store
        self.stats = UnifyContext.of(crawler).stats if crawler is not None else UnifyStats(None)
        # DUPEFILTER_DEBUG only: which URL first had each key, to name it in the log
        self._first_url: dict[int, str] | None = {} if debug else None
        # keys queued unrecorded since the store became unavailable: each page is queued once
        self._unrecorded: set[int] = set()
        # a JOBDIR file could not be written (see fail)
        self._jobdir_failed = False
        #: requests let into the scheduler in this run (new ones, and those it does not filter)
        self.admitted = 0
        # whether the scheduler started from a queue saved by the previous run (see audit_queue)
        self._queue_restored = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        context = UnifyContext.of(crawler)
        fingerprinter, request_fingerprinter = crawl_fingerprinters(crawler, context)
        warn_scrapy_jobdir(crawler)
        try:
            store = cls.make_store(crawler)
        except StoreError as e:
            refusal.report(e, "scrapy-urlunify cannot use its seen store", logger)
            raise
        try:
            resume_log = open_resume_log(crawler.settings, store)
        except StoreError as e:
            store.close()
            refusal.report(e, "scrapy-urlunify cannot use this JOBDIR", logger)
            raise
        except BaseException:
            store.close()
            raise
        df = cls(
            fingerprinter,
            store,
            debug=crawler.settings.getbool("DUPEFILTER_DEBUG"),
            crawler=crawler,
            resume_log=resume_log,
            request_fingerprinter=request_fingerprinter,
        )
        crawler.signals.connect(df._record_unfiltered, signal=signals.request_scheduled)
        if resume_log is not None:
            follow_crawl(crawler, resume_log, df.mark_done)
            if scrapy_scheduler(crawler):
                df._queue_restored = resume_log.resumed and not resume_log.crashed
                crawler.signals.connect(df.audit_queue, signal=signals.spider_idle)
        context.dupefilter = df
        context.connect_summary()
        return df

    @classmethod
    def make_store(cls, crawler: Crawler) -> SeenStore:
        """The crawl's seen store: a Redis SET shared by every process of the scope when
        ``URLUNIFY_STORE`` is a Redis URL, else a log in ``JOBDIR`` if set, else memory. A
        subclass may keep it elsewhere by overriding this."""
        return crawl_stores(crawler).seen()

    def record_url(self, url: str) -> bool:
        """Count the page of ``url`` (a GET) as seen, without a request: a declared canonical,
        the other spellings of a page a learned rule unified. True if it was new."""

        def add() -> bool:
            try:
                key = self.keys.of_url(url) if self._direct else self.request_key(Request(url))
            except ValueError:  # not a URL a Request accepts
                return False
            return self.store.add(key)

        return guarded(self.crawler, add, False, self.fail)

    def request_key(self, request: Request) -> int:
        """The seen-store key of ``request`` (:class:`~scrapy_urlunify.integration.keys.RequestKeys`)."""
        if self._legacy_fingerprint:
            return foreign_key(bytes.fromhex(self.request_fingerprint(request)))
        return self.keys.of(request)

    def holds_identifier(self, identifier: str) -> bool:
        """Whether the seen store holds the key of a GET of ``identifier``. False when the keys
        come from another fingerprinter: they cannot be computed from an identifier."""
        return self._direct and self.keys.of_identifier(identifier) in self.store

    def request_fingerprint(self, request: Request) -> str:
        """The key ``request`` is filtered on, as 16 hex digits (``RFPDupeFilter``'s API)."""
        return f"{self.keys.of(request):016x}"

    @property
    def fingerprints(self) -> frozenset[str]:
        """Deprecated (as in Scrapy): every seen key, as :meth:`request_fingerprint` gives them."""
        warn(
            "RFPDupeFilter.fingerprints is deprecated. (DupeFilter.fingerprints: the keys of its seen store.)",
            ScrapyDeprecationWarning,
            stacklevel=2,
        )
        return frozenset(f"{k:016x}" for k in self.store)  # type: ignore[attr-defined]

    def _add(self, request: Request, key: int) -> bool:
        """Record ``key`` as seen and, with JOBDIR, ``request`` as scheduled: both or neither
        (:meth:`ResumeLog.add <scrapy_urlunify.integration.resume.ResumeLog.add>`)."""
        log = self.resume_log
        if log is None:
            new = self.store.add(key)
        else:
            spider = self.crawler.spider if self.crawler else None
            new = log.add(self.store, key, request, spider, shared=not self._local_store)
        if new and self._first_url is not None:
            self._first_url[key] = request.url
        return new

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
        redirects (which may be let through, see :meth:`_same_page_as_chain`) and a failed store
        are left to the scheduler."""
        meta = meta_of(request)
        if (
            not self.early_drop
            or request.dont_filter
            or (meta and "redirect_urls" in meta)
            or store_failed(self.crawler)
        ):
            return False
        ctx = self.fingerprinter.context
        probation = ctx.probation if ctx is not None else None
        if probation is not None and (probation.active or (meta and PROBATION_META in meta)):
            return False  # a learned rule on probation may let it through: the scheduler asks
        if scheduled is not None and not self._direct:
            # another fingerprinter keys the URL as given: ask about the one the scheduler gets
            # (ours keys the identifier, the same for both URLs)
            request = scheduled()
            scheduled = None
        try:
            if self.request_key(request) not in self.store:
                return False
        except STORE_FAULTS:
            return False  # the scheduler's own call handles the outage
        receivers = (
            has_receivers(self.crawler, signals.request_dropped)
            if self.crawler is not None
            else False
        )
        if scheduled is not None and (self.debug or self.logdupes or receivers):
            request = scheduled()
        self.log(request, spider if spider is not None else self.crawler.spider)  # type: ignore[union-attr,arg-type]
        if receivers:
            self.crawler.signals.send_catch_log(  # type: ignore[union-attr]
                signals.request_dropped,
                request=request,
                spider=self.crawler.spider,  # type: ignore[union-attr]
            )
        return True

    def fail(self, error: Exception) -> None:
        """A store call failed: the crawl closes (:func:`store_unavailable`). When it was a write
        to the JOBDIR files (disk full), nothing more is marked done and the job is not closed
        cleanly: the next run resumes as after a kill, and fetches again every page whose links
        may not have been recorded. (A failing Redis leaves the JOBDIR log intact: the requests
        queued unrecorded meanwhile are in Scrapy's queue, saved at the clean close.)"""
        if isinstance(error, OSError):
            self._jobdir_failed = True
        store_unavailable(self.crawler, error)

    def mark_done(self, request: Request) -> None:
        """The request is handled: a resume after a crash must not fetch it again."""
        if self.resume_log is None or self._jobdir_failed:
            return
        # (not guarded(): after a Redis failure the JOBDIR log is intact and still kept)
        try:
            self.resume_log.done(self.request_key(request))
        except STORE_FAULTS as e:
            self.fail(e)

    def request_seen(self, request: Request) -> bool:
        seen = self._seen(request)
        if not seen:
            self.admitted += 1
        return seen

    def _seen(self, request: Request) -> bool:
        # the store calls are guarded here without guarded(): its closure would cost every
        # scheduled request, and a failure queues the request unrecorded rather than answering
        batch = self.link_batch
        if (
            batch
            and batch.pending
            and "redirect_urls" not in request.meta
            and batch.take(self.request_key(request))
        ):
            return (
                False  # checked and recorded (and logged as scheduled) with its page's other links
            )
        if store_failed(self.crawler):
            return self._seen_unrecorded(request, doubt=False)
        try:
            return self._request_seen(request)
        except STORE_FAULTS as e:
            # neither "seen" (the page would be lost) nor "new and recorded": the request goes to
            # the queue unrecorded (a resume checks it), and the crawl closes
            self.fail(e)
            return self._seen_unrecorded(request, doubt=True)

    def _seen_unrecorded(self, request: Request, *, doubt: bool) -> bool:
        """The store is gone and the crawl is closing: queue each page once, marked, so the run
        that resumes the queue asks the store before fetching it (:meth:`recheck`). ``doubt``:
        this request's own store call was cut off and may have recorded it without answering."""
        key = self.request_key(request)
        if key in self._unrecorded:
            return True
        self._unrecorded.add(key)
        # a link batch cut off the same way marked its requests "doubt" before they came here
        request.meta[UNRECORDED_META] = (
            "doubt" if doubt or request.meta.get(UNRECORDED_META) == "doubt" else True
        )
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
                # a link batch cut off: Redis knows what it did, if it ran (stores/redis_seen.py)
                added = (
                    self.store.batch_answer(call)
                    if call and hasattr(self.store, "batch_answer")
                    else True
                )
                if added is not None:  # (a lone request: maybe recorded by its own lost call)
                    if added:
                        self._add(request, self.request_key(request))  # fetch it in any case
                    return not added
            return self._request_seen(request)

        return guarded(self.crawler, seen, False, self.fail)

    def _request_seen(self, request: Request) -> bool:
        meta = meta_of(request)
        key = self.request_key(request)
        if self.resume_log is not None and meta and "redirect_urls" in meta:
            # the URLs of a redirect chain that led to another page need no fetch on resume
            chain = self.keys.of_chain(request, None if self._direct else self.request_key)
            for source in chain:
                if source != key:
                    self.resume_log.done(source)
        if self._add(request, key):
            return self._scheduled_before_rules(request, key)
        redirect_urls = meta.get("redirect_urls") if meta else None
        if redirect_urls and self._same_page_as_chain(request, redirect_urls):
            self.stats.inc("redirects/same_page")
            return False
        ctx = self.fingerprinter.context
        probation = ctx.probation if ctx is not None else None
        if probation is None or not (probation.active or (meta and PROBATION_META in meta)):
            return True
        # merged under a learned rule on probation: a sample to check it, or kept in case it goes
        return not probation.fetch_anyway(request)

    def _scheduled_before_rules(self, request: Request, key: int) -> bool:
        """A request new under the learned rules whose URL was scheduled before they were learned
        (its key under the settings' policy is in the store): the same URL twice. Rules only
        merge, so the page it names is queued already under that key; without this a link met
        again after a rule, both copies dequeued before either was fetched, made one page two
        downloads and its items twice. (``key``: the request's key, just recorded.)"""
        ctx = self.fingerprinter.context
        if (
            ctx is None
            or ctx.policy is ctx.base_policy
            or not self._direct
            or request.method != "GET"
        ):
            return False
        try:
            base_key = self.keys.of_identifier(unifier_for(ctx.base_policy).identify(request.url))
        except InvalidURL:
            return False
        return base_key != key and base_key in self.store

    def _same_page_as_chain(self, request: Request, chain: list[str]) -> bool:
        identifier = self.fingerprinter.identifier(request)
        unifier = self.fingerprinter.context.unifier if self.fingerprinter.context else None
        for url in chain:
            try:
                if (unifier.identify(url) if unifier else url) == identifier:
                    return True
            except InvalidURL:
                continue
        return False

    def _record_unfiltered(self, request: Request, spider: Spider | None = None) -> None:
        """``request_scheduled`` handler: record what the scheduler will not ask about."""
        if request.dont_filter:
            self.admitted += 1
        if (
            request.dont_filter
            and not request.meta.get(RESUMED_META)
            and not request.meta.get(HELD_META)
        ):
            if store_failed(self.crawler):
                request.meta[UNRECORDED_META] = "doubt"  # fetched on resume, and recorded then
                return
            if guarded(
                self.crawler,
                lambda: self._add(request, self.request_key(request)),
                False,
                self.fail,
            ):
                self.stats.inc("recorded_unfiltered")

    def audit_queue(self, spider: Spider | None = None) -> None:
        """``spider_idle`` with JOBDIR and Scrapy's scheduler: a request its disk queue lost (a
        write failed) is seen, and logged as scheduled, and never fetched; the crawl would end
        "finished" without it, and the clean close would keep the next run from fetching it.
        Closes the crawl as a JOBDIR store that fails does (``urlunify_store_error``, no clean
        close: the next run fetches every page scheduled and not done)."""
        if self._jobdir_failed or self.crawler is None:
            return
        engine = self.crawler.engine
        emptied = not self._queue_restored and engine is not None and engine.spider_is_idle()
        lost = queue_losses(self.crawler, self.admitted, emptied=emptied)
        if lost:
            self._jobdir_failed = True
            store_unavailable(
                self.crawler,
                StoreError(
                    f"Scrapy's disk queue in JOBDIR lost {lost} of the {self.admitted} requests scheduled in this "
                    "run (a write failed: a full disk? its OSError is in the log above)"
                ),
            )

    def close(self, reason: str) -> None:
        if self.link_batch:
            self.link_batch.close()
        if (
            self.resume_log is not None
            and not self._jobdir_failed
            and self.crawler is not None
            and scrapy_scheduler(self.crawler)
            and queue_losses(self.crawler, self.admitted, emptied=False)
        ):
            self._jobdir_failed = True  # a push failed: the saved queue lacks a request
            logger.error(
                "Scrapy's disk queue in JOBDIR lost requests of this run (a write failed): "
                "the next run resumes as after a kill"
            )
        # the scheduler saved its queue before closing us: a clean stop, whatever the reason,
        # unless the store failed (the next run then resumes as after a kill)
        if self.resume_log is not None:
            try:
                self.resume_log.close(clean=not self._jobdir_failed)
            except OSError as e:
                logger.error(
                    "Could not close %s cleanly (%s): the next run resumes as after a kill",
                    self.resume_log.path,
                    e,
                )
        count_outages(self.crawler, self.store)
        self.store.close()

    def log(self, request: Request, spider: Spider) -> None:
        self.stats.inc_scrapy("dupefilter/filtered")
        self.stats.inc("duplicates")
        if self.debug:
            msg = "Filtered duplicate request: %(request)s (referer: %(referer)s)"
            args = {"request": request, "referer": referer_str(request)}
            earlier = (
                self._first_url.get(self.request_key(request))
                if self._first_url is not None
                else None
            )
            if (
                earlier is not None and earlier != request.url
            ):  # the unification merged them: say how
                msg += " - same page as %(earlier)s (identifier %(identifier)s)"
                args.update(earlier=earlier, identifier=self.fingerprinter.identifier(request))
            self.logger.debug(msg, args, extra={"spider": spider})
        elif self.logdupes:
            self.logger.debug(
                "Filtered duplicate request: %(request)s - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)",
                {"request": request},
                extra={"spider": spider},
            )
            self.logdupes = False
