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

import logging
import re
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import TextResponse
from scrapy.selector import Selector

from ..core.domains import within
from ..core.unify import unifier_for
from ..core.url import InvalidURL, host_of
from ..learning.persist import LearnedRulesStore
from ..learning.signatures import page_signature, site_key
from ..stores import SEEN_FILENAME, JobdirSignatureStore, RecordLog, SignatureStore, StoreError
from .context import UnifyContext
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

__all__ = ["DUPLICATE_OF_META", "SIGNATURE_META", "DuplicatePage", "SignatureMiddleware"]

logger = logging.getLogger(__name__)

SIGNATURE_META = "urlunify_signature"
DUPLICATE_OF_META = "urlunify_duplicate_of"

#: bytes of a page searched for its ``<head>``'s end (a declared canonical is in the head)
HEAD_LIMIT = 256 * 1024
_HEAD_END = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
_CANONICAL_LINK = re.compile(r'<\s*([^>]*)>\s*;[^,]*\brel\s*=\s*"?canonical\b', re.IGNORECASE)
_RECENT = 100_000  # identifiers whose signature is remembered, to check canonical claims
#: requests a newly adopted rule merges that are fetched anyway to check it, each on its own path
RULE_PROBATION = 5
#: requests merged by rules still on probation, kept to be scheduled again if one is revoked
MERGED_KEPT = 10_000
PROBATION_META = "urlunify_probation"
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
        if s["URLUNIFY_LEARN"]:
            from ..learning.learner import Learner

            self.learner = Learner(min_pairs=s["URLUNIFY_LEARN_MIN_PAIRS"],
                                   sites=context.policy.sites or _spider_sites(crawler),
                                   max_entries=LEARNING_INDEX_ENTRIES)
            self._rules_store = _rules_store(crawler)
            self._restore_learned()
        self._recent: OrderedDict[str, bytes] = OrderedDict()  # identifier -> signature
        self._fetched: OrderedDict[str, bytes] = OrderedDict()  # recent URLs -> signature, re-identified when a rule is learned
        self._fetched_ids: OrderedDict[str, tuple[str, bytes]] = OrderedDict()  # their identifiers now -> (url, signature)
        self._fetched_base: OrderedDict[str, None] = OrderedDict()  # their identifiers under the settings' policy
        self._probation: dict[tuple[str, str, str], _Probation] = {}  # rules adopted, not yet confirmed
        self._kept: list[tuple[Request, tuple[tuple[str, str, str], ...]]] = []  # merged while on probation
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
        sig, evidence = page_signature(response.body, _content_type(response), decoded, self.max_bytes)
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
        ``MERGED_KEPT``) and scheduled again if that rule is revoked: never lost."""
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
        path = url.split("?", 1)[0].split("#", 1)[0]
        # a sample is compared with the page it was merged into: only once that page is fetched
        if identifier in self._fetched_ids:
            for p in rules:
                if p.sampled < RULE_PROBATION and path not in p.paths:
                    p.paths.add(path)
                    p.sampled += 1
                    request.meta[PROBATION_META] = (p.key, identifier)
                    self._remember(self._fetched_base, page, None)
                    self.context.inc("learned/probation/samples")
                    return True
        if len(self._kept) < MERGED_KEPT:
            self._kept.append((request, tuple(p.key for p in rules)))
            self.context.inc("learned/probation/kept")
        else:  # beyond the bound: merged on the rule's word, as without probation
            self.context.inc("learned/probation/not_kept")
        return False

    def _base_seen(self, identifier: str) -> bool:
        """Whether the seen store holds ``identifier``'s key as the settings' policy computes it
        (a request recorded before a rule was learned); False when our fingerprinter is not the
        dupefilter's, or the store does not answer (the request is then judged as before)."""
        df = self.context.dupefilter
        if df is None or not getattr(df, "_fast", False):
            return False
        from .dupefilter import seen_key
        from .fingerprinter import Fingerprinter

        try:
            return seen_key(Fingerprinter.compute("GET", identifier)) in df.store
        except STORE_FAULTS:
            return False

    def _check_sample(self, probe: tuple[tuple[str, str, str], str], url: str, sig: bytes) -> None:
        key, merged_into = probe
        p = self._probation.get(tuple(key))  # type: ignore[arg-type]
        earlier = self._fetched_ids.get(merged_into)
        if p is None or earlier is None:  # confirmed or revoked meanwhile, or page not fetched yet
            return
        learner = self.learner
        assert learner is not None
        if earlier[1] == sig:
            p.confirmed += 1
            if p.confirmed >= RULE_PROBATION:
                del self._probation[p.key]
                self._kept = [(r, keys) for r, keys in self._kept if any(k in self._probation for k in keys)]
                self.context.inc("learned/confirmed")
                logger.info("Confirmed by %d requests it merged, fetched anyway: %s", p.confirmed, p.rule)
            return
        version, known_revoked = learner.version, len(learner.revoked)
        learner.contradict(p.rule, earlier[0], url)
        if learner.version != version:
            self._apply_learned([], list(learner.revoked[known_revoked:]))

    def _apply_learned(self, adopted: list[LearnedRule], revoked: list[Revocation]) -> None:
        """Rebuild the crawl's policy with the learned rules; record the new identifiers of the
        pages that taught them, so their other spellings are not fetched again."""
        ctx = self.context
        learner = self.learner
        assert learner is not None
        ctx.set_learned(learner.remove_params(), learner.domain_aliases(), learner.path_prefixes())
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
        for rule in adopted:
            p = _Probation(rule)
            self._probation[p.key] = p
        for revocation in revoked:
            a, b = revocation.counter_example
            ctx.inc("learned/revoked")
            logger.warning("Unlearned, a counter-example showed it matters: %s (%s and %s have different content)",
                           revocation.rule, a, b)
        if revoked:
            self._reschedule({_rule_key(r.rule) for r in revoked})
        self._save_learned()

    def _reschedule(self, revoked: set[tuple[str, str, str]]) -> None:
        """Schedule again the requests merged by revoked rules (the dupefilter judges them
        under the policy without those rules)."""
        for key in revoked:
            self._probation.pop(key, None)
        engine = self.crawler.engine
        kept: list[tuple[Request, tuple[tuple[str, str, str], ...]]] = []
        again: list[Request] = []
        for request, keys in self._kept:
            if revoked.intersection(keys):
                again.append(request)
            else:
                kept.append((request, keys))
        self._kept = kept
        for request in again:
            if engine is not None:
                engine.crawl(request)  # type: ignore[arg-type]
                self.context.inc("learned/probation/rescheduled")

    def _fetched_now(self, url: str, identifier: str, sig: bytes) -> None:
        """Remember a fetched page; under learned rules, record its identifier under them too
        (it was queued, and recorded, under the policy of that moment)."""
        self._remember(self._fetched, url, sig)
        self._remember(self._fetched_ids, identifier, (url, sig))
        ctx = self.context
        if ctx.policy is not ctx.base_policy and ctx.dupefilter is not None:
            ctx.dupefilter.record_url(url)

    def fetched(self, identifier: str) -> bool:
        """Whether a page with this identifier (under the current policy) was fetched lately;
        always False without learning (nothing changes identifiers while requests wait)."""
        return identifier in self._fetched_ids

    def _restore_learned(self) -> None:
        from ..learning.learner import Learner

        fresh = self.learner
        assert fresh is not None  # restored only when learning is on
        try:
            text = self._rules_store.load()
            if not text:
                return
            self.learner = Learner.from_json(text, min_pairs=fresh.min_pairs, sites=fresh.sites)
            if self.learner.rules:
                self.context.set_learned(self.learner.remove_params(), self.learner.domain_aliases(),
                                         self.learner.path_prefixes())
        except (ValueError, KeyError, TypeError, AttributeError, StoreError) as e:
            # valid JSON of another shape, rules the policy refuses, a key of another type:
            # learning starts afresh rather than every crawler of the scope failing at start
            logger.warning("Ignoring unreadable learned rules in %s: %s", self._rules_store, e)
            self.learner = fresh
            self.context.set_learned({}, [], {})
            return
        if self.learner.rules:
            logger.info("Resumed with %d learned rules from %s", len(self.learner.rules), self._rules_store)

    def _save_learned(self) -> None:
        if self.learner is not None:
            try:
                self._rules_store.save(self.learner.to_json())
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
        self.store.close()


def _rule_key(rule: LearnedRule) -> tuple[str, str, str]:
    return (rule.kind, rule.host, rule.name)


class _Probation:
    """A rule adopted but not yet confirmed: its samples (fetched anyway) and their verdicts."""

    __slots__ = ("confirmed", "key", "paths", "rule", "sampled")

    def __init__(self, rule: LearnedRule) -> None:
        self.rule = rule
        self.key = _rule_key(rule)
        self.paths: set[str] = set()
        self.sampled = 0
        self.confirmed = 0

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



