"""``urlunify same|explain|identify --jobdir DIR | --store URL``: the rules a crawl learned, read
where the crawl keeps them (a real JOBDIR file and a real Redis, written by the crawl's own
``LearnedRulesStore``), applied on top of the policy as the crawl applies them."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from scrapy_urlunify.learning._learner import Learner
from scrapy_urlunify.learning._persist import LearnedRulesStore
from scrapy_urlunify.stores._jobdir import LEARNED_FILENAME
from scrapy_urlunify.stores._location import redis_keys
from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_tables import RedisRulesStore

A = "https://shop.test/product/9?ref=home"
B = "https://shop.test/product/9?ref=footer"
ON_PROBATION = {"param|shop.test|ref": {"sampled": 1, "confirmed": 0, "paths": ["/a"]}}


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy_urlunify", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def learned_ref() -> Learner:
    """A learner that saw three pages each under two values of ``ref``: ``ref`` does not
    matter on shop.test."""
    learner = Learner()
    for path in ("/a", "/b", "/c"):
        for value in ("home", "footer"):
            learner.observe(
                f"https://shop.test{path}?ref={value}",
                "shop.test",
                hashlib.md5(path.encode()).digest(),
            )
    assert [(r.kind, r.name) for r in learner.rules] == [("param", "ref")]
    return learner


def jobdir_with_rules(tmp_path: Path, probation: dict | None = None) -> Path:
    LearnedRulesStore(path=tmp_path / LEARNED_FILENAME).save(learned_ref().to_json(), probation)
    return tmp_path


def test_same_applies_the_rules_learned_in_a_jobdir(tmp_path):
    job = jobdir_with_rules(tmp_path, ON_PROBATION)
    assert run("same", A, B).returncode == 1  # the policy alone: two pages
    r = run("same", A, B, "--jobdir", str(job))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith(
        f"learned     1 rule from {job / LEARNED_FILENAME} (1 on probation)\n"
    )
    assert "identifier  shop.test/product/9\n" in r.stdout
    assert "decided by the learned rules (the policy alone: different pages)" in r.stdout
    assert "parameter 'ref' does not matter on shop.test (on probation)" in r.stdout
    # what the rule does not merge stays two pages
    r = run("same", A, "https://shop.test/product/10?ref=home", "--jobdir", str(job))
    assert r.returncode == 1 and "different pages" in r.stdout


def test_explain_and_identify_apply_them_too(tmp_path):
    job = jobdir_with_rules(tmp_path)
    r = run("explain", A, "--jobdir", str(job))
    assert r.returncode == 0, r.stderr
    assert "identifier  shop.test/product/9\n" in r.stdout
    assert "changed the identifier (the policy alone: shop.test/product/9?ref=home)" in r.stdout
    r = run("identify", "--jobdir", str(job), "--scope", "shop", stdin=f"{A}\n{B}\n")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines() == ["shop|shop.test/product/9", "shop|shop.test/product/9"]
    # the URL fetched keeps the parameter: learned rules are of the identity layer only
    r = run("standardize", "--jobdir", str(job))
    assert r.returncode == 2 and "unrecognized arguments: --jobdir" in r.stderr


def test_a_jobdir_without_learned_rules_applies_the_policy_alone(tmp_path):
    r = run("same", A, B, "--jobdir", str(tmp_path))
    assert r.returncode == 1 and "different pages" in r.stdout
    assert r.stdout.startswith("learned     none kept in ")
    r = run("identify", "--jobdir", str(tmp_path), stdin=f"{A}\n")
    assert r.stdout == "shop.test/product/9?ref=home\n"
    assert "no learned rule applied" in r.stderr and LEARNED_FILENAME in r.stderr


def test_an_unreadable_store_is_an_error_not_a_verdict(tmp_path):
    """Exit status 2, one line: for ``same``, 1 would read as "different pages"."""
    (tmp_path / LEARNED_FILENAME).write_text("{not json")
    for args in (
        ("same", A, B, "--jobdir", str(tmp_path)),
        ("same", A, B, "--jobdir", str(tmp_path / "absent")),
        ("same", A, B, "--store", "redis://127.0.0.1:1/0", "--scope", "shop"),
        ("same", A, B, "--store", "redsi://127.0.0.1/0", "--scope", "shop"),
    ):
        r = run(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert LEARNED_FILENAME in run("same", A, B, "--jobdir", str(tmp_path)).stderr
    # a rule the policy refuses (a hand-edited file), named with its file
    saved = json.loads(Learner().to_json())
    saved["rules"] = [
        {"kind": "alias", "host": "bad host", "name": "shop.test", "pairs": 3, "examples": []}
    ]
    (tmp_path / LEARNED_FILENAME).write_text(json.dumps(saved))
    r = run("same", A, B, "--jobdir", str(tmp_path))
    assert r.returncode == 2 and "'bad host' is not a valid host name" in r.stderr, r.stderr
    assert str(tmp_path / LEARNED_FILENAME) in r.stderr


def test_same_applies_the_rules_a_scope_learned_in_redis(redis_server):
    client = connect(redis_server.url)
    keys = redis_keys("urlunify:%(scope)s", "shop")
    LearnedRulesStore(redis=RedisRulesStore(client, keys["rules"])).save(
        learned_ref().to_json(), {}
    )
    r = run("same", A, B, "--store", redis_server.url, "--scope", "shop")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith(f"learned     1 rule from Redis {redis_server.url} key ")
    assert "parameter 'ref' does not matter on shop.test\n" in r.stdout  # confirmed
    assert "identifier  shop|shop.test/product/9\n" in r.stdout
    # another scope learned nothing
    assert run("same", A, B, "--store", redis_server.url, "--scope", "news").returncode == 1
    # no scope: the rules are per scope, the error names those the store holds
    r = run("same", A, B, "--store", redis_server.url)
    assert r.returncode == 2 and "give --scope" in r.stderr and "'shop'" in r.stderr


def test_store_info_counts_learned_rules_and_clear_removes_every_key_of_the_scope(redis_server):
    from scrapy_urlunify.stores._redis_near_duplicates import RedisNearDuplicateLog

    client = connect(redis_server.url)
    keys = redis_keys("urlunify:%(scope)s", "shop")
    LearnedRulesStore(redis=RedisRulesStore(client, keys["rules"])).save(
        learned_ref().to_json(), ON_PROBATION
    )
    RedisNearDuplicateLog(client, keys["signatures"] + ":near").append([b"r1", b"r2"])
    r = run("store", "info", "--store", redis_server.url, "--scope", "shop")
    assert "learned rules            1 (1 on probation)" in r.stdout, r.stdout
    r = run("store", "clear", "--store", redis_server.url, "--scope", "shop", "--yes")
    assert r.returncode == 0, r.stderr
    assert client.keys("*") == []


def test_the_command_line_merges_rules_as_the_crawl_does():
    """The policy ``--jobdir``/``--store`` build is the one a crawl builds with the same rules
    (``CrawlPolicies.set_learned``), settings' own aliases and parameters included."""
    from scrapy.utils.test import get_crawler

    import scrapy_urlunify.learning._rule_settings as rule_settings
    from scrapy_urlunify.cli._learned import with_rules
    from scrapy_urlunify.integration.crawl._build import UnifyCrawl
    from scrapy_urlunify.learning._rule_types import LearnedRule

    rules = [
        LearnedRule("param", "shop.test", "ref", 3, ()),
        LearnedRule("param", "wiki.test", "returnto", 3, (), "/w/index.php?title=Login"),
        LearnedRule("alias", "m.shop.test", "shop.test", 3, ()),
        LearnedRule("alias", "shop.net", "shop.test", 3, ()),  # its group is the settings' one
        LearnedRule("path", "shop.test", "print", 3, ()),
    ]
    crawler = get_crawler(
        settings_dict={
            "URLUNIFY_DOMAIN_ALIASES": [["shop.test", "shop.net"]],
            "URLUNIFY_IGNORE_PARAMS": {"shop.test": ["sort"]},
            "URLUNIFY_IGNORE_PATH_PREFIXES": {"*": ["amp"]},
        }
    )
    context = UnifyCrawl.of(crawler).policies
    base = context.base_policy
    context.set_learned(
        rule_settings.ignore_params(rules),
        rule_settings.domain_aliases(rules),
        rule_settings.path_prefixes(rules),
    )
    assert with_rules(base, rules) == context.policy
    assert with_rules(base, rules) != base
