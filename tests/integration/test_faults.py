"""Faults a crawl with JOBDIR must survive: each either keeps the crawl whole (a resume fetches
every page) or stops it with a reason naming the cause. Real crawls of the tree site
(tests/support/treesite.py) in their own processes (tests/support/tree_job.py), real SIGKILLs at chosen points,
a real RLIMIT_FSIZE for a disk that fills up. See docs/reliability.md for the numbers.
"""

from __future__ import annotations

import pytest
from treesite import TreeSite, resume_until_finished, run_job

from scrapy_urlunify.stores._jobdir import REQUESTS_FILENAME, SEEN_FILENAME, SIGNATURES_FILENAME

# -- a page is done only once its links are scheduled and its items have left the pipelines ----


@pytest.mark.parametrize("kills", [[0], [1, 5], [2, 8, 26]], ids=["root", "two", "three"])
def test_a_kill_while_a_page_is_handled_loses_none_of_its_links(tmp_path, kills):
    """Killed while a page's item is in the pipelines, after the spider's output is exhausted and
    before its requests are scheduled (Scrapy 2.13+ schedules them in worker tasks): the page
    must not be "done" yet, or its whole subtree is lost."""
    with TreeSite() as site:
        runs = resume_until_finished(tmp_path, site, len(kills) + 1, kill_on_item=kills)
    assert [r.killed for r in runs] == [True] * len(kills) + [False], [
        r.stderr[-2000:] for r in runs
    ]
    assert runs[-1].returncode == 0, runs[-1].stderr[-3000:]
    assert runs[-1].stats["finish_reason"] == "finished"
    assert sorted(site.lost()) == []
    # at most the pages in flight at each kill are fetched again
    assert len(site.fetched_twice()) <= 8 * len(kills), site.fetched_twice()


# -- a kill while Scrapy saves its queue at close ------------------------------------------------


def test_kills_at_shutdown_never_leave_a_job_that_cannot_resume(tmp_path):
    """SIGKILL while Scrapy writes ``requests.queue/active.json`` at close (the file created,
    still empty): of a crawl killed before, and of a re-run of a finished job, again and again."""
    with TreeSite() as site:
        assert run_job(tmp_path, site, kill_on_item=[4]).killed
        finished = run_job(
            tmp_path, site
        )  # resumes and finishes: the job's log ends "closed cleanly"
        assert finished.returncode == 0 and finished.stats["finish_reason"] == "finished", (
            finished.stderr[-3000:]
        )
        for _ in range(3):  # each run killed while saving its queue; then one that runs cleanly
            killed = run_job(tmp_path, site, kill_on_queue_write=True)
            assert killed.killed, killed.stderr[-3000:]
            (tmp_path / "marks" / "queue-write").unlink()
            assert (tmp_path / "job" / "requests.queue" / "active.json").read_bytes() == b""
        final = run_job(tmp_path, site)
        assert final.returncode == 0, final.stderr[-3000:]
        assert "JSONDecodeError" not in final.stderr
        assert final.stats["finish_reason"] == "finished"
        assert sorted(site.lost()) == []
        again = run_job(tmp_path, site)  # a re-run of the finished job: nothing to do, no error
        assert again.returncode == 0 and again.stats["finish_reason"] == "finished", again.stderr[
            -3000:
        ]


# -- a JOBDIR file emptied or deleted ------------------------------------------------------------


@pytest.mark.parametrize("how", ["emptied", "deleted"])
def test_a_resume_log_lost_while_the_seen_set_is_not_refuses_to_resume(tmp_path, how):
    """Without ``urlunify-requests.log`` a resume cannot know which seen pages were never
    fetched: it must refuse, naming the files, rather than "finish" after one request."""
    with TreeSite() as site:
        assert run_job(tmp_path, site, kill_on_item=[4]).killed
        log = tmp_path / "job" / REQUESTS_FILENAME
        if how == "emptied":
            log.write_bytes(b"")
        else:
            log.unlink()
        refused = run_job(tmp_path, site)
        assert refused.returncode != 0
        errors = [
            line for line in refused.stderr.splitlines() if "ERROR" in line or "CRITICAL" in line
        ]
        assert len(errors) == 1 and "Traceback" not in refused.stderr, refused.stderr[-5000:]
        assert REQUESTS_FILENAME in errors[0] and SEEN_FILENAME in errors[0]
        fetched = sum(site.hits.values())
        refused = run_job(tmp_path, site)  # still refuses: nothing was "repaired" silently
        assert refused.returncode != 0 and sum(site.hits.values()) == fetched


def test_a_lost_signature_log_is_a_warning_naming_it(tmp_path):
    with TreeSite() as site:
        assert run_job(tmp_path, site).returncode == 0
        (tmp_path / "job" / SIGNATURES_FILENAME).unlink()
        again = run_job(tmp_path, site)
    assert again.returncode == 0
    warning = [
        line
        for line in again.stderr.splitlines()
        if "WARNING" in line and SIGNATURES_FILENAME in line
    ]
    assert warning, again.stderr[-3000:]


# -- a disk that fills up ------------------------------------------------------------------------


def test_a_full_disk_closes_the_crawl_with_a_reason_and_the_resume_fetches_everything(tmp_path):
    """RLIMIT_FSIZE: a write past 24 KiB fails (EFBIG) as on a full disk. The first log to fill is
    the resume log (a pickled request per scheduled page)."""
    with TreeSite() as site:
        full = run_job(tmp_path, site, fsize=24 * 1024)
        assert full.returncode == 0, full.stderr[-3000:]
        assert full.stats["finish_reason"] == "urlunify_store_error", full.stats
        assert "urlunify_store_error" in full.stderr
        assert site.lost(), "the disk filled up after the whole site was crawled: raise the size"
        final = run_job(tmp_path, site)
        assert final.returncode == 0, final.stderr[-3000:]
        assert final.stats["finish_reason"] == "finished"
        assert sorted(site.lost()) == []


# -- damaged logs --------------------------------------------------------------------------------


def test_a_damaged_log_is_a_one_line_error_and_a_failed_run(tmp_path):
    with TreeSite() as site:
        assert run_job(tmp_path, site, kill_on_item=[4]).killed
        log = tmp_path / "job" / REQUESTS_FILENAME
        with open(log, "r+b") as f:  # a zeroed block amid acknowledged records
            f.seek(64)
            f.write(b"\0" * 512)
        failed = run_job(tmp_path, site)
    assert failed.returncode != 0
    # a script with CrawlerProcess (scrapy crawl: tests/integration/test_refusals.py)
    errors = [line for line in failed.stderr.splitlines() if "ERROR" in line or "CRITICAL" in line]
    assert len(errors) == 1 and "Traceback" not in failed.stderr, failed.stderr[-5000:]
    assert REQUESTS_FILENAME in errors[0] and "offset" in errors[0], errors
