"""The learning session of a crawl (``URLUNIFY_LEARN``): pages that share a signature teach which
query parameters, hosts and leading path segments do not matter (docs/learning.md). An adopted
rule applies to the identifiers of the rest of the crawl (the pages fetched so far are identified
again), is on probation (:mod:`._probation`), is counted in ``urlunify/learned/...``, is kept with
the job (JOBDIR or Redis) and is logged at close as ready-to-paste settings.
"""

from __future__ import annotations

import json
import logging
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals

from scrapy_urlunify.core._forms import identity_parts, with_host
from scrapy_urlunify.core._url import InvalidURL, host_of
from scrapy_urlunify.integration.crawl._meta import PROBATION_META
from scrapy_urlunify.integration.queue._frontier import PAGE
from scrapy_urlunify.integration.rules._fetched import FetchedPages
from scrapy_urlunify.integration.rules._probation import Probation, rule_key
from scrapy_urlunify.integration.rules._samples import sample_priority
from scrapy_urlunify.learning._persist import LearnedRulesStore
from scrapy_urlunify.stores._base import StoreError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._faults import StoreFaults
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.queue._frontier import Frontier
    from scrapy_urlunify.integration.seen._seen import SeenKeys
    from scrapy_urlunify.learning._learner import Learner
    from scrapy_urlunify.learning._open_questions import Questions
    from scrapy_urlunify.learning._persist import LearnedState
    from scrapy_urlunify.learning._rule_types import LearnedRule, Revocation
    from scrapy_urlunify.stores._factory import Stores


logger = logging.getLogger(__name__)

LEARNING_INDEX_ENTRIES = 50_000  # ~450 B each: ~22 MB of recent evidence (learning.Learner)
#: identity hosts whose pages are compared for alias pairs under the policy in force
MAX_HOSTS = 64
_PLURAL = {
    "param": "params",
    "alias": "aliases",
    "path": "paths",
    "suffix": "suffixes",
    "form": "forms",
}


class LearningSession:
    """The learner of a crawl, the pages it fetched, and the probation of the rules it learns."""

    def __init__(
        self,
        crawler: Crawler,
        settings: dict[str, Any],
        stats: UnifyStats,
        faults: StoreFaults,
        policies: CrawlPolicies,
        stores: Stores,
        seen: SeenKeys | None,
        *,
        sites: Iterable[str],
    ) -> None:
        from scrapy_urlunify.learning._learner import Learner

        self.crawler = crawler
        self.stats = stats
        self.faults = faults
        self.policies = policies
        self.learner: Learner = Learner(
            min_pairs=settings["URLUNIFY_LEARN_MIN_PAIRS"],
            sites=sites,
            max_entries=LEARNING_INDEX_ENTRIES,
            presence=settings["URLUNIFY_LEARN_PRESENCE"],
        )
        #: the learned rules in force, as a short digest ("" for none): a request stamped with
        #: another (``POLICY_META``) was judged under another policy, and is checked at dequeue
        self.policy_token = ""
        #: a page was obtained under another URL (a trusted declared canonical): a request queued
        #: before for its own URL is checked at dequeue, learned rules or not
        self.obtained_elsewhere = False
        #: the keys (``probation.rule_key``) of the rules revoked and not learned again
        self._revoked: set[tuple[str, ...]] = set()
        #: records a URL as seen (nothing records anything when the dupefilter is not ours)
        self._record_url = seen.record_url if seen is not None else _nothing
        where = stores.rules()
        self.rules_store = (
            LearnedRulesStore(path=where)
            if where is None or isinstance(where, Path)
            else LearnedRulesStore(redis=where)
        )
        self.pages = FetchedPages(faults, stores.fetched())
        #: the identity hosts of the pages shown to the learner (alias pairs: ``_elsewhere``)
        self._hosts: dict[str, None] = {}
        self.probation = Probation(
            crawler,
            stats,
            faults,
            policies,
            self.pages,
            stores.kept(),
            seen.holds_identifier if seen is not None else _nothing,
            save=self.save,
            samples_needed=settings["URLUNIFY_LEARN_PROBATION_SAMPLES"],
            sample_boost=sample_priority(settings),
        )
        self._restore()
        crawler.signals.connect(self._resume_kept, signal=signals.spider_opened)
        crawler.signals.connect(self.probation.verify_at_idle, signal=signals.spider_idle)

    # -- per page --------------------------------------------------------------------------------

    def page_fetched(
        self,
        request: Request,
        url: str,
        identifier: str,
        base_identifier: str,
        identity_host: str,
        sig: bytes,
        evidence: bool,
        spellings: tuple[str, ...] = (),
    ) -> None:
        """A 2xx page was fetched: ``evidence`` when its signature is of its text (see
        ``learning.page_signature``), which alone may teach or check a rule; ``spellings``:
        other URLs of this page as the site declares them (``Learner.observe``)."""
        probe = request.meta.get(PROBATION_META)
        if probe is not None and evidence:
            counter = self.probation.check_sample(probe, url, sig)
            if counter is not None:
                self._contradict(*counter, url)
        elif evidence and self.probation.active:
            counter = self.probation.check_fetched(url, sig)
            if counter is not None:
                self._contradict(*counter, url)
        self.pages.add(url, identifier, sig)
        policies = self.policies
        if policies.policy is not policies.base_policy:
            # queued, and recorded, under the policy of that moment: recorded under this one too
            self._record_url(url)
        self.pages.add_base(base_identifier)
        if evidence:  # the raw bytes of an HTML page change with any session id in a link
            self.learn(
                url, identity_host, sig, spellings, self._elsewhere(identifier, identity_host)
            )
        else:
            self.stats.inc("learned/not_evidence")

    def learn(
        self,
        url: str,
        identity_host: str,
        sig: bytes,
        spellings: tuple[str, ...] = (),
        elsewhere: list[tuple[str, str]] | None = None,
    ) -> None:
        """Show the learner a page (or a trusted declared canonical) and its signature;
        ``spellings``: other URLs of this page as the site declares them, ``elsewhere``: pages
        fetched with its identifier on other hosts (``Learner.observe``)."""
        learner = self.learner
        version, known_revoked, known_unstable = (
            learner.version,
            len(learner.revoked),
            len(learner.unstable),
        )
        adopted = learner.observe(url, identity_host, sig, spellings, elsewhere or ())
        for unstable in learner.unstable[known_unstable:]:
            self.stats.inc("learned/unstable")
            logger.info(
                "Unstable page, not used for learning: %s gave two different signatures", unstable
            )
        if learner.version != version:
            self._apply(adopted, list(learner.revoked[known_revoked:]))

    def _elsewhere(self, identifier: str, identity_host: str) -> list[tuple[str, str]]:
        """The pages fetched with ``identifier`` on the other hosts of the crawl's pages (the
        first :data:`MAX_HOSTS`): ``(URL, identity host)`` each."""
        hosts = self._hosts
        if identity_host not in hosts and len(hosts) < MAX_HOSTS:
            hosts[identity_host] = None
        prefix = self.policies.unifier.prefix_text
        found = []
        for host in hosts:
            other = (
                with_host(identifier, prefix, identity_host, host)
                if host != identity_host
                else None
            )
            page = self.pages.page(other) if other is not None else None
            if page is not None:
                found.append((page[0], host))
        return found

    def questions(self, url: str, frontier: Frontier) -> Questions:
        """What a request for ``url`` leaving the queue would ask of open candidate rules
        (``Learner.open_questions``), else of its URL group (``Frontier.first_of``); and whether
        its page is in flight under another spelling, one counted as observed. Two links of one
        page both pass the dupefilter when a rule learned between them merged their keys (a
        link queued under the rules before, one under those after: the same URL, or two
        spellings): the second to leave the queue waits, then is dropped."""
        host = host_of(url)
        if not host:
            return []
        unifier = self.policies.unifier
        try:
            identity_host = unifier.host_rules(host).identity_host
            identifier = unifier.identify(url)
        except InvalidURL:
            return []
        parts = identity_parts(identifier, unifier.prefix_text)
        found = self.learner.open_questions(url, identity_host, parts)
        return (found or frontier.first_of(parts)) + [(PAGE + identifier, PAGE + identifier, 1)]

    def identifier(self, url: str) -> str | None:
        """``url``'s identifier under the rules in force; None for a URL that has none."""
        try:
            return self.policies.unifier.identify(url)
        except InvalidURL:
            return None

    def canonical_checked(self, url: str, canonical: str, same: bool) -> None:
        """The page of ``url`` declared ``canonical``, now checked against it (``same``: one
        page): evidence toward a form rule, or against one (``learning._url_forms``)."""
        a, b = self._identity_parts(url), self._identity_parts(canonical)
        if a is None or b is None or a == b:  # one identifier already: a rule merges them
            return
        learner = self.learner
        version = learner.version
        adopted = learner.observe_canonical(a, b, same, (url, canonical))
        if learner.version != version:
            self._apply(adopted, [])

    def standalone(self, url: str) -> None:
        """The page of ``url`` names no other page canonical: a form rule that takes it is
        wrong (revoked), and no form that would is learned (``learning._url_forms``)."""
        parts = self._identity_parts(url)
        if parts is None:
            return
        learner = self.learner
        version, known_revoked = learner.version, len(learner.revoked)
        learner.observe_standalone(parts, url)
        if learner.version != version:
            self._apply([], list(learner.revoked[known_revoked:]))

    def _identity_parts(self, url: str) -> tuple[str, str, str | None] | None:
        """Host, path and query of ``url``'s identifier under the policy in force; None for a
        URL that has none."""
        unifier = self.policies.unifier
        try:
            return identity_parts(unifier.identify(url), unifier.prefix_text)
        except InvalidURL:
            return None

    def _contradict(self, rule: LearnedRule, earlier: str, url: str) -> None:
        learner = self.learner
        version, known_revoked = learner.version, len(learner.revoked)
        learner.contradict(rule, earlier, url)
        if learner.version != version:
            self._apply([], list(learner.revoked[known_revoked:]))

    def resumed(self, pages: list[tuple[str, str, bytes]]) -> int:
        """The pages the earlier runs of a resumed job fetched (``(URL, base identifier,
        signature)``, oldest first) count as fetched by this run, and the learner sees them again:
        its index of pages is not saved, and a resumed run that learned from its own pages only
        would adopt a rule one of them contradicts (two hosts whose home pages differ, seen by
        the killed run), and merge away the pages the killed run had scheduled. The number of
        pages now known."""
        known = self.pages.resumed(pages, self.policies.unifier)
        for url, _base_identifier, sig in pages:
            host = host_of(url)
            try:
                # under the rules in force now: a page may teach one while they are replayed
                identity_host = self.policies.unifier.host_rules(host).identity_host if host else ""
            except InvalidURL:
                continue
            self.learn(url, identity_host, sig)
        return known

    def obtained(self, url: str, identifier: str, sig: bytes) -> None:
        """The page of ``url`` (``identifier`` under the current policy) was obtained under
        another URL, its trusted declared canonical: counted as fetched, so that a request for
        it queued before is dropped as it leaves the scheduler."""
        self.pages.add(url, identifier, sig)
        self.obtained_elsewhere = True

    def fetched(self, identifier: str, shared: bool = True) -> bool:
        """Whether a page with this identifier (under the current policy) was fetched (see
        :meth:`._fetched.FetchedPages.fetched`): asked at dequeue."""
        return self.pages.fetched(identifier, shared)

    # -- rules -------------------------------------------------------------------------------------

    def _apply(self, adopted: list[LearnedRule], revoked: list[Revocation]) -> None:
        """Rebuild the crawl's policy with the learned rules; record the new identifiers of the
        pages that taught them, so their other spellings are not fetched again."""
        self._set_policy()
        for rule in adopted:
            self.stats.set(f"learned/{rule.kind}/{rule.context_key}/{rule.name}", rule.pairs)
            if rule_key(rule) in self._revoked:  # learned again (a page found unstable)
                self._revoked.discard(rule_key(rule))
                self.stats.set(f"learned/revoked/{rule.kind}/{rule.context_key}/{rule.name}", 0)
            self.stats.inc(f"learned/{_PLURAL[rule.kind]}")
            logger.info("Learned: %s", rule)
        # the pages fetched so far count as seen under their new identifiers too: after an
        # adoption, the other spellings the rule merges with them are not fetched; after a
        # revocation, a page fetched under the revoked rule is not "new" again
        for url in self.pages.urls():
            self._record_url(url)
        self.pages.identify_again(self.policies.unifier)
        self.probation.adopt(adopted)
        for revocation in revoked:
            a, b = revocation.counter_example
            rule = revocation.rule
            self.stats.inc("learned/revoked")
            # beside the rule's own stat, which stays: a report lists what is in force at the end
            self._revoked.add(rule_key(rule))
            self.stats.set(f"learned/revoked/{rule.kind}/{rule.context_key}/{rule.name}", 1)
            logger.info(
                "Unlearned, a counter-example showed it matters: %s (%s and %s have different "
                "content; %s)",
                revocation.rule,
                a,
                b,
                self.probation.progress(rule_key(revocation.rule)),
            )
        keys = {rule_key(r.rule) for r in revoked}
        self.probation.revoke(keys)
        # saved before the kept requests are scheduled and forgotten: a kill in between finds
        # them still kept, and their rule revoked, and schedules them at resume
        self.save()
        if revoked:
            self.probation.reschedule(keys)

    def _set_policy(self) -> None:
        learner = self.learner
        params, aliases, prefixes, suffixes, forms = (
            learner.ignore_params(),
            learner.domain_aliases(),
            learner.path_prefixes(),
            learner.path_suffixes(),
            learner.url_forms(),
        )
        self.policies.set_learned(params, aliases, prefixes, suffixes, forms)
        if not learner.rules:
            self.policy_token = ""
            return
        # the token of a crawl without suffix or form rules stays what it was before they existed
        learned: list[object] = [params, aliases, prefixes]
        if suffixes or forms:
            learned.append(suffixes)
        if forms:
            learned.append(forms)
        text = json.dumps(learned, sort_keys=True, separators=(",", ":"))
        self.policy_token = blake2b(text.encode(), digest_size=8).hexdigest()

    def _restore(self) -> None:
        from scrapy_urlunify.learning._learner import Learner

        fresh = self.learner
        try:
            state: LearnedState = self.rules_store.load_state()
            if not state.learner:
                return
            self.learner = Learner.from_json(
                state.learner, min_pairs=fresh.min_pairs, sites=fresh.sites, presence=fresh.presence
            )
            self.probation.restore(state.probation, self.learner.rules)
            if self.learner.rules:
                self._set_policy()
        except (ValueError, KeyError, TypeError, AttributeError, StoreError) as e:
            # valid JSON of another shape, rules the policy refuses, a key of another type:
            # learning starts afresh rather than every crawler of the scope failing at start
            logger.warning("Ignoring unreadable learned rules in %s: %s", self.rules_store, e)
            self.learner = fresh
            self.probation.clear()
            self._set_policy()
            return
        if self.learner.rules:
            logger.info(
                "Resumed with %d learned rules from %s (%d on probation), %d revoked",
                len(self.learner.rules),
                self.rules_store,
                len(self.probation),
                len(self.learner.revoked),
            )
            self.stats.set("learned/probation/resumed", len(self.probation))

    def save(self) -> None:
        """Save the learned rules and their probation (kept in memory only if the store fails)."""
        self.faults.guarded(
            lambda: self.rules_store.save(self.learner.to_json(), self.probation.state()),
            None,
        )

    def _resume_kept(self, spider: Any = None) -> None:
        self.probation.resume_kept({rule_key(r) for r in self.learner.rules})

    def settings_snippet(self) -> str | None:
        """The learned rules as settings to paste into the spider's; None without rules."""
        if not self.learner.rules:
            return None
        return self.learner.settings_snippet()

    def hints_text(self) -> str | None:
        """The parameters that looked irrelevant but were not learned, as advice; None when
        there are none."""
        return hints_text(self.learner.hints(self.learner.min_pairs))

    def close(self) -> None:
        self.faults.count_outages(self.rules_store.redis)
        if self.pages.shared is not None:
            self.pages.flush()
            self.faults.count_outages(self.pages.shared)
        self.probation.close()


def _nothing(_: str) -> bool:
    return False


def hints_text(hints: list[tuple[str, str, int]], limit: int = 5) -> str | None:
    """Parameters the learner did not adopt though their pages had one text, as advice."""
    if not hints:
        return None
    lines = [
        (
            "these parameters looked irrelevant but were not learned (too few pages showed it, "
            "or only pages with and without them): if they never change a page, add them to "
            "URLUNIFY_IGNORE_PARAMS (fetched anyway) or URLUNIFY_REMOVE_PARAMS (never sent):"
        )
    ]
    for host, name, pairs in hints[:limit]:
        lines.append(f"  {name!r} on {host}: {pairs} fetches of a page already fetched")
    if len(hints) > limit:
        lines.append(f"  ... and {len(hints) - limit} more")
    return "\n".join(lines)
