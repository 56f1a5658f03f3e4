"""The steps' guards, compiled: how the unifier runs only the steps that can apply.

Each step of :mod:`scrapy_urlunify.core.rules` declares its guard, a Python expression over
:data:`~scrapy_urlunify.core.rules.GUARD_NAMES` that is false when the step cannot apply. Compiled
into the code that runs the steps, guards cost what the same tests written by hand would; calling
one function per step would cost as much as the steps themselves on the common URL. What depends
only on the policy is worked out once, when the layer is compiled, so a link pays only for the
tests on its own text and its host's rules.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import cache
from typing import Any

from . import rules
from .hosts import HostRules
from .policy import Policy
from .rules import GUARD_NAMES, Context, Step
from .url import Parts

__all__ = ["SETTLED", "compile_layer", "fold_policy", "guard_of"]

_READ_PARTS = "path, query, fragment, userinfo = p.path, p.query, p.fragment, p.userinfo"
_ARGS = ", ".join(GUARD_NAMES)

#: What a compiled layer returns when only ``settled`` steps changed the URL (see
#: :func:`~scrapy_urlunify.core.rules.rule`); True when another step did too, False when none.
SETTLED = "settled"


def _namespace() -> dict[str, Any]:
    """The names a guard can call: the public helpers of the rules module."""
    return dict(vars(rules))


def compile_layer(
    steps: tuple[Step, ...], policy: Policy
) -> Callable[[Parts, HostRules, Context], object]:
    """One function ``run(parts, host_rules, context)`` calling ``steps`` in order, each where its
    guard holds under ``policy`` (guards read the parts as the steps before left them): False
    when none changed anything, :data:`SETTLED` when only settled steps did, else True."""
    namespace = {**_namespace(), "SETTLED": SETTLED}
    lines = [
        "def run(p, hr, ctx):",
        "    policy = ctx.policy",
        "    changed = False",
        "    " + _READ_PARTS,
        "    host = p.host",
    ]
    for i, step in enumerate(steps):
        guard = fold_policy(step.guard, policy)  # type: ignore[attr-defined]
        if guard == "False":
            continue
        namespace[f"step_{i}"] = step
        lines += [
            f"    if {guard}:  # {step.__name__}",
            f"        if step_{i}(p, ctx):",
            "            changed = changed or SETTLED"
            if step.settled  # type: ignore[attr-defined]
            else "            changed = True",
            "            " + _READ_PARTS,
            # the host's rules again only where the step changed the host
            "            if p.host is not host:",
            "                host = p.host",
            "                hr = ctx.host_rules(host)",
        ]
    lines.append("    return changed")
    exec(compile("\n".join(lines), "<scrapy_urlunify steps>", "exec"), namespace)
    return namespace["run"]  # type: ignore[no-any-return]


@cache
def guard_of(step: Step) -> Callable[..., object]:
    """The guard of ``step`` as a function of the :data:`~scrapy_urlunify.core.rules.GUARD_NAMES`."""
    return eval(f"lambda {_ARGS}: {step.guard}", _namespace())  # type: ignore[attr-defined,no-any-return]


def fold_policy(guard: str, policy: Policy) -> str:
    """``guard`` with the parts that read nothing but ``policy`` worked out under ``policy``
    (``policy.strip_session_ids and ';' in path`` is ``';' in path`` or ``False``)."""
    tree = ast.parse(guard, mode="eval")
    known: dict[int, _Literal] = {}
    for node in _maximal(tree, _reads_policy_only):
        value = eval(compile(ast.Expression(node), "<guard>", "eval"), {"policy": policy})  # type: ignore[arg-type]
        if isinstance(value, _LITERALS):
            known[id(node)] = value
    return ast.unparse(ast.fix_missing_locations(_Fold(known).visit(tree)))


def _reads_policy_only(node: ast.AST) -> bool:
    """Whether ``node`` is an expression that reads nothing but ``policy`` and calls nothing."""
    if not isinstance(node, (ast.Compare, ast.Attribute, ast.BoolOp, ast.UnaryOp)):
        return False
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return names == {"policy"} and not any(isinstance(n, ast.Call) for n in ast.walk(node))


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


_LITERALS = (str, int, float, type(None))
_Literal = str | int | float | None


class _Fold(ast.NodeTransformer):
    """Put the known values in, then simplify ``and``/``or``/``not`` around them."""

    def __init__(self, known: dict[int, _Literal]) -> None:
        self.known = known

    def visit(self, node: ast.AST) -> Any:
        if id(node) in self.known:
            return ast.Constant(self.known[id(node)])
        node = self.generic_visit(node)
        if isinstance(node, ast.BoolOp):
            is_and = isinstance(node.op, ast.And)
            kept = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    if bool(v.value) != is_and:
                        return ast.Constant(
                            not is_and
                        )  # a false operand of "and", a true one of "or"
                    continue  # a true operand of "and", a false one of "or": the others decide
                kept.append(v)
            if not kept:
                return ast.Constant(is_and)
            return kept[0] if len(kept) == 1 else ast.BoolOp(op=node.op, values=kept)
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.Not)
            and isinstance(node.operand, ast.Constant)
        ):
            return ast.Constant(not node.operand.value)
        return node
