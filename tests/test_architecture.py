"""The layering that docs/architecture.md describes, checked on the code itself.

* The pure layers (core, learning, stores, cli) never load Scrapy or Twisted: a user of the
  ``urlunify`` command or of ``identify()`` pays for neither, and the core stays testable alone.
* No import cycle between the package's modules: a cycle makes the result of an import depend on
  which module a program happens to import first.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import scrapy_urlunify

PACKAGE = "scrapy_urlunify"
PACKAGE_DIR = Path(scrapy_urlunify.__file__).parent
PURE_LAYERS = ("core", "learning", "stores", "cli")


def test_pure_layers_load_no_scrapy_nor_twisted() -> None:
    # Every module of each pure layer, imported in a fresh interpreter: the test process itself
    # has Scrapy loaded already.
    script = f"""
import importlib, json, pkgutil, sys
import {PACKAGE}
names = []
for layer in {PURE_LAYERS!r}:
    package = importlib.import_module("{PACKAGE}." + layer)
    names.append(package.__name__)
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
        names.append(info.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("scrapy", "twisted"))
print(json.dumps({{"imported": names, "loaded": loaded}}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert f"{PACKAGE}.core.unify" in result["imported"]
    assert f"{PACKAGE}.cli.main" in result["imported"]
    assert result["loaded"] == [], f"a pure layer loaded {result['loaded'][:10]}"


def _modules() -> dict[str, Path | None]:
    """module -> its Python source; None for a C extension (built or not), which imports none
    of ours."""
    found: dict[str, Path | None] = {PACKAGE: PACKAGE_DIR / "__init__.py"}
    for info in pkgutil.walk_packages([str(PACKAGE_DIR)], PACKAGE + "."):
        relative = info.name.split(".")[1:]
        path = PACKAGE_DIR.joinpath(*relative)
        source = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
        found[info.name] = source if source.exists() else None
    for c_source in PACKAGE_DIR.rglob("*.c"):
        found[".".join((PACKAGE, *c_source.relative_to(PACKAGE_DIR).with_suffix("").parts))] = None
    return found


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported: module level, also inside top-level
    ``try``/``if`` blocks, but not under ``if TYPE_CHECKING:`` nor inside functions."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name != "TYPE_CHECKING":
                pending.extend(node.body)
            pending.extend(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                pending.extend(block)
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports at import time."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        if path is None:
            continue
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _top_level_imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    parts = name.split(".")
                    base_parts = parts if is_package else parts[:-1]
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                # ``from pkg import sub`` imports the submodule; ``from mod import name`` the module
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            for target in targets:
                # ``import a.b.c`` names a.b.c; keep the longest prefix that is one of ours
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_import_graph_sees_the_imports() -> None:
    # Guards the cycle test against a graph that silently lost its edges.
    graph = import_graph()
    assert f"{PACKAGE}.stores" in graph[f"{PACKAGE}.integration.dupefilter"]
    assert f"{PACKAGE}.core.policy" in graph[PACKAGE]
    assert f"{PACKAGE}.cli.main" in graph[f"{PACKAGE}.__main__"]
    assert sum(len(targets) for targets in graph.values()) > 50


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_modules() -> None:
    assert _cycles(import_graph()) == []
