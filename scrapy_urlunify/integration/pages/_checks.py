"""The checks of each downloaded page, for ``SignatureMiddleware`` (:mod:`._signatures`): its
signature and the site's signature index, its near-duplicate signature, its declared canonical;
then the learning session and the frontier hear about it (docs/rules.md, "In a crawl: page
signatures and duplicate items"; docs/near_duplicates.md)."""

from __future__ import annotations

import contextlib
import logging
import time
from functools import partial
from hashlib import blake2b
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.http import HtmlResponse, TextResponse

from scrapy_urlunify.core._url import InvalidURL, host_of
from scrapy_urlunify.integration.crawl._meta import (
    CANONICAL_URL_META,
    DUPLICATE_OF_META,
    NEAR_DUPLICATE_OF_META,
    NOINDEX_META,
    RESEMBLANCE_META,
    SIGNATURE_META,
)
from scrapy_urlunify.integration.links._robots_meta import Noindex, passes_through
from scrapy_urlunify.integration.pages._canonicals import Canonicals
from scrapy_urlunify.integration.pages._citation_hold import CitationHold
from scrapy_urlunify.integration.pages._duplicate_rows import NONE, DuplicateRows
from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicate, distance_for
from scrapy_urlunify.integration.pages._shortlinks import Shortlinks
from scrapy_urlunify.integration.queue._frontier import spelling_of
from scrapy_urlunify.integration.queue._novelty import page_blocks
from scrapy_urlunify.integration.rules._fetched import RECENT
from scrapy_urlunify.integration.rules._samples import sample_priority
from scrapy_urlunify.integration.seen._resume import fetched_before
from scrapy_urlunify.learning._page_signature import page_signature, site_key, tree_body_text
from scrapy_urlunify.learning._value_shown import shows_own_value
from scrapy_urlunify.stores._jobdir import (
    NEAR_DUPLICATES_FILENAME,
    SEEN_FILENAME,
    JobdirSignatureStore,
)
from scrapy_urlunify.stores._log import RecordLog

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from scrapy_urlunify.integration.crawl._faults import StoreFaults
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs
    from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages
    from scrapy_urlunify.integration.queue._frontier import Frontier
    from scrapy_urlunify.integration.rules._session import LearningSession
    from scrapy_urlunify.integration.seen._seen import SeenKeys
    from scrapy_urlunify.stores._base import SignatureStore
    from scrapy_urlunify.stores._factory import Stores
    from scrapy_urlunify.stores._redis_near_duplicates import RedisNearDuplicateLog

logger = logging.getLogger(__name__)

#: near-duplicate records written to a shared (Redis) log per round trip, at most
NEAR_BATCH = 100
#: the longest a process waits before it reads the records other processes wrote
NEAR_SYNC_SECONDS = 5.0
_FAILED = object()
#: the tree of Scrapy's selector of a response (built on first use, then the spider's too)
_ROOT = attrgetter(
    "selector.root"
)  # what a failed signature index answers: no verdict, the page passes as new


class PageChecks:
    """The checks of a crawl's downloaded pages, and where each page goes next."""

    def __init__(
        self,
        crawler: Crawler,
        settings: dict[str, Any],
        stats: UnifyStats,
        faults: StoreFaults,
        policies: CrawlPolicies,
        stores: Stores,
        store: SignatureStore,
        *,
        seen: SeenKeys | None,
        near: NearDuplicatePages | None,
        learning: LearningSession | None,
        frontier: Frontier | None,
        canonical_urls: CanonicalURLs | None = None,
        allowed_domains: tuple[str, ...] = (),
        follow_duplicates: bool = False,
    ) -> None:
        s = settings
        self.stats = stats
        self.faults = faults
        self.policies = policies
        self.store = store
        self.seen = seen
        self.near = near
        self.learning = learning
        self.frontier = frontier
        self.canonical_urls = canonical_urls
        #: pages declaring noindex: their items dropped; without nofollow, no new content to the
        #: frontier
        self.drop_noindex_items: bool = s["URLUNIFY_DROP_NOINDEX_ITEMS"]
        self.noindex = Noindex() if frontier is not None or self.drop_noindex_items else None
        self.drop: bool = s["URLUNIFY_DROP_DUPLICATE_RESPONSES"]
        #: the duplicate pages whose rows are their own (their links followed)
        self.duplicate_rows = (
            DuplicateRows(
                policies,
                near,
                seen,
                allowed_domains,
                follow=follow_duplicates,
            )
            if near is not None
            else None
        )
        self.max_bytes: int = s["URLUNIFY_SIGNATURE_MAX_BYTES"]
        self.granularity: str = s["URLUNIFY_SIGNATURE_GRANULARITY"]
        #: the JOBDIR file the near-duplicate indexes are kept in (with a memory store)
        self.near_path: Path | None = None
        #: with a Redis store: the scope's list of near-duplicate pages
        self.near_log: RedisNearDuplicateLog | None = None
        #: when it was last written and read (time.monotonic())
        self._near_synced = 0.0
        if isinstance(store, JobdirSignatureStore) and not len(store):
            _warn_if_lost(store)
        if near is not None and stores.in_redis:
            from scrapy_urlunify.stores._redis_near_duplicates import RedisNearDuplicateLog

            self.near_log = log = RedisNearDuplicateLog(
                stores.client(),
                stores.keys()["signatures"] + ":near",
                unavailable_timeout=stores.unavailable_timeout,
            )
            read = near.replay(faults.guarded(lambda: log.exchange([]), []))
            near.pending = []
            self._near_synced = time.monotonic()
            if read:
                logger.info(
                    "Started with the near-duplicate signatures of %d pages from %s", read, log
                )
        elif near is not None and stores.jobdir is not None:
            self.near_path = stores.jobdir / NEAR_DUPLICATES_FILENAME
            if near.load(self.near_path):
                logger.info(
                    "Resumed with the near-duplicate signatures of %d pages from %s",
                    len(near),
                    self.near_path,
                )
        self.near_distance = distance_for(s["URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE"])
        canonical_distance = (
            distance_for(s["URLUNIFY_NEAR_DUPLICATE_CANONICAL_RESEMBLANCE"])
            if near is not None
            else None
        )
        self.canonicals = (
            Canonicals(
                stats,
                self.granularity,
                canonical_distance,
                checked=learning.canonical_checked if learning is not None else None,
            )
            if s["URLUNIFY_CANONICALS"]
            else None
        )
        self.shortlinks = (
            Shortlinks(
                stats,
                self.granularity,
                self.canonicals,
                policies,
                seen=seen,
                learning=learning,
                checked=learning.canonical_checked if learning is not None else None,
                crawler=crawler,
                priority=sample_priority(s),
            )
            if self.canonicals is not None
            else None
        )
        #: the items of pages whose claim is on probation, waiting for it to be checked
        self.hold = (
            CitationHold(crawler, stats, self.canonicals, canonical_urls)
            if self.canonicals is not None
            and canonical_urls is not None
            and s["URLUNIFY_CANONICAL_URL_FIELD"]
            else None
        )
        if learning is not None:
            crawler.signals.connect(self._resume_fetched, signal=signals.spider_opened)
        crawler.signals.connect(self.close, signal=signals.spider_closed)

    # -- per response ------------------------------------------------------------------------

    def check(self, request: Request, response: Response) -> str | None:
        """Check a downloaded page: None for a page to hand to the spider, else the identifier
        of the earlier page whose body text it repeats (a duplicate page). A duplicate page that
        links other pages than that page goes to the spider too, marked (its items dropped)."""
        if not 200 <= response.status < 300 or request.meta.get("urlunify") is False:
            return None
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
            partial(_ROOT, response) if isinstance(response, HtmlResponse) else None,
        )
        request.meta[SIGNATURE_META] = (
            sig.hex()
        )  # response.meta is this dict once the response reaches the spider
        unifier = self.policies.unifier
        try:
            identifier = unifier.identify(response.url)
            # the index compares pages by the settings' identifiers, not the learned ones: once a
            # rule merges a print view with its article, a print view fetched before the rule
            # must still be seen as the duplicate it is, not as the article fetched again
            base_identifier = self.policies.base_unifier.identify(response.url)
        except InvalidURL:
            return None
        host = host_of(response.url)
        identity_host = unifier.host_rules(host).identity_host if host else ""
        site = site_key(identity_host, self.granularity)
        # one index per scope and site: two scopes sharing a store never see each other's pages;
        # a store that fails (the crawl closes) leaves the page new as far as we know
        site_index = f"{self.policies.scope or ''}|{site}"
        key = site_index.encode() + b"\0" + sig
        earlier = self.faults.guarded(lambda: self.store.get_or_set(key, base_identifier), _FAILED)
        if earlier is _FAILED:
            return None
        near = self.near
        near_sig = found = None
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
                # before the check: the page is compared with the others' pages too
                self._sync_near()
            near_sig, found = near.check(
                site_index, response.selector.root, base_identifier, sig, response.url
            )
            if near.pending is not None and len(near.pending) >= NEAR_BATCH:
                self._sync_near()
            if found is not None:
                near.mark(response.url, found)  # for the item pipeline, whose threshold is its own
                if found.distance <= self.near_distance:
                    self._near_duplicate(request, response.url, found)
        # a duplicate page whose rows are its own (a list whose rows are links, after a
        # text-only view of it): its links are followed, and it is another page to the learner
        own = NONE
        if (
            self.duplicate_rows is not None
            and evidence
            and isinstance(earlier, str)
            and earlier != base_identifier
            and isinstance(response, HtmlResponse)
            and len(response.body) <= self.duplicate_rows.near.max_body
        ):
            own = self.duplicate_rows.check(response, earlier)
        canonicals = self.canonicals
        shortlinks = self.shortlinks
        if canonicals is not None:
            canonicals.fetched(identifier, sig, response.url, near_sig)
        if shortlinks is not None:
            shortlinks.fetched(identifier, sig, near_sig)
        # the learner sees near-duplicates under one signature (for exact ones, the page repeated),
        # unless the page shows the value its URL differs by (learning/_value_shown.py), or links
        # other pages than the page it is near (one more row: a closed issue only this filter
        # lists; merged into that page, what only it links would never be fetched), as its items
        # are kept
        learn_sig = (
            near.group(earlier if isinstance(earlier, str) else base_identifier, sig)
            if near is not None and evidence
            else sig
        )
        apart = False
        if own.rows:
            # one text, other rows: a signature of its own, the same for every page that shows
            # these rows in this text (exact duplicates are not in the near-duplicate index)
            self.stats.inc("learned/other_links")
            learn_sig = blake2b(sig + own.rows, digest_size=len(sig)).digest()
        elif near is not None and learn_sig != sig and found is not None:
            if (
                found.of is not None
                and isinstance(response, HtmlResponse)
                and shows_own_value(
                    response.url, found.of, lambda: tree_body_text(response.selector.root)
                )
            ):
                self.stats.inc("learned/value_shown")
                apart = True
            elif found.other_links:
                self.stats.inc("learned/other_links")
                apart = True
        if apart and near is not None:
            learn_sig = sig
            # and for the exact duplicates of this page, fetched later: one text, one signature
            # (else ?orderby=price is "other content" than ?orderby=price&v=1, and v "matters")
            near.keep_apart(base_identifier, sig)
        trusted = claim = declared = one_with = None
        spellings: tuple[str, ...] = ()
        if canonicals is not None and isinstance(response, TextResponse):
            declared = canonicals.declared(response, identifier, site, unifier)
            one_with = canonicals.one_with
            # the site says its text is on its canonical's path too (a claim that is false puts
            # no text there, and the learner compares texts), whether a rule in force merges
            # the two or not: a probation sample of /shop/<category>/<slug> says it as well
            if declared is not None:
                spellings = (declared[0],)
                trusted = canonicals.trusted(
                    response, declared, identifier, site, sig, near_sig, (learn_sig, evidence)
                )
            elif one_with is not None and not canonicals.names_itself:
                spellings = (one_with,)
            claim = canonicals.true_claims.get(identifier)
            if (
                self.hold is not None
                and declared is not None
                and trusted is None
                and claim is None
                and canonicals.awaits(declared[1])
            ):
                self.hold.on_probation(response.url, identifier, declared, site, len(response.body))
            if shortlinks is not None:
                shortlinks.declared(response, identifier, site, unifier, sig, near_sig)
            if canonicals.names_itself and evidence and self.learning is not None:
                self.learning.standalone(response.url)
        if self.learning is not None:
            self.learning.page_fetched(
                request,
                response.url,
                identifier,
                base_identifier,
                identity_host,
                learn_sig,
                evidence,
                spellings,
            )
        if trusted is not None:
            self._trusted_canonical(*trusted, learn_sig, evidence, response.url)
        for released in canonicals.release() if canonicals is not None else ():
            self.stats.inc("canonical/released")
            self._trusted_canonical(*released)
        if self.canonical_urls is not None:
            self.canonical_urls.home(response.url)
            # a rule this very page completed gives it another identifier from now on: its
            # claim is kept under that one, where the citation is looked up
            cited_as = identifier
            if self.policies.unifier is not unifier:
                with contextlib.suppress(InvalidURL):
                    cited_as = self.policies.unifier.identify(response.url)
            if claim is not None:
                self.canonical_urls.declared(cited_as, claim)
            elif one_with is not None:
                self.canonical_urls.spelled(cited_as, one_with, response.url)
            request.meta[CANONICAL_URL_META] = self.canonical_urls.of(response.url)
        if self.hold is not None:
            self.hold.settle()
        # every HTML page is asked: the start page decides whether its host's pages can be
        # noindex at all, and an indexable page whether their items are dropped
        directives = (
            self.noindex.directives(response, request.meta)
            if self.noindex is not None
            else frozenset()
        )
        if (
            self.drop_noindex_items
            and directives
            and self.noindex is not None
            and self.noindex.indexed(response.url)
        ):
            request.meta[NOINDEX_META] = True
        frontier = self.frontier
        if frontier is not None:
            # a new page (neither a duplicate nor a near-duplicate) of new text
            new = earlier is None and RESEMBLANCE_META not in request.meta
            if new:
                new = frontier.new_text(
                    page_blocks(response, self.max_bytes), passes_through(directives)
                )
            of = earlier if isinstance(earlier, str) else request.meta.get(NEAR_DUPLICATE_OF_META)
            frontier.fetched(request, new, of is not None and spelling_of(base_identifier, of))
        if earlier is None or earlier == base_identifier:
            return None
        self.stats.inc("signature/duplicates")
        request.meta[DUPLICATE_OF_META] = earlier  # its items are dropped by SignaturePipeline
        logger.debug(
            "Duplicate page %s: same body text as %s (signature %s)%s",
            response.url,
            earlier,
            sig.hex(),
            "; it links other pages: its links are followed" if own.follow else "",
        )
        if own.follow:
            self.stats.inc("signature/duplicates_followed")
            return None
        return earlier  # type: ignore[return-value]

    def dropped(self, request: Request) -> None:
        """A duplicate page is dropped: handled (a resume must not fetch it again)."""
        if self.seen is not None and self.seen.resume_log is not None:
            self.seen.mark_done(request)

    def _near_duplicate(self, request: Request, url: str, found: NearDuplicate) -> None:
        """A page nearly the same as an earlier page: marked, its links still followed."""
        self.stats.inc("signature/near_duplicates")
        if found.of is not None:
            request.meta[NEAR_DUPLICATE_OF_META] = found.of
        request.meta[RESEMBLANCE_META] = round(found.resemblance, 4)
        logger.debug(
            "Near-duplicate page %s: %.1f%% like %s (%d bits)%s",
            url,
            100 * found.resemblance,
            found.of or "a page fetched long before",
            found.distance,
            "; it links to other pages, or in another order: its items are kept"
            if found.other_links
            else "",
        )

    def _trusted_canonical(
        self,
        url: str,
        identifier: str,
        identity_host: str,
        sig: bytes,
        evidence: bool,
        claimer: str,
    ) -> None:
        """A declared canonical of a site whose canonicals proved true: its page was obtained
        (the page of ``claimer``, which declared it)."""
        if self.seen is not None and self.seen.record_url(url):
            self.stats.inc("canonical/recorded")
        learning = self.learning
        if learning is not None:
            learning.obtained(url, identifier, sig)  # a product linked sorted, then plain
            if evidence:
                learning.learn(url, identity_host, sig, (claimer,))

    def _resume_fetched(self, spider: Any = None) -> None:
        """``spider_opened`` of a resumed JOBDIR job: the pages the earlier runs fetched (the
        last ``RECENT`` requests its resume log says were handled) count as fetched for the
        dequeue check and the probation samples, as the pages this run fetches do: a request
        queued before a kill, under other rules, is dropped at dequeue when the killed run
        fetched its page."""
        log = self.seen.resume_log if self.seen is not None else None
        store = self.store
        if (
            log is None
            or not log.resumed
            or not isinstance(store, JobdirSignatureStore)
            or self.learning is None
        ):
            return
        policies = self.policies
        pages = fetched_before(log, store, policies.scope, policies.base_unifier, RECENT)
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
        read = near.replay(self.faults.guarded(lambda: log.exchange(records), []))
        if read:
            self.stats.inc("signature/near_records_read", read)

    def close(self, spider: Any = None, reason: str = "") -> None:
        self.faults.count_outages(self.store)
        if self.near is not None and self.near_log is not None and self.near.pending:
            records, self.near.pending = self.near.pending, []
            log = self.near_log
            self.faults.guarded(lambda: log.append(records), None)  # the last write reads nothing
        if self.near_log is not None:
            self.faults.count_outages(self.near_log)
        if self.near is not None and self.near_path is not None:
            try:
                self.near.save(self.near_path)
            except OSError as e:
                logger.error(
                    "Could not save the near-duplicate signatures to %s: %s", self.near_path, e
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
