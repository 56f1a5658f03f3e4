"""The layering that docs/architecture.md describes, checked on the code itself.

* The pure layers (core, learning, stores, cli) never load Scrapy or Twisted: a user of the
  ``urlunify`` command or of ``identify()`` pays for neither, and the core stays testable alone.
* No import cycle between the package's modules: a cycle makes the result of an import depend on
  which module a program happens to import first. Counted twice: the imports that run when a
  module is imported, and every import (those under ``if TYPE_CHECKING:`` and inside functions
  too), since a cycle of either kind means two modules that cannot be read one without the other.
* No private name (``_x``) imported from another module of the package, no module over 600
  lines, no hand-written C, and a package root that only names the public API.
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
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert f"{PACKAGE}.core._unify" in result["imported"]
    assert f"{PACKAGE}.cli._main" in result["imported"]
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


def _every_import(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module: top level, type-checking only, inside functions."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


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


def _import_base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` in ``module`` imports from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def import_graph(every: bool = False) -> dict[str, set[str]]:
    """module -> the package's modules it imports at import time (``every``: anywhere)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        if path is None:
            continue
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in (_every_import if every else _top_level_imports)(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _import_base(name, is_package, node)
                # ``from pkg import sub`` imports the submodule; ``from mod import name`` the module
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
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
    assert f"{PACKAGE}.stores._jobdir" in graph[f"{PACKAGE}.integration.seen._seen"]
    assert f"{PACKAGE}.core._policy" in graph[PACKAGE]
    assert f"{PACKAGE}.cli" in graph[f"{PACKAGE}.__main__"]
    assert sum(len(targets) for targets in graph.values()) > 50


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_modules() -> None:
    assert _cycles(import_graph()) == []


def test_no_import_cycle_counting_every_import() -> None:
    assert _cycles(import_graph(every=True)) == []


def _imported_names() -> list[tuple[str, str, str]]:
    """(importing module, imported module, name) for every ``from <ours> import name``."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        if path is None:
            continue
        is_package = path.name == "__init__.py"
        for node in _every_import(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _import_base(name, is_package, node)
            if base.split(".")[0] != PACKAGE:
                continue
            found.extend((name, base, alias.name) for alias in node.names)
    return found


def test_no_private_name_is_imported_across_modules() -> None:
    imported = _imported_names()
    assert any(name == "identify" for _, _, name in imported)  # the scan sees the imports
    private = [
        f"{who} imports {name} from {source}"
        for who, source, name in imported
        if name.startswith("_") and not name.startswith("__")
    ]
    assert private == []


def test_no_module_over_600_lines() -> None:
    sizes = {
        path.relative_to(PACKAGE_DIR.parent).as_posix(): len(
            path.read_text(encoding="utf-8").splitlines()
        )
        for path in PACKAGE_DIR.rglob("*.py")
    }
    assert sizes and max(sizes.values()) > 50
    assert {path: n for path, n in sizes.items() if n > 600} == {}


def test_no_hand_written_native_code_in_the_package() -> None:
    native = sorted(
        p.relative_to(PACKAGE_DIR).as_posix()
        for pattern in ("*.c", "*.h", "*.pyx", "*.pxd", "*.pyi")
        for p in PACKAGE_DIR.rglob(pattern)
    )
    assert native == []


def test_the_package_root_only_names_the_public_api() -> None:
    """``scrapy_urlunify/__init__.py``: a docstring, imports of the core's public names, the
    version, ``__all__``, the table of lazily loaded Scrapy components and the ``__getattr__``
    that loads them; nothing that runs code of its own at import."""
    tree = ast.parse((PACKAGE_DIR / "__init__.py").read_text(encoding="utf-8"))
    allowed_targets = {"__version__", "__all__", "_LAZY"}
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom) and (
            node.module == "__future__" or node.level == 1 or node.module in ("importlib", "typing")
        ):
            assert all(not alias.name.startswith("_") for alias in node.names), ast.dump(node)
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assert {getattr(t, "id", None) for t in targets} <= allowed_targets, ast.dump(node)
            continue
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            continue
        raise AssertionError(f"line {node.lineno} of the package root: {ast.dump(node)[:120]}")


def test_scripts_import_only_what_the_package_has() -> None:
    # benchmarks/ and tools/ are not imported by the suite: a renamed module or function would
    # only show when someone runs them (calibrate_near_duplicates.py did, after a rename)
    import importlib

    root = Path(scrapy_urlunify.__file__).resolve().parent.parent
    missing = []
    for script in sorted(
        [*root.glob("benchmarks/*.py"), *root.glob("tools/*.py"), *root.glob("tools/sites/*.py")]
    ):
        for node in ast.walk(ast.parse(script.read_text(), str(script))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("scrapy_urlunify")
            ):
                try:
                    module = importlib.import_module(node.module)
                except ImportError:
                    missing.append(f"{script.name}: {node.module}")
                    continue
                missing += [
                    f"{script.name}: {node.module}.{a.name}"
                    for a in node.names
                    if not hasattr(module, a.name) and not _is_submodule(node.module, a.name)
                ]
    assert not missing, missing


def _is_submodule(package: str, name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except ImportError:
        return False


def test_every_component_named_at_the_package_root_loads() -> None:
    # the add-on gives Scrapy these paths (scrapy_urlunify.<Name>): a stale entry would only
    # show when a crawl loads it
    missing = [name for name in scrapy_urlunify._LAZY if not hasattr(scrapy_urlunify, name)]
    assert missing == []


def test_no_folder_of_the_package_holds_more_than_16_modules() -> None:
    # one feature a folder: a folder that grows past this is two features (demo/ is a site)
    crowded = {}
    for folder in [PACKAGE_DIR, *(p for p in PACKAGE_DIR.rglob("*") if p.is_dir())]:
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if folder.name not in ("demo", "__pycache__") and len(modules) > 16:
            crowded[folder.relative_to(PACKAGE_DIR).as_posix()] = len(modules)
    assert crowded == {}


def test_scrapy_components_are_thin_adapters() -> None:
    """A class Scrapy builds (it has ``from_crawler``, or is a scrapy-redis queue) stays under
    200 lines: what it does lives in the objects ``UnifyCrawl`` builds."""
    sizes = {}
    for path in (PACKAGE_DIR / "integration").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            if "from_crawler" in methods or node.name == "RedisQueue":
                sizes[node.name] = (node.end_lineno or node.lineno) - node.lineno + 1
    assert len(sizes) >= 12, sorted(sizes)  # the scan sees the components
    assert {name: n for name, n in sizes.items() if n > 200} == {}


def test_only_the_components_ask_for_the_crawls_objects() -> None:
    """``UnifyCrawl.of(crawler)`` is where a Scrapy component (or ``follow_all``, or the
    ``scrapy urlunify`` command) gets the crawl's objects; every other object is given its
    collaborators by ``UnifyCrawl``, never looks them up."""
    askers = set()
    for path in PACKAGE_DIR.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "of"
                    and getattr(call.func.value, "id", None) == "UnifyCrawl"
                ):
                    askers.add(node.name)
    assert askers, "the scan sees the calls"
    assert askers <= {"from_crawler", "__init__", "follow_all", "response_received", "learn"}


def test_the_package_has_at_most_100_public_names() -> None:
    """A small public face: the root's names (the core's functions and the lazily loaded Scrapy
    components) and the ``__all__`` of every public module (no ``_`` in its path); every other
    module is private and has no ``__all__``."""
    public = set(scrapy_urlunify.__all__) | set(scrapy_urlunify._LAZY)
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(PACKAGE_DIR)
        private = any(
            p.startswith("_") and p not in ("__init__.py", "__main__.py") for p in relative.parts
        )
        names = [
            elt.value
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign)
            and any(getattr(t, "id", "") == "__all__" for t in node.targets)
            for elt in node.value.elts  # type: ignore[attr-defined]
        ]
        assert not (private and names), f"{relative} is private but has __all__"
        if relative != Path("__init__.py"):
            public |= {f"{relative.with_suffix('')}.{n}" for n in names}
    assert 30 < len(public) <= 100, sorted(public)
