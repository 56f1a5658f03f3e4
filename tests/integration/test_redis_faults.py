"""A Redis store that fails: out of memory, a key of another type, restarted empty, a password
with ``/ # ?``, a unix socket, learned rules of the wrong shape. Real crawls of the tree site
(tests/support/treesite.py) in their own processes (tests/support/tree_job.py) against a real redis-server.
"""

from __future__ import annotations

from typing import Any

import pytest
from treesite import TreeSite, finish, run_job, start_job, wait_for_pages

pytestmark = pytest.mark.redis

PASSWORD = "Zq9/Xw7#Vv5?Uu3"
PIECES = ("Zq9", "Xw7", "Vv5", "Uu3")
SLOW = {"DOWNLOAD_DELAY": 0.05, "CONCURRENT_REQUESTS": 2}


def store(server: Any, **extra: Any) -> dict[str, Any]:
    return {
        "URLUNIFY_STORE": f"redis://127.0.0.1:{server.port}/0",
        "URLUNIFY_REDIS_TIMEOUT": 2,
        "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT": 3,
        **extra,
    }


def test_redis_out_of_memory_mid_crawl_closes_it_and_the_resume_fetches_everything(
    tmp_path, redis_server
):
    """``maxmemory`` reached with ``noeviction``: every write answers OOM. That is a store error,
    not an outage: the crawl closes with ``urlunify_store_error``, counting nothing as seen."""
    with TreeSite() as site:
        proc, result = start_job(tmp_path, site.url(0), settings=store(redis_server, **SLOW))
        wait_for_pages(site, proc, 10)
        redis_server.client().config_set("maxmemory", 1)
        full = finish(proc, result)
        assert full.returncode == 0, full.stderr[-3000:]
        assert full.stats["finish_reason"] == "urlunify_store_error", full.stats
        assert full.stats.get("urlunify/store_error") == 1
        errors = [line for line in full.stderr.splitlines() if "ERROR" in line]
        assert any("maxmemory" in line for line in errors), errors
        assert site.lost(), "the crawl ended before Redis was full"
        redis_server.client().config_set("maxmemory", 0)
        resumed = run_job(tmp_path, site, settings=store(redis_server))
    assert resumed.returncode == 0 and resumed.stats["finish_reason"] == "finished", resumed.stderr[
        -3000:
    ]
    assert sorted(site.lost()) == []


def test_a_key_of_another_type_stops_the_crawl_naming_it(tmp_path, redis_server):
    redis_server.client().set("urlunify:tree:seen", "another program's value")
    with TreeSite() as site:
        stopped = run_job(tmp_path, site, settings=store(redis_server))
        assert stopped.stats["finish_reason"] == "urlunify_store_error", stopped.stderr[-3000:]
        assert "WRONGTYPE" in stopped.stderr and "urlunify:tree:seen" in stopped.stderr
        redis_server.client().delete("urlunify:tree:seen")
        resumed = run_job(tmp_path, site, settings=store(redis_server))
    assert resumed.stats["finish_reason"] == "finished", resumed.stderr[-3000:]
    assert sorted(site.lost()) == []


def test_redis_restarted_empty_is_a_warning(tmp_path, redis_server):
    """A Redis without persistence restarted mid-crawl has forgotten what the fleet has seen:
    the crawl goes on (pages fetched before may be fetched again), but says so."""
    with TreeSite() as site:
        proc, result = start_job(
            tmp_path, site.url(0), settings=store(redis_server, JOBDIR=None, **SLOW)
        )
        wait_for_pages(site, proc, 10)
        redis_server.restart(down_for=0.3)
        run = finish(proc, result)
    assert run.returncode == 0, run.stderr[-3000:]
    warnings = [
        line for line in run.stderr.splitlines() if "WARNING" in line and "lost its data" in line
    ]
    assert warnings and "urlunify:tree" in warnings[0], run.stderr[-3000:]


def test_a_password_is_never_printed(tmp_path, redis_server_factory):
    server = redis_server_factory(password=PASSWORD)
    port = server.port
    with TreeSite() as site:
        runs = {
            "right": run_job(
                tmp_path,
                site,
                settings={
                    "URLUNIFY_STORE": f"redis://:{PASSWORD}@127.0.0.1:{port}/0",
                    "LOG_LEVEL": "DEBUG",
                },
            ),
            "wrong": run_job(
                tmp_path,
                site,
                settings={"URLUNIFY_STORE": f"redis://:{PASSWORD}x@127.0.0.1:{port}/0"},
            ),
            "scheme": run_job(
                tmp_path,
                site,
                settings={"URLUNIFY_STORE": f"redsi://:{PASSWORD}@127.0.0.1:{port}/0"},
            ),
            "port": run_job(
                tmp_path, site, settings={"URLUNIFY_STORE": f"redis://:{PASSWORD}@127.0.0.1:port/0"}
            ),
        }
    assert runs["right"].stats["finish_reason"] == "finished", runs["right"].stderr[-3000:]
    assert sorted(site.lost()) == []  # the password with / # ? works
    for name, run in runs.items():
        leaked = [p for p in PIECES if p in run.stderr]
        assert leaked == [], f"{name}: {leaked} in\n{run.stderr[-3000:]}"
    for name in ("wrong", "scheme", "port"):
        assert runs[name].returncode != 0 and "URLUNIFY_STORE" in runs[name].stderr, runs[
            name
        ].stderr[-3000:]


def test_a_unix_socket_store(tmp_path, redis_server_factory):
    socket = tmp_path / "redis.sock"
    redis_server_factory(extra_args=("--unixsocket", str(socket), "--unixsocketperm", "700"))
    with TreeSite() as site:
        run = run_job(tmp_path, site, settings={"URLUNIFY_STORE": f"unix://{socket}?db=0"})
    assert run.returncode == 0 and run.stats["finish_reason"] == "finished", run.stderr[-3000:]
    assert sorted(site.lost()) == [] and site.fetched_twice() == {}


def test_learned_rules_of_the_wrong_shape_are_ignored_with_a_warning(tmp_path, redis_server):
    from scrapy_urlunify.stores._jobdir import LEARNED_FILENAME

    with TreeSite() as site:
        (tmp_path / "job").mkdir()
        (tmp_path / "job" / LEARNED_FILENAME).write_text('["valid JSON", "of another shape"]')
        jobdir = run_job(tmp_path, site, settings={"URLUNIFY_LEARN": True})
        redis_server.client().hset("urlunify:tree:rules", "learner", '{"rules": 5}')
        (tmp_path / "r").mkdir()
        redis = run_job(
            tmp_path / "r", site, settings=store(redis_server, URLUNIFY_LEARN=True, JOBDIR=None)
        )
    for run, where in ((jobdir, LEARNED_FILENAME), (redis, "urlunify:tree:rules")):
        assert run.returncode == 0 and run.stats["finish_reason"] == "finished", run.stderr[-3000:]
        assert any("WARNING" in line and where in line for line in run.stderr.splitlines()), (
            run.stderr[-3000:]
        )
