"""The steps' guards, compiled: how the unifier runs only the steps that can apply.

Each step of :mod:`scrapy_urlunify.core.rules` declares its guard, a Python expression over
:data:`~scrapy_urlunify.core.rules.GUARD_NAMES` that is false when the step cannot apply. Compiled
into the code that runs the steps, guards cost what the same tests written by hand would; calling
one function per step would cost as much as the steps themselves on the common URL. What depends
only on the policy and the host's rules is worked out once per kind of host (:class:`HostTests`),
so a link pays only for the tests on its own text.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from . import rules
from .rules import CHAR_TESTS, GUARD_NAMES, Step
from .url import Parts

if TYPE_CHECKING:
    from .policy import Policy
    from .unify import HostRules, Unifier

__all__ = ["HostTests", "compile_layer", "fold_absent", "guard_of", "trigger_chars"]

_READ_PARTS = "path, query, fragment, userinfo, host = p.path, p.query, p.fragment, p.userinfo, p.host"
_ARGS = ", ".join(GUARD_NAMES)
_PART_ARGS = "path, query, fragment, userinfo, host"
# what is known once the host is: the policy and the host's rules
_PER_HOST = frozenset({"policy", "hr"})


def _namespace() -> dict[str, Any]:
    """The names a guard can call: the public helpers of the rules module."""
    return dict(vars(rules))


def compile_layer(steps: tuple[Step, ...]) -> Callable[[Parts, HostRules, Unifier], bool]:
    """One function ``run(parts, host_rules, unifier)`` calling ``steps`` in order, each where its
    guard holds (guards read the parts as the steps before left them); True when one changed
    something."""
    namespace = _namespace()
    lines = ["def run(p, hr, ctx):", "    policy = ctx.policy", "    changed = False", "    " + _READ_PARTS]
    for i, step in enumerate(steps):
        namespace[f"step_{i}"] = step
        lines += [
            f"    if {step.guard}:  # {step.__name__}",  # type: ignore[attr-defined]
            f"        if step_{i}(p, ctx):",
            "            changed = True",
            "            " + _READ_PARTS,
            "            hr = ctx.host_rules(host)",
        ]
    lines.append("    return changed")
    exec(compile("\n".join(lines), "<scrapy_urlunify steps>", "exec"), namespace)
    return namespace["run"]  # type: ignore[no-any-return]


@cache
def guard_of(step: Step) -> Callable[..., object]:
    """The guard of ``step`` as a function of the :data:`~scrapy_urlunify.core.rules.GUARD_NAMES`."""
    return eval(f"lambda {_ARGS}: {step.guard}", _namespace())  # type: ignore[attr-defined,no-any-return]


#: What a :class:`HostTests` test returns when a step it was not told it may skip applies.
TAKE_STEPS = "steps"


class HostTests:
    """The test of a short path that does some steps itself on strings (the *plain* steps): per
    host, a function ``test(path, query, fragment, userinfo, host)`` giving :data:`TAKE_STEPS`
    when the guard of any other step holds, else the value of the guard of ``last`` (a plain
    step whose answer the short path needs).

    The parts of the guards that read only ``policy`` and ``hr`` are evaluated when a host is
    first seen, and one test is compiled for each combination of their values (a handful).
    """

    def __init__(self, policy: Policy, others: tuple[Step, ...], last: Step,
                 absent: dict[str, frozenset[str]] | None = None) -> None:
        self.policy = policy
        expr = " or ".join(f"({s.guard})" for s in others) or "False"  # type: ignore[attr-defined]
        self._tree = ast.parse(f"TAKE_STEPS if ({expr}) else ({last.guard})", mode="eval")  # type: ignore[attr-defined]
        self._static = _maximal(self._tree, _is_per_host)
        self._values = [_lambda(n) for n in self._static]
        # per-host values passed to a call (``may_name_param(hr.remove, query)``): bound to a
        # name in the test, the others folded to literals
        args = {id(a) for n in ast.walk(self._tree) if isinstance(n, ast.Call) for a in n.args}
        self._passed = [id(n) in args for n in self._static]
        self._absent = absent
        self._tests: dict[tuple[object, ...], Callable[..., object]] = {}
        self._fast_tests: dict[tuple[object, ...], Callable[..., object]] = {}

    def for_host(self, hr: HostRules) -> Callable[..., object]:
        values = tuple(f(self.policy, hr) for f in self._values)
        test = self._tests.get(values)
        if test is None:
            test = self._tests[values] = self._compile(values)
        return test

    def fast_for_host(self, hr: HostRules) -> Callable[..., object]:
        """:meth:`for_host` for a URL known to hold none of the characters ``absent`` named
        (per part): the tests of those characters are folded away (:func:`fold_absent`)."""
        values = tuple(f(self.policy, hr) for f in self._values)
        test = self._fast_tests.get(values)
        if test is None:
            test = self._fast_tests[values] = self._compile(values, self._absent)
        return test

    def _compile(self, values: tuple[object, ...],
                 absent: dict[str, frozenset[str]] | None = None) -> Callable[..., object]:
        memo: dict[int, Any] = {}
        tree = copy.deepcopy(self._tree, memo)
        known = {id(memo[id(n)]): v for n, v in zip(self._static, values, strict=True)}
        namespace = {**_namespace(), "TAKE_STEPS": TAKE_STEPS}
        passed: dict[int, str] = {}
        for n, v, is_arg in zip(self._static, values, self._passed, strict=True):
            if is_arg and not isinstance(v, _LITERALS):
                passed[id(memo[id(n)])] = name = f"_host_value_{len(passed)}"
                namespace[name] = v
        if absent:
            tree = fold_absent(tree, absent)
        tree = _Fold(known, passed).visit(tree)
        source = ast.unparse(ast.fix_missing_locations(tree))
        return eval(f"lambda {_PART_ARGS}: {source}", namespace)  # type: ignore[no-any-return]


_PARTS = ("path", "query", "fragment")


def _char_test(node: ast.AST) -> tuple[str, frozenset[str], bool] | None:
    """``(part, chars, any_of)`` when ``node`` tests a part for characters: ``'ab' in path``
    (true only if all of ``chars`` are there: ``any_of`` False) or ``has_unsafe_chars(query)``
    (true if any is: ``any_of`` True, see :data:`~scrapy_urlunify.core.rules.CHAR_TESTS`)."""
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
            and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) and node.left.value
            and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id in _PARTS):
        return node.comparators[0].id, frozenset(node.left.value), False
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CHAR_TESTS
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in _PARTS):
        return node.args[0].id, CHAR_TESTS[node.func.id], True
    return None


def trigger_chars(steps: tuple[Step, ...]) -> dict[str, frozenset[str]]:
    """Per part, the characters whose presence some guard of ``steps`` tests on its own
    (``'%' in path``): a URL without them makes those tests false. (Longer literals, like
    ``'//'``, are left to the guards.)"""
    found: dict[str, set[str]] = {}
    for step in steps:
        for node in ast.walk(ast.parse(step.guard, mode="eval")):  # type: ignore[attr-defined]
            test = _char_test(node)
            # a literal of one character: a longer one ("//") is false without one of its characters
            # only where that character is absent, which it may not be ("/")
            if test is not None and (test[2] or len(node.left.value) == 1):  # type: ignore[attr-defined]
                found.setdefault(test[0], set()).update(test[1])
    return {part: frozenset(chars) for part, chars in found.items()}


def fold_absent(tree: ast.AST, absent: dict[str, frozenset[str]]) -> Any:
    """``tree`` with every test for characters that ``absent`` says a part lacks made false
    (``'%' in path``, ``'%20' in query`` as soon as ``%`` is absent, ``has_unsafe_chars(path)``
    when all its characters are); :class:`_Fold` then simplifies around the constants."""

    class FoldAbsent(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> Any:
            test = _char_test(node)
            if test is not None:
                part, chars, any_of = test
                lacks = absent.get(part, frozenset())
                if (chars <= lacks) if any_of else bool(chars & lacks):
                    return ast.Constant(False)
                return node
            return self.generic_visit(node)

    return FoldAbsent().visit(tree)


def _is_per_host(node: ast.AST) -> bool:
    """Whether ``node`` is an expression that reads nothing but ``policy`` and ``hr`` and calls
    nothing, and whose value can stand as a literal."""
    if not isinstance(node, (ast.Compare, ast.Attribute, ast.BoolOp, ast.UnaryOp)):
        return False
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return bool(names) and names <= _PER_HOST and not any(isinstance(n, ast.Call) for n in ast.walk(node))


def _maximal(tree: ast.AST, pred: Callable[[ast.AST], bool]) -> list[ast.AST]:
    """The largest subtrees of ``tree`` satisfying ``pred``, in order."""
    found: list[ast.AST] = []

    def walk(node: ast.AST) -> None:
        if pred(node):
            found.append(node)
            return
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return found


def _lambda(node: ast.AST) -> Callable[[Any, Any], object]:
    source = ast.unparse(node)
    return eval(f"lambda policy, hr: {source}", {})  # type: ignore[no-any-return]


_LITERALS = (str, int, float, type(None))


class _Fold(ast.NodeTransformer):
    """Put the known values in (literals, or the names ``passed`` gives them), then simplify
    ``and``/``or``/``not`` around them."""

    def __init__(self, known: dict[int, object], passed: dict[int, str]) -> None:
        self.known = known
        self.passed = passed

    def visit(self, node: ast.AST) -> Any:
        if id(node) in self.passed:
            return ast.Name(self.passed[id(node)], ast.Load())
        if id(node) in self.known:
            value = self.known[id(node)]
            return ast.Constant(value if isinstance(value, _LITERALS) else bool(value))
        node = self.generic_visit(node)
        if isinstance(node, ast.BoolOp):
            is_and = isinstance(node.op, ast.And)
            kept = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    if bool(v.value) != is_and:
                        return ast.Constant(not is_and)  # a false operand of "and", a true one of "or"
                    continue  # a true operand of "and", a false one of "or": the others decide
                kept.append(v)
            if not kept:
                return ast.Constant(is_and)
            return kept[0] if len(kept) == 1 else ast.BoolOp(op=node.op, values=kept)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Constant):
            return ast.Constant(not node.operand.value)
        if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node
