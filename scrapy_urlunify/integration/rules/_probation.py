"""Rule probation: a learned rule is trusted only once requests it merged, fetched anyway, were the
same pages (docs/learning.md, "New rules on probation" to "Kept, never lost").

:class:`Probation` fetches the samples, keeps the other requests a rule merged (at most
``MERGED_KEPT``, in the crawl's kept store too), schedules them again if the rule is revoked,
forgets them once it is confirmed, and verifies a rule still on probation when the crawl goes idle.
"""

from __future__ import annotations

import logging
import pickle
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.request import request_from_dict

from scrapy_urlunify.core._unify import unifier_for
from scrapy_urlunify.core._url import InvalidURL, host_of
from scrapy_urlunify.integration.crawl._faults import STORE_FAULTS
from scrapy_urlunify.integration.crawl._meta import PROBATION_META, ROOT_PAGE_META
from scrapy_urlunify.integration.rules._samples import (
    SAMPLE,
    SAMPLE_PRIORITY,
    RuleKey,
    RuleOnProbation,
    fresh_paths_first,
    key_text,
    rule_key,
    sampling,
    text_key,
)
from scrapy_urlunify.learning._rule_types import subsumes_rule
from scrapy_urlunify.stores._memory import MemoryKeptStore

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._faults import StoreFaults
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.rules._fetched import FetchedPages
    from scrapy_urlunify.learning._rule_types import LearnedRule
    from scrapy_urlunify.stores._base import KeptEntry, KeptStore


logger = logging.getLogger(__name__)
#: Scrapy's HTTP cache keys its entries on the crawl's request fingerprints, which merge what the
#: rules merge: a sample would be answered with the page its rule merged it into, and agree.
#: Samples are asked of the site (``HttpCacheMiddleware`` neither serves nor stores them).
DONT_CACHE = "dont_cache"

#: requests a newly adopted rule merges that are fetched anyway to check it, each on its own path
#: (the default of URLUNIFY_LEARN_PROBATION_SAMPLES)
RULE_PROBATION = 3
#: requests merged by rules still on probation, kept to be scheduled again if one is revoked
MERGED_KEPT = 10_000


class Probation:
    """The rules on probation, their samples, and the requests they kept."""

    def __init__(
        self,
        crawler: Crawler,
        stats: UnifyStats,
        faults: StoreFaults,
        policies: CrawlPolicies,
        pages: FetchedPages,
        kept_store: KeptStore,
        holds_identifier: Callable[[str], bool],
        save: Callable[[], None],
        *,
        samples_needed: int = RULE_PROBATION,
        sample_boost: int = SAMPLE_PRIORITY,
    ) -> None:
        self.crawler = crawler
        self.stats = stats
        self.faults = faults
        self.policies = policies
        self.pages = pages
        #: the crawl's kept store (every process's with Redis, whose fetched set is shared)
        self.kept_store = kept_store
        self._shared = pages.shared is not None
        #: whether the seen store holds a base identifier (recorded before a rule was learned)
        self._holds_identifier = holds_identifier
        #: saves the learned rules and their probation
        self._save = save
        self._rules: dict[RuleKey, RuleOnProbation] = {}  # rules adopted, not yet confirmed
        self._kept: dict[
            bytes, _Kept
        ] = {}  # entry id -> a request merged while rules were on probation
        self._samples: dict[
            bytes, RuleKey
        ] = {}  # entry id -> rule of a sample awaiting its verdict
        self._restored_entries = kept_store.entries()
        self._closed = False
        self._warned_unpicklable = False
        #: agreeing verdicts that confirm a rule (URLUNIFY_LEARN_PROBATION_SAMPLES)
        self.samples_needed = samples_needed
        #: what a sample's priority gains: above every request, penalised by the frontier or not
        self.sample_boost = sample_boost

    @property
    def active(self) -> bool:
        """Whether a rule is on probation."""
        return bool(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    # -- rules -----------------------------------------------------------------------------------

    def adopt(self, rules: list[LearnedRule]) -> None:
        """Put newly adopted rules on probation; an alias rule's host's root page is asked for,
        to be one of its samples, unless it was fetched before the rule (the learner compared
        it then)."""
        probes: list[Request] = []
        for rule in rules:
            p = RuleOnProbation(rule)
            self._rules[p.key] = p
            root = p.root_url()
            if root is None:
                continue
            try:
                fetched = self.pages.has_base(unifier_for(self.policies.base_policy).identify(root))
            except InvalidURL:
                fetched = True
            if fetched:
                p.waive_root()
            else:
                probes.append(Request(root, meta={ROOT_PAGE_META: True, DONT_CACHE: True}))
        self._schedule(probes, stat="learned/probation/root_pages")

    def progress(self, key: RuleKey) -> str:
        """How far a rule got, for the log: its agreeing samples, or confirmed."""
        p = self._rules.get(key)
        if p is None:
            return "it was confirmed"
        return f"on probation, {p.confirmed} of {self.samples_needed} samples had agreed"

    def revoke(self, keys: set[RuleKey]) -> None:
        """Revoked rules leave probation (what they kept is scheduled by :meth:`reschedule`)."""
        for key in keys:
            self._rules.pop(key, None)

    def state(self) -> dict[str, dict[str, Any]]:
        """The progress of each rule on probation, as saved with the learned rules."""
        return {key_text(k): p.state() for k, p in self._rules.items()}

    def restore(self, saved: dict[str, Any] | None, rules: Iterable[LearnedRule]) -> None:
        """Rules go back on probation as they were at the save; a state saved before probation
        was kept has none (its rules were confirmed, or from before probation existed)."""
        if not saved:
            return
        by_key = {rule_key(r): r for r in rules}
        for text, progress in saved.items():
            rule = by_key.get(text_key(text))
            if rule is None:
                continue  # revoked since
            p = RuleOnProbation(rule)
            p.restore(progress)
            self._rules[p.key] = p

    def clear(self) -> None:
        self._rules.clear()

    # -- requests a rule merged ------------------------------------------------------------------

    def fetch_anyway(self, request: Request, *, queued: bool = False) -> bool:
        """Called for a request the current policy merges with a page already seen (by the
        dupefilter, and at dequeue: ``queued``, the request is in the seen store itself, under
        the policy it was queued with). True: fetch it anyway, a probation sample of a new rule
        that merged it (the next ``samples_needed`` of them, each on its own path). Otherwise,
        while a rule that merged it is on probation, the request is kept (at most
        ``MERGED_KEPT``, in the crawl's store too), scheduled again if that rule is revoked, and
        fetched as a sample if the crawl goes idle with the rule still on probation
        (:meth:`verify_at_idle`): never lost, not even by a kill or in another process."""
        if PROBATION_META in request.meta:
            return True  # a sample already (let through by the dupefilter, now at dequeue)
        if not self._rules or request.method != "GET":
            return False
        url = request.url
        merged = self._merging(url)
        if merged is None:
            return False
        rules, base_identifier, identifier = merged
        if self.pages.has_base(base_identifier) or (
            not queued and not request.meta.get(ROOT_PAGE_META) and self._base_seen(base_identifier)
        ):
            # the settings' policy merges it too (its page was fetched, sampled or scheduled
            # under another spelling): not the rule's doing; fetched, it was that page twice.
            # (A queued request was scheduled itself: its own record is no other spelling's.)
            return False
        # a sample is compared with the page it was merged into: only once that page is fetched
        earlier = self.pages.page(identifier)
        if earlier is not None:
            for p in self._sampling(rules):
                path = p.sample_key(url)
                if p.wants(url, path, self.samples_needed):
                    p.sample(url, path)
                    # the page it was merged into goes with it: a resumed run no longer knows it
                    entry_id = _entry_id(request)
                    request.meta[PROBATION_META] = (
                        p.key,
                        identifier,
                        entry_id.hex(),
                        earlier[0],
                        earlier[1].hex(),
                    )
                    request.meta[DONT_CACHE] = True
                    self._keep(request, (SAMPLE + key_text(p.key),))
                    self._samples[entry_id] = p.key
                    self.pages.add_base(base_identifier)
                    self.stats.inc("learned/probation/samples")
                    if not queued:  # (a queued one is being downloaded already)
                        request.priority += self.sample_boost
                    return True
        if len(self._kept) < MERGED_KEPT:
            keys = tuple(p.key for p in rules)
            entry_id = self._keep(request, tuple(key_text(k) for k in keys))
            self._kept[entry_id] = _Kept(request, keys)
            self.stats.inc("learned/probation/kept")
        else:  # beyond the bound: merged on the rule's word, as without probation
            self.stats.inc("learned/probation/not_kept")
        return False

    def _merging(self, url: str) -> tuple[list[RuleOnProbation], str, str] | None:
        """The rules on probation that take part in merging ``url``, its base identifier and its
        identifier under the current policy; None when no rule does (or it is no URL)."""
        base = unifier_for(self.policies.base_policy)
        try:
            host = host_of(url)
            identity_host = base.host_rules(host).identity_host if host else ""
            rules = [p for p in self._rules.values() if p.covers(url, identity_host)]
            if not rules:
                return None
            return rules, base.identify(url), self.policies.unifier.identify(url)
        except InvalidURL:
            return None

    def _sampling(self, rules: list[RuleOnProbation]) -> list[RuleOnProbation]:
        """Of ``rules``, those that take samples of their own (:func:`sampling`)."""
        return sampling(rules, [q.rule for q in self._rules.values()])

    def _base_seen(self, base_identifier: str) -> bool:
        """Whether the seen store holds the key of ``base_identifier`` (a request recorded
        before a rule was learned); False when the store does not answer: the request is then
        judged as before, and the crawl goes on (this is a question, not a record)."""
        try:
            return self._holds_identifier(base_identifier)
        except STORE_FAULTS:
            return False

    def _keep(self, request: Request, rules: tuple[str, ...]) -> bytes:
        """Write ``request`` to the crawl's kept store (if it can be pickled); its entry id."""
        entry_id = _entry_id(request)
        store = self.kept_store
        # a failed store is not asked: nor is the request pickled for it
        if isinstance(store, MemoryKeptStore) or self.faults.failed:
            return entry_id
        try:
            data = pickle.dumps(request.to_dict(spider=self.crawler.spider), protocol=4)
        except (ValueError, TypeError, AttributeError, pickle.PicklingError) as e:
            if not self._warned_unpicklable:
                logger.warning(
                    "Cannot keep %s in %s, only in memory (%s); further ones are not reported",
                    request,
                    store,
                    e,
                )
                self._warned_unpicklable = True
            return entry_id
        self.faults.guarded(
            lambda: store.add(entry_id, rules, data), None
        )  # else kept in memory only
        return entry_id

    def _forget(self, entry_ids: list[bytes]) -> None:
        if entry_ids:
            self.faults.guarded(lambda: self.kept_store.remove(entry_ids), None)

    # -- samples and their verdicts --------------------------------------------------------------

    def check_sample(
        self, probe: tuple[Any, ...], url: str, sig: bytes
    ) -> tuple[LearnedRule, str] | None:
        """A sample was fetched (``probe``: its ``PROBATION_META``) with signature ``sig``. The
        rule and the URL of the page the sample was merged into, when they differ: a
        counter-example the learner must hear."""
        key, merged_into = tuple(probe[0]), probe[1]
        entry_id = (
            bytes.fromhex(probe[2]) if len(probe) >= 3 else b""
        )  # (key, identifier): an older run's
        p = self._rules.get(key)  # type: ignore[arg-type]
        if len(probe) >= 5:
            earlier: tuple[str, bytes] | None = (probe[3], bytes.fromhex(probe[4]))
        else:
            earlier = self.pages.page(merged_into)
        # fetched: nothing to fetch again, whatever the verdict (a resumed run may hold it as kept)
        sampled = self._samples.pop(entry_id, None) is not None
        if self._kept.pop(entry_id, None) is not None or sampled:
            self._forget([entry_id])
        if p is None or earlier is None:  # confirmed or revoked meanwhile, or page not fetched yet
            return None
        if earlier[1] == sig:
            p.agreed(url)
            if p.done(self.samples_needed):
                self._confirm(p)
            merged = self._merging(url)
            if merged is not None and merged[2] == merged_into:  # the merge that was checked
                self._share(url, merged[0], p)
            return None
        return p.rule, earlier[0]

    def check_fetched(self, url: str, sig: bytes) -> tuple[LearnedRule, str] | None:
        """A page fetched without being a sample (requested before a rule was adopted: in flight
        then) that a rule on probation merges with a page fetched before: a verdict like a
        sample's, on a path the rule has no verdict for yet, so the rule is not confirmed later
        than the pages it merged were fetched anyway. The rule and the earlier page's URL when
        they differ (the learner's pairs hear it too: a second contradiction changes nothing)."""
        merged = self._merging(url) if self._rules else None
        if merged is None or self.pages.has_base(merged[1]):
            return None  # no rule merges it, or the settings' policy does (its page again)
        rules, _, identifier = merged
        earlier = self.pages.page(identifier)
        if earlier is None or earlier[0] == url:
            return None
        for p in rules:
            path = p.sample_key(url)
            if path in p.paths:
                continue
            if earlier[1] != sig:
                return p.rule, earlier[0]
            p.sample(url, path)  # one sample fewer to take from the requests it merges
            p.agreed(url)
            self.stats.inc("learned/probation/fetched_verdicts")
            if p.done(self.samples_needed):
                self._confirm(p)
            self._share(url, rules, p)
            return None
        return None

    def _share(self, url: str, rules: list[RuleOnProbation], judged: RuleOnProbation) -> None:
        """The page of ``url`` agreed with the page ``rules`` (on probation) merged it into
        under the policy in force, a verdict on ``judged``: and on every other of them
        (``?ref=home&v=1`` checks both parameters), on a path it has none for. Not a form
        rule: a URL as fetched may fit its source and still not be of it (another parameter the
        identifier keeps), so that it took no part."""
        for q in rules:
            path = q.sample_key(url)
            if q is judged or q.form is not None or q.key not in self._rules or path in q.paths:
                continue
            q.sample(url, path)
            q.agreed(url)
            self.stats.inc("learned/probation/shared_verdicts")
            if q.done(self.samples_needed):
                self._confirm(q)

    def verify_at_idle(self, spider: Any = None) -> None:
        """``spider_idle``: nothing is left to fetch, and a rule still on probation would end the
        crawl trusted, the requests it kept never fetched. They are verified instead: fetched as
        samples, as many as the rule lacks (``samples_needed`` agreeing verdicts), on paths not
        sampled yet first, each compared with the page it was merged into; one that differs
        revokes the rule (and everything it kept is scheduled again), enough that agree confirm
        it (and the rest are forgotten). A rule all of whose kept requests were verified, and
        agreed, is confirmed. With Redis, the requests other processes kept for the rules on
        probation here are verified too (a killed process's would be fetched by nobody)."""
        if not self._rules or self.faults.failed:
            return
        # nothing is in flight: a sample still awaiting its verdict was answered otherwise (an
        # error, a redirect elsewhere, a page without text): fetched, nothing to keep it for
        stale = list(self._samples)
        self._samples.clear()
        self._forget(stale)
        if self._shared:
            self._adopt_shared_kept()
        requests: list[Request] = []
        verifying: list[LearnedRule] = []  # the rules whose kept requests go as samples now
        # the wider rules first: a narrower one they subsume waits for their verdict
        for p in sorted(self._rules.values(), key=lambda p: not self._sampling([p])):
            if p.key not in self._rules or any(subsumes_rule(w, p.rule) for w in verifying):
                continue  # confirmed with a wider rule meanwhile, or waiting for its verdict
            kept = [(i, k) for i, k in self._kept.items() if p.key in k.keys]
            kept = [kept[j] for j in fresh_paths_first([k.request.url for _, k in kept], p.paths)]
            decisive = p.at_idle([k.request.url for _, k in kept])
            if decisive is not None:  # verified first
                kept.insert(0, kept.pop(decisive))
            if p.done(self.samples_needed) or (not kept and p.verified_at_idle and p.confirmed):
                self._confirm(p)  # enough agreed; or everything it merged was fetched, and agreed
                continue
            if not kept:
                continue
            verifying.append(p.rule)
            chosen = kept[: max(1, self.samples_needed - p.confirmed)]
            for entry_id, k in chosen:
                del self._kept[entry_id]
                requests.append(self._idle_sample(p, entry_id, k.request))
            p.verified_at_idle += len(chosen)
            self.stats.inc("learned/probation/verified_at_idle", len(chosen))
            logger.info(
                "Verifying at idle a rule still on probation (%d/%d samples agreed): fetching %d "
                "of the %d requests it kept as its samples before the crawl ends: %s",
                p.confirmed,
                self.samples_needed,
                len(chosen),
                len(kept),
                p.rule,
            )
        if requests:
            self._schedule(requests, stat=None)
            raise DontCloseSpider

    def _idle_sample(self, p: RuleOnProbation, entry_id: bytes, request: Request) -> Request:
        """``request``, kept for ``p``, as one of its samples (it names the page it was merged
        into if this process fetched it; otherwise that page is looked up at its verdict)."""
        try:
            identifier = self.policies.unifier.identify(request.url)
        except InvalidURL:
            identifier = ""
        earlier = self.pages.page(identifier)
        probe: tuple[Any, ...] = (p.key, identifier, entry_id.hex())
        request.meta[PROBATION_META] = probe + (
            (earlier[0], earlier[1].hex()) if earlier is not None else ()
        )
        request.meta[DONT_CACHE] = True
        p.note(request.url, p.sample_key(request.url))
        self._samples[entry_id] = p.key
        return request

    def _adopt_shared_kept(self) -> None:
        """Redis: the requests other processes kept for rules on probation here, to verify them
        here too (a process still running verifies its own as well: a request fetched twice,
        never one lost). Requests of rules this process does not have on probation are left to
        the processes that have them, and to the runs that resume them."""
        entries: list[KeptEntry] = self.faults.guarded(self.kept_store.entries, [])
        for entry_id, names, data in entries:
            if entry_id in self._kept or len(self._kept) >= MERGED_KEPT:
                continue
            keys = tuple(text_key(n) for n in names)
            if not any(k in self._rules for k in keys):
                continue
            request = self._unpickle(data)
            if request is not None:
                self._kept[entry_id] = _Kept(request, keys)

    def _confirm(self, p: RuleOnProbation, wider: LearnedRule | None = None) -> None:
        """``p`` is confirmed (by its samples, or with a ``wider`` rule that subsumes it: its
        samples checked what ``p`` merges), and so are the rules on probation it subsumes."""
        del self._rules[p.key]
        self._save()  # confirmed first: a kill now forgets the kept requests at resume
        done = [i for i, kept in self._kept.items() if not any(k in self._rules for k in kept.keys)]
        for entry_id in done:
            del self._kept[entry_id]
        samples = [i for i, k in self._samples.items() if k not in self._rules]
        for entry_id in samples:
            del self._samples[entry_id]
        self._forget(done + samples)
        self.stats.inc("learned/confirmed")
        if wider is None:
            logger.info(
                "Confirmed by %d requests it merged, fetched anyway: %s", p.confirmed, p.rule
            )
        else:
            self.stats.inc("learned/probation/subsumed")
            logger.info("Confirmed with a wider rule (%s): %s", wider, p.rule)
        for q in [q for q in self._rules.values() if subsumes_rule(p.rule, q.rule)]:
            if q.key in self._rules:
                self._confirm(q, p.rule)

    # -- scheduling again --------------------------------------------------------------------------

    def reschedule(self, revoked: set[RuleKey]) -> None:
        """Schedule again the requests merged by revoked rules (the dupefilter judges them
        under the policy without those rules): the ones this process kept, and with a shared
        store the ones any process kept. Samples of this process are fetched already."""
        again = [
            entry_id for entry_id, kept in self._kept.items() if revoked.intersection(kept.keys)
        ]
        requests = [self._kept.pop(entry_id).request for entry_id in again]
        samples = [i for i, k in self._samples.items() if k in revoked]
        for entry_id in samples:
            del self._samples[entry_id]
        if self._shared:  # Redis: others' too
            mine = set(again)
            entries: list[KeptEntry] = self.faults.guarded(self.kept_store.entries, [])
            for entry_id, rules, data in entries:
                if (
                    entry_id in mine
                    or entry_id in samples
                    or not revoked.intersection(map(text_key, rules))
                ):
                    continue
                request = self._unpickle(data)
                if request is not None:
                    requests.append(request)
                again.append(entry_id)
        self._schedule(requests)
        self._forget(again + samples)

    def resume_kept(self, rules_now: set[RuleKey]) -> None:
        """``spider_opened``: the requests kept by an earlier run (or, in Redis, by any process)
        go where their rules now are (``rules_now``: the learned rules): scheduled again if one
        was revoked, or if they were samples whose verdict never came; kept while their rules are
        on probation; forgotten once confirmed. A rule the restored state does not know counts
        as revoked: never lost."""
        entries, self._restored_entries = self._restored_entries, []
        again: list[Request] = []
        forget: list[bytes] = []
        kept = samples = 0
        for entry_id, names, data in entries:
            keys = tuple(text_key(n) for n in names)
            revoked = any(k not in rules_now for k in keys)
            on_probation = [k for k in keys if k in self._rules]
            if not revoked and not on_probation:
                forget.append(entry_id)  # confirmed
                continue
            request = self._unpickle(data)
            if request is None:
                forget.append(entry_id)
                continue
            if names[0].startswith(SAMPLE):
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
            logger.info(
                "Kept requests of rules on probation, from %s: %d kept, %d samples and %d others "
                "scheduled again, %d forgotten",
                self.kept_store,
                kept,
                samples,
                len(again) - samples,
                len(forget) - (len(again) - samples),
            )
        self._schedule(again)
        self._forget(forget)

    def _schedule(
        self, requests: list[Request], stat: str | None = "learned/probation/rescheduled"
    ) -> None:
        engine = self.crawler.engine
        for request in requests:
            if engine is not None:
                engine.crawl(request)  # type: ignore[arg-type]
                if stat:
                    self.stats.inc(stat)

    def _unpickle(self, data: bytes) -> Request | None:
        try:
            return request_from_dict(pickle.loads(data), spider=self.crawler.spider)
        except Exception:  # one bad entry must not cost the others
            logger.exception("Could not schedule again a request kept in %s", self.kept_store)
            return None

    def close(self) -> None:
        """Close the kept store (once: the scheduler closes it first, the learning session at
        the spider's close)."""
        if self._closed:
            return
        self._closed = True
        self.faults.count_outages(self.kept_store)
        self.kept_store.close()


def _entry_id(request: Request) -> bytes:
    """The id of a kept request: the same request kept twice (by two processes) is one entry."""
    h = blake2b(digest_size=8)
    h.update(f"{request.method} {request.url}\0".encode("utf-8", "surrogatepass"))
    h.update(request.body)
    return h.digest()


class _Kept:
    """A request merged while rules were on probation, and those rules."""

    __slots__ = ("keys", "request")

    def __init__(self, request: Request, keys: tuple[RuleKey, ...]) -> None:
        self.request, self.keys = request, keys
