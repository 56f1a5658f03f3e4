"""JOBDIR: a crawl killed with SIGKILL and resumed fetches every page once, none missed.

Real processes: the demo server and each crawl run in their own process; the crawl is killed
with a real SIGKILL after some responses, then resumed with the same JOBDIR.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from demo_crawl import fetched

from scrapy_urlunify.demo.site import DemoSite
from scrapy_urlunify.stores._jobdir import REQUESTS_FILENAME, SEEN_FILENAME
from scrapy_urlunify.stores._log import RecordLog, VarRecordLog

SIZE = 50
HERE = Path(__file__).parents[1] / "support"


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_urlunify.demo.server", "--size", str(SIZE), "--no-traps"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        info = json.loads(proc.stdout.readline())
        yield info["proxy_url"]
    finally:
        proc.terminate()
        proc.wait(10)


def start(proxy: str, jobdir: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(HERE / "crawl_job.py"), proxy, str(jobdir), str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_after(proc: subprocess.Popen, out: Path, responses: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if out.exists() and len(out.read_text().splitlines()) >= responses:
            break
        assert proc.poll() is None, "the crawl ended before it could be killed"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def seen_set(jobdir: Path) -> set[bytes]:
    return set(RecordLog.read(jobdir / SEEN_FILENAME, 8))


def content_missed(site: DemoSite, fetched_pages: set[str]) -> list[str]:
    """Pages whose content no fetch obtained. A page and its content duplicates (a print view, a
    mirror copy) are one content: the links of a duplicate page are not followed, so when a
    resumed run meets the mirror's listing before the site's, it fetches the mirror's articles
    and not the site's, and misses no content."""
    group = {p: site.content_duplicates.get(p, p) for p in site.pages}
    obtained = {group[p] for p in fetched_pages if p in group}
    return sorted(p for p in site.pages if group[p] not in obtained)


def unfinished_pages(jobdir: Path, site: DemoSite) -> set[str]:
    """Pages the killed run had scheduled but not finished handling (``S`` without ``D`` in
    its resume log): the only ones a resume may fetch a second time."""
    scheduled: dict[bytes, str] = {}
    done: set[bytes] = set()
    for payload in VarRecordLog.read(jobdir / REQUESTS_FILENAME):
        fp = payload[1:9]
        if payload[:1] == b"S" and payload[9:]:
            scheduled.setdefault(fp, pickle.loads(payload[9:])["url"])
        elif payload[:1] == b"D":
            done.add(fp)
    return {
        site.page_id(url, follow_redirects=True) for fp, url in scheduled.items() if fp not in done
    }


@pytest.mark.parametrize("kills", [[8], [20], [6, 18]], ids=["early", "late", "twice"])
def test_killed_crawl_resumes_without_loss_or_repeat(server, tmp_path, kills):
    """None missed; and a page is fetched a second time only when the kill caught it between
    its download and the end of its handling (at most the requests in flight)."""
    site = DemoSite(size=SIZE, traps=False)
    jobdir, out = tmp_path / "job", tmp_path / "fetched.txt"
    in_flight: set[str] = set()
    for n in kills:
        proc = start(server, jobdir, out)
        kill_after(proc, out, n)
        before = seen_set(jobdir)
        assert before, "the killed run recorded nothing"
        in_flight |= unfinished_pages(jobdir, site) & set(fetched(out, site))
    final = start(server, jobdir, out)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err[-3000:]
    counts = fetched(out, site)
    assert content_missed(site, set(counts)) == []
    assert set(site.pages) - set(counts) <= set(site.pages) & (
        set(site.content_duplicates) | set(site.content_duplicates.values())
    )
    twice = {p for p, n in counts.items() if n > 1}
    assert twice <= in_flight, twice - in_flight
    assert len(twice) <= 8 * len(kills)  # CONCURRENT_REQUESTS=4, plus the scraper's queue
    assert "Resuming after a crash" in err
    # the resumed run started from exactly the seen set the killed one had written
    assert before <= seen_set(jobdir)


def test_graceful_stop_and_resume_uses_scrapys_queue(server, tmp_path):
    site = DemoSite(size=SIZE, traps=False)
    jobdir, out = tmp_path / "job", tmp_path / "fetched.txt"
    proc = start(server, jobdir, out)
    deadline = time.monotonic() + 60
    while (
        not (out.exists() and len(out.read_text().splitlines()) >= 10)
        and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)  # Scrapy's graceful shutdown: it saves its queue
    _, err = proc.communicate(timeout=60)
    assert "shutdown" in err
    final = start(server, jobdir, out)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0
    assert "Resuming after a crash" not in err
    counts = fetched(out, site)
    assert content_missed(site, set(counts)) == []
    assert {p: n for p, n in counts.items() if n > 1} == {}
