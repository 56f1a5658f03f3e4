"""``RedisQueue``: scrapy-redis's shared priority queue, with nothing lost when a worker dies
(``SCHEDULER_QUEUE_CLASS = "scrapy_urlunify.RedisQueue"``; docs/redis_queue.md).

A taken request stays *in flight*, owned by its worker, until it is done (:mod:`._tracker`; the
Redis side is :mod:`scrapy_urlunify.stores._redis_queue`); the requests of a worker that stopped
heart-beating go back to the queue, and a push waits for the replicas of the queue's master, so
a failover loses nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.request import request_from_dict
from twisted.internet import task

from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._faults import STORE_FAULTS
from scrapy_urlunify.integration.crawl._meta import GIVEN_BACK_META, QUEUE_ID_META, RESCUE_META
from scrapy_urlunify.integration.queue._tracker import QueueErrback
from scrapy_urlunify.integration.settings import SettingsError

if TYPE_CHECKING:
    from scrapy import Request, Spider

    from scrapy_urlunify.stores._redis_queue import ReliableQueue


logger = logging.getLogger(__name__)


LEASE_SETTING = "URLUNIFY_QUEUE_LEASE"
REPLICAS_SETTING = "URLUNIFY_QUEUE_REPLICAS"
UNAVAILABLE_SETTING = "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT"

#: the components the queue needs (:mod:`._queue_done`): their roles, names and settings
DONE_COMPONENTS = (
    ("queue_done", "QueueDoneMiddleware", "SPIDER_MIDDLEWARES"),
    ("queue_given_back", "QueueGivenBackMiddleware", "SPIDER_MIDDLEWARES"),
    ("queue_failure", "QueueFailureMiddleware", "DOWNLOADER_MIDDLEWARES"),
)


class RedisQueue:
    """A scrapy-redis queue class (``SCHEDULER_QUEUE_CLASS``): ``push``, ``pop(timeout)``,
    ``__len__``, ``clear``, built by scrapy-redis's scheduler as ``cls(server, spider, key,
    serializer)``."""

    urlunify_role = "redis_queue"

    def __init__(self, server: Any, spider: Spider, key: str, serializer: Any = None) -> None:
        if serializer is None:
            from scrapy_redis import picklecompat

            serializer = picklecompat
        if not callable(getattr(serializer, "loads", None)) or not callable(
            getattr(serializer, "dumps", None)
        ):
            raise TypeError(f"serializer does not implement 'loads' and 'dumps': {serializer}")
        crawler = spider.crawler
        self.server = server
        self.spider = spider
        self.crawler = crawler
        self.key = key % {"spider": spider.name}
        self.serializer = serializer
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        crawl = UnifyCrawl.of(crawler)
        self.stats = crawl.stats
        self.faults = crawl.faults
        #: the crawl's seen keys, when its dupefilter is the add-on's
        self.seen = crawl.seen
        settings = crawl.settings
        lease = settings[LEASE_SETTING]
        # here, not at the top: the add-on's middlewares import this module, and redis is an
        # extra (without it the add-on works, and only a Redis store or this queue is refused)
        from scrapy_urlunify.stores._redis_queue import ReliableQueue

        self.store: ReliableQueue = ReliableQueue(
            server,
            self.key,
            self.worker,
            lease=lease,
            unavailable_timeout=settings[UNAVAILABLE_SETTING],
            replicas=settings[REPLICAS_SETTING],
        )
        #: entry ids whose handling the queue's tracker follows now (a response, an errback)
        self.watched: set[str] = set()
        for role, name, setting in DONE_COMPONENTS:
            if not crawl.configured(setting, role):
                raise SettingsError(
                    setting,
                    f"RedisQueue needs scrapy_urlunify.{name} (docs/redis_queue.md): without it "
                    "a request may never be done, and a page may be lost when a worker dies",
                )
        crawl.queue_tracker.queue = self
        self._beat = task.LoopingCall(self._heartbeat)
        self._beat.start(lease / 5, now=True)
        crawler.signals.connect(self._idle, signal=signals.spider_idle)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)
        crawler.signals.connect(self._dropped, signal=signals.request_dropped)

    # --- scrapy-redis's queue API ------------------------------------------------------------

    def __len__(self) -> int:
        return self.faults.guarded(lambda: len(self.store), 0)

    def push(self, request: Request) -> None:
        if isinstance(request.errback, QueueErrback):
            request.errback = request.errback.original
        meta = request.meta
        replaces = meta.pop(QUEUE_ID_META, "") or ""
        meta.pop(GIVEN_BACK_META, None)  # a redirect or retry is a new entry
        rescue = bool(meta.pop(RESCUE_META, False))
        dedup = self.dedup_key(request)
        data = self.serializer.dumps(request.to_dict(spider=self.spider))
        if replaces:
            self.watched.discard(replaces)
        if self.faults.failed:
            # nothing is acknowledged any more: the request whose link this is stays in flight and
            # comes back (at close, or when the lease ends), and yields this link again
            return
        try:
            queued = self.store.push(
                data, -request.priority, dedup=dedup, check=rescue, replaces=replaces
            )
        except STORE_FAULTS as e:
            self.faults.unavailable(e)  # not known to be on a replica: its source stays in flight
            return
        if rescue:
            self.stats.inc("queue/rescued_links" if queued else "queue/already_queued")

    def pop(self, timeout: int = 0) -> Request | None:
        """Take the best request, in flight under this worker (``timeout`` is ignored, as by
        scrapy-redis's ``PriorityQueue``)."""
        popped = self.faults.guarded(self.store.pop, None)
        if popped is None:
            return None
        try:
            request = request_from_dict(self.serializer.loads(popped.payload), spider=self.spider)
        except Exception:
            # acknowledged: a queue entry no worker can decode would come back forever
            logger.exception(
                "Dropped a queue entry that cannot be decoded (%d bytes)", len(popped.payload)
            )
            self.stats.inc("queue/undecodable")
            self.ack(popped.id)
            return None
        request.meta[QUEUE_ID_META] = popped.id
        if popped.given_back:
            request.meta[GIVEN_BACK_META] = True
            self.stats.inc("queue/popped_given_back")
        return request

    def clear(self) -> None:
        self.store.clear()

    # --- done ------------------------------------------------------------------------------

    def ack(self, entry_id: str) -> None:
        """The request of ``entry_id`` is done."""
        self.watched.discard(entry_id)
        # once the queue failed nothing is done: what this worker holds goes back to the queue
        if self.faults.guarded(lambda: self.store.ack(entry_id), True) is False:
            self.stats.inc("queue/acked_late")
            logger.warning(
                "A request was done after this worker's lease ended (a stall longer than %s = %s "
                "s?) or after a failover lost its pop: it may be fetched again",
                LEASE_SETTING,
                self.store.lease_ms / 1000,
            )

    def dedup_key(self, request: Request) -> bytes:
        """What the queue remembers of a pushed request: the dupefilter's key when the crawl's
        dupefilter is the plugin's (unified URL identity), else Scrapy's fingerprint."""
        if self.seen is not None:
            return int(self.seen.key_of(request)).to_bytes(8, "big")
        return bytes(self.crawler.request_fingerprinter.fingerprint(request))

    # --- signal hooks ------------------------------------------------------------------------

    def _heartbeat(self) -> None:
        try:
            given_back = self.store.heartbeat()
        except (
            Exception
        ):  # the next beat tries again; a lease that ends costs duplicates, not pages
            logger.exception("Queue heartbeat failed")
            return
        if given_back:
            self.stats.inc("queue/given_back", given_back)
            logger.info(
                "Gave back %d requests of dead workers to the queue %s", given_back, self.key
            )

    def _idle(self, spider: Spider | None = None) -> None:
        self._heartbeat()
        if self.faults.failed:
            return  # closing, with the reason
        try:
            self._idle_check()
        except STORE_FAULTS as e:
            # not "finished": the queue may hold requests
            self.faults.unavailable(e)
            raise DontCloseSpider from None

    def _idle_check(self) -> None:
        held = self.store.mine_ids() - self.watched
        if held:
            # idle: nothing of this worker is in progress, so a path the queue does not watch
            # finished them (fetching them again would do the same)
            self.stats.inc("queue/unobserved", len(held))
            logger.warning(
                "%d requests were still in flight while this worker was idle; acknowledged",
                len(held),
            )
            for entry_id in held:
                self.ack(entry_id)
        if len(self.store) or self.store.in_flight() > self.store.mine():
            raise DontCloseSpider  # peers hold requests that come back if they die

    def _dropped(self, request: Request, spider: Spider | None = None) -> None:
        # a redirect (or retry) the scheduler dropped ends its chain
        entry_id = request.meta.pop(QUEUE_ID_META, None)
        if entry_id:
            self.ack(entry_id)

    def _closed(self, spider: Spider | None = None, reason: str = "") -> None:
        if self._beat.running:
            self._beat.stop()
        try:
            given_back = self.store.leave()
        except Exception:  # the lease ends anyway: a peer gives them back then
            logger.exception("Could not give back this worker's requests at close")
            return
        if given_back:
            logger.info("Gave back %d requests still in flight at close (%s)", given_back, reason)
