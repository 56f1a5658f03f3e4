"""``SignatureMiddleware``: duplicate pages stop the chain (FO-dpl), and teach the unifier.

A downloader middleware (the add-on enables it at 20, on the engine side of Scrapy's redirect
and retry middlewares, so it sees each final response once). For every 2xx response:

1. its signature (:mod:`scrapy_urlunify.learning.page_signature`: MD5 of the body text) goes to
   ``response.meta["urlunify_signature"]`` (hex), before the spider callback;
2. the signature index of its site (``URLUNIFY_SIGNATURE_GRANULARITY``: ``site``, the
   registrable domain after aliases, by default; or ``host``, or ``scope``) maps signature ->
   base identifier of the first page seen with it. A response whose signature was first seen on
   a page with *another* identifier is a duplicate page: ``meta["urlunify_duplicate_of"]`` names
   that page, stats ``urlunify/signature/duplicates``, one debug log line; with
   ``URLUNIFY_DROP_DUPLICATE_RESPONSES`` (default on) it never reaches the callback (no items,
   no links followed: the seed's "will not be further processed"): :class:`DuplicatePageGate`
   drops it (below);
3. with ``URLUNIFY_NEAR_DUPLICATES`` (default on), an HTML page (up to 4 MiB) that is not a duplicate page gets
   a near-duplicate fingerprint of its main text, read from the same tree (:mod:`.near_duplicates`):
   a page within ``URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE`` of an earlier page of another identifier
   is a near-duplicate page, ``meta["urlunify_near_duplicate_of"]`` and
   ``meta["urlunify_resemblance"]``, stats ``urlunify/signature/near_duplicates``; it reaches the
   callback (its links are followed: only the exact signature stops a page);
4. with ``URLUNIFY_LEARN`` (default off), the page goes to the crawl's learning session
   (:mod:`.learning_session`: the learner, the fetched pages, rule probation);
5. with ``URLUNIFY_CANONICALS`` (default on), a declared canonical goes to :mod:`.canonicals`,
   which trusts a site's canonicals once verified: the canonical URL is then recorded as seen,
   and is evidence for learning.

**Where a duplicate page is dropped: where Scrapy drops a response.** It was downloaded, so it
counts toward every budget of responses (``CLOSESPIDER_PAGECOUNT``, ``CLOSESPIDER_PAGECOUNT_NO_ITEM``,
``response_received_count``, ``scrapy urlunify learn --pages``): those count the
``response_received`` signal, which the engine sends only for a response that leaves the
downloader middlewares. So the middleware marks it (the response flag ``urlunify_duplicate``,
shown in Scrapy's "Crawled (200)" log line) and lets it through, and
:class:`DuplicatePageGate`, a spider middleware first in the spider's input chain, drops it, as
Scrapy's ``HttpErrorMiddleware`` drops a 404: the request's errback gets a :class:`DuplicatePage`
failure, no other spider middleware and no callback sees the response, nothing is logged as an
error. A ``response_received`` handler of the project sees it, as it sees a 404 the spider never
gets: that signal says "downloaded", not "given to the spider" (``meta["urlunify_duplicate_of"]``
tells the two apart). Without the gate (the components enabled by hand, without it), the
middleware drops the page itself, as before: then it counts toward no budget.

Settings: ``URLUNIFY_SIGNATURES`` (default on), ``URLUNIFY_SIGNATURE_MAX_BYTES`` (32 MiB: larger
bodies are hashed raw, and never teach the learner), ``URLUNIFY_SIGNATURE_GRANULARITY``, ``URLUNIFY_DROP_DUPLICATE_RESPONSES``,
``URLUNIFY_LEARN``, ``URLUNIFY_LEARN_MIN_PAIRS`` (3), ``URLUNIFY_CANONICALS``, ``URLUNIFY_NEAR_DUPLICATES``
and its thresholds.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, TextResponse

from ..core.unify import unifier_for
from ..core.url import InvalidURL, host_of
from ..learning.page_signature import page_signature, site_key, tree_body_text
from ..learning.value_shown import shows_own_value
from ..stores import SEEN_FILENAME, JobdirSignatureStore, RecordLog, SignatureStore
from .canonicals import Canonicals
from .context import UnifyContext
from .crawl_stores import count_outages, crawl_stores, guarded
from .fetched import RECENT
from .internals import spider_middlewares
from .learning_session import LearningSession
from .meta import DUPLICATE_OF_META, NEAR_DUPLICATE_OF_META, RESEMBLANCE_META, SIGNATURE_META
from .near_duplicates import FILENAME as NEAR_DUPLICATES_FILENAME
from .near_duplicates import NearDuplicate, NearDuplicatePages, distance_for
from .resume import fetched_before
from .settings import crawl_sites

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..stores.redis_near_duplicates import RedisNearDuplicateLog

__all__ = [
    "DUPLICATE_FLAG",
    "NEAR_BATCH",
    "DuplicatePage",
    "DuplicatePageGate",
    "SignatureMiddleware",
]

logger = logging.getLogger(__name__)

#: near-duplicate page records written to Redis at a time (each write reads the others' too)
NEAR_BATCH = 100
#: seconds after which a page's check first reads what the other processes of the scope wrote
#: to Redis (writing what is pending): a crawl that fetches few pages still learns of theirs
NEAR_SYNC_SECONDS = 5.0
_FAILED = object()  # what a failed signature index answers: no verdict, the page passes as new
#: the flag (``Response.flags``) of a duplicate page the gate is to drop
DUPLICATE_FLAG = "urlunify_duplicate"


class DuplicatePage(IgnoreRequest):
    """A response whose body text was already seen on another page of the site."""


class DuplicatePageGate:
    """Spider middleware (the add-on enables it at 1: first in the spider's input chain): a
    response :class:`SignatureMiddleware` flagged as a duplicate page stops here, after the engine
    counted it as received (see the module's doc)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DuplicatePageGate:
        context = UnifyContext.of(crawler)
        s = context.settings
        if (
            not context.enabled
            or not s["URLUNIFY_SIGNATURES"]
            or not s["URLUNIFY_DROP_DUPLICATE_RESPONSES"]
        ):
            raise NotConfigured
        return cls()

    def process_spider_input(self, response: Response) -> None:
        if DUPLICATE_FLAG in response.flags:
            raise DuplicatePage(
                f"{response.url} has the body text of {response.meta.get(DUPLICATE_OF_META)}"
            )

    def process_spider_exception(
        self, response: Response, exception: Exception
    ) -> Iterable[Any] | None:
        # the request's errback has had it; without one, it ends here, as HttpError does
        return [] if isinstance(exception, DuplicatePage) else None


class SignatureMiddleware:
    """Downloader middleware: page signatures and duplicate pages; each page goes on to the
    learning session and the declared canonicals."""

    def __init__(self, crawler: Crawler, context: UnifyContext, store: SignatureStore) -> None:
        s = context.settings
        self.crawler = crawler
        self.context = context
        self.store = store
        self.drop: bool = s["URLUNIFY_DROP_DUPLICATE_RESPONSES"]
        #: whether DuplicatePageGate drops the duplicate pages (known at the first one)
        self._gate: bool | None = None
        self.max_bytes: int = s["URLUNIFY_SIGNATURE_MAX_BYTES"]
        self.granularity: str = s["URLUNIFY_SIGNATURE_GRANULARITY"]
        self.near = NearDuplicatePages.of(crawler, s) if s["URLUNIFY_NEAR_DUPLICATES"] else None
        #: the JOBDIR file the near-duplicate indexes are kept in (with a memory store)
        self.near_path: Path | None = None
        #: with a Redis store: the scope's list of near-duplicate pages
        self.near_log: RedisNearDuplicateLog | None = None
        #: when it was last written and read (time.monotonic())
        self._near_synced = 0.0
        stores = crawl_stores(crawler)
        if self.near is not None and stores.in_redis:
            from ..stores.redis_near_duplicates import RedisNearDuplicateLog

            self.near_log = RedisNearDuplicateLog(
                stores.client(),
                stores.keys()["signatures"] + ":near",
                unavailable_timeout=stores.unavailable_timeout,
            )
            log = self.near_log
            read = self.near.replay(guarded(crawler, lambda: log.exchange([]), []))
            self.near.pending = []
            self._near_synced = time.monotonic()
            if read:
                logger.info(
                    "Started with the near-duplicate fingerprints of %d pages from %s", read, log
                )
        elif self.near is not None and stores.jobdir is not None:
            self.near_path = stores.jobdir / NEAR_DUPLICATES_FILENAME
            if self.near.load(self.near_path):
                logger.info(
                    "Resumed with the near-duplicate fingerprints of %d pages from %s",
                    len(self.near),
                    self.near_path,
                )
        self.near_distance = distance_for(s["URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE"])
        self.canonicals = (
            Canonicals(
                context.stats,
                self.granularity,
                distance_for(s["URLUNIFY_NEAR_DUPLICATE_CANONICAL_RESEMBLANCE"])
                if self.near is not None
                else None,
            )
            if s["URLUNIFY_CANONICALS"]
            else None
        )
        self.learning: LearningSession | None = None
        if s["URLUNIFY_LEARN"]:
            spider = getattr(crawler, "spider", None)
            self.learning = LearningSession(
                crawler,
                context.stats,
                context,
                crawl_stores(crawler),
                sites=context.policy.sites or (crawl_sites(spider) if spider is not None else []),
                min_pairs=s["URLUNIFY_LEARN_MIN_PAIRS"],
                record_url=self._record_url,
                holds_identifier=self._holds_identifier,
            )
            context.probation = self.learning.probation
            crawler.signals.connect(self._resume_fetched, signal=signals.spider_opened)
        context.learning = self.learning
        context.marks_duplicates = True
        context.connect_summary()
        crawler.signals.connect(self.close, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SignatureMiddleware:
        context = UnifyContext.of(crawler)
        if not context.enabled or not context.settings["URLUNIFY_SIGNATURES"]:
            raise NotConfigured
        store = crawl_stores(crawler).signatures()
        if isinstance(store, JobdirSignatureStore) and not len(store):
            _warn_if_lost(store)
        return cls(crawler, context, store)

    # -- per response ------------------------------------------------------------------------

    def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        if not 200 <= response.status < 300 or request.meta.get("urlunify") is False:
            return response
        # a body above max_bytes is hashed raw: decoding it would only cost memory
        decoded = (
            response.text
            if isinstance(response, TextResponse) and len(response.body) <= self.max_bytes
            else None
        )
        # the text is read from the tree of Scrapy's selector, built here if the spider has not:
        # the spider's response.css() reuses it, so the page is parsed once
        sig, evidence = page_signature(
            response.body,
            _content_type(response),
            decoded,
            self.max_bytes,
            (lambda: response.selector.root) if isinstance(response, HtmlResponse) else None,
        )
        request.meta[SIGNATURE_META] = (
            sig.hex()
        )  # response.meta is this dict once the response reaches the spider
        unifier = self.context.unifier
        try:
            identifier = unifier.identify(response.url)
            # the index compares pages by the settings' identifiers, not the learned ones: once a
            # rule merges a print view with its article, a print view fetched before the rule
            # must still be seen as the duplicate it is, not as the article fetched again
            base_identifier = unifier_for(self.context.base_policy).identify(response.url)
        except InvalidURL:
            return response
        host = host_of(response.url)
        identity_host = unifier.host_rules(host).identity_host if host else ""
        site = site_key(identity_host, self.granularity)
        # one index per scope and site: two scopes sharing a store never see each other's pages;
        # a store that fails (the crawl closes) leaves the page new as far as we know
        site_index = f"{self.context.scope or ''}|{site}"
        key = site_index.encode() + b"\0" + sig
        earlier = guarded(
            self.crawler, lambda: self.store.get_or_set(key, base_identifier), _FAILED
        )
        if earlier is _FAILED:
            return response
        near = self.near
        fp = found = None
        if (
            near is not None
            and evidence
            and isinstance(response, HtmlResponse)
            and earlier in (None, base_identifier)
            and len(response.body) <= near.max_body
        ):
            # an exact duplicate of another page is that page: nothing nearer to find
            if (
                self.near_log is not None
                and time.monotonic() - self._near_synced >= NEAR_SYNC_SECONDS
            ):
                self._sync_near()  # before the check: the page is compared with the others' pages too
            fp, found = near.check(site_index, response.selector.root, base_identifier, sig)
            if near.pending is not None and len(near.pending) >= NEAR_BATCH:
                self._sync_near()
            if found is not None:
                near.mark(response.url, found)  # for the item pipeline, whose threshold is its own
                if found.distance <= self.near_distance:
                    self._near_duplicate(request, response.url, found)
        canonicals = self.canonicals
        if canonicals is not None:
            canonicals.fetched(identifier, sig, response.url, fp)
        # the learner sees near-duplicates under one signature (for exact ones, the page repeated),
        # unless the page shows the value its URL differs by (learning/value_shown.py)
        learn_sig = (
            near.group(earlier if isinstance(earlier, str) else base_identifier, sig)
            if near is not None and evidence
            else sig
        )
        if (
            learn_sig != sig
            and found is not None
            and found.of is not None
            and isinstance(response, HtmlResponse)
            and shows_own_value(
                response.url, found.of, lambda: tree_body_text(response.selector.root)
            )
        ):
            learn_sig = sig
            self.context.inc("learned/value_shown")
        if self.learning is not None:
            self.learning.page_fetched(
                request,
                response.url,
                identifier,
                base_identifier,
                identity_host,
                learn_sig,
                evidence,
            )
        if canonicals is not None and isinstance(response, TextResponse):
            trusted = canonicals.trusted(response, identifier, site, sig, unifier, fp)
            if trusted is not None:
                self._trusted_canonical(*trusted, learn_sig, evidence)
        if (
            self.context.frontier is not None
        ):  # a new page: neither a duplicate nor a near-duplicate
            self.context.frontier.fetched(
                request, earlier is None and RESEMBLANCE_META not in request.meta
            )
        if earlier is None or earlier == base_identifier:
            return response
        self.context.inc("signature/duplicates")
        request.meta[DUPLICATE_OF_META] = earlier
        logger.debug(
            "Duplicate page %s: same body text as %s (signature %s)",
            response.url,
            earlier,
            sig.hex(),
        )
        if not self.drop:
            return response
        df = self.context.dupefilter
        if df is not None and df.resume_log is not None:
            df.mark_done(request)  # handled: a resume must not fetch it again
        if self._gate is None:
            self._gate = any(
                isinstance(mw, DuplicatePageGate) for mw in spider_middlewares(self.crawler) or ()
            )
        if not self._gate:
            raise DuplicatePage(f"{response.url} has the body text of {earlier}")
        response.flags.append(DUPLICATE_FLAG)  # received, then dropped by the gate
        return response

    def _near_duplicate(self, request: Request, url: str, found: NearDuplicate) -> None:
        """A page nearly the same as an earlier page: marked, its links still followed."""
        self.context.inc("signature/near_duplicates")
        if found.of is not None:
            request.meta[NEAR_DUPLICATE_OF_META] = found.of
        request.meta[RESEMBLANCE_META] = round(found.resemblance, 4)
        logger.debug(
            "Near-duplicate page %s: %.1f%% like %s (%d bits)",
            url,
            100 * found.resemblance,
            found.of or "a page fetched long before",
            found.distance,
        )

    def _trusted_canonical(self, url: str, identity_host: str, sig: bytes, evidence: bool) -> None:
        """A declared canonical of a site whose canonicals proved true: its page was obtained."""
        if self._record_url(url):
            self.context.inc("canonical/recorded")
        if self.learning is not None and evidence:
            self.learning.learn(url, identity_host, sig)

    # -- what the learning session asks of the dupefilter ------------------------------------------

    def _record_url(self, url: str) -> bool:
        df = self.context.dupefilter
        return df is not None and df.record_url(url)

    def _holds_identifier(self, identifier: str) -> bool:
        df = self.context.dupefilter
        return df is not None and df.holds_identifier(identifier)

    def _resume_fetched(self, spider: Any = None) -> None:
        """``spider_opened`` of a resumed JOBDIR job: the pages the earlier runs fetched (the
        last ``RECENT`` requests its resume log says were handled) count as fetched for the
        dequeue check and the probation samples, as the pages this run fetches do: a request
        queued before a kill, under other rules, is dropped at dequeue when the killed run
        fetched its page."""
        df = self.context.dupefilter
        log = df.resume_log if df is not None else None
        store = self.store
        if (
            log is None
            or not log.resumed
            or not isinstance(store, JobdirSignatureStore)
            or self.learning is None
        ):
            return
        ctx = self.context
        pages = fetched_before(log, store, ctx.scope, unifier_for(ctx.base_policy), RECENT)
        known = self.learning.resumed(pages)
        if known:
            logger.info("Resumed with %d pages fetched before, from %s", known, log.path)

    def _sync_near(self) -> None:
        """One round trip to the scope's Redis list: append the pages added since the last sync,
        and add to the indexes the pages the other processes appended meanwhile."""
        near, log = self.near, self.near_log
        if near is None or log is None:
            return
        self._near_synced = time.monotonic()
        records, near.pending = near.pending or [], []
        read = near.replay(guarded(self.crawler, lambda: log.exchange(records), []))
        if read:
            self.context.inc("signature/near_records_read", read)

    def close(self, spider: Any = None, reason: str = "") -> None:
        count_outages(self.crawler, self.store)
        if self.near is not None and self.near_log is not None and self.near.pending:
            records, self.near.pending = self.near.pending, []
            log = self.near_log
            guarded(self.crawler, lambda: log.append(records), None)  # the last write reads nothing
        if self.near_log is not None:
            count_outages(self.crawler, self.near_log)
        if self.near is not None and self.near_path is not None:
            try:
                self.near.save(self.near_path)
            except OSError as e:
                logger.error(
                    "Could not save the near-duplicate fingerprints to %s: %s", self.near_path, e
                )
        if self.learning is not None:
            self.learning.close()
        self.store.close()


def _warn_if_lost(store: JobdirSignatureStore) -> None:
    """An empty signature log in a JOBDIR whose seen log is not: it was emptied or deleted."""
    seen = Path(store.path).with_name(SEEN_FILENAME)
    if not seen.exists():
        return
    with RecordLog(seen, 8, readonly=True) as log:
        count = log.record_count
    if count:
        logger.warning(
            "%s is empty or missing while the job has %d seen requests: the pages "
            "fetched before this run are unknown to the duplicate-page check, so their "
            "duplicates are fetched and kept",
            store.path,
            count,
        )


def _content_type(response: Response) -> str | None:
    value = response.headers.get(b"Content-Type")
    return value.decode("latin-1") if value else None
