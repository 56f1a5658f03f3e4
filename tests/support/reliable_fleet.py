"""A fleet of scrapy-redis workers (tests/support/tree_job.py, ``fleet``) on the reliable queue
(``scrapy_urlunify.integration.queue._redis_queue``), for the tests that SIGKILL workers."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from treesite import start_job

#: the worker settings that put the fleet on the reliable queue (the add-on enables its components;
#: a short lease: a dead worker's requests come back within 3 s)
RELIABLE_QUEUE: dict[str, Any] = {
    "SCHEDULER_QUEUE_CLASS": "scrapy_urlunify.RedisQueue",
    "URLUNIFY_QUEUE_LEASE": 3,
}

#: scrapy-redis's default queue key for the spider named "fleet"
QUEUE_KEY = "fleet:requests"


def start_worker(
    directory: Path, redis_url: str, **config: Any
) -> tuple[subprocess.Popen[str], Path]:
    """One worker of the fleet "fleet" on the reliable queue; it touches ``directory/ready``
    once its spider is open."""
    settings = {**RELIABLE_QUEUE, **config.pop("settings", {})}
    return start_job(
        directory,
        None,
        fleet=redis_url,
        name="fleet",
        ready=str(directory / "ready"),
        settings=settings,
        **config,
    )


def wait_ready(procs: list[subprocess.Popen[str]], ready: list[Path]) -> None:
    # the start URL is pushed once every worker listens: on a loaded machine a late worker would
    # find the crawl done
    deadline = time.monotonic() + 60
    while not all(path.exists() for path in ready):
        if any(proc.poll() is not None for proc in procs) or time.monotonic() > deadline:
            raise RuntimeError("a worker did not start")
        time.sleep(0.05)


def in_flight_of(client: Any, pid: int) -> int:
    """The requests in flight under the worker process ``pid`` (its id holds its pid)."""
    return sum(client.hlen(key) for key in client.scan_iter(f"{QUEUE_KEY}:inflight:*:{pid}:*"))


def given_back(client: Any) -> int:
    return int(client.get(f"{QUEUE_KEY}:given_back") or 0)


def extra_fetches(hits: dict[str, int]) -> int:
    """Fetches beyond the first of each page."""
    return sum(n - 1 for n in hits.values() if n > 1)
