"""Why two URLs are one page: :func:`explain` (every rule that fired on a URL) and :func:`same`.

What ``urlunify explain`` and ``urlunify same`` print. :func:`explain_with` runs the steps of a
:class:`~scrapy_urlunify.core.unify.Unifier` one by one, in the order and under the guards its
compiled layers run them in, recording each that changed something; :func:`same` compares two
URLs and finds the rules without which they would differ, by explaining them again with rules
left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import filters
from .guards import Step
from .policy import Policy
from .unify import DEFAULT_POLICY, MAX_PASSES, Result, Unifier, identity_text, unifier_for
from .url import InvalidURL, Parts, resolve

__all__ = ["Comparison", "Explanation", "Fired", "explain", "explain_with", "same"]


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
    <scrapy_urlunify.core.unify.Unifier.result>`, recording every step that changed something."""
    trace: list[Fired] = []
    try:
        resolved = resolve(url, base)
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
                again = resolve(fetch)
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


def _trace(u: Unifier, p: Parts, steps: tuple[Step, ...], trace: list[Fired]) -> bool:
    """Run ``steps`` on ``p`` one by one where their guards hold, recording each that fires."""
    changed = False
    for step in steps:
        if not step.guard(p, u.host_rules(p.host), u):
            continue
        before = identity_text(p)
        fired = step(p, u)
        if fired:
            changed = True
            trace.append(Fired(step.name, step.layer, before, identity_text(p), fired))
    return changed


def same(a: str, b: str, policy: Policy | None = None) -> Comparison:
    """Whether ``a`` and ``b`` are one page under ``policy``, and which rules decide it."""
    policy = policy or DEFAULT_POLICY
    u = unifier_for(policy)
    ea, eb = explain_with(u, a), explain_with(u, b)
    ia, ib = ea.result.identifier, eb.result.identifier
    is_same = ia is not None and ia == ib
    deciding: list[str] = []
    together: list[str] = []
    if is_same:
        fired = [n for n in dict.fromkeys(ea.rule_names + eb.rule_names) if n != "resolve"]
        for name in fired:
            if _differ_without(policy, a, b, {name}):
                deciding.append(name)
        # rules none of which is needed alone but which merge the two URLs between them: skip
        # them all, add what fires instead (a key parameter rule covering for a removal), and
        # repeat until the URLs differ or nothing new fires
        rest = {n for n in fired if n not in deciding}
        while rest:
            if _differ_without(policy, a, b, rest):
                for n in sorted(rest):  # keep only the rules that matter: a minimal set
                    if _differ_without(policy, a, b, rest - {n}):
                        rest.discard(n)
                together = [n for n in dict.fromkeys([*fired, *sorted(rest)]) if n in rest]
                break
            alt = Unifier(policy, skip=rest)
            more = {
                n
                for n in explain_with(alt, a).rule_names + explain_with(alt, b).rule_names
                if n != "resolve" and n not in deciding
            } - rest
            if not more:
                break
            rest |= more
        if not deciding and not together:
            # the browser-level resolution already made the two URLs equal
            deciding = ["resolve"]
    return Comparison(is_same, ea, eb, tuple(deciding), tuple(together))


def _differ_without(policy: Policy, a: str, b: str, skip: set[str]) -> bool:
    alt = Unifier(policy, skip=skip)
    try:
        return alt.identify(a) != alt.identify(b)
    except InvalidURL:
        return True
