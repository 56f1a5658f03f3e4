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
   no links followed: the seed's "will not be further processed");
3. with ``URLUNIFY_LEARN`` (default off), the page goes to the crawl's learning session
   (:mod:`.learning_session`: the learner, the fetched pages, rule probation);
4. with ``URLUNIFY_CANONICALS`` (default on), a declared canonical goes to :mod:`.canonicals`,
   which trusts a site's canonicals once verified: the canonical URL is then recorded as seen,
   and is evidence for learning.

Settings: ``URLUNIFY_SIGNATURES`` (default on), ``URLUNIFY_SIGNATURE_MAX_BYTES`` (32 MiB: larger
bodies are hashed raw, and never teach the learner), ``URLUNIFY_SIGNATURE_GRANULARITY``, ``URLUNIFY_DROP_DUPLICATE_RESPONSES``,
``URLUNIFY_LEARN``, ``URLUNIFY_LEARN_MIN_PAIRS`` (3), ``URLUNIFY_CANONICALS``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, TextResponse

from ..core.unify import unifier_for
from ..core.url import InvalidURL, host_of
from ..learning.page_signature import page_signature, site_key
from ..stores import SEEN_FILENAME, JobdirSignatureStore, RecordLog, SignatureStore
from .canonicals import Canonicals
from .context import UnifyContext
from .fetched import RECENT
from .learning_session import LearningSession
from .meta import DUPLICATE_OF_META, SIGNATURE_META
from .resume import fetched_before
from .settings import crawl_sites
from .store_faults import count_outages, crawl_stores, guarded

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["DuplicatePage", "SignatureMiddleware"]

logger = logging.getLogger(__name__)

_FAILED = object()  # what a failed signature index answers: no verdict, the page passes as new


class DuplicatePage(IgnoreRequest):
    """A response whose body text was already seen on another page of the site."""


class SignatureMiddleware:
    """Downloader middleware: page signatures and duplicate pages; each page goes on to the
    learning session and the declared canonicals."""

    def __init__(self, crawler: Crawler, context: UnifyContext, store: SignatureStore) -> None:
        s = context.settings
        self.crawler = crawler
        self.context = context
        self.store = store
        self.drop: bool = s["URLUNIFY_DROP_DUPLICATE_RESPONSES"]
        self.max_bytes: int = s["URLUNIFY_SIGNATURE_MAX_BYTES"]
        self.granularity: str = s["URLUNIFY_SIGNATURE_GRANULARITY"]
        self.canonicals = Canonicals(context.stats, self.granularity) if s["URLUNIFY_CANONICALS"] else None
        self.learning: LearningSession | None = None
        if s["URLUNIFY_LEARN"]:
            spider = getattr(crawler, "spider", None)
            self.learning = LearningSession(
                crawler, context.stats, context, crawl_stores(crawler),
                sites=context.policy.sites or (crawl_sites(spider) if spider is not None else []),
                min_pairs=s["URLUNIFY_LEARN_MIN_PAIRS"],
                record_url=self._record_url, holds_identifier=self._holds_identifier)
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

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if not 200 <= response.status < 300 or request.meta.get("urlunify") is False:
            return response
        # a body above max_bytes is hashed raw: decoding it would only cost memory
        decoded = (response.text if isinstance(response, TextResponse) and len(response.body) <= self.max_bytes
                   else None)
        # the text is read from the tree of Scrapy's selector, built here if the spider has not:
        # the spider's response.css() reuses it, so the page is parsed once
        sig, evidence = page_signature(response.body, _content_type(response), decoded, self.max_bytes,
                                       (lambda: response.selector.root) if isinstance(response, HtmlResponse) else None)
        request.meta[SIGNATURE_META] = sig.hex()  # response.meta is this dict once the response reaches the spider
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
        key = f"{self.context.scope or ''}|{site}".encode() + b"\0" + sig
        earlier = guarded(self.crawler, lambda: self.store.get_or_set(key, base_identifier), _FAILED)
        if earlier is _FAILED:
            return response
        canonicals = self.canonicals
        if canonicals is not None:
            canonicals.fetched(identifier, sig, response.url)
        if self.learning is not None:
            self.learning.page_fetched(request, response.url, identifier, base_identifier, identity_host, sig,
                                       evidence)
        if canonicals is not None and isinstance(response, TextResponse):
            trusted = canonicals.trusted(response, identifier, site, sig, unifier)
            if trusted is not None:
                self._trusted_canonical(*trusted, sig, evidence)
        if earlier is None or earlier == base_identifier:
            return response
        self.context.inc("signature/duplicates")
        request.meta[DUPLICATE_OF_META] = earlier
        logger.debug("Duplicate page %s: same body text as %s (signature %s)", response.url, earlier, sig.hex())
        if not self.drop:
            return response
        df = self.context.dupefilter
        if df is not None and df.resume_log is not None:
            df.mark_done(request)  # handled: a resume must not fetch it again
        raise DuplicatePage(f"{response.url} has the body text of {earlier}")

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
        if log is None or not log.resumed or not isinstance(store, JobdirSignatureStore) or self.learning is None:
            return
        ctx = self.context
        pages = fetched_before(log, store, ctx.scope, unifier_for(ctx.base_policy), RECENT)
        known = self.learning.resumed(pages)
        if known:
            logger.info("Resumed with %d pages fetched before, from %s", known, log.path)

    def close(self, spider: Any = None, reason: str = "") -> None:
        count_outages(self.crawler, self.store)
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
        logger.warning("%s is empty or missing while the job has %d seen requests: the pages "
                       "fetched before this run are unknown to the duplicate-page check, so their "
                       "duplicates are fetched and kept", store.path, count)


def _content_type(response: Response) -> str | None:
    value = response.headers.get(b"Content-Type")
    return value.decode("latin-1") if value else None

