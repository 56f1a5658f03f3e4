"""The sdist ships what the test suite imports from ``benchmarks/`` and ``tools/``.

Neither folder is shipped whole (MANIFEST.in): a test importing a script that is not listed
there collects in a checkout and fails to in an unpacked sdist (``No module named
'bench_bigpage'``), which no test run from a checkout would notice otherwise.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT_DIRS = ("benchmarks", "tools", "tools/sites")


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def scripts_the_tests_import() -> set[str]:
    """Paths (relative to the root) of the scripts of SCRIPT_DIRS the tests import, and those
    these import in turn."""
    found: set[str] = set()
    pending = sorted((ROOT / "tests").rglob("*.py"))
    while pending:
        for name in _imported_names(pending.pop()):
            for folder in SCRIPT_DIRS:
                script = ROOT / folder / f"{name}.py"
                relative = script.relative_to(ROOT).as_posix()
                if script.is_file() and relative not in found:
                    found.add(relative)
                    pending.append(script)
    return found


def shipped(path: str, manifest: str) -> bool:
    """Whether an ``include`` or ``recursive-include`` line of ``manifest`` takes ``path``."""
    for line in manifest.splitlines():
        words = line.split()
        if words[:1] == ["include"] and any(fnmatch.fnmatch(path, w) for w in words[1:]):
            return True
        if words[:1] == ["recursive-include"] and len(words) > 2:
            folder, patterns = words[1], words[2:]
            name = path.rpartition("/")[2]
            if path.startswith(folder.rstrip("/") + "/") and any(
                fnmatch.fnmatch(name, p) for p in patterns
            ):
                return True
    return False


def test_the_scripts_tests_import_are_in_the_manifest() -> None:
    manifest_path = ROOT / "MANIFEST.in"
    if not manifest_path.is_file():
        pytest.skip("no MANIFEST.in here (an installed copy of the tests)")
    manifest = manifest_path.read_text("utf-8")
    imported = scripts_the_tests_import()
    if (ROOT / "benchmarks" / "bench_bigpage.py").is_file():
        # the scan sees the imports (test_bigpage_memory.py, and bench_bigpage's own)
        assert {"benchmarks/bench_bigpage.py", "benchmarks/_common.py"} <= imported
    assert {p for p in imported if not shipped(p, manifest)} == set()

    # the manifest reader itself
    assert shipped("benchmarks/x.py", "recursive-include benchmarks *.py *.md")
    assert shipped("tools/sites/x.py", "include LICENSE tools/sites/*.py")
    assert not shipped(
        "benchmarks/x.py", "include benchmarks/README.md\nrecursive-include docs *.py"
    )
