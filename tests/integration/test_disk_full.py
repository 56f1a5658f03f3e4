"""A JOBDIR on a disk that fills up: a real tmpfs of a few KiB, mounted for the test (root only).

The crawl stops with ``urlunify_store_error``; its job folder, copied to a disk with room, resumes
and must fetch every page of the site. The demo site (with the learner's traps) is crawled by the
add-on alone, learning on (``tests/support/addon_job.py``); the tree site (``tests/support/treesite.py``) by
``tests/support/tree_job.py``. See docs/reliability.md for the numbers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from demo_crawl import fetched
from treesite import TreeSite, run_job

from scrapy_urlunify.demo.measure import pages_read
from scrapy_urlunify.demo.site import DemoSite

HERE = Path(__file__).parents[1] / "support"


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path``; the test is skipped when it cannot be mounted."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs (a disk that fills up) needs root")
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode:
        pytest.skip(f"mount -t tmpfs is unavailable: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture(scope="module")
def demo_server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_urlunify.demo.server"], stdout=subprocess.PIPE, text=True
    )
    try:
        yield json.loads(proc.stdout.readline())["proxy_url"]  # type: ignore[union-attr]
    finally:
        proc.terminate()
        proc.wait(10)


def run(job: str, proxy: str, jobdir: Path, out: Path) -> str:
    """One run of a job script to its end; its log."""
    done = subprocess.run(
        [sys.executable, str(HERE / job), proxy, str(jobdir), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stderr


def finish_reason(log: str) -> str:
    return next(line.split("'")[3] for line in log.splitlines() if "'finish_reason'" in line)


def test_a_resume_after_a_full_disk_fetches_every_page_the_learner_had_not_merged(
    tmp_path, demo_server
):
    """100 KiB fills up while the first run fetches its first dozen pages. Before the fix the
    resumed run's learner, blind to the pages the first run fetched (its index of pages is not
    saved), adopted "mirror.site.test is an alias of site.test", which the first run had seen
    contradicted (the two home pages differ), and dropped 10 of the site's pages whose mirror
    copies it had fetched: the resume ended "finished" with 276 of 286 pages. Since mirror
    copies go after the others (docs/frontier.md, "Plain spellings first") the first run may
    never reach the mirror's home page; the resumed run may then learn the alias from three
    mirror pages, and the alias's sample of its host's root page shows the two home pages
    differ (docs/learning.md): the rule is revoked, and every page fetched."""
    site = DemoSite()
    out = tmp_path / "out.txt"
    with tmpfs(tmp_path / "small", "100k") as small:
        first = run("addon_job.py", demo_server, small / "job", out)
        assert finish_reason(first) == "urlunify_store_error", first[-3000:]
        shutil.copytree(small / "job", tmp_path / "job")
    resumed = run("addon_job.py", demo_server, tmp_path / "job", out)
    assert finish_reason(resumed) == "finished", resumed[-3000:]
    never = sorted(set(site.pages) - pages_read(site, set(fetched(out, site))))
    assert never == [], f"{len(never)} of {len(site.pages)} pages never fetched: {never[:12]}"
    if "Learned: host mirror.site.test is an alias of site.test" in resumed:
        assert "counter-example showed it matters: host mirror.site.test" in resumed


def test_a_full_scheduler_queue_closes_the_crawl_with_a_reason_and_the_resume_fetches_everything(
    tmp_path,
):
    """Only Scrapy's disk queue (``JOBDIR/requests.queue``, a 4 KiB tmpfs) fills up; the plugin's
    logs have room. Before the fix the queue lost the start request (its pop flushed a write that
    failed: "Exception in callback ... _dqpop", in the asyncio log only) and the crawl ended
    "finished" with 100 of 100 pages never fetched, its resume log closed cleanly."""
    queue = tmp_path / "job" / "requests.queue"
    with TreeSite() as site:
        with tmpfs(queue, "4k"):
            full = run_job(tmp_path, site)
        assert full.returncode == 0, full.stderr[-3000:]
        assert "No space left on device" in full.stderr, "the queue did not fill up: lower the size"
        assert full.stats["finish_reason"] == "urlunify_store_error", (
            full.stats,
            sorted(site.lost())[:5],
        )
        assert "Scrapy's disk queue in JOBDIR lost" in full.stderr
        final = run_job(tmp_path, site)
        assert final.returncode == 0, final.stderr[-3000:]
        assert final.stats["finish_reason"] == "finished"
        assert sorted(site.lost()) == []


def test_a_full_disk_under_any_store_ends_the_done_records(tmp_path):
    """A kept request (a rule on probation's) that cannot be written to a full disk must not be
    lost: from then on no page is marked done, so the run that resumes fetches again the page
    whose link it was, and meets the link again. Before, only the seen set's own write failures
    stopped the done records."""
    from scrapy import Request, Spider
    from scrapy.utils.test import get_crawler

    from scrapy_urlunify.integration.crawl._build import UnifyCrawl
    from scrapy_urlunify.stores._jobdir import REQUESTS_FILENAME

    with tmpfs(tmp_path / "small", "64k") as small:
        job = small / "job"
        crawler = get_crawler(Spider, {"ADDONS": {"scrapy_urlunify.Addon": 0}, "JOBDIR": str(job)})
        crawl = UnifyCrawl.of(crawler)
        seen = crawl.seen_keys()
        probation = crawl.probation
        assert probation is not None and seen.resume_log is not None
        page = Request("http://shop.test/p/1")
        assert seen.add(page, seen.key_of(page), None)
        filler = small / "filler"
        with filler.open("wb", buffering=0) as f:  # fill the disk to its last byte
            try:
                while True:
                    f.write(b"\0" * 512)
            except OSError:
                pass
        kept = probation.kept_store
        crawl.faults.guarded(
            lambda: kept.add(b"\1" * 8, ("param|shop.test|ref",), b"x" * 8192), None
        )
        assert crawl.faults.failed and crawl.faults.jobdir_failed
        log = job / REQUESTS_FILENAME
        size = log.stat().st_size
        filler.unlink()  # room again: a done record would now be written, if one were
        seen.mark_done(page)
        assert log.stat().st_size == size  # not done: the resume fetches the page again
