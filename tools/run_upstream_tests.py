"""Run Scrapy's and scrapy-redis's own tests with scrapy-urlunify's classes swapped in.

The suites come from the sdists of the *installed* versions (``pip download --no-binary``), are
unpacked into a work directory, and run twice with ``pytest``:

* **baseline**: unchanged, to know which tests fail here whatever the dupefilter (no network,
  no mitmproxy, ...);
* **swapped**: with a pytest plugin (written next to the sources) that makes Scrapy's defaults
  ``DUPEFILTER_CLASS = DupeFilter`` and ``REQUEST_FINGERPRINTER_CLASS = Fingerprinter``, and
  scrapy-redis's ``RFPDupeFilter`` (its module attribute and ``SCHEDULER_DUPEFILTER_CLASS``)
  ``RedisDupeFilter``.

It prints the tests that fail swapped but not in the baseline: each must be listed, with its
reason, in ``docs/compatibility.md``. Exit status 0 when every such failure is listed there, 1
otherwise. A redis-server is started on a free loopback port for scrapy-redis's tests.

Slow (minutes): not part of the normal test suite. Needs the registry once (the sdists and the
suites' test dependencies, installed into ``<workdir>/venv``)::

    python tools/run_upstream_tests.py --workdir /tmp/upstream
    python tools/run_upstream_tests.py --workdir /tmp/upstream --suite scrapy -k dupefilter
"""

from __future__ import annotations

import argparse
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Scrapy's test modules that exercise the dupefilter and the fingerprinter, directly or in crawls
SCRAPY_MODULES = [
    "tests/test_dupefilters.py",
    "tests/test_utils_request.py",
    "tests/test_scheduler.py",
    "tests/test_scheduler_base.py",
    "tests/test_engine.py",
    "tests/test_engine_close_spider.py",
    "tests/test_engine_download.py",
    "tests/test_engine_loop.py",
    "tests/test_engine_stop_download_bytes.py",
    "tests/test_engine_stop_download_headers.py",
    "tests/test_crawl.py",
    "tests/test_downloadermiddleware_httpcache.py",
    "tests/test_pipeline_media.py",
    "tests/test_pipeline_files.py",
    "tests/test_pipeline_images.py",
    "tests/test_addons.py",
    "tests/test_spidermiddleware.py",
    "tests/test_spidermiddleware_base.py",
    "tests/test_spidermiddleware_depth.py",
    "tests/test_spidermiddleware_httperror.py",
    "tests/test_spidermiddleware_metacopy.py",
    "tests/test_spidermiddleware_output_chain.py",
    "tests/test_spidermiddleware_process_start.py",
    "tests/test_spidermiddleware_referer.py",
    "tests/test_spidermiddleware_start.py",
    "tests/test_spidermiddleware_urllength.py",
    "tests/test_downloadermiddleware_redirect.py",
    "tests/test_downloadermiddleware_redirect_metarefresh.py",
    "tests/test_downloadermiddleware_offsite.py",
]
REDIS_MODULES = ["tests"]

#: what the suites need beyond the package itself (Scrapy's tox.ini, scrapy-redis's requirements)
TEST_DEPS = [
    "attrs",
    "pexpect",
    "psutil",
    "pyftpdlib",
    "pygments",
    "pytest",
    "pytest-rerunfailures",
    "pytest-timeout",
    "sybil",
    "pytest-twisted>=1.14.3",
    "testfixtures",
    "mock",
]

SWAP_PLUGIN = '''"""pytest plugin: scrapy-urlunify's classes in place of Scrapy's and scrapy-redis's."""
import os

import scrapy.settings.default_settings as defaults

defaults.DUPEFILTER_CLASS = "scrapy_urlunify.DupeFilter"
defaults.REQUEST_FINGERPRINTER_CLASS = "scrapy_urlunify.Fingerprinter"
if os.environ.get("URLUNIFY_SWAP_ADDON"):  # the whole add-on, as a project enables it
    defaults.ADDONS = {**defaults.ADDONS, "scrapy_urlunify.Addon": 0}

try:
    import scrapy_redis.defaults
    import scrapy_redis.dupefilter
except ImportError:
    pass
else:
    from scrapy_urlunify.integration.seen._redis_dupefilter import RedisDupeFilter

    scrapy_redis.defaults.SCHEDULER_DUPEFILTER_CLASS = (
        "scrapy_urlunify.RedisDupeFilter")
    scrapy_redis.dupefilter.RFPDupeFilter = RedisDupeFilter
'''


#: scrapy-redis's tests use nose-style ``setup()`` methods, which pytest 8 no longer calls (it
#: pins pytest<7): this plugin calls them, in both runs
NOSE_PLUGIN = '''"""pytest plugin: call nose-style setup()/teardown() methods (removed from pytest 8)."""
import unittest

import pytest


@pytest.fixture(autouse=True)
def _nose_style_setup(request):
    instance = request.instance
    nose = instance is not None and not isinstance(instance, unittest.TestCase)
    if nose and callable(getattr(instance, "setup", None)):
        instance.setup()
    yield
    if nose and callable(getattr(instance, "teardown", None)):
        instance.teardown()
'''

#: plugins every run of a suite loads (the swap plugin comes on top)
SUITE_PLUGINS = {"scrapy": [], "scrapy-redis": ["upstream_nose"]}


def sh(*cmd: str | Path, **kw) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def, type-arg]
    print("$", " ".join(map(str, cmd)), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def prepare(workdir: Path) -> tuple[Path, dict[str, Path]]:
    """The work directory's venv (the package, the installed Scrapy/scrapy-redis versions, the test
    dependencies) and the unpacked sources of each suite."""
    versions = {"scrapy": version("scrapy"), "scrapy-redis": version("scrapy-redis")}
    workdir.mkdir(parents=True, exist_ok=True)
    venv = workdir / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        sh(sys.executable, "-m", "venv", venv)
        sh(
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "-e",
            ROOT,
            *(f"{name}=={v}" for name, v in versions.items()),
            *TEST_DEPS,
        )
    sources: dict[str, Path] = {}
    for name, v in versions.items():
        unpacked = workdir / f"{name.replace('-', '_')}-{v}"
        if not unpacked.exists():
            sdists = workdir / "sdists"
            sh(
                python,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                sdists,
                f"{name}=={v}",
            )
            (sdist,) = [
                p
                for p in sdists.iterdir()
                if p.name.lower().replace("-", "_").startswith(f"{name.replace('-', '_')}_{v}")
            ]
            with tarfile.open(sdist) as tar:
                tar.extractall(workdir, filter="data")
        sources[name] = unpacked
    (workdir / "urlunify_swap.py").write_text(SWAP_PLUGIN)
    (workdir / "upstream_nose.py").write_text(NOSE_PLUGIN)
    return python, sources


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_suite(
    python: Path,
    src: Path,
    modules: list[str],
    swapped: bool,
    junit: Path,
    extra: list[str],
    env: dict[str, str],
    plugins: list[str],
) -> dict[str, str]:
    """Run ``modules`` of the suite in ``src``; returns {test id: failure message} of failures."""
    plugin = [
        arg for name in [*plugins, *(["urlunify_swap"] if swapped else [])] for arg in ("-p", name)
    ]
    cmd = [
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *plugin,
        f"--junitxml={junit}",
        "-o",
        "junit_family=xunit1",
        *modules,
        *extra,
    ]
    subprocess.run([str(c) for c in cmd], cwd=src, env=env, check=False)
    return failures(junit)


def failures(junit: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in ET.parse(junit).getroot().iter("testsuite"):
        for k in totals:
            totals[k] += int(suite.get(k, 0))
    for case in ET.parse(junit).getroot().iter("testcase"):
        for bad in (*case.findall("failure"), *case.findall("error")):
            message = (bad.get("message") or "").strip().splitlines()
            out[f"{case.get('classname')}::{case.get('name')}"] = (
                message[0][:200] if message else ""
            )
    print(
        f"  {junit.name}: {totals['tests']} tests, {totals['failures']} failed, "
        f"{totals['errors']} errors, {totals['skipped']} skipped",
        flush=True,
    )
    return out


def documented() -> set[str]:
    """Test ids listed in docs/compatibility.md (first column of its tables, in backquotes)."""
    path = ROOT / "docs" / "compatibility.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return set(re.findall(r"^\|\s*`([^`]+)`", text, flags=re.MULTILINE))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/urlunify-upstream"))
    ap.add_argument("--suite", choices=["scrapy", "scrapy-redis", "both"], default="both")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unswapped run")
    ap.add_argument("-k", help="pytest -k expression")
    ap.add_argument(
        "--addon",
        action="store_true",
        help="swap in the whole add-on (ADDONS), not only the dupefilter and the fingerprinter",
    )
    args = ap.parse_args()
    python, sources = prepare(args.workdir)
    extra = ["-k", args.k] if args.k else []
    import os

    env = dict(os.environ, PYTHONPATH=str(args.workdir))
    if args.addon:
        env["URLUNIFY_SWAP_ADDON"] = "1"
    redis = None
    suites = {"scrapy": SCRAPY_MODULES, "scrapy-redis": REDIS_MODULES}
    if args.suite != "both":
        suites = {args.suite: suites[args.suite]}
    if "scrapy-redis" in suites:
        port = free_port()
        redis = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
        )
        time.sleep(0.5)
        env.update(REDIS_HOST="127.0.0.1", REDIS_PORT=str(port))
    regressions: dict[str, str] = {}
    try:
        for name, modules in suites.items():
            src = sources[name]
            base = (
                {}
                if args.no_baseline
                else run_suite(
                    python,
                    src,
                    modules,
                    False,
                    args.workdir / f"{name}-baseline.xml",
                    extra,
                    env,
                    SUITE_PLUGINS[name],
                )
            )
            swapped = run_suite(
                python,
                src,
                modules,
                True,
                args.workdir / f"{name}-swapped.xml",
                extra,
                env,
                SUITE_PLUGINS[name],
            )
            for test, message in swapped.items():
                if test not in base:
                    regressions[f"{name}: {test}"] = message
            print(
                f"{name}: {len(base)} failures unswapped, {len(swapped)} swapped, "
                f"{sum(1 for t in swapped if t not in base)} only swapped",
                flush=True,
            )
    finally:
        if redis is not None:
            redis.terminate()
            redis.wait()
    known = documented()
    undocumented = {t: m for t, m in regressions.items() if t.split(": ", 1)[1] not in known}
    print(
        f"\n{len(regressions)} failures with our classes only; {len(undocumented)} not in docs/compatibility.md"
    )
    for test, message in sorted(regressions.items()):
        mark = "  " if test in undocumented else "ok"
        print(f"{mark} {test}\n     {message}")
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
