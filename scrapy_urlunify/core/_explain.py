"""Why two URLs are one page: :func:`explain` (every rule that fired on a URL) and :func:`same`.

What ``urlunify explain`` and ``urlunify same`` print. :func:`explain_with` runs the steps of a
:class:`~scrapy_urlunify.core._unify.Unifier` one by one, in the order and under the guards its
compiled layers run them in, recording each that changed something; :func:`same` compares two
URLs and finds the rules without which they would differ, by explaining them again with rules
left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import scrapy_urlunify.core._filters as filters
from scrapy_urlunify.core._guards import Step
from scrapy_urlunify.core._policy import Policy
from scrapy_urlunify.core._recent import LONG_TEXT, forget, remembered
from scrapy_urlunify.core._rules import IDENTITY_STEPS
from scrapy_urlunify.core._unify import (
    DEFAULT_POLICY,
    MAX_PASSES,
    Result,
    Unifier,
    identity_text,
    unifier_for,
)
from scrapy_urlunify.core._url import InvalidURL, Parts, resolve


@dataclass(frozen=True)
class Fired:
    """One step that changed the URL: its name, its layer, the text before and after it, and
    what it reported (``True`` or the names of its sub-rules)."""

    rule: str
    layer: str
    before: str
    after: str
    detail: object = True

    @property
    def names(self) -> tuple[str, ...]:
        """The rule names this step stands for (sub-rules when it reported them)."""
        if isinstance(self.detail, str) and self.detail:
            return tuple(self.detail.split(","))
        return (self.rule,)


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found: the input, the resolved URL, the result and the rules fired."""

    url: str
    base: str | None
    resolved: str | None
    result: Result
    fired: list[Fired] = field(default_factory=list)
    error: str | None = None

    @property
    def rule_names(self) -> tuple[str, ...]:
        return tuple(n for f in self.fired for n in f.names)


@dataclass(frozen=True)
class Comparison:
    """What :func:`same` found: whether two URLs are one page, and which rules decide it.

    ``deciding`` lists the rules without which the answer would flip from "same" to "different"
    (for two different pages it is empty: no rule merged them); ``any_of`` lists rules that
    are each enough on their own but not needed alone (``remove_params`` and ``key_params``
    both dropping ``arglink``): without all of them, the answer flips.
    """

    same: bool
    first: Explanation
    second: Explanation
    deciding: tuple[str, ...]
    any_of: tuple[str, ...] = ()


def explain(url: str, base: str | None = None, policy: Policy | None = None) -> Explanation:
    """Every rule that fired on ``url``, with the fetch URL and the identifier."""
    return explain_with(unifier_for(policy or DEFAULT_POLICY), url, base)


def explain_with(u: Unifier, url: str, base: str | None = None) -> Explanation:
    """:func:`explain` under the unifier ``u``: like :meth:`Unifier.result
    <scrapy_urlunify.core._unify.Unifier.result>`, recording every step that changed something."""
    trace: list[Fired] = []
    try:
        resolved = _resolve(url, base)
    except InvalidURL as e:
        return Explanation(url, base, None, Result(None, None, filters.INVALID), trace, str(e))
    if resolved != url:
        trace.append(Fired("resolve", "rewrite", url, resolved, True))
    reason = filters.scheme_reason(resolved)
    if reason is not None:
        result = Result(resolved, u.prefix_text + resolved, reason)
        return Explanation(url, base, resolved, result, trace)
    # the steps one by one, in the order and under the guards the compiled layers run them in,
    # and the passes of Unifier._settle
    p = Parts.split(resolved)
    fetch = resolved
    if _trace(u, p, u.rewrite_steps, trace):
        for _ in range(MAX_PASSES):
            fetch = p.url()
            try:
                again = _resolve(fetch, None)
            except InvalidURL:  # pragma: no cover - as in Unifier._settle
                fetch = resolved
                break
            if again != fetch:
                trace.append(Fired("resolve", "rewrite", fetch, again, True))
            q = Parts.split(again)
            changed = _trace(u, q, u.rewrite_steps, trace)
            p = q
            if not changed and again == fetch:
                break
        else:
            fetch = resolved
    _trace(u, p, u.identity_steps, trace)
    result = Result(
        fetch, u.prefix_text + identity_text(p), u.path_reason(fetch, Parts.split(fetch).path)
    )
    return Explanation(url, base, resolved, result, trace)


@remembered
def _resolve(url: str, base: str | None) -> str:
    # same() explains a URL once per rule it leaves out: a megabyte of escaped UTF-8 is parsed
    # once, not each time (15 ms a parse)
    return resolve(url, base)


def _trace(u: Unifier, p: Parts, steps: tuple[Step, ...], trace: list[Fired]) -> bool:
    """Run ``steps`` on ``p`` one by one where their guards hold, recording each that fires."""
    changed = False
    for step in steps:
        if not step.guard(p, u.host_rules(p.host), u):
            continue
        # (the parts, not their text: written out only when the step fires, a megabyte each)
        before = p.copy()
        fired = step(p, u)
        if fired:
            changed = True
            trace.append(
                Fired(step.name, step.layer, identity_text(before), identity_text(p), fired)
            )
    return changed


def same(a: str, b: str, policy: Policy | None = None) -> Comparison:
    """Whether ``a`` and ``b`` are one page under ``policy``, and which rules decide it."""
    try:
        return _same(a, b, policy or DEFAULT_POLICY)
    finally:
        # what the steps made of long texts: tens of megabytes for two hostile megabyte URLs,
        # explained a dozen times, that no later call is likely to ask for
        if len(a) >= LONG_TEXT or len(b) >= LONG_TEXT:
            forget()


def _same(a: str, b: str, policy: Policy) -> Comparison:
    u = unifier_for(policy)
    ea, eb = explain_with(u, a), explain_with(u, b)
    ia, ib = ea.result.identifier, eb.result.identifier
    is_same = ia is not None and ia == ib
    deciding: list[str] = []
    together: list[str] = []
    if is_same:
        pair = _Pair(policy, ea, eb)
        fired = [n for n in dict.fromkeys(ea.rule_names + eb.rule_names) if n != "resolve"]
        for name in fired:
            if pair.differ_without({name}):
                deciding.append(name)
        # rules none of which is needed alone but which merge the two URLs between them: skip
        # them all, add what fires instead (a key parameter rule covering for a removal), and
        # repeat until the URLs differ or nothing new fires
        rest = {n for n in fired if n not in deciding}
        while rest:
            if pair.differ_without(rest):
                for n in sorted(rest):  # keep only the rules that matter: a minimal set
                    if pair.differ_without(rest - {n}):
                        rest.discard(n)
                together = [n for n in dict.fromkeys([*fired, *sorted(rest)]) if n in rest]
                break
            more = {
                n for n in pair.names_without(rest) if n != "resolve" and n not in deciding
            } - rest
            if not more:
                break
            rest |= more
        if not deciding and not together:
            # the browser-level resolution already made the two URLs equal
            deciding = ["resolve"]
    return Comparison(is_same, ea, eb, tuple(deciding), tuple(together))


#: the rules whose absence leaves the URL to fetch as it is: the identity steps, but
#: ``unify_host`` (the host's parameter lists, which the rewrite layer reads, follow its host)
_IDENTITY_ONLY = frozenset(s.name for s in IDENTITY_STEPS) - {"unify_host"}


class _Pair:
    """Two URLs explained under a policy, and what each becomes without some of its rules,
    worked out only as far as those rules reach: a URL on which none of them fired stays as
    explained, and without identity rules alone its URL to fetch stays too, so only its identity
    layer runs again, on that URL (once for both URLs when they share it). ``same`` asks for a
    dozen such variants; on a hostile megabyte each full explanation costs tens of ms."""

    def __init__(self, policy: Policy, *explained: Explanation) -> None:
        self.policy = policy
        self.explained = explained
        self._unifiers: dict[frozenset[str], Unifier] = {}
        self._variants: dict[tuple[frozenset[str], int], tuple[str | None, tuple[str, ...]]] = {}
        self._identities: dict[tuple[frozenset[str], str], tuple[str, tuple[str, ...]]] = {}

    def differ_without(self, skip: set[str]) -> bool:
        """Whether the two URLs have different identifiers (or either none) without ``skip``."""
        ia, ib = (self.without(frozenset(skip), i)[0] for i in (0, 1))
        return ia is None or ib is None or ia != ib

    def names_without(self, skip: set[str]) -> set[str]:
        """The rules that fire on either URL without ``skip``."""
        return {n for i in (0, 1) for n in self.without(frozenset(skip), i)[1]}

    def without(self, skip: frozenset[str], i: int) -> tuple[str | None, tuple[str, ...]]:
        """The identifier of URL ``i`` without the rules ``skip``, and the rules that fire."""
        e = self.explained[i]
        if skip.isdisjoint(e.rule_names):
            return e.result.identifier, e.rule_names
        known = self._variants.get((skip, i))
        if known is None:
            known = self._variants[skip, i] = self._worked_out(skip, e)
        return known

    def _worked_out(
        self, skip: frozenset[str], e: Explanation
    ) -> tuple[str | None, tuple[str, ...]]:
        fetch = e.result.fetch_url
        rewritten = tuple(n for f in e.fired if f.layer == "rewrite" for n in f.names)
        # a URL whose passes did not settle is fetched as resolved, its identity layer run on
        # the last pass: explained again
        settled = fetch != e.resolved or rewritten in ((), ("resolve",))
        if fetch is None or not settled or not skip <= _IDENTITY_ONLY:
            again = explain_with(self._unifier(skip), e.url, e.base)
            return again.result.identifier, again.rule_names
        known = self._identities.get((skip, fetch))
        if known is None:
            alt = self._unifier(skip)
            p = Parts.split(fetch)
            trace: list[Fired] = []
            _trace(alt, p, alt.identity_steps, trace)
            names = tuple(n for f in trace for n in f.names)
            known = self._identities[skip, fetch] = (alt.prefix_text + identity_text(p), names)
        return known[0], rewritten + known[1]

    def _unifier(self, skip: frozenset[str]) -> Unifier:
        u = self._unifiers.get(skip)
        if u is None:
            u = self._unifiers[skip] = Unifier(self.policy, skip=skip)
        return u
