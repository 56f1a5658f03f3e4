"""The DUST learner: which URL differences do not change a page, learned from page signatures.

:class:`Learner` watches the downloaded pages of a crawl (:meth:`Learner.observe`, once per
page) and adopts the kinds of rule of ``rule_types`` (a parameter, an alias host, a leading or
last path segment that does not matter) from several *independent* pairs of pages that differ
only in it and share a signature, with no counter-example; a later counter-example revokes it.
``page_index`` indexes the pages, ``pairs`` finds their pairs, ``candidates`` keeps the evidence,
``unstable`` the pages that changed between two views; this module weighs, adopts and revokes.
Pure Python, no Scrapy, deterministic, bounded in memory. Why each safeguard is there
(independence, the default-value trap, unstable pages, catch-all signatures, eviction) is in
``docs/learning.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import scrapy_urlunify.learning._rule_settings as rule_settings
from scrapy_urlunify.core._domains import prefix_matcher, strip_prefixes, within
from scrapy_urlunify.core._policy import DEFAULT_STRIP_HOST_PREFIXES
from scrapy_urlunify.core._spellings import LINK_TAG_PARAMS
from scrapy_urlunify.learning._candidates import PRESENCE, Candidates
from scrapy_urlunify.learning._open_questions import Questions, open_questions
from scrapy_urlunify.learning._page_index import PageIndex, UnstablePages
from scrapy_urlunify.learning._page_signature import signature_text
from scrapy_urlunify.learning._pairs import MAX_ITEMS, Pair, PairFinder, other_items, read_page
from scrapy_urlunify.learning._rule_contexts import RuleContexts, split_context
from scrapy_urlunify.learning._rule_types import (
    ALIAS,
    FORM,
    PARAM,
    PATH_KINDS,
    CounterExample,
    LearnedRule,
    Revocation,
    alias_direction,
    alias_of,
    alias_root,
    covered,
    host_params,
    in_context_rule,
    rule_key,
)
from scrapy_urlunify.learning._url_forms import FormEvidence, Parts, forms_taking

_FORMAT = "scrapy_urlunify.learning/1"
#: Distinct values of a parameter, one text, one rule context: a rule of that context (at
#: least four times ``min_pairs``). Six option variants of one page (``limit``, ``days``) are
#: not enough; a login page reached with the name of every page (``returnto``) soon is.
CONTEXT_VALUES = 12
#: A parameter learned from pages with and without it (one value on the host: ``print=1``)
#: needs this many times ``min_pairs`` distinct pages: a default value (``?page=1`` = the
#: list) looks the same, and is only caught by probation or a later ``page=2``.
PRESENCE_FACTOR = 3
#: ... and a parameter with one value on each path, another on each (``add_to_wishlist=<the
#: page's own id>``), this many times that again: a page's own default (``color=red`` on a red
#: product, ``color=blue`` on a blue one) looks the same until a page links two of its values
PER_PATH_FACTOR = 2
#: Distinct pages of one rule context (``route=product/view``), two values of a parameter with
#: one text on each, that make a rule of that context: this many times ``min_pairs`` (a host
#: rule on one path needs twice ``min_pairs`` too).
CONTEXT_PAGE_FACTOR = 2
#: Declared canonicals of one shape found true, this many times ``min_pairs`` distinct ones,
#: that make a form rule (``_url_forms``): the site said each; the shape is our guess
FORM_FACTOR = 2
_PREFIXES = prefix_matcher(DEFAULT_STRIP_HOST_PREFIXES)
#: what :attr:`Learner.stats` counts of the pages observed and the pairs they made
_COUNTERS = [
    "pages",
    "repeats",
    "skipped",
    "equal_pairs",
    "counter_pairs",
    "presence_pairs",
    "unstable",
    "evicted",
]


class Learner:
    """Learns parameter and host-alias rules from the signatures of downloaded pages.

    ``min_pairs`` (at least 2): independent pieces of evidence a rule needs. ``sites``: the
    hosts of the crawl (``allowed_domains``, start URL hosts); hosts within two of them may be
    learned as aliases. ``max_entries``: records of the per-page index (see "Memory and speed"
    in ``docs/learning.md``). ``presence``: also learn a parameter that always has one value
    (``print=1``) from pages with and without it. Not thread-safe, like the rest of a Scrapy crawl.
    """

    def __init__(
        self,
        min_pairs: int = 3,
        sites: Iterable[str] = (),
        max_entries: int = 200_000,
        presence: bool = False,
    ) -> None:
        if isinstance(min_pairs, bool) or not isinstance(min_pairs, int) or min_pairs < 2:
            raise ValueError(
                f"min_pairs must be an integer >= 2 (never learn from one pair), got {min_pairs!r}"
            )
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise ValueError(f"max_entries must be an integer >= 0, got {max_entries!r}")
        if isinstance(sites, str):
            sites = [sites]
        self.min_pairs = min_pairs
        self.max_entries = max_entries
        #: whether a parameter with one value on its host (``print=1``) may be learned from pages
        #: with and without it (the add-on turns it on: URLUNIFY_LEARN_PRESENCE)
        self.presence = presence
        self.max_candidates = max(100, max_entries // 20)
        hosts = (
            strip_prefixes(s.strip().lower().rstrip("."), _PREFIXES) for s in sites if s.strip()
        )
        self.sites: tuple[str, ...] = tuple(dict.fromkeys(hosts))
        self._item_cap = 8 * min_pairs
        #: distinct values of a parameter with one text that teach a rule of their context
        self.context_values = max(CONTEXT_VALUES, 4 * min_pairs)
        self._contexts = RuleContexts(max(1000, max_entries // 10), self.context_values)
        self._index = PageIndex(max_entries)
        self._finder = PairFinder(self._index, self.sites)
        # learned state (persisted by to_json, with the index's catch-all and shared signatures)
        self._rules: list[LearnedRule] = []
        self._revoked: list[Revocation] = []
        self._candidates = Candidates(self.max_candidates)
        self._version = 0
        self._stats = dict.fromkeys(_COUNTERS, 0)
        self._unstable = UnstablePages()
        self._forms = FormEvidence(FORM_FACTOR * min_pairs, min_pairs)

    # -- public state ------------------------------------------------------------------------

    @property
    def rules(self) -> tuple[LearnedRule, ...]:
        """All adopted rules still in force, in adoption order."""
        return tuple(self._rules)

    @property
    def revoked(self) -> tuple[Revocation, ...]:
        """Rules revoked by a later counter-example, in revocation order."""
        return tuple(self._revoked)

    @property
    def version(self) -> int:
        """Changes (increases) whenever :attr:`rules` changes: adoption or revocation."""
        return self._version

    @property
    def index_size(self) -> int:
        """Records in the per-page index (never above ``max_entries`` between calls)."""
        return self._index.size

    @property
    def stats(self) -> dict[str, int]:
        """Counters for the log: pages observed, repeats ignored, equal and counter pairs, index
        records evicted, rules, revocations, blocked candidates, catch-all signatures."""
        s = dict(self._stats)
        s.update(
            rules=len(self._rules),
            revoked=len(self._revoked),
            index=self._index.size,
            candidates=len(self._candidates),
            blocked=self._candidates.blocked_count() + self._contexts.blocked_count(),
            catch_all=len(self._index.catch_all),
            shared=len(self._index.shared),
        )
        return s

    @property
    def unstable(self) -> tuple[str, ...]:
        """URLs seen twice with different signatures (at most 1,000): not evidence."""
        return tuple(self._unstable.log)

    def counter_examples(self) -> list[CounterExample]:
        """The first counter-example of each blocked candidate (at most 1,000), in order."""
        return self._candidates.counter_examples()

    def hints(self, minimum: int = 3) -> list[tuple[str, str, int]]:
        """The parameters that looked irrelevant but were not learned (too little evidence, or
        the default-value trap), most costly first: :meth:`Candidates.open_params`."""
        found = self._candidates.open_params(minimum)
        found = [h for h in found if not covered(self._rules, PARAM, h[0], h[1])]
        return sorted(found, key=lambda h: (-h[2], h[0], h[1]))

    def is_blocked(self, kind: str, host: str, name: str) -> bool:
        """Whether a counter-example rules out this candidate (``"alias"``: two hosts). A
        parameter is blocked on a host when a counter-example was seen on it or on one of its
        subdomains (a rule would cover them)."""
        return self._candidates.is_blocked(kind, host, name)

    # the rules as settings (rule_settings says how)
    def ignore_params(self) -> dict[str, list[str]]:
        return rule_settings.ignore_params(self._rules)

    def path_prefixes(self) -> dict[str, list[str]]:
        return rule_settings.path_prefixes(self._rules)

    def path_suffixes(self) -> dict[str, list[str]]:
        return rule_settings.path_suffixes(self._rules)

    def domain_aliases(self) -> list[list[str]]:
        return rule_settings.domain_aliases(self._rules)

    def url_forms(self) -> dict[str, dict[str, str]]:
        return rule_settings.url_forms(self._rules)

    def settings_snippet(self) -> str:
        return rule_settings.settings_snippet(self._rules)

    # -- observing ---------------------------------------------------------------------------

    def observe(
        self,
        url: str,
        identity_host: str,
        signature: bytes,
        spellings: tuple[str, ...] = (),
        elsewhere: Iterable[tuple[str, str]] = (),
    ) -> list[LearnedRule]:
        """Record one downloaded page: ``url`` is the fetched URL (WHATWG-serialized and
        standardized), ``identity_host`` its host after ``www``-stripping and aliases, and
        ``signature`` its page signature. Returns the rules adopted because of this
        observation (usually none); revocations show in :attr:`revoked` and :attr:`version`.
        A URL that is not an http(s) URL is ignored. Give only signatures that may be evidence
        (the body text of an HTML page, not its raw bytes: see ``learning.page_signature``).
        ``spellings``: other URLs of this very page as the site declares them (the canonical
        it declares; for a trusted canonical shown as a page, the page that declared it): its
        text on their paths is then no soft 404. ``elsewhere``: the pages the caller's policy
        gives its identifier on other hosts (``(URL, identity host)``: alias pairs)."""
        sig = signature_text(signature)
        stats = self._stats
        stats["pages"] += 1
        page = read_page(url, identity_host, sig)
        if page is None:
            stats["skipped"] += 1
            return []
        if url in self._unstable.urls:
            stats["repeats"] += 1
            return []
        index = self._index
        e0 = index.records.get(page.key, ())
        for r in e0:
            if r[0] is None:  # this very page again: nothing to compare, unless it changed
                stats["repeats"] += 1
                if r[2] != sig:
                    self._mark_unstable(url, r[3])
                return []
        if page.items and len(page.items) <= MAX_ITEMS:
            self._contexts.note_page(page.host, page.hostkey + page.path, page.items)
        finder = self._finder
        pairs = finder.param_pairs(page, e0, host_params(self._rules, page.host))
        pairs += finder.path_pairs(page)
        pairs += finder.suffix_pairs(page)
        pairs += finder.alias_pairs(page) + finder.counterpart_pairs(page, elsewhere)
        others = (read_page(u, identity_host, "") for u in spellings)
        index.note_signature(sig, page.path, tuple(o.path for o in others if o is not None))
        adopted = self._weigh(pairs, url) if pairs else []
        evicted = index.evict()
        if evicted:
            stats["evicted"] += evicted
        return adopted

    def open_questions(self, url: str, identity_host: str, parts: Parts | None = None) -> Questions:
        """What fetching ``url`` (``parts``: its identifier's) would ask of a rule not adopted
        nor ruled out: :func:`._open_questions.open_questions`."""
        return open_questions(
            url,
            identity_host,
            self._rules,
            self._unstable.urls,
            self._candidates,
            self._contexts,
            self._finder,
            (self._forms, parts),
        )

    def observe_canonical(
        self, url: Parts, canonical: Parts, same: bool, urls: tuple[str, str]
    ) -> list[LearnedRule]:
        """A page whose identifier has the parts ``url`` declared the canonical ``canonical``,
        checked against it: ``same`` when it was that page (``urls``: the two, for the log). The
        form rule adopted because of it (usually none): see ``_url_forms``."""
        if not same:
            self._forms.refuted(url, canonical)
            return []
        carried = self._forms.carried(self._rules, url, canonical, urls)
        found = (carried, self._forms.verified(url, canonical, urls))
        return [
            self._adopt(LearnedRule(FORM, f.host, f.source, f.pairs, f.examples, target=f.target))
            for f in found
            if f is not None
        ]

    def observe_standalone(self, url: Parts, fetched: str) -> list[LearnedRule]:
        """A page whose identifier has the parts ``url`` (fetched as ``fetched``) named no other
        page canonical: the form rules that take it, a counter-example each (revoked)."""
        self._forms.standalone(url)
        wrong = forms_taking(self._rules, url[0], fetched)
        for r in wrong:
            self._contradict(FORM, r.host, r.name, fetched, fetched)
        return wrong

    def _weigh(self, pairs: list[Pair], url: str) -> list[LearnedRule]:
        """Counter-examples first (one observation can both support and contradict), then
        evidence; pairs with a page known to be unstable count as neither."""
        unstable = self._unstable.urls
        pairs = [p for p in pairs if p.earlier not in unstable]
        for p in pairs:
            if not p.equal:
                self._stats["counter_pairs"] += 1
                where = None
                if p.kind == PARAM:
                    where = p.where
                    self._contexts.note_identifying(p.hint.partition("?")[0], p.b)
                self._contradict(p.kind, p.a, p.b, p.earlier, url, where)
        adopted: list[LearnedRule] = []
        for p in pairs:
            if not p.equal:
                continue
            if not p.evidence:
                self._stats["presence_pairs"] += 1
                rule = self._support_presence(p, url) if p.kind == PARAM and self.presence else None
                if rule is None and p.kind == PARAM:
                    rule = self._support_context_pages(p, url, valued=False)
            else:
                self._stats["equal_pairs"] += 1
                rule = self._support(p, url)
                if rule is None and p.kind == PARAM:
                    rule = self._support_context(p, url) or self._support_context_pages(p, url)
            if rule is not None:
                adopted.append(rule)
        return adopted

    def _mark_unstable(self, url: str, earlier: str) -> None:
        """One page gave two signatures: its pairs count as neither evidence nor
        counter-example from now on, and a candidate its first counter-example blocked is
        unblocked (a later, stable counter-example blocks it again)."""
        spellings = self._unstable.mark(url, earlier)
        if url in spellings:
            self._stats["unstable"] += 1
        if spellings:
            self._candidates.unblock_from(spellings)

    # -- adopting and revoking ---------------------------------------------------------------

    def _support(self, p: Pair, url: str) -> LearnedRule | None:
        """Count the equal pair ``p`` toward its candidate; the rule if that adopts it."""
        kind, a, b, sig = p.kind, p.a, p.b, p.sig
        index, candidates = self._index, self._candidates
        if (
            sig in index.catch_all
            or (kind not in PATH_KINDS and sig in index.shared)
            or candidates.is_blocked(kind, a, b)
        ):
            return None
        if (kind == PARAM or kind in PATH_KINDS) and covered(self._rules, kind, a, b):
            return None
        if kind == ALIAS and (
            alias_of(self._rules, b) is not None or alias_of(self._rules, a) is not None
        ):
            return None  # one of them is mapped already (the caller's policy lags behind)
        key = rule_key(kind, a, b)
        ev = candidates.evidence(key, self._finder.seen_first(a, b) if kind == ALIAS else "")
        if not ev.add(p.ctx, sig, p.path, (p.earlier, url), self._item_cap, p.hint):
            return None
        if kind in PATH_KINDS:
            n, paths = ev.count(index.catch_all)
        else:  # pairs of one page (its option variants) are one piece
            n, paths = ev.count(index.catch_all, index.shared, page_of=self._contexts.page_of)
        if n < self.min_pairs or (paths < 2 and n < 2 * self.min_pairs):
            return None
        if kind != ALIAS:
            rule = LearnedRule(kind, a, b, n, tuple(ev.examples))
        else:
            alias, canonical = alias_direction(key[1], key[2], ev.first, self.sites, self._rules)
            if alias_root(self._rules, canonical) == alias:
                return None
            rule = LearnedRule(ALIAS, alias, canonical, n, tuple(ev.examples))
        candidates.drop(key)
        return self._adopt(rule)

    def _support_presence(self, p: Pair, url: str) -> LearnedRule | None:
        """Count the pair ``p`` of a page with and without a parameter (``?print=1`` and no
        ``print``, one text) toward a rule of the host: only while the parameter showed one
        value on the host, and it needs more evidence than two values do (``min_pairs`` pages
        ``PRESENCE_FACTOR`` times over, on two paths; twice that on one): the default-value trap
        (``?page=1`` = the list) is what probation and the first ``page=2`` then catch. Or
        while it showed one value on each path (an action on the page itself), with
        ``PER_PATH_FACTOR`` times that evidence. A link tag (``core._spellings.LINK_TAG_PARAMS``)
        has no such default: it needs what two values need, whatever its values."""
        a, b, sig = p.a, p.b, p.sig
        index, candidates, contexts = self._index, self._candidates, self._contexts
        tag = b in LINK_TAG_PARAMS
        per_path = not tag and not contexts.single_valued(a, b)
        if (
            sig in index.catch_all
            or sig in index.shared
            or candidates.is_blocked(PARAM, a, b)
            or covered(self._rules, PARAM, a, b)
            or (per_path and not contexts.one_value_per_path(a, b))
        ):
            return None
        ev = candidates.evidence((PRESENCE, a, b), "")
        if not ev.add(p.ctx, sig, p.path, (p.earlier, url), self._item_cap, p.hint):
            return None
        n, paths = ev.count(index.catch_all, index.shared, page_of=contexts.page_of)
        need = (
            1 if tag else PRESENCE_FACTOR * (PER_PATH_FACTOR if per_path else 1)
        ) * self.min_pairs
        if n < need or (paths < 2 and n < 2 * need):
            return None
        rule = LearnedRule(PARAM, a, b, n, tuple(ev.examples))
        candidates.drop((PRESENCE, a, b))
        candidates.drop((PARAM, a, b))
        return self._adopt(rule)

    def _support_context(self, p: Pair, url: str) -> LearnedRule | None:
        """Count the values of the equal pair ``p`` toward a rule of its rule context: many
        values of the parameter with one text on one path (``context_values``), in the items
        all their URLs shared, and no counter-example there."""
        a, b, sig = p.a, p.b, p.sig
        if "#" in p.ctx or not p.hint or covered(self._rules, PARAM, a, b):
            return None
        hostpath = p.hint.partition("?")[0]
        contexts = self._contexts
        found = contexts.add_values(
            a, hostpath, p.path, b, sig, p.values, other_items(p.hint), (p.earlier, url)
        )
        if found is None:
            return None
        context, n, examples = found
        path, common = split_context(context)
        if not common and sig in self._index.catch_all:
            return None  # a page served on many paths (an error, a login wall) names no context
        if contexts.is_blocked(a, b, context) or in_context_rule(self._rules, a, b, path, common):
            return None
        contexts.drop_group(a, hostpath, b, sig)
        return self._adopt(LearnedRule(PARAM, a, b, n, tuple(examples), context))

    def _support_context_pages(self, p: Pair, url: str, valued: bool = True) -> LearnedRule | None:
        """Count the equal pair ``p`` toward a rule of its rule context by distinct pages: the
        parameter changed nothing on ``CONTEXT_PAGE_FACTOR * min_pairs`` pages of one context
        (``sort`` on ``route=product/view``, each product its own text), where a counter-example
        elsewhere on the host (``sort`` on a listing) keeps a host rule out. A page with and
        without the parameter (``valued`` False) counts once ``min_pairs`` pages of the context
        showed two of its values with one text: a default value (``?page=1`` = the list) alone
        never makes a rule."""
        a, b, sig = p.a, p.b, p.sig
        if (
            "#" in p.ctx
            or not p.hint
            or covered(self._rules, PARAM, a, b)
            or sig in self._index.shared
        ):
            return None
        contexts = self._contexts
        found = contexts.context_of(p.path, p.hint)
        if found is None:
            return None
        page, context = found
        if contexts.is_blocked(a, b, context):
            return None
        n, n_valued, examples = contexts.add_page(a, b, context, page, (p.earlier, url), valued)
        if n < CONTEXT_PAGE_FACTOR * self.min_pairs or n_valued < self.min_pairs:
            return None
        if in_context_rule(self._rules, a, b, *split_context(context)):
            return None
        contexts.drop_pages(a, b, context)
        return self._adopt(LearnedRule(PARAM, a, b, n, tuple(examples), context))

    def _adopt(self, rule: LearnedRule) -> LearnedRule:
        """``rule`` in force from now on (``version`` changes)."""
        self._rules.append(rule)
        self._version += 1
        return rule

    def contradict(self, rule: LearnedRule, url_a: str, url_b: str) -> None:
        """A counter-example found by the caller (a request the rule merged, fetched anyway, with
        other content than the page it was merged into): blocks the rule, and revokes it if
        adopted (see :attr:`revoked`)."""
        self._stats["counter_pairs"] += 1
        where = split_context(rule.context) if rule.context else None
        self._contradict(rule.kind, rule.host, rule.name, url_a, url_b, where)

    def _contradict(
        self,
        kind: str,
        a: str,
        b: str,
        earlier: str,
        url: str,
        where: tuple[str, frozenset[str]] | None = None,
    ) -> None:
        """A counter-example: blocks the candidate on the host, and with ``where`` (the path
        and the other items of a parameter pair) every rule context it falls in; revokes what
        it blocks."""
        if kind == FORM:  # (the forms' own evidence keeps what is refused)
            self._forms.refuse(a, b)
            doomed = [r for r in self._rules if r.kind == FORM and (r.host, r.name) == (a, b)]
        else:
            self._candidates.block(kind, a, b, earlier, url)
        if kind == PARAM:
            self._candidates.drop((PRESENCE, a, b))
            if where is not None:
                self._contexts.block(a, b, *where)
            doomed = [
                r
                for r in self._rules
                if r.kind == kind
                and r.name == b
                and within(a, r.host)
                and (not r.context or (where is not None and r.applies_to(*where)))
            ]
        elif kind in PATH_KINDS:
            doomed = [
                r for r in self._rules if r.kind == kind and r.name == b and within(a, r.host)
            ]
        elif kind == ALIAS:
            doomed = [r for r in self._rules if r.kind == ALIAS and {r.host, r.name} == {a, b}]
        for r in doomed:
            self._rules.remove(r)
            self._revoked.append(Revocation(r, (earlier, url)))
            self._version += 1

    def to_json(self) -> str:
        """Rules, revocations, blocked candidates, catch-all signatures and the evidence toward
        candidates, as JSON (the per-page index is not kept: a resumed crawl only misses pairs
        whose first page came before the restart)."""
        data = {
            "format": _FORMAT,
            "settings": {
                "min_pairs": self.min_pairs,
                "sites": list(self.sites),
                "max_entries": self.max_entries,
            },
            "version": self._version,
            "rules": [r.to_dict() for r in self._rules],
            "revoked": [
                {"rule": r.rule.to_dict(), "counter_example": list(r.counter_example)}
                for r in self._revoked
            ],
            **self._candidates.blocked_to_dict(),
            "blocked_contexts": self._contexts.to_list(),
            "catch_all": sorted(self._index.catch_all),
            "shared": sorted(self._index.shared),
            "candidates": self._candidates.evidence_to_list(),
            "counter_examples": self._candidates.counter_examples_to_list(),
            "stats": dict(self._stats),
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(
        cls,
        text: str,
        *,
        min_pairs: int | None = None,
        sites: Iterable[str] | None = None,
        max_entries: int | None = None,
        presence: bool = False,
    ) -> Learner:
        """A learner from :meth:`to_json` output; the keyword arguments, when given, replace the
        saved settings (blocked candidates and catch-all signatures are always kept). Raises
        ``ValueError`` on text that is not such output."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as e:
            raise ValueError(f"not a saved Learner: {e}") from None
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"not a saved Learner (format {_FORMAT!r} expected)")
        try:
            saved = data["settings"]
            learner = cls(
                min_pairs=saved["min_pairs"] if min_pairs is None else min_pairs,
                sites=saved["sites"] if sites is None else sites,
                max_entries=saved["max_entries"] if max_entries is None else max_entries,
                presence=presence,
            )
            learner._rules = [LearnedRule.from_dict(r) for r in data["rules"]]
            learner._revoked = [
                Revocation(
                    LearnedRule.from_dict(r["rule"]),
                    tuple(r["counter_example"]),  # type: ignore[arg-type]
                )
                for r in data["revoked"]
            ]
            for r in learner._revoked:
                if r.rule.kind == FORM:
                    learner._forms.refuse(r.rule.host, r.rule.name)
            learner._index.catch_all = set(map(str, data["catch_all"]))
            learner._index.shared = set(map(str, data.get("shared", ())))
            learner._candidates.load(data)
            learner._contexts.load(data.get("blocked_contexts", []))
            learner._stats.update(
                {k: int(v) for k, v in data.get("stats", {}).items() if k in learner._stats}
            )
            learner._version = int(data.get("version", len(learner._rules)))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a saved Learner: {e!r}") from None
        return learner
