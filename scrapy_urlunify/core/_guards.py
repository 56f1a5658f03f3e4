"""What a step declares, and the layers that run the steps where their guards hold.

A step of :mod:`scrapy_urlunify.core._rules` is a function tagged by :func:`rule` with its layer
and two typed tests of when it can apply:

* ``when(policy)``, what the policy alone decides (``strip_session_ids``, ``ignore_amp``, no
  ``remove_params`` at all...): asked once, when a layer is compiled for a policy
  (:func:`compile_layer`); a step it rules out is left out of the layer;
* ``guard(parts, hr, ctx)``, the cheap test on one URL (``"//" in parts.path``): false when the
  step cannot change it. The step runs only where its guard holds, so its body needs no test of
  its own, and the common URL pays for a handful of substring tests, not for the steps.

A guard is a Python call, and most links are plain: so a step says where its guard cannot hold,
and a layer does not ask it there:

* ``on_query``: the step works on the query alone; its guard is false on a URL without one;
* ``on_plain=False``: its guard is false on a *plain* URL, one written as the WHATWG parser writes
  it with no user info and none of ``%`` and the characters RFC 3986 allows nowhere
  (``"<>\\^`{|}[]``), which is what the unifier's short path takes (``Layer.run_plain``).

No step gives a URL a ``%``, such a character or user info (they drop or rewrite what is there),
nor a query, but ``apply_url_form`` (a URL form's target may have one), which writes it sorted
and comes after every other step on queries: what holds of a URL before a layer holds between
its steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from scrapy_urlunify.core._hosts import HostRules
from scrapy_urlunify.core._policy import Policy
from scrapy_urlunify.core._url import Parts

REWRITE = "rewrite"
IDENTITY = "identity"

#: What a compiled layer returns when only ``settled`` steps changed the URL (see :func:`rule`);
#: True when another step did too, False when none.
SETTLED = "settled"


class Context(Protocol):
    """What a step reads besides the parts (the :class:`~scrapy_urlunify.core._unify.Unifier`)."""

    policy: Policy
    #: the policy's ``index_pages``, as a set
    index_pages: frozenset[str]

    def host_rules(self, host: str) -> HostRules: ...


#: A step's body: edits the parts in place, and returns a truthy value when it changed something
#: (a string names the sub-rules that fired).
StepFunction = Callable[[Parts, Context], "bool | str"]
#: ``guard(parts, hr, ctx)``: false when the step cannot change the URL of ``parts`` (as the
#: steps before it left them), ``hr`` being the rules of its host.
Guard = Callable[[Parts, HostRules, Context], bool]
#: ``when(policy)``: false when ``policy`` lets the step change no URL at all.
PolicyTest = Callable[[Policy], bool]


def always(p: Parts, hr: HostRules, ctx: Context) -> bool:
    """The guard of a step that applies to every URL its policy test lets through."""
    return True


def _any_policy(policy: Policy) -> bool:
    return True


@dataclass(frozen=True)
class Step:
    """One named step of a layer (see :func:`rule`); ``step(parts, ctx)`` runs its body."""

    name: str
    layer: str
    apply: StepFunction
    guard: Guard
    when: PolicyTest
    settled: bool
    on_query: bool
    on_plain: bool

    def __call__(self, p: Parts, ctx: Context) -> bool | str:
        return self.apply(p, ctx)


def rule(
    layer: str,
    guard: Guard = always,
    when: PolicyTest = _any_policy,
    settled: bool = False,
    on_query: bool = False,
    on_plain: bool = True,
) -> Callable[[StepFunction], Step]:
    """Make a function a :class:`Step` of ``layer`` (``"rewrite"`` or ``"identity"``), named as
    the function, with its ``guard`` and policy test ``when``, where its guard cannot hold
    (``on_query``, ``on_plain``: see the module), and whether what it leaves is ``settled``.

    A rewrite step is ``settled`` when, on a URL as the WHATWG parser writes it, it leaves one
    the parser writes the same, to which no step of its layer applies that did not already: a
    URL only such steps changed is its own URL to fetch, with no second pass of the layer
    (:meth:`~scrapy_urlunify.core._unify.Unifier.result`; tests check it against the passes).
    """

    def tag(fn: StepFunction) -> Step:
        return Step(fn.__name__, layer, fn, guard, when, settled, on_query, on_plain)

    return tag


class Layer:
    """The steps of one layer that a policy lets apply (``steps``, in order), and ``run(parts, hr,
    ctx)``: each of them on ``parts`` where its guard holds (guards read the parts as the steps
    before left them, and the rules of the host they name then). ``run`` returns False when no
    step changed anything, :data:`SETTLED` when only settled steps did, else True.
    ``run_plain`` is ``run`` for a plain URL (see the module)."""

    __slots__ = ("run", "run_plain", "steps")

    def __init__(self, steps: Iterable[Step], policy: Policy) -> None:
        self.steps: tuple[Step, ...] = tuple(s for s in steps if s.when(policy))
        self.run = _runner(self.steps)
        self.run_plain = _runner(tuple(s for s in self.steps if s.on_plain))


def compile_layer(steps: Iterable[Step], policy: Policy) -> Layer:
    """The :class:`Layer` of ``steps`` under ``policy``."""
    return Layer(steps, policy)


def _runner(steps: tuple[Step, ...]) -> Callable[[Parts, HostRules, Context], bool | str]:
    # the fields each URL reads, unpacked once: one tuple per step, no attribute lookups; and
    # the plan of a URL without a query (no step gives a URL a query it has not)
    plan = tuple((s.guard, s.apply, s.settled) for s in steps)
    no_query = tuple((s.guard, s.apply, s.settled) for s in steps if not s.on_query)

    def run(p: Parts, hr: HostRules, ctx: Context) -> bool | str:
        changed: bool | str = False
        host = p.host
        for guard, apply, settled in plan if p.query is not None else no_query:
            if guard(p, hr, ctx) and apply(p, ctx):
                if not settled:
                    changed = True
                elif not changed:
                    changed = SETTLED
                if p.host is not host:
                    # the host's rules again only where the step changed the host
                    host = p.host
                    hr = ctx.host_rules(host)
        return changed

    return run
