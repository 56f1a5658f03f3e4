"""``SignatureMiddleware``: duplicate pages stop the chain (FO-dpl), and teach the unifier.

A downloader middleware (the add-on enables it at 20, on the engine side of Scrapy's redirect
and retry middlewares, so it sees each final response once). For every 2xx response:

1. its signature (:mod:`scrapy_urlunify.learning.signatures`: MD5 of the body text) goes to
   ``response.meta["urlunify_signature"]`` (hex), before the spider callback;
2. the page-source hash index of its site (``URLUNIFY_SIGNATURE_GRANULARITY``: ``site``, the
   registrable domain after aliases, by default; or ``host``, or ``scope``) maps signature ->
   identifier of the first page seen with it. A response whose signature was first seen on a
   page with *another* identifier is a duplicate: ``meta["urlunify_duplicate_of"]`` names that
   page, stats ``urlunify/signature/duplicates``, one debug log line; with
   ``URLUNIFY_DROP_DUPLICATE_RESPONSES`` (default on) it never reaches the callback (no items,
   no links followed: the seed's "will not be further processed");
3. with ``URLUNIFY_LEARN`` (default off), pages that share a signature teach which query
   parameters and which hosts do not matter (:mod:`scrapy_urlunify.learning.learner`); adopted rules
   apply to the identifiers of the rest of the crawl, are stats ``urlunify/learned/...``, are
   logged at close as ready-to-paste settings, and are kept in the JOBDIR;
4. with ``URLUNIFY_CANONICALS`` (default on), a ``<link rel="canonical">`` or ``Link: <...>;
   rel="canonical"`` inside the same site is on probation: the first ``CANONICAL_PROBATION``
   (5) declared canonicals of a site are checked by fetching their target; once all were the
   same page, the site's canonicals are trusted (the canonical URL is marked seen, its content
   was obtained, and is evidence for learning). A canonical whose own page turns out different
   is a counter-example, logged at WARNING with both URLs, and the site's canonicals are
   ignored for the rest of the crawl (a template declaring the section page canonical for
   every article would otherwise hide the articles).

Settings: ``URLUNIFY_SIGNATURES`` (default on), ``URLUNIFY_SIGNATURE_MAX_BYTES`` (32 MiB: larger
bodies are hashed raw, and never teach the learner), ``URLUNIFY_SIGNATURE_GRANULARITY`` (formerly ``URLUNIFY_SIGNATURE_SCOPE``), ``URLUNIFY_DROP_DUPLICATE_RESPONSES``,
``URLUNIFY_LEARN``, ``URLUNIFY_LEARN_MIN_PAIRS`` (3), ``URLUNIFY_CANONICALS``.
"""

from __future__ import annotations

import json
import logging
import pickle
import re
from collections import OrderedDict
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, TextResponse
from scrapy.selector import Selector
from scrapy.utils.request import request_from_dict

from ..core.domains import within
from ..core.unify import unifier_for
from ..core.url import InvalidURL, host_of
from ..learning.persist import LearnedRulesStore
from ..learning.signatures import page_signature, site_key
from ..stores import (
    SEEN_FILENAME,
    JobdirSignatureStore,
    RecordLog,
    SignatureStore,
    StoreError,
    VarRecordLog,
)
from ..stores.base import KeptStore
from ..stores.memory import MemoryKeptStore
from .context import UnifyContext
from .meta import DUPLICATE_OF_META, PROBATION_META, SIGNATURE_META
from .store_faults import (
    STORE_FAULTS,
    count_outages,
    crawl_stores,
    store_failed,
    store_unavailable,
)

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..learning.learner import LearnedRule, Revocation
    from ..learning.persist import LearnedState
    from ..stores.redis_tables import RedisFetchedStore

__all__ = ["DuplicatePage", "SignatureMiddleware"]

logger = logging.getLogger(__name__)


#: bytes of a page searched for its ``<head>``'s end (a declared canonical is in the head)
HEAD_LIMIT = 256 * 1024
_HEAD_END = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
_CANONICAL_LINK = re.compile(r'<\s*([^>]*)>\s*;[^,]*\brel\s*=\s*"?canonical\b', re.IGNORECASE)
_RECENT = 100_000  # identifiers whose signature is remembered, to check canonical claims
#: requests a newly adopted rule merges that are fetched anyway to check it, each on its own path
RULE_PROBATION = 5
#: requests merged by rules still on probation, kept to be scheduled again if one is revoked
MERGED_KEPT = 10_000
#: prefix of the rule name of a kept entry that is a probation sample (fetched, awaiting its verdict)
_SAMPLE = "~"
#: declared canonicals of a site verified (target fetched, same signature) before they are trusted
CANONICAL_PROBATION = 5
_PLURAL = {"param": "params", "alias": "aliases", "path": "paths"}
LEARNING_INDEX_ENTRIES = 50_000  # ~450 B each: ~22 MB of recent evidence (learning.Learner)


class DuplicatePage(IgnoreRequest):
    """A response whose body text was already seen on another page of the site."""


class SignatureMiddleware:
    """Downloader middleware: page signatures, duplicate pages, learning, declared canonicals."""

    def __init__(self, crawler: Crawler, context: UnifyContext, store: SignatureStore) -> None:
        s = context.settings
        self.crawler = crawler
        self.context = context
        self.store = store
        self.drop: bool = s["URLUNIFY_DROP_DUPLICATE_RESPONSES"]
        self.canonicals: bool = s["URLUNIFY_CANONICALS"]
        self.max_bytes: int = s["URLUNIFY_SIGNATURE_MAX_BYTES"]
        self.granularity: str = s["URLUNIFY_SIGNATURE_GRANULARITY"]
        self.learner = None
        #: the learned rules in force, as a short digest ("" for none): a request stamped with
        #: another (``POLICY_META``) was judged under another policy, and is checked at dequeue
        self.policy_token = ""
        self._recent: OrderedDict[str, bytes] = OrderedDict()  # identifier -> signature
        self._fetched: OrderedDict[str, bytes] = OrderedDict()  # recent URLs -> signature, re-identified when a rule is learned
        self._fetched_ids: OrderedDict[str, tuple[str, bytes]] = OrderedDict()  # their identifiers now -> (url, signature)
        self._fetched_base: OrderedDict[str, None] = OrderedDict()  # their identifiers under the settings' policy
        self._probation: dict[tuple[str, str, str], _Probation] = {}  # rules adopted, not yet confirmed
        self._kept: dict[bytes, _Kept] = {}  # entry id -> a request merged while rules were on probation
        self._samples: dict[bytes, tuple[str, str, str]] = {}  # entry id -> rule of a sample awaiting its verdict
        self._kept_store: KeptStore = MemoryKeptStore()
        self._shared_fetched: RedisFetchedStore | None = None  # Redis: every process's fetches
        self._restored_entries: list[tuple[bytes, tuple[str, ...], bytes]] = []
        self._warned_unpicklable = False
        if s["URLUNIFY_LEARN"]:
            from ..learning.learner import Learner

            self.learner = Learner(min_pairs=s["URLUNIFY_LEARN_MIN_PAIRS"],
                                   sites=context.policy.sites or _spider_sites(crawler),
                                   max_entries=LEARNING_INDEX_ENTRIES)
            self._rules_store = _rules_store(crawler)
            stores = crawl_stores(crawler)
            self._kept_store = stores.kept()
            self._shared_fetched = stores.fetched()
            self._restore_learned()
            self._restored_entries = self._kept_store.entries()
            crawler.signals.connect(self._resume_kept, signal=signals.spider_opened)
            crawler.signals.connect(self._resume_fetched, signal=signals.spider_opened)
            crawler.signals.connect(self._verify_at_idle, signal=signals.spider_idle)
        self._claims: OrderedDict[str, tuple[bytes, str, str]] = OrderedDict()  # canonical id -> (sig, claimer, site)
        self._canonicals_verified: dict[str, int] = {}  # site -> declared canonicals found true
        self._canonicals_ignored: set[str] = set()  # sites with a declared canonical found false
        context.signatures = self
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
            page = unifier_for(self.context.base_policy).identify(response.url)
        except InvalidURL:
            return response
        host = host_of(response.url)
        identity_host = unifier.host_rules(host).identity_host if host else ""
        site = site_key(identity_host, self.granularity)
        if store_failed(self.crawler):  # the crawl is closing: no call would be answered
            return response
        # one index per scope and site: two scopes sharing a store never see each other's pages
        try:
            earlier = self.store.get_or_set(f"{self.context.scope or ''}|{site}".encode() + b"\0" + sig, page)
        except STORE_FAULTS as e:  # not a duplicate as far as we know; the crawl closes
            store_unavailable(self.crawler, e)
            return response
        self._check_claims(identifier, sig, response.url)
        if self.learner is not None:
            probe = request.meta.get(PROBATION_META)
            if probe is not None and evidence:
                self._check_sample(probe, response.url, sig)
            self._fetched_now(response.url, identifier, sig)
            self._remember(self._fetched_base, page, None)
            if evidence:  # the raw bytes of an HTML page change with any session id in a link
                self._learn(response.url, identity_host, sig)
            else:
                self.context.inc("learned/not_evidence")
        if self.canonicals and isinstance(response, TextResponse):
            self._canonical(response, identifier, site, sig, evidence)
        if earlier is None or earlier == page:
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

    # -- learning ------------------------------------------------------------------------------

    def _learn(self, url: str, identity_host: str, sig: bytes) -> None:
        learner = self.learner
        assert learner is not None
        version, known_revoked, known_unstable = learner.version, len(learner.revoked), len(learner.unstable)
        adopted = learner.observe(url, identity_host, sig)
        for unstable in learner.unstable[known_unstable:]:
            self.context.inc("learned/unstable")
            logger.info("Unstable page, not used for learning: %s gave two different signatures", unstable)
        if learner.version != version:
            self._apply_learned(adopted, list(learner.revoked[known_revoked:]))

    # -- probation of new rules ------------------------------------------------------------------

    def merged(self, request: Request) -> bool:
        """Called for a request the current policy merges with a page already seen (by the
        dupefilter, and at dequeue). True: fetch it anyway, a probation sample of a new rule
        that merged it (the next ``RULE_PROBATION`` of them, each on its own path). Otherwise,
        while a rule that merged it is on probation, the request is kept (at most
        ``MERGED_KEPT``, in the crawl's store too), scheduled again if that rule is revoked, and
        fetched as a sample if the crawl goes idle with the rule still on probation
        (:meth:`_verify_at_idle`): never lost, not even by a kill or in another process."""
        if PROBATION_META in request.meta:
            return True  # a sample already (let through by the dupefilter, now at dequeue)
        if not self._probation or request.method != "GET":
            return False
        url = request.url
        base = unifier_for(self.context.base_policy)
        host = host_of(url)
        try:
            identity_host = base.host_rules(host).identity_host if host else ""
        except InvalidURL:
            return False
        rules = [p for p in self._probation.values() if p.covers(url, identity_host)]
        if not rules:
            return False
        try:
            page = base.identify(url)
            identifier = self.context.unifier.identify(url)
        except InvalidURL:
            return False
        if page in self._fetched_base or self._base_seen(page):
            # the settings' policy merges it too (its page was fetched, sampled or scheduled
            # under another spelling): not the rule's doing; fetched, it was that page twice
            return False
        path = _path(url)
        # a sample is compared with the page it was merged into: only once that page is fetched
        earlier = self._fetched_ids.get(identifier)
        if earlier is not None:
            for p in rules:
                if p.sampled < RULE_PROBATION and path not in p.paths:
                    p.paths.add(path)
                    p.sampled += 1
                    # the page it was merged into goes with it: a resumed run no longer knows it
                    entry_id = _entry_id(request)
                    request.meta[PROBATION_META] = (p.key, identifier, entry_id.hex(), earlier[0], earlier[1].hex())
                    self._keep(request, (_SAMPLE + _key_text(p.key),))
                    self._samples[entry_id] = p.key
                    self._remember(self._fetched_base, page, None)
                    self.context.inc("learned/probation/samples")
                    return True
        if len(self._kept) < MERGED_KEPT:
            keys = tuple(p.key for p in rules)
            entry_id = self._keep(request, tuple(_key_text(k) for k in keys))
            self._kept[entry_id] = _Kept(request, keys)
            self.context.inc("learned/probation/kept")
        else:  # beyond the bound: merged on the rule's word, as without probation
            self.context.inc("learned/probation/not_kept")
        return False

    def _base_seen(self, identifier: str) -> bool:
        """Whether the seen store holds ``identifier``'s key as the settings' policy computes it
        (a request recorded before a rule was learned); False when our fingerprinter is not the
        dupefilter's, or the store does not answer (the request is then judged as before)."""
        holds = getattr(self.context.dupefilter, "holds_identifier", None)
        if holds is None:
            return False
        try:
            return bool(holds(identifier))
        except STORE_FAULTS:
            return False

    def _keep(self, request: Request, rules: tuple[str, ...]) -> bytes:
        """Write ``request`` to the crawl's kept store (if it can be pickled); its entry id."""
        entry_id = _entry_id(request)
        if isinstance(self._kept_store, MemoryKeptStore) or store_failed(self.crawler):
            return entry_id
        try:
            data = pickle.dumps(request.to_dict(spider=self.crawler.spider), protocol=4)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError) as e:
            if not self._warned_unpicklable:
                logger.warning("Cannot keep %s in %s, only in memory (%s); further ones are not reported",
                               request, self._kept_store, e)
                self._warned_unpicklable = True
            return entry_id
        try:
            self._kept_store.add(entry_id, rules, data)
        except STORE_FAULTS as e:  # kept in memory; the crawl closes
            store_unavailable(self.crawler, e)
        return entry_id

    def _forget(self, entry_ids: list[bytes]) -> None:
        if entry_ids and not store_failed(self.crawler):
            try:
                self._kept_store.remove(entry_ids)
            except STORE_FAULTS as e:
                store_unavailable(self.crawler, e)

    def _check_sample(self, probe: tuple[Any, ...], url: str, sig: bytes) -> None:
        key, merged_into = tuple(probe[0]), probe[1]
        entry_id = bytes.fromhex(probe[2]) if len(probe) >= 3 else b""  # (key, identifier): an older run's
        p = self._probation.get(key)  # type: ignore[arg-type]
        if len(probe) >= 5:
            earlier: tuple[str, bytes] | None = (probe[3], bytes.fromhex(probe[4]))
        else:
            earlier = self._fetched_ids.get(merged_into)
        # fetched: nothing to fetch again, whatever the verdict (a resumed run may hold it as kept)
        sampled = self._samples.pop(entry_id, None) is not None
        if self._kept.pop(entry_id, None) is not None or sampled:
            self._forget([entry_id])
        if p is None or earlier is None:  # confirmed or revoked meanwhile, or page not fetched yet
            return
        learner = self.learner
        assert learner is not None
        if earlier[1] == sig:
            p.confirmed += 1
            if p.confirmed >= RULE_PROBATION:
                self._confirm(p)
            return
        version, known_revoked = learner.version, len(learner.revoked)
        learner.contradict(p.rule, earlier[0], url)
        if learner.version != version:
            self._apply_learned([], list(learner.revoked[known_revoked:]))

    def _verify_at_idle(self, spider: Any = None) -> None:
        """``spider_idle``: nothing is left to fetch, and a rule still on probation would end the
        crawl trusted, the requests it kept never fetched. They are verified instead: fetched as
        samples, as many as the rule lacks (``RULE_PROBATION`` agreeing verdicts), on paths not
        sampled yet first, each compared with the page it was merged into; one that differs
        revokes the rule (and everything it kept is scheduled again), enough that agree confirm
        it (and the rest are forgotten). A rule all of whose kept requests were verified, and
        agreed, is confirmed. With Redis, the requests other processes kept for the rules on
        probation here are verified too (a killed process's would be fetched by nobody)."""
        if self.learner is None or not self._probation or store_failed(self.crawler):
            return
        # nothing is in flight: a sample still awaiting its verdict was answered otherwise (an
        # error, a redirect elsewhere, a page without text): fetched, nothing to keep it for
        stale = list(self._samples)
        self._samples.clear()
        self._forget(stale)
        if self._shared_fetched is not None:
            self._adopt_shared_kept()
        requests: list[Request] = []
        for p in list(self._probation.values()):
            kept = [(i, k) for i, k in self._kept.items() if p.key in k.keys]
            if not kept:
                if p.verified_at_idle and p.confirmed:  # everything it merged was fetched, and agreed
                    self._confirm(p)
                continue
            chosen = _fresh_paths_first(kept, p.paths)[: max(1, RULE_PROBATION - p.confirmed)]
            for entry_id, k in chosen:
                del self._kept[entry_id]
                requests.append(self._idle_sample(p, entry_id, k.request))
            p.verified_at_idle += len(chosen)
            self.context.inc("learned/probation/verified_at_idle", len(chosen))
            logger.info("Verifying at idle a rule still on probation (%d/%d samples agreed): fetching %d of "
                        "the %d requests it kept as its samples before the crawl ends: %s",
                        p.confirmed, RULE_PROBATION, len(chosen), len(kept), p.rule)
        if requests:
            self._schedule(requests, stat=None)
            raise DontCloseSpider

    def _idle_sample(self, p: _Probation, entry_id: bytes, request: Request) -> Request:
        """``request``, kept for ``p``, as one of its samples (it names the page it was merged
        into if this process fetched it; otherwise that page is looked up at its verdict)."""
        try:
            identifier = self.context.unifier.identify(request.url)
        except InvalidURL:
            identifier = ""
        earlier = self._fetched_ids.get(identifier)
        probe: tuple[Any, ...] = (p.key, identifier, entry_id.hex())
        request.meta[PROBATION_META] = probe + ((earlier[0], earlier[1].hex()) if earlier is not None else ())
        p.paths.add(_path(request.url))
        self._samples[entry_id] = p.key
        return request

    def _adopt_shared_kept(self) -> None:
        """Redis: the requests other processes kept for rules on probation here, to verify them
        here too (a process still running verifies its own as well: a request fetched twice,
        never one lost). Requests of rules this process does not have on probation are left to
        the processes that have them, and to the runs that resume them."""
        try:
            entries = self._kept_store.entries()
        except STORE_FAULTS as e:
            store_unavailable(self.crawler, e)
            return
        for entry_id, names, data in entries:
            if entry_id in self._kept or len(self._kept) >= MERGED_KEPT:
                continue
            keys = tuple(_text_key(n) for n in names)
            if not any(k in self._probation for k in keys):
                continue
            request = self._unpickle(data)
            if request is not None:
                self._kept[entry_id] = _Kept(request, keys)

    def _confirm(self, p: _Probation) -> None:
        del self._probation[p.key]
        self._save_learned()  # confirmed first: a kill now forgets the kept requests at resume
        done = [i for i, kept in self._kept.items() if not any(k in self._probation for k in kept.keys)]
        for entry_id in done:
            del self._kept[entry_id]
        samples = [i for i, k in self._samples.items() if k not in self._probation]
        for entry_id in samples:
            del self._samples[entry_id]
        self._forget(done + samples)
        self.context.inc("learned/confirmed")
        logger.info("Confirmed by %d requests it merged, fetched anyway: %s", p.confirmed, p.rule)

    def _apply_learned(self, adopted: list[LearnedRule], revoked: list[Revocation]) -> None:
        """Rebuild the crawl's policy with the learned rules; record the new identifiers of the
        pages that taught them, so their other spellings are not fetched again."""
        ctx = self.context
        learner = self.learner
        assert learner is not None
        self._set_policy()
        for rule in adopted:
            ctx.stats.set(f"learned/{rule.kind}/{rule.host}/{rule.name}", rule.pairs)
            ctx.inc(f"learned/{_PLURAL[rule.kind]}")
            logger.info("Learned: %s", rule)
        # the pages fetched so far count as seen under their new identifiers too: after an
        # adoption, the other spellings the rule merges with them are not fetched; after a
        # revocation, a page fetched under the revoked rule is not "new" again
        df = ctx.dupefilter
        unifier = ctx.unifier
        self._fetched_ids.clear()
        for url, sig in self._fetched.items():
            if df is not None:
                df.record_url(url)
            try:
                self._fetched_ids[unifier.identify(url)] = (url, sig)
            except InvalidURL:
                continue
        self._share_fetched(list(self._fetched_ids))
        for rule in adopted:
            p = _Probation(rule)
            self._probation[p.key] = p
        for revocation in revoked:
            a, b = revocation.counter_example
            ctx.inc("learned/revoked")
            logger.warning("Unlearned, a counter-example showed it matters: %s (%s and %s have different content)",
                           revocation.rule, a, b)
        for revocation in revoked:
            self._probation.pop(_rule_key(revocation.rule), None)
        # saved before the kept requests are scheduled and forgotten: a kill in between finds
        # them still kept, and their rule revoked, and schedules them at resume
        self._save_learned()
        if revoked:
            self._reschedule({_rule_key(r.rule) for r in revoked})

    def _reschedule(self, revoked: set[tuple[str, str, str]]) -> None:
        """Schedule again the requests merged by revoked rules (the dupefilter judges them
        under the policy without those rules): the ones this process kept, and with a shared
        store the ones any process kept. Samples of this process are fetched already."""
        again = [entry_id for entry_id, kept in self._kept.items() if revoked.intersection(kept.keys)]
        requests = [self._kept.pop(entry_id).request for entry_id in again]
        samples = [i for i, k in self._samples.items() if k in revoked]
        for entry_id in samples:
            del self._samples[entry_id]
        if self._shared_fetched is not None and not store_failed(self.crawler):  # Redis: others' too
            mine = set(again)
            try:
                entries = self._kept_store.entries()
            except STORE_FAULTS as e:
                store_unavailable(self.crawler, e)
                entries = []
            for entry_id, rules, data in entries:
                if entry_id in mine or entry_id in samples or not revoked.intersection(map(_text_key, rules)):
                    continue
                request = self._unpickle(data)
                if request is not None:
                    requests.append(request)
                again.append(entry_id)
        self._schedule(requests)
        self._forget(again + samples)

    def _schedule(self, requests: list[Request], stat: str | None = "learned/probation/rescheduled") -> None:
        engine = self.crawler.engine
        for request in requests:
            if engine is not None:
                engine.crawl(request)  # type: ignore[arg-type]
                if stat:
                    self.context.inc(stat)

    def _unpickle(self, data: bytes) -> Request | None:
        try:
            return request_from_dict(pickle.loads(data), spider=self.crawler.spider)
        except Exception:  # one bad entry must not cost the others
            logger.exception("Could not schedule again a request kept in %s", self._kept_store)
            return None

    def _resume_fetched(self, spider: Any = None) -> None:
        """``spider_opened`` of a resumed JOBDIR job: the pages the earlier runs fetched (the
        last ``_RECENT`` requests its resume log says were handled, with their signatures from
        the signature log) count as fetched for the dequeue re-check and the probation samples,
        as the pages this run fetches do: a request queued before a kill, under other rules, is
        dropped at dequeue when the killed run fetched its page."""
        df = self.context.dupefilter
        log = getattr(df, "resume_log", None)
        if log is None or not log.resumed or not isinstance(self.store, JobdirSignatureStore):
            return
        try:
            done = log.replay_done()
            urls: list[str] = []
            for payload in VarRecordLog.read(log.path):
                if payload[:1] == b"S" and len(payload) > 9 and int.from_bytes(payload[1:9], "big") in done:
                    urls.append(pickle.loads(payload[9:])["url"])
        except (StoreError, OSError, pickle.UnpicklingError, KeyError, TypeError, ValueError, EOFError) as e:
            logger.warning("Could not read the pages fetched before this run from %s (%s): requests queued "
                           "before it are checked against this run's fetches only", log.path, e)
            return
        prefix = f"{self.context.scope or ''}|".encode()
        signature_of = {page: key.split(b"\0", 1)[1] for key, page in self.store.items() if key.startswith(prefix)}
        base = unifier_for(self.context.base_policy)
        for url in urls[-_RECENT:]:
            try:
                page = base.identify(url)
            except InvalidURL:
                continue
            sig = signature_of.get(page)
            if sig is not None:  # (a duplicate page's identifier is not in the log: left out)
                self._remember(self._fetched, url, sig)
                self._remember(self._fetched_base, page, None)
        unifier = self.context.unifier
        for url, sig in self._fetched.items():
            try:
                self._fetched_ids[unifier.identify(url)] = (url, sig)
            except InvalidURL:
                continue
        if self._fetched:
            logger.info("Resumed with %d pages fetched before, from %s", len(self._fetched), log.path)

    def _resume_kept(self, spider: Any = None) -> None:
        """``spider_opened``: the requests kept by an earlier run (or, in Redis, by any process)
        go where their rules now are: scheduled again if one was revoked, or if they were samples
        whose verdict never came; kept while their rules are on probation; forgotten once
        confirmed. A rule the restored state does not know counts as revoked: never lost."""
        entries, self._restored_entries = self._restored_entries, []
        rules_now = {_rule_key(r) for r in self.learner.rules} if self.learner is not None else set()
        again: list[Request] = []
        forget: list[bytes] = []
        kept = samples = 0
        for entry_id, names, data in entries:
            keys = tuple(_text_key(n) for n in names)
            revoked = any(k not in rules_now for k in keys)
            on_probation = [k for k in keys if k in self._probation]
            if not revoked and not on_probation:
                forget.append(entry_id)  # confirmed
                continue
            request = self._unpickle(data)
            if request is None:
                forget.append(entry_id)
                continue
            if names[0].startswith(_SAMPLE):
                again.append(request)
                if revoked:
                    forget.append(entry_id)
                else:  # fetched again as the sample it was: its verdict removes it
                    self._samples[entry_id] = keys[0]
                    samples += 1
            elif revoked:
                again.append(request)
                forget.append(entry_id)
            elif len(self._kept) < MERGED_KEPT:
                self._kept[entry_id] = _Kept(request, keys)
                kept += 1
        if entries:
            logger.info("Kept requests of rules on probation, from %s: %d kept, %d samples and %d others "
                        "scheduled again, %d forgotten", self._kept_store, kept, samples, len(again) - samples,
                        len(forget) - (len(again) - samples))
        self._schedule(again)
        self._forget(forget)

    def _fetched_now(self, url: str, identifier: str, sig: bytes) -> None:
        """Remember a fetched page; under learned rules, record its identifier under them too
        (it was queued, and recorded, under the policy of that moment)."""
        self._remember(self._fetched, url, sig)
        self._remember(self._fetched_ids, identifier, (url, sig))
        shared = self._shared_fetched
        if shared is not None and not store_failed(self.crawler):
            try:
                shared.add(_fetched_key(identifier))
            except STORE_FAULTS as e:
                store_unavailable(self.crawler, e)
        ctx = self.context
        if ctx.policy is not ctx.base_policy and ctx.dupefilter is not None:
            ctx.dupefilter.record_url(url)

    def _share_fetched(self, identifiers: list[str]) -> None:
        """Redis: the fetched pages under a new policy, for the other processes' dequeue checks."""
        if self._shared_fetched is not None and identifiers and not store_failed(self.crawler):
            try:
                self._shared_fetched.add_many([_fetched_key(i) for i in identifiers])
            except STORE_FAULTS as e:
                store_unavailable(self.crawler, e)

    def fetched(self, identifier: str, shared: bool = True) -> bool:
        """Whether a page with this identifier (under the current policy) was fetched: lately by
        this process, or, with Redis and ``shared``, by any process of the scope (one round
        trip, which also carries this process's fetches not sent yet)."""
        if identifier in self._fetched_ids:
            return True
        store = self._shared_fetched
        if store is None or not shared or store_failed(self.crawler):
            return False
        try:
            return store.fetched(_fetched_key(identifier))
        except STORE_FAULTS as e:  # not fetched, as far as we know; the crawl closes
            store_unavailable(self.crawler, e)
            return False

    def _set_policy(self) -> None:
        learner = self.learner
        assert learner is not None
        params, aliases, prefixes = learner.remove_params(), learner.domain_aliases(), learner.path_prefixes()
        self.context.set_learned(params, aliases, prefixes)
        if not learner.rules:
            self.policy_token = ""
            return
        text = json.dumps([params, aliases, prefixes], sort_keys=True, separators=(",", ":"))
        self.policy_token = blake2b(text.encode(), digest_size=8).hexdigest()

    def _restore_learned(self) -> None:
        from ..learning.learner import Learner

        fresh = self.learner
        assert fresh is not None  # restored only when learning is on
        try:
            state: LearnedState = self._rules_store.load_state()
            if not state.learner:
                return
            self.learner = Learner.from_json(state.learner, min_pairs=fresh.min_pairs, sites=fresh.sites)
            self._restore_probation(state.probation)
            if self.learner.rules:
                self._set_policy()
        except (ValueError, KeyError, TypeError, AttributeError, StoreError) as e:
            # valid JSON of another shape, rules the policy refuses, a key of another type:
            # learning starts afresh rather than every crawler of the scope failing at start
            logger.warning("Ignoring unreadable learned rules in %s: %s", self._rules_store, e)
            self.learner = fresh
            self._probation.clear()
            self._set_policy()
            return
        if self.learner.rules:
            logger.info("Resumed with %d learned rules from %s (%d on probation), %d revoked",
                        len(self.learner.rules), self._rules_store, len(self._probation), len(self.learner.revoked))
            self.context.stats.set("learned/probation/resumed", len(self._probation))

    def _restore_probation(self, saved: dict[str, Any] | None) -> None:
        """Rules go back on probation as they were at the save; a state saved before probation
        was kept has none (its rules were confirmed, or from before probation existed)."""
        assert self.learner is not None
        if not saved:
            return
        rules = {_rule_key(r): r for r in self.learner.rules}
        for text, progress in saved.items():
            rule = rules.get(_text_key(text))
            if rule is None:
                continue  # revoked since
            p = _Probation(rule)
            p.sampled = int(progress.get("sampled", 0))
            p.confirmed = int(progress.get("confirmed", 0))
            p.paths = {str(x) for x in progress.get("paths", ())}
            self._probation[p.key] = p

    def _save_learned(self) -> None:
        if self.learner is not None and not store_failed(self.crawler):
            probation = {_key_text(k): {"sampled": p.sampled, "confirmed": p.confirmed, "paths": sorted(p.paths)}
                         for k, p in self._probation.items()}
            try:
                self._rules_store.save(self.learner.to_json(), probation)
            except STORE_FAULTS as e:  # kept in memory; the crawl closes
                store_unavailable(self.crawler, e)

    def learned_snippet(self) -> str | None:
        if self.learner is None or not self.learner.rules:
            return None
        return self.learner.remove_params_snippet()

    # -- declared canonicals -------------------------------------------------------------------

    def _canonical(self, response: TextResponse, identifier: str, site: str, sig: bytes, evidence: bool) -> None:
        """A declared canonical marks its target seen only once the site's canonicals have
        proven true: the first ``CANONICAL_PROBATION`` are checked by fetching their target, and
        one target with other content makes the crawl ignore that site's canonicals."""
        href = canonical_href(response)
        if not href:
            return
        unifier = self.context.unifier
        try:
            url = unifier.standardize(href, base=response.url)
            target = unifier.identify(url)
        except InvalidURL:
            self.context.inc("canonical/invalid")
            return
        if target == identifier:
            return
        host = host_of(url)
        if not host or site_key(unifier.host_rules(host).identity_host, self.granularity) != site:
            self.context.inc("canonical/other_site")  # never across sites
            return
        if site in self._canonicals_ignored:
            self.context.inc("canonical/ignored")
            return
        known = self._recent.get(target)
        if known is not None:  # the target was fetched already: the claim is checked now
            self._verify_canonical(site, known == sig, url, response.url)
            return
        self._remember(self._claims, target, (sig, response.url, site))
        if self._canonicals_verified.get(site, 0) < CANONICAL_PROBATION:
            self.context.inc("canonical/on_probation")  # its target is fetched, and checks it
            return
        df = self.context.dupefilter
        if df is not None and df.record_url(url):
            self.context.inc("canonical/recorded")
        if self.learner is not None and evidence:
            self._learn(url, unifier.host_rules(host).identity_host, sig)

    def _check_claims(self, identifier: str, sig: bytes, url: str) -> None:
        self._remember(self._recent, identifier, sig)
        claim = self._claims.pop(identifier, None)
        if claim is not None:
            claimed, claimer, site = claim
            self._verify_canonical(site, claimed == sig, url, claimer)

    def _verify_canonical(self, site: str, same: bool, canonical: str, claimer: str) -> None:
        if same:
            self.context.inc("canonical/verified")
            n = self._canonicals_verified[site] = self._canonicals_verified.get(site, 0) + 1
            if n == CANONICAL_PROBATION:
                logger.info("Declared canonicals of %s verified %d times: trusted from now on", site, n)
            return
        self.context.inc("canonical/counter_examples")
        if site in self._canonicals_ignored:
            return
        self._canonicals_ignored.add(site)
        logger.warning("Declared canonical %s of %s has other content: not the same page; the declared "
                       "canonicals of %s are ignored for the rest of the crawl", canonical, claimer, site)

    @staticmethod
    def _remember(table: OrderedDict[str, Any], key: str, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        if len(table) > _RECENT:
            table.popitem(last=False)

    def close(self, spider: Any = None, reason: str = "") -> None:
        count_outages(self.crawler, self.store)
        if self.learner is not None:
            count_outages(self.crawler, self._rules_store.redis)
            if self._shared_fetched is not None:
                if not store_failed(self.crawler):
                    try:
                        self._shared_fetched.flush()
                    except STORE_FAULTS as e:
                        store_unavailable(self.crawler, e)
                count_outages(self.crawler, self._shared_fetched)
            count_outages(self.crawler, self._kept_store)
            self._kept_store.close()
        self.store.close()


def _rule_key(rule: LearnedRule) -> tuple[str, str, str]:
    return (rule.kind, rule.host, rule.name)


def _key_text(key: tuple[str, str, str]) -> str:
    return "|".join(key)


def _text_key(text: str) -> tuple[str, str, str]:
    kind, _, rest = text.removeprefix(_SAMPLE).partition("|")
    host, _, name = rest.partition("|")
    return (kind, host, name)


def _entry_id(request: Request) -> bytes:
    """The id of a kept request: the same request kept twice (by two processes) is one entry."""
    h = blake2b(digest_size=8)
    h.update(f"{request.method} {request.url}\0".encode("utf-8", "surrogatepass"))
    h.update(request.body)
    return h.digest()


def _path(url: str) -> str:
    return url.split("?", 1)[0].split("#", 1)[0]


def _fresh_paths_first(kept: list[tuple[bytes, _Kept]], sampled: set[str]) -> list[tuple[bytes, _Kept]]:
    """Kept requests in the order they are verified: one per path not sampled yet first."""
    fresh: list[tuple[bytes, _Kept]] = []
    rest: list[tuple[bytes, _Kept]] = []
    paths = set(sampled)
    for item in kept:
        path = _path(item[1].request.url)
        (rest if path in paths else fresh).append(item)
        paths.add(path)
    return fresh + rest


def _fetched_key(identifier: str) -> bytes:
    """The member of the shared fetched set for an identifier."""
    return blake2b(identifier.encode("utf-8", "surrogatepass"), digest_size=8).digest()


class _Kept:
    """A request merged while rules were on probation, and those rules."""

    __slots__ = ("keys", "request")

    def __init__(self, request: Request, keys: tuple[tuple[str, str, str], ...]) -> None:
        self.request, self.keys = request, keys


class _Probation:
    """A rule adopted but not yet confirmed: its samples (fetched anyway) and their verdicts."""

    __slots__ = ("confirmed", "key", "paths", "rule", "sampled", "verified_at_idle")

    def __init__(self, rule: LearnedRule) -> None:
        self.rule = rule
        self.key = _rule_key(rule)
        self.paths: set[str] = set()
        self.sampled = 0
        self.confirmed = 0
        self.verified_at_idle = 0  # kept requests fetched as samples when the crawl went idle

    def covers(self, url: str, identity_host: str) -> bool:
        """Whether the rule takes part in merging ``url`` (its identity host under the
        settings' policy): the host is the rule's, and has the parameter or leading segment."""
        rule = self.rule
        if not within(identity_host, rule.host):
            return False
        if rule.kind == "alias":
            return True
        rest = url.split("/", 3)[3] if url.count("/") >= 3 else ""
        rest = rest.split("#", 1)[0]
        path, _, query = rest.partition("?")
        if rule.kind == "path":
            return path.split("/", 1)[0] == rule.name
        return any(item.partition("=")[0].lower() == rule.name for item in query.split("&"))


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


def canonical_href(response: TextResponse) -> str | None:
    """The canonical URL a response declares: a ``Link: <...>; rel="canonical"`` header, or a
    ``<link rel="canonical">`` of its ``<head>``. Only the head is parsed (at most
    ``HEAD_LIMIT`` bytes): the whole of a 50 MB page would cost hundreds of MB."""
    for header in response.headers.getlist(b"Link"):
        m = _CANONICAL_LINK.search(header.decode("latin-1"))
        if m:
            return m.group(1).strip()
    body = response.body
    end = _HEAD_END.search(body, 0, HEAD_LIMIT)
    head = body[: end.start() if end else HEAD_LIMIT]
    if b"canonical" not in head.lower():
        return None
    try:
        href = Selector(text=head.decode(response.encoding, "replace"), type="html").xpath(
            "//link[contains(concat(' ', normalize-space(@rel), ' '), ' canonical ')]/@href").get()
    except ValueError:  # not a document lxml can parse
        return None
    return href.strip() if href else None


def _spider_sites(crawler: Crawler) -> list[str]:
    from .settings import crawl_sites

    return crawl_sites(crawler.spider) if getattr(crawler, "spider", None) is not None else []


def _rules_store(crawler: Crawler) -> LearnedRulesStore:
    where = crawl_stores(crawler).rules()
    return LearnedRulesStore(path=where) if where is None or isinstance(where, Path) else LearnedRulesStore(redis=where)



