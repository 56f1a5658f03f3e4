"""A crawl the plugin refuses to start (a damaged JOBDIR log, a bad setting, a job that cannot be
resumed safely, a store that does not answer) is one ERROR line naming the cause, no traceback,
and a non-zero exit status: ``scrapy crawl`` in a real project, in its own process, against the
tree site (tests/support/treesite.py). The CrawlerProcess script is tests/support/tree_job.py
(tests/integration/test_faults.py)."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tree_project import write_project
from treesite import TreeSite

from scrapy_urlunify.stores._jobdir import REQUESTS_FILENAME, SEEN_FILENAME


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("project"))


@pytest.fixture(scope="module")
def site() -> TreeSite:
    with TreeSite() as site:
        yield site


@pytest.fixture(scope="module")
def finished_job(project: Path, site: TreeSite) -> Path:
    """A JOBDIR of a crawl of the whole site (its logs full of acknowledged records)."""
    job = project / "finished"
    done = crawl(project, site, "-s", f"JOBDIR={job}")
    assert done.returncode == 0 and "'finish_reason': 'finished'" in done.stderr, done.stderr[
        -3000:
    ]
    assert not site.lost()
    return job


def crawl(project: Path, site: TreeSite, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "tree", "-a", f"start={site.url(0)}", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def refused(project: Path, site: TreeSite, *args: str) -> str:
    """Run a crawl that must be refused; its one ERROR line."""
    before = sum(site.hits.values())
    run = crawl(project, site, *args)
    errors = [line for line in run.stderr.splitlines() if "ERROR" in line or "CRITICAL" in line]
    assert run.returncode != 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-5000:]
    assert len(errors) == 1, run.stderr[-5000:]
    assert sum(site.hits.values()) == before  # refused before fetching anything
    return errors[0]


def copy_job(finished_job: Path, name: str) -> Path:
    job = finished_job.with_name(name)
    shutil.copytree(finished_job, job)
    return job


@pytest.mark.parametrize("block", ["garbage", "zeros"])
def test_a_damaged_log_is_one_error_line_naming_the_file_and_offset(
    project, site, finished_job, block
):
    job = copy_job(finished_job, f"damaged-{block}")
    log = job / REQUESTS_FILENAME
    data = bytearray(log.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 512] = (
        random.Random(12).randbytes(512) if block == "garbage" else bytes(512)
    )
    log.write_bytes(bytes(data))
    line = refused(project, site, "-s", f"JOBDIR={job}")
    assert str(log) in line and "offset" in line, line
    assert log.read_bytes() == data  # nothing "repaired" away


def test_a_bad_setting_is_one_error_line_naming_it(project, site):
    line = refused(project, site, "-s", "URLUNIFY_ENABLED=maybe")
    assert "URLUNIFY_ENABLED" in line and "maybe" in line, line


def test_a_job_that_cannot_be_resumed_is_one_error_line_naming_the_files(
    project, site, finished_job
):
    job = copy_job(finished_job, "no-requests-log")
    (job / REQUESTS_FILENAME).unlink()
    line = refused(project, site, "-s", f"JOBDIR={job}")
    assert REQUESTS_FILENAME in line and SEEN_FILENAME in line, line


def test_a_store_that_does_not_answer_is_one_error_line_naming_the_setting(project, site):
    line = refused(project, site, "-s", "URLUNIFY_STORE=redis://127.0.0.1:1/0")
    assert "URLUNIFY_STORE" in line and "127.0.0.1:1" in line, line
