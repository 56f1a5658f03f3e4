"""Milliseconds per call on 1 MB hostile URLs: every public call of the core, and each step.

Links are capped by ``URLUNIFY_MAX_URL_LENGTH``, but canonicals, redirects and direct calls are
not: one URL of a megabyte must not stall a crawl. For each hostile shape (percent soup, ``&``
soup, repeated keys, many host labels...), a URL of about ``--size`` bytes (UTF-8) is built and
timed, each call on a fresh unifier with nothing remembered (its caches would answer the second
call for free), best of ``--rounds`` runs, the shapes and calls interleaved, in CPU time
(``time.process_time``: the machine is shared, and a process waiting for a core is not slower):

* ``standardize``, ``identify``, ``filter_reason``, ``explain``, ``same`` (the URL against itself
  with a fragment, which explains both and again without each rule that fired);
* ``step``: the slowest single step of either layer (the step's name beside it), each step timed
  alone while ``explain`` runs the layers one step at a time.

The shapes are those of ``tests/core/test_hostile.py``, which bounds these times; the policy is
its (every rule on: per-host lists with globs, aliases, sister suffixes, path prefixes, AMP
markers), and the default one; the table shows the slower of the two.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib.util
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_json

from scrapy_urlunify import InvalidURL, Policy, Unifier
from scrapy_urlunify.core._explain import explain_with, same
from scrapy_urlunify.core._guards import Context, Step
from scrapy_urlunify.core._hosts import HostRules
from scrapy_urlunify.core._recent import forget
from scrapy_urlunify.core._url import Parts

# the shapes, the policy and the sizes of the test that bounds these times
_test = importlib.util.spec_from_file_location(
    "test_hostile", Path(__file__).parents[1] / "tests" / "core" / "test_hostile.py"
)
hostile = importlib.util.module_from_spec(_test)  # type: ignore[arg-type]
_test.loader.exec_module(hostile)  # type: ignore[union-attr]
SHAPES: dict[str, tuple[str, str, str]] = hostile.SHAPES
POLICIES = {"all rules": hostile.POLICY, "default": Policy()}
build = hostile.build

CALLS = ("standardize", "identify", "filter_reason", "explain", "same", "step")


def _timed_steps(u: Unifier, times: dict[str, float]) -> None:
    """Time each call of the unifier's steps, guard and body (as ``explain`` runs them one by
    one): ``times`` keeps the slowest guard and the slowest body of each step, added up."""
    guards: dict[str, float] = {}
    bodies: dict[str, float] = {}

    def keep(into: dict[str, float], name: str, seconds: float) -> None:
        into[name] = max(into.get(name, 0.0), seconds)
        times[name] = guards.get(name, 0.0) + bodies.get(name, 0.0)

    def wrap(step: Step) -> Step:
        def guard(p: Parts, hr: HostRules, ctx: Context) -> bool:
            t = time.process_time()
            try:
                return step.guard(p, hr, ctx)
            finally:
                keep(guards, step.name, time.process_time() - t)

        def body(p: Parts, ctx: Context) -> bool | str:
            t = time.process_time()
            try:
                return step.apply(p, ctx)
            finally:
                keep(bodies, step.name, time.process_time() - t)

        return dataclasses.replace(step, guard=guard, apply=body)

    u.rewrite_steps = tuple(wrap(s) for s in u.rewrite_steps)
    u.identity_steps = tuple(wrap(s) for s in u.identity_steps)


def run_call(call: str, policy: Policy, url: str) -> tuple[float, str]:
    """Seconds ``call`` took on ``url`` (for ``step``: the slowest step, and its name)."""
    forget()
    u = Unifier(policy)
    steps: dict[str, float] = {}
    if call == "step":
        _timed_steps(u, steps)
    fn: Callable[[], object] = {
        "standardize": lambda: u.standardize(url),
        "identify": lambda: u.identify(url),
        "filter_reason": lambda: u.filter_reason(url),
        "explain": lambda: explain_with(u, url),
        "same": lambda: same(url, url + "#x", policy),
        "step": lambda: explain_with(u, url),
    }[call]
    gc.disable()
    t = time.process_time()
    try:
        fn()
    except InvalidURL:
        pass
    finally:
        elapsed = time.process_time() - t
        gc.enable()
    if call == "step":
        if not steps:
            return 0.0, "-"
        name = max(steps, key=steps.__getitem__)
        return steps[name], name
    return elapsed, ""


def measure(size: int, rounds: int) -> Iterator[tuple[str, str, float, str]]:
    """(shape, call, best ms over the policies' worst, detail) for every shape and call."""
    Unifier(hostile.POLICY).identify(
        "http://www.warm.up.site.rs/"
    )  # the public suffix list, loaded once
    urls = {name: build(shape, size) for name, shape in SHAPES.items()}
    best: dict[tuple[str, str, str], tuple[float, str]] = {}
    for _ in range(rounds):
        for name, url in urls.items():
            for call in CALLS:
                for pname, policy in POLICIES.items():
                    s, detail = run_call(call, policy, url)
                    key = (name, call, pname)
                    if key not in best or s < best[key][0]:
                        best[key] = (s, detail)
    for name in SHAPES:
        for call in CALLS:
            worst = max((best[(name, call, p)] for p in POLICIES), key=lambda x: x[0])
            yield name, call, worst[0] * 1e3, worst[1]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    results = list(measure(args.size, args.rounds))
    table: dict[str, dict[str, tuple[float, str]]] = {}
    for name, call, ms, detail in results:
        table.setdefault(name, {})[call] = (ms, detail)
    print(f"ms per call on {args.size / 1e6:g} MB, best of {args.rounds}, slower policy\n")
    print(f"{'shape':24s}" + "".join(f"{c:>14s}" for c in CALLS) + "  slowest step")
    for name, row in table.items():
        cells = "".join(f"{row[c][0]:14.1f}" for c in CALLS)
        print(f"{name:24s}{cells}  {row['step'][1]}")
    worst = max(results, key=lambda r: r[2])
    print(f"\nslowest: {worst[1]} on {worst[0]}: {worst[2]:.1f} ms")
    write_json(args.json, {f"{n}|{c}": ms for n, c, ms, _ in results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
