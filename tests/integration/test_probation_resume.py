"""Probation of learned rules across a SIGKILL, a restart and another process.

Real processes: the probation site (tests/support/probation_site.py) runs in its own process and logs
every response it writes (the ground truth); each crawl (tests/support/probation_job.py) runs in its own
process and is killed with a real SIGKILL while a rule learned from ``/a/`` is on probation:
its samples (``/b/N?v=y``) are held by the server, and the requests it merged (``/b/N?v=z``)
are kept in the crawl's store. The resumed run (same JOBDIR, or a new process on the same
redis-server) lets the samples through, finds ``v`` matters, revokes the rule, and fetches the
kept requests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from scrapy_urlunify.integration.rules._probation import RULE_PROBATION
from scrapy_urlunify.learning._learner import Learner
from scrapy_urlunify.learning._persist import LearnedRulesStore
from scrapy_urlunify.stores._jobdir import KEPT_FILENAME, LEARNED_FILENAME, JobdirKeptStore
from scrapy_urlunify.stores._log import VarRecordLog

HERE = Path(__file__).parents[1] / "support"
B_PAGES, C_PAGES = 5, 8  # as tests/support/probation_site.py: more pages than a rule needs samples


class Site:
    """The probation site in its own process; ``answered`` counts the responses it wrote."""

    def __init__(self, tmp: Path, *hold: str, same_b: bool = False, same_d: bool = False) -> None:
        self.gate, self.log = tmp / "gate", tmp / "site.log"
        args = [sys.executable, str(HERE / "probation_site.py"), str(self.gate), str(self.log)]
        args += [a for h in hold for a in ("--hold", h)] + (["--same-b"] if same_b else [])
        args += ["--same-d"] if same_d else []
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        self.base = json.loads(self.proc.stdout.readline())["base"]  # type: ignore[union-attr]

    def lines(self, kind: str) -> list[str]:
        text = self.log.read_text() if self.log.exists() else ""
        return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(kind + " ")]

    @property
    def answered(self) -> Counter[str]:
        return Counter(self.lines("answered"))

    def open_gate(self) -> None:
        self.gate.touch()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def site_factory(tmp_path):
    sites: list[Site] = []

    def make(*hold: str, same_b: bool = False, same_d: bool = False) -> Site:
        sites.append(Site(tmp_path, *hold, same_b=same_b, same_d=same_d))
        return sites[-1]

    yield make
    for s in sites:
        s.close()


def start(tmp: Path, name: str, url: str, settings: dict) -> tuple[subprocess.Popen, Path]:
    result = tmp / f"{name}.json"
    config = tmp / f"{name}.config.json"
    config.write_text(json.dumps({"start": url, "result": str(result), "settings": settings}))
    log = open(tmp / f"{name}.log", "w")  # noqa: SIM115 - the child writes it
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "probation_job.py"), str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return proc, result


def finish(proc: subprocess.Popen, result: Path, tmp: Path, name: str) -> dict:
    assert proc.wait(90) == 0, (tmp / f"{name}.log").read_text()[-3000:]
    return json.loads(result.read_text())


def wait_for(condition, proc: subprocess.Popen, what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the crawl ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def kept_records(jobdir: Path) -> int:
    path = jobdir / KEPT_FILENAME
    return sum(1 for p in VarRecordLog.read(path) if p[:1] == b"K") if path.exists() else 0


def all_samples_and_kept_held(site: Site) -> bool:
    # the first sample is held; /last's links have all gone through the dupefilter once its
    # response was answered and the held sample was asked for
    return "/b/0?v=y" in site.lines("received")


def assert_kept_pages_fetched(site: Site) -> None:
    answered = site.answered
    for i in range(B_PAGES):
        assert answered[f"/b/{i}?v=z"] == 1, (i, sorted(answered))
        assert answered[f"/b/{i}?v=y"] == 1, (i, sorted(answered))


def test_jobdir_kill_during_probation_then_the_rule_fails_it(site_factory, tmp_path):
    site = site_factory("v=y")
    jobdir = tmp_path / "job"
    settings = {"JOBDIR": str(jobdir)}
    proc, _ = start(tmp_path, "killed", site.base + "/", settings)
    wait_for(
        lambda: all_samples_and_kept_held(site) and kept_records(jobdir) >= 2 * B_PAGES,
        proc,
        "the samples and kept requests of the rule",
    )
    kill(proc)
    assert not any("v=z" in uri for uri in site.lines("received"))  # kept, not fetched
    # the rule was on probation at the kill, and is saved so
    state = LearnedRulesStore(path=jobdir / LEARNED_FILENAME).load_state()
    assert [r.name for r in Learner.from_json(state.learner).rules] == ["v"]  # type: ignore[arg-type]
    assert list(state.probation or {}) == ["param|127.0.0.1|v"]

    site.open_gate()
    proc, result = start(tmp_path, "resumed", site.base + "/", settings)
    stats = finish(proc, result, tmp_path, "resumed")
    assert stats["urlunify/learned/probation/resumed"] == 1
    assert stats["urlunify/learned/revoked"] == 1
    assert stats["urlunify/learned/probation/rescheduled"] >= B_PAGES
    assert_kept_pages_fetched(site)
    # revoked stays revoked in the next run: nothing on probation, nothing merged by v
    state = LearnedRulesStore(path=jobdir / LEARNED_FILENAME).load_state()
    learner = Learner.from_json(state.learner)  # type: ignore[arg-type]
    assert learner.rules == ()
    assert [r.rule.name for r in learner.revoked] == ["v"]
    assert state.probation == {}
    proc, result = start(tmp_path, "again", site.base + "/", settings)
    stats = finish(proc, result, tmp_path, "again")
    assert "urlunify/learned/probation/resumed" not in stats
    assert "urlunify/learned/probation/samples" not in stats
    assert_kept_pages_fetched(site)  # and not again


def test_a_confirmed_rule_resumes_confirmed(site_factory, tmp_path):
    site = site_factory(same_b=True)
    jobdir = tmp_path / "job"
    settings = {"JOBDIR": str(jobdir)}
    proc, result = start(tmp_path, "first", site.base + "/", settings)
    stats = finish(proc, result, tmp_path, "first")
    assert stats["urlunify/learned/confirmed"] == 1
    assert stats["urlunify/learned/probation/kept"] >= 1
    state = LearnedRulesStore(path=jobdir / LEARNED_FILENAME).load_state()
    assert state.probation == {}
    assert [
        e for e in VarRecordLog.read(jobdir / KEPT_FILENAME) if e[:1] == b"K"
    ] != []  # they were kept, and forgotten
    proc, result = start(tmp_path, "second", site.base + "/", settings)
    stats = finish(proc, result, tmp_path, "second")
    assert stats["urlunify/learned/probation/resumed"] == 0
    assert "urlunify/learned/probation/samples" not in stats
    assert "urlunify/learned/probation/rescheduled" not in stats
    # confirmed: the kept spellings were never fetched, by either run
    assert not any("v=z" in uri for uri in site.lines("received"))


def test_redis_restart_during_probation_then_the_rule_fails_it(
    site_factory, tmp_path, redis_server
):
    site = site_factory("v=y")
    settings = {"URLUNIFY_STORE": redis_server.url, "URLUNIFY_SCOPE": "probe"}
    client = redis_server.client()
    proc, _ = start(tmp_path, "killed", site.base + "/", settings)
    wait_for(
        lambda: (
            all_samples_and_kept_held(site) and client.hlen("urlunify:probe:kept") >= 2 * B_PAGES
        ),
        proc,
        "the samples and kept requests of the rule",
    )
    kill(proc)
    assert not any("v=z" in uri for uri in site.lines("received"))
    # another process (a restart, or another worker of the scope) finds the rule on probation
    # and the requests it kept, lets the samples through and fetches the kept ones
    site.open_gate()
    proc, result = start(tmp_path, "other", site.base + "/", settings)
    stats = finish(proc, result, tmp_path, "other")
    assert stats["urlunify/learned/probation/resumed"] == 1
    assert stats["urlunify/learned/revoked"] == 1
    assert_kept_pages_fetched(site)
    assert client.hlen("urlunify:probe:kept") == 0
    fields = {k.decode(): v for k, v in client.hgetall("urlunify:probe:rules").items()}
    assert json.loads(fields["probation"]) == {}
    assert Learner.from_json(fields["learner"].decode()).rules == ()


def _rule_v() -> str:
    """A learned state with the rule ``v`` on 127.0.0.1, as a crawl saves it."""
    data = json.loads(Learner().to_json())
    data["rules"] = [
        {
            "kind": "param",
            "host": "127.0.0.1",
            "name": "v",
            "pairs": 3,
            "examples": [["http://127.0.0.1/c/0?v=a", "http://127.0.0.1/c/0?v=b"]],
        }
    ]
    return json.dumps(data)


def _seed_rule(client, scope: str) -> None:  # type: ignore[no-untyped-def]
    """A confirmed rule ``v`` on 127.0.0.1 in the scope's learned state."""
    from scrapy_urlunify.stores._redis_tables import RedisRulesStore

    LearnedRulesStore(redis=RedisRulesStore(client, f"urlunify:{scope}:rules")).save(_rule_v(), {})


def test_a_resumed_job_drops_at_dequeue_the_pages_the_killed_run_fetched(site_factory, tmp_path):
    """JOBDIR: the killed run fetched ``/c/N?v=a`` and had queued ``/c/N?v=b`` (held); with a
    rule merging them in force at the resume, the spellings it had queued are dropped at dequeue:
    their pages were fetched, by the run before the kill."""
    site = site_factory("v=b")
    jobdir = tmp_path / "job"
    settings = {"JOBDIR": str(jobdir)}
    proc, _ = start(tmp_path, "killed", site.base + "/sab", settings)
    wait_for(lambda: "/c/0?v=b" in site.lines("received"), proc, "the first ?v=b request")
    kill(proc)
    assert all(site.answered[f"/c/{i}?v=a"] == 1 for i in range(C_PAGES))
    LearnedRulesStore(path=jobdir / LEARNED_FILENAME).save(_rule_v(), {})
    site.open_gate()
    proc, result = start(tmp_path, "resumed", site.base + "/sab", settings)
    stats = finish(proc, result, tmp_path, "resumed")
    answered = site.answered
    assert not any(answered[f"/c/{i}?v=b"] for i in range(C_PAGES)), sorted(answered)
    assert all(answered[f"/c/{i}?v=a"] == 1 for i in range(C_PAGES))
    assert stats["urlunify/dropped_at_dequeue"] == C_PAGES


def test_two_workers_share_what_they_fetched_for_the_dequeue_check(
    site_factory, tmp_path, redis_server
):
    """Two workers on one redis-server each queued one spelling of the same 8 pages before the
    rule that merges them (``/c/N?v=a`` and ``?v=b``); both were killed. With the rule, the first
    worker resumes and fetches its 8; the second resumes and drops all 8 of its own at dequeue:
    pages the other process fetched."""
    site = site_factory("/c/")
    client = redis_server.client()
    settings = {"URLUNIFY_STORE": redis_server.url, "URLUNIFY_SCOPE": "pair"}
    a = {**settings, "JOBDIR": str(tmp_path / "a")}
    b = {**settings, "JOBDIR": str(tmp_path / "b")}
    proc_a, _ = start(tmp_path, "a0", site.base + "/sa", a)
    proc_b, _ = start(tmp_path, "b0", site.base + "/sb", b)
    for proc, v in ((proc_a, "a"), (proc_b, "b")):
        wait_for(
            lambda v=v: any(
                u.startswith("/c/") and u.endswith(f"v={v}") for u in site.lines("received")
            ),
            proc,
            f"worker {v} to ask for its first /c/ page",
        )
    kill(proc_a)
    kill(proc_b)
    assert not any(u.startswith("/c/") for u in site.lines("answered"))
    _seed_rule(client, "pair")
    site.open_gate()
    proc, result = start(tmp_path, "a1", site.base + "/sa", a)
    stats_a = finish(proc, result, tmp_path, "a1")
    assert sum(n for u, n in site.answered.items() if u.startswith("/c/")) == C_PAGES
    proc, result = start(tmp_path, "b1", site.base + "/sb", b)
    stats_b = finish(proc, result, tmp_path, "b1")
    answered = site.answered
    assert all(answered[f"/c/{i}?v=a"] == 1 for i in range(C_PAGES)), sorted(answered)
    assert not any(answered[f"/c/{i}?v=b"] for i in range(C_PAGES)), sorted(answered)
    assert stats_b["urlunify/dropped_at_dequeue"] == C_PAGES
    assert "urlunify/dropped_at_dequeue" not in stats_a


# -- a rule that gets few samples is verified before the crawl ends ---------------------------
# On /few/K the rule v (learned on /a/) gets one sample (/a/3?v=b) and keeps /d/N?v=y, linked
# before the pages it merges them into are fetched: without a check when the crawl goes idle it
# ends on probation and "finished" with those pages never fetched.

D_PAGES = 4


def assert_few_pages_fetched(site: Site, k: int = D_PAGES) -> None:
    answered = site.answered
    for i in range(k):
        assert answered[f"/d/{i}?v=x"] == 1, (i, sorted(answered))
        assert answered[f"/d/{i}?v=y"] == 1, (i, sorted(answered))


def test_a_wrong_rule_with_few_samples_is_verified_when_the_crawl_goes_idle(site_factory, tmp_path):
    site = site_factory()
    proc, result = start(tmp_path, "few", f"{site.base}/few/{D_PAGES}", {})
    stats = finish(proc, result, tmp_path, "few")
    assert stats["finish_reason"] == "finished"
    assert_few_pages_fetched(site)
    assert (
        stats.get("urlunify/learned/probation/samples", 0) < RULE_PROBATION
    )  # probation alone never ended
    assert stats["urlunify/learned/probation/kept"] == D_PAGES
    # the kept requests were fetched as samples once nothing else was left: the first revoked v
    assert stats["urlunify/learned/probation/verified_at_idle"] >= 1
    assert stats["urlunify/learned/revoked"] == 1
    assert "urlunify/learned/confirmed" not in stats
    lines = [
        line
        for line in (tmp_path / "few.log").read_text().splitlines()
        if "INFO: Verifying at idle" in line
    ]
    assert len(lines) == 1 and "parameter 'v' does not matter on 127.0.0.1" in lines[0], lines


@pytest.mark.parametrize("k", [2, 6])
def test_a_right_rule_with_few_samples_is_confirmed_when_the_crawl_goes_idle(
    site_factory, tmp_path, k
):
    site = site_factory(same_d=True)
    proc, result = start(tmp_path, "few", f"{site.base}/few/{k}", {})
    stats = finish(proc, result, tmp_path, "few")
    sampled = stats.get("urlunify/learned/probation/samples", 0)
    assert sampled < RULE_PROBATION
    assert stats["urlunify/learned/probation/kept"] == k
    # as many kept requests verified as the rule lacked samples (all of them when it kept fewer),
    # each the page it was merged into: confirmed, the rest forgotten, never fetched
    verified = min(k, RULE_PROBATION - sampled)
    assert stats["urlunify/learned/probation/verified_at_idle"] == verified
    assert stats["urlunify/learned/confirmed"] == 1
    assert "urlunify/learned/revoked" not in stats
    answered = site.answered
    assert sum(answered[f"/d/{i}?v=y"] for i in range(k)) == verified, sorted(answered)
    assert all(answered[f"/d/{i}?v=x"] == 1 for i in range(k)), sorted(answered)
    assert all(n == 1 for n in answered.values()), sorted(answered.items())  # nothing fetched twice
    # a verified rule resumes confirmed: nothing on probation is left in the job
    assert stats["finish_reason"] == "finished"


def test_a_jobdir_resume_verifies_the_kept_requests_of_a_rule_with_few_samples(
    site_factory, tmp_path
):
    site = site_factory("/end")
    jobdir = tmp_path / "job"
    settings = {"JOBDIR": str(jobdir)}
    url = f"{site.base}/few/{D_PAGES}"
    proc, _ = start(tmp_path, "killed", url, settings)
    wait_for(
        lambda: f"/few/{D_PAGES}/end" in site.lines("received") and kept_records(jobdir) >= D_PAGES,
        proc,
        "the kept requests of the rule",
    )
    kill(proc)
    assert not any("v=y" in uri for uri in site.lines("received"))  # kept, not fetched
    site.open_gate()
    proc, result = start(tmp_path, "resumed", url, settings)
    stats = finish(proc, result, tmp_path, "resumed")
    assert stats["finish_reason"] == "finished"
    assert_few_pages_fetched(site)
    assert stats["urlunify/learned/probation/resumed"] == 1
    # the resumed run knows the /d/N?v=x pages the killed run fetched: the first kept request
    # fetched at idle differs from its page, and revokes v
    assert stats["urlunify/learned/probation/verified_at_idle"] >= 1
    assert stats["urlunify/learned/revoked"] == 1
    assert LearnedRulesStore(path=jobdir / LEARNED_FILENAME).load_state().probation == {}
    kept = JobdirKeptStore(jobdir / KEPT_FILENAME)
    try:
        assert len(kept) == 0
    finally:
        kept.close()


def test_redis_another_process_fetches_what_a_killed_one_kept_for_a_rule_with_few_samples(
    site_factory, tmp_path, redis_server
):
    site = site_factory("/end")
    settings = {"URLUNIFY_STORE": redis_server.url, "URLUNIFY_SCOPE": "few"}
    client = redis_server.client()
    url = f"{site.base}/few/{D_PAGES}"
    proc, _ = start(tmp_path, "killed", url, settings)
    wait_for(
        lambda: (
            f"/few/{D_PAGES}/end" in site.lines("received")
            and client.hlen("urlunify:few:kept") >= D_PAGES
        ),
        proc,
        "the kept requests of the rule",
    )
    kill(proc)
    assert not any("v=y" in uri for uri in site.lines("received"))
    site.open_gate()
    # another process of the scope: everything is seen, only the kept requests are left to it
    proc, result = start(tmp_path, "other", url, settings)
    stats = finish(proc, result, tmp_path, "other")
    assert stats["finish_reason"] == "finished"
    assert_few_pages_fetched(site)
    assert stats["urlunify/learned/probation/resumed"] == 1
    assert stats["urlunify/learned/probation/verified_at_idle"] == D_PAGES
    assert client.hlen("urlunify:few:kept") == 0
