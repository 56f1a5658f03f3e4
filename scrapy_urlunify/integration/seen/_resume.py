"""Resuming a crawl that was killed: nothing fetched twice, nothing lost (docs/reliability.md,
"What a JOBDIR job keeps, and in which order").

:class:`ResumeLog` appends to ``<JOBDIR>/urlunify-requests.log`` an ``S`` record (the pickled
request) when a request is first scheduled, a ``D`` when its page is done, an ``O`` and a ``C``
when a run opens and closes cleanly. A run that finds no ``C`` schedules again every ``S`` without
a ``D``, after moving Scrapy's own saved queue aside (it cannot be trusted after a kill).
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.core.scheduler import Scheduler
from scrapy.utils.job import job_dir
from scrapy.utils.misc import load_object
from scrapy.utils.request import request_from_dict

from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.integration.crawl._meta import RESUMED_META
from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._fingerprints import FingerprintSet
from scrapy_urlunify.stores._jobdir import REQUESTS_FILENAME, SEEN_FILENAME, JobdirSeenStore
from scrapy_urlunify.stores._log import VarRecordLog

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from scrapy_urlunify.core._unify import Unifier
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.stores._base import SeenStore
    from scrapy_urlunify.stores._jobdir import JobdirSignatureStore

logger = logging.getLogger(__name__)

#: the file Scrapy's RFPDupeFilter keeps in JOBDIR
SCRAPY_SEEN_FILENAME = "requests.seen"


_SCHEDULED, _DONE, _CLEAN, _OPENED = b"S", b"D", b"C", b"O"


class ResumeLog:
    """The scheduled/answered/closed-cleanly log of one JOBDIR, and what it says at open."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._log = VarRecordLog(self.path)
        done = FingerprintSet()
        scheduled = 0
        last = b""
        for payload in self._log.replay():
            kind = payload[:1]
            if kind == _DONE:
                done.add(int.from_bytes(payload[1:9], "big"))
            elif kind == _SCHEDULED:
                scheduled += 1
            last = kind
        #: an earlier run of this job scheduled requests
        self.resumed: bool = scheduled > 0
        #: the previous run was killed, or its store failed (no clean close at the end)
        self.crashed: bool = scheduled > 0 and last != _CLEAN
        #: keys answered before this run (only kept after a crash: the guard needs them)
        self.done_before: FingerprintSet = done if self.crashed else FingerprintSet()
        #: the log holds records of earlier runs (an emptied or deleted log holds none)
        self.has_records: bool = bool(last)
        #: filled by :func:`reschedule`: keys scheduled again, not yet downloaded
        self.pending_keys: set[int] = set()
        self._warned = False

    def replay_done(self) -> FingerprintSet:
        """The keys of every ``D`` record."""
        done = FingerprintSet()
        for payload in self._log.replay():
            if payload[:1] == _DONE:
                done.add(int.from_bytes(payload[1:9], "big"))
        return done

    def pending(self) -> Iterator[tuple[int, bytes]]:
        """``(key, pickled request)`` of each request scheduled but never answered."""
        yielded = FingerprintSet()
        for payload in self._log.replay():
            if payload[:1] != _SCHEDULED:
                continue
            key = int.from_bytes(payload[1:9], "big")
            if key not in self.done_before and yielded.add(key):
                yield key, payload[9:]

    def scheduled(self, key: int, request: Request, spider: Spider | None) -> bool:
        """Log a newly scheduled request; False when it cannot be pickled (logged once)."""
        try:
            data = pickle.dumps(request.to_dict(spider=spider), protocol=4)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError) as e:
            if not self._warned:
                logger.warning(
                    "Cannot save %s for a resume after a crash (%s); "
                    "further unserializable requests are not reported",
                    request,
                    e,
                )
                self._warned = True
            data = b""
        self._log.append(_SCHEDULED + key.to_bytes(8, "big") + data)
        return bool(data)

    def add(
        self, store: SeenStore, key: int, request: Request, spider: Spider | None, *, shared: bool
    ) -> bool:
        """Record ``key`` in ``store`` as seen and ``request`` as scheduled: both or neither (a
        failed write raises, and the page is then neither seen nor lost). True if it was new."""
        if not shared:
            # scheduled first, seen last: a failed write leaves the key unseen (its page is
            # fetched on resume), never seen without the request that fetches it
            if key in store:
                return False
            self.scheduled(key, request, spider)
            return store.add(key)
        # a shared store answers "new" atomically for the whole fleet: ask it first, and take
        # the key back if the request cannot be logged
        if not store.add(key):
            return False
        try:
            self.scheduled(key, request, spider)
        except BaseException:
            discard = getattr(store, "discard", None)
            if discard is not None:
                discard(key)
            raise
        return True

    def done(self, key: int) -> None:
        self._log.append(_DONE + key.to_bytes(8, "big"))

    def opened(self) -> None:
        """A run starts: until its clean close, a kill at any moment (even while it shuts down)
        reads as one."""
        self._log.append(_OPENED)

    def close(self, clean: bool) -> None:
        try:
            if clean:
                self._log.append(_CLEAN)
        finally:
            self._log.close()


def open_resume_log(settings: Any, store: SeenStore | None = None) -> ResumeLog | None:
    """The JOBDIR's resume log, opened for this run, or None without JOBDIR. After a crash,
    Scrapy's saved queue is moved aside (the scheduler has not opened it yet: the dupefilter is
    built first).

    Raises :class:`StoreError` when ``store`` (the seen set) survived while the log did not:
    the seen pages a killed run never fetched could not be told from the others, and would never
    be fetched."""
    jobdir = job_dir(settings)
    if not jobdir:
        return None
    log = ResumeLog(Path(jobdir, REQUESTS_FILENAME))
    queue = Path(jobdir, "requests.queue")
    if log.resumed and not log.crashed and not _queue_readable(queue):
        log.crashed = True  # a kill while Scrapy saved its queue, after our clean close
        log.done_before = log.replay_done()
    if log.crashed and queue.exists():
        aside = queue.with_name(
            f"requests.queue.killed-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        )
        queue.rename(aside)
        logger.warning(
            "The previous run of this job was killed: Scrapy's saved queue is not "
            "trustworthy after a kill and was moved to %s; the requests it held are "
            "scheduled again from %s",
            aside,
            log.path,
        )
    if not log.has_records and isinstance(store, JobdirSeenStore) and len(store):
        log.close(clean=False)
        raise StoreError(
            f"{store.path} holds {len(store)} seen requests but {log.path} is empty or missing: "
            "the pages seen but never fetched cannot be found again. Restore that file, or delete "
            f"{store.path} as well to crawl the job again from the start."
        )
    log.opened()
    return log


def warn_scrapy_jobdir(crawler: Crawler) -> None:
    """Say at start-up that a JOBDIR's ``requests.seen`` (Scrapy's RFPDupeFilter) is not read."""
    jobdir = job_dir(crawler.settings)
    if not jobdir:
        return
    theirs = Path(jobdir, SCRAPY_SEEN_FILENAME)
    try:
        size = theirs.stat().st_size
    except OSError:
        return
    ours = Path(jobdir, SEEN_FILENAME)
    if size and (not ours.exists() or os.path.getmtime(theirs) > os.path.getmtime(ours)):
        logger.warning(
            "JOBDIR %s holds %s from Scrapy's dupefilter: its fingerprints cannot be mapped to "
            "scrapy-urlunify's identities, so the requests it recorded will be fetched again",
            jobdir,
            SCRAPY_SEEN_FILENAME,
        )


def _queue_readable(queue: Path) -> bool:
    """Whether Scrapy's saved queue state (``active.json``) is there and valid JSON, or absent."""
    state = queue / "active.json"
    if not state.exists():
        return True
    try:
        json.loads(state.read_text("utf-8"))
    except (ValueError, OSError):
        return False
    return True


def reschedule(crawler: Crawler, log: ResumeLog, stats: UnifyStats) -> int:
    """Schedule again the requests a killed run had scheduled but not fetched; their
    keys go to ``log.pending_keys`` for :class:`ResumeMiddleware`."""
    count = unserializable = 0
    spider = crawler.spider
    for key, data in log.pending():
        log.pending_keys.add(key)
        if not data:
            unserializable += 1
            continue
        try:
            request = request_from_dict(pickle.loads(data), spider=spider)
            request.meta[RESUMED_META] = True
            request.dont_filter = True  # already in the seen set: the scheduler must not drop it
            crawler.engine.crawl(request)
        except Exception:  # one bad record must not cost the rest of the frontier
            logger.exception("Could not schedule a saved request again (key %016x)", key)
            unserializable += 1
            continue
        count += 1
    stats.set("resume/rescheduled", count)
    if unserializable:
        stats.set("resume/unserializable", unserializable)
    if count or unserializable:
        logger.info(
            "Resuming after a crash: %d requests scheduled again, %d could not be saved",
            count,
            unserializable,
        )
    return count


def follow_crawl(
    crawler: Crawler,
    log: ResumeLog,
    mark_done: Callable[[Request], None] | None,
    stats: UnifyStats,
) -> None:
    """Keep ``log`` in step with the crawl: after a crash, schedule again what was scheduled but
    not fetched when the spider opens; and mark each request done (``mark_done``) when its
    response arrives (None: :class:`ResumeDoneMiddleware` marks it later, once its output is
    handled)."""

    def resume(spider: Spider | None = None) -> None:
        if log.crashed:
            reschedule(crawler, log, stats)

    def answered(response: Any, request: Request, spider: Spider | None = None) -> None:
        mark_done(request)  # type: ignore[misc]

    # held by the signal manager (weak=False): nothing else keeps these closures
    if mark_done is not None:
        crawler.signals.connect(answered, signal=signals.response_received, weak=False)
    crawler.signals.connect(resume, signal=signals.spider_opened, weak=False)


def scrapy_scheduler(crawler: Crawler) -> bool:
    """Whether the crawl's ``SCHEDULER`` is Scrapy's (or a subclass): its stats count what its
    queues took and gave back (``scheduler/enqueued``, ``scheduler/dequeued``)."""
    scheduler = load_object(crawler.settings["SCHEDULER"])
    return isinstance(scheduler, type) and issubclass(scheduler, Scheduler)


def queue_losses(crawler: Crawler, admitted: int, *, emptied: bool) -> int:
    """Requests Scrapy's scheduler lost of the ``admitted`` ones the dupefilter let into it in
    this run. Its disk queue (``JOBDIR/requests.queue``) writes through a buffer: a full disk
    fails a later push, or a pop that flushes it, and the request is gone, its error only in the
    asyncio log ("Task exception was never retrieved"), while the crawl goes on to "finished".
    A request it took is counted ``scheduler/enqueued``, one it gave back ``scheduler/dequeued``;
    ``emptied``: the scheduler has given back everything it held, and held nothing at the start
    (no saved queue was resumed), so every admitted request was given back."""
    stats = crawler.stats
    if stats is None:
        return 0
    counted = stats.get_value("scheduler/dequeued" if emptied else "scheduler/enqueued", 0)
    return max(0, admitted - int(counted or 0))


def fetched_before(
    log: ResumeLog, store: JobdirSignatureStore, scope: str | None, base: Unifier, limit: int
) -> list[tuple[str, str, bytes]]:
    """The pages the earlier runs of a resumed JOBDIR job fetched: ``(URL, base identifier,
    signature)`` of the last ``limit`` requests the resume log says were handled, with their
    signatures from the signature log (``base``: the settings' unifier, that log's). A
    duplicate page's identifier is not in that log: left out. Empty, with a warning, when the
    log cannot be read."""
    try:
        done = log.replay_done()
        urls: list[str] = []
        for payload in VarRecordLog.read(log.path):
            if (
                payload[:1] == _SCHEDULED
                and len(payload) > 9
                and int.from_bytes(payload[1:9], "big") in done
            ):
                urls.append(pickle.loads(payload[9:])["url"])
    except (
        StoreError,
        OSError,
        pickle.UnpicklingError,
        KeyError,
        TypeError,
        ValueError,
        EOFError,
    ) as e:
        logger.warning(
            "Could not read the pages fetched before this run from %s (%s): requests queued "
            "before it are checked against this run's fetches only",
            log.path,
            e,
        )
        return []
    prefix = f"{scope or ''}|".encode()
    signature_of = {
        page: key.split(b"\0", 1)[1] for key, page in store.items() if key.startswith(prefix)
    }
    pages = []
    for url in urls[-limit:]:
        try:
            base_identifier = base.identify(url)
        except InvalidURL:
            continue
        sig = signature_of.get(base_identifier)
        if sig is not None:
            pages.append((url, base_identifier, sig))
    return pages
