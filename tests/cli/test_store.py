"""``urlunify store info|clear`` on a real JOBDIR and a real Redis."""

from __future__ import annotations

import subprocess
import sys

from scrapy_urlunify.stores._jobdir import (
    SEEN_FILENAME,
    SIGNATURES_FILENAME,
    JobdirSeenStore,
    JobdirSignatureStore,
)
from scrapy_urlunify.stores._location import redis_keys
from scrapy_urlunify.stores._redis_connection import connect
from scrapy_urlunify.stores._redis_seen import RedisSeenStore
from scrapy_urlunify.stores._redis_tables import RedisSignatureStore


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy_urlunify", "store", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_jobdir_info_and_clear_with_confirmation(tmp_path):
    with JobdirSeenStore(tmp_path / SEEN_FILENAME) as seen:
        for fp in range(1, 8):
            seen.add(fp)
    with JobdirSignatureStore(tmp_path / SIGNATURES_FILENAME) as sigs:
        sigs.get_or_set(b"x" * 16, "a.test/")
    r = run("info", "--jobdir", str(tmp_path))
    assert r.returncode == 0
    assert "seen requests            7" in r.stdout and "page signatures          1" in r.stdout
    r = run("clear", "--jobdir", str(tmp_path), stdin="no\n")
    assert r.returncode == 1 and "Nothing deleted" in r.stdout
    assert (tmp_path / SEEN_FILENAME).exists()
    r = run("clear", "--jobdir", str(tmp_path), stdin=f"{tmp_path}\n")
    assert r.returncode == 0 and not (tmp_path / SEEN_FILENAME).exists()


def test_redis_info_and_clear(redis_server):
    client = connect(redis_server.url)
    keys = redis_keys("urlunify:%(scope)s", "acme")
    seen = RedisSeenStore(client, keys["seen"])
    for fp in range(1, 6):
        seen.add(fp)
    RedisSignatureStore(client, keys["signatures"]).get_or_set(b"s" * 16, "acme|a.test/")
    other = RedisSeenStore(client, redis_keys("urlunify:%(scope)s", "other")["seen"])
    other.add(99)
    r = run("info", "--store", redis_server.url, "--scope", "acme")
    assert r.returncode == 0, r.stderr
    assert "seen requests            5" in r.stdout and "page signatures          1" in r.stdout
    r = run("clear", "--store", redis_server.url, "--scope", "acme", stdin="wrong\n")
    assert r.returncode == 1 and len(seen) == 5
    r = run("clear", "--store", redis_server.url, "--scope", "acme", "--yes")
    assert r.returncode == 0 and len(seen) == 0
    assert len(other) == 1  # another scope is untouched


def test_unreachable_redis_is_a_clear_error():
    r = run("info", "--store", "redis://:secret@127.0.0.1:1/0", "--scope", "acme")
    assert r.returncode == 1
    assert "127.0.0.1:1" in r.stderr and "secret" not in r.stderr


# --- faults: one line on stderr, a non-zero exit, never a traceback or a password --------------

PASSWORD = "Zq9/Xw7#Vv5?Uu3"
PIECES = ("Zq9", "Xw7", "Vv5", "Uu3")


def one_line_error(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not any(p in r.stdout + r.stderr for p in PIECES), r.stdout + r.stderr
    return r.stderr


def test_store_info_on_a_key_of_another_type(redis_server):
    redis_server.client().set("urlunify:acme:seen", "not a set")
    err = one_line_error(run("info", "--store", redis_server.url, "--scope", "acme"))
    assert "WRONGTYPE" in err and "urlunify:acme:seen" in err


def test_store_info_on_bad_urls_never_prints_the_password(redis_server):
    for url in (
        f"redsi://:{PASSWORD}@127.0.0.1:{redis_server.port}/0",
        f"redis://:{PASSWORD}@127.0.0.1:port/0",
        f"redis://:{PASSWORD}@127.0.0.1:1/0",
    ):
        one_line_error(run("info", "--store", url, "--scope", "acme"))


def test_store_info_on_corrupt_jobdir_files(tmp_path):
    from scrapy_urlunify.stores._jobdir import LEARNED_FILENAME, REQUESTS_FILENAME
    from scrapy_urlunify.stores._log import VarRecordLog

    (tmp_path / LEARNED_FILENAME).write_text("{not json")
    err = one_line_error(run("info", "--jobdir", str(tmp_path)))
    assert LEARNED_FILENAME in err
    (tmp_path / LEARNED_FILENAME).write_text('["a list", "not an object"]')
    assert LEARNED_FILENAME in one_line_error(run("info", "--jobdir", str(tmp_path)))
    (tmp_path / LEARNED_FILENAME).unlink()
    with VarRecordLog(tmp_path / REQUESTS_FILENAME) as log:
        for i in range(3):
            log.append(b"D" + i.to_bytes(8, "big"))
    with open(tmp_path / REQUESTS_FILENAME, "r+b") as f:  # a zeroed block amid the records
        f.seek(20)
        f.write(b"\0" * 8)
    err = one_line_error(run("info", "--jobdir", str(tmp_path)))
    assert REQUESTS_FILENAME in err and "offset" in err


def test_redis_migrate_from_the_one_set_layout(redis_server):
    """A scope written by an earlier version (one SET of 8-byte members): info counts it, a
    crawl's store refuses it naming the command, ``migrate`` copies it into buckets."""
    client = connect(redis_server.url)
    key = redis_keys("urlunify:%(scope)s", "acme")["seen"]
    client.sadd(key, *(fp.to_bytes(8, "big") for fp in range(1, 1001)))
    r = run("info", "--store", redis_server.url, "--scope", "acme")
    assert r.returncode == 0 and "seen requests            1000" in r.stdout, r.stdout + r.stderr
    r = run("migrate", "--store", redis_server.url, "--scope", "acme", "--size", "5000")
    assert r.returncode == 0, r.stderr
    assert (
        "Migrated 1000 seen requests of scope 'acme'" in r.stdout
        and "sized for 5000 URLs" in r.stdout
    )
    seen = RedisSeenStore(client, key)
    assert len(seen) == 1000 and 500 in seen and seen.add(500) is False and seen.add(5000) is True
    r = run("migrate", "--store", redis_server.url, "--scope", "acme")
    assert r.returncode == 0 and "nothing to migrate" in r.stdout
    r = run("info", "--store", redis_server.url, "--scope", "acme")
    assert "seen requests            1001" in r.stdout


# --- the default store, each action's help, every scope of a Redis store ------------------------


def test_store_info_on_the_default_store_says_in_one_line_it_keeps_nothing():
    """No --jobdir nor --store: the default store, memory, keeps nothing once a crawl ends. Each
    action says so in one line and succeeds, instead of asking for an option."""
    for action, what in (
        ("info", "nothing to show"),
        ("clear", "nothing to clear"),
        ("migrate", "nothing to migrate"),
    ):
        r = run(action)
        assert r.returncode == 0, r.stderr
        assert r.stderr == "" and len(r.stdout.splitlines()) == 1, r.stdout
        assert "memory" in r.stdout and what in r.stdout and "--jobdir" in r.stdout
    assert run("info", "--store", "memory").stdout == run("info").stdout


def test_each_store_action_has_its_own_help():
    own = {"info": (), "clear": ("--yes",), "migrate": ("--size",)}
    for action, options in own.items():
        r = run(action, "--help")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"usage: urlunify store {action} "), r.stdout
        for option in ("--jobdir", "--store", "--scope", "--key", *options):
            assert option in r.stdout, (action, option)
        for other in {"--yes", "--size"} - set(options):
            assert other not in r.stdout, (action, other)
    r = run("--help")
    assert r.stdout.startswith("usage: urlunify store ")
    # the store's own help lists what each action takes
    for line in ("urlunify store info", "urlunify store clear", "urlunify store migrate"):
        assert line in r.stdout


def test_migrate_on_a_jobdir_deletes_nothing(tmp_path):
    with JobdirSeenStore(tmp_path / SEEN_FILENAME) as seen:
        seen.add(1)
    r = run("migrate", "--jobdir", str(tmp_path), stdin=f"{tmp_path}\n")
    assert r.returncode == 0 and "Nothing to migrate" in r.stdout, r.stdout + r.stderr
    assert (tmp_path / SEEN_FILENAME).exists()


def test_redis_info_without_a_scope_shows_every_scope(redis_server):
    client = connect(redis_server.url)
    keys = redis_keys("urlunify:%(scope)s", "acme")
    seen = RedisSeenStore(client, keys["seen"])
    for fp in range(1, 4):
        seen.add(fp)
    RedisSignatureStore(client, redis_keys("urlunify:%(scope)s", "news")["signatures"]).get_or_set(
        b"s" * 16, "news|a.test/"
    )
    client.set("unrelated:key", "x")
    r = run("info", "--store", redis_server.url)
    assert r.returncode == 0, r.stderr
    blocks = r.stdout.split("Redis ")[1:]
    assert [b.split("scope ")[1].split()[0] for b in blocks] == ["'acme'", "'news'"]
    assert "seen requests            3" in blocks[0] and "page signatures          1" in blocks[1]
    # clearing needs the scope named: nothing is deleted, the scopes are listed
    r = run("clear", "--store", redis_server.url, "--yes")
    assert r.returncode == 2 and "'acme', 'news'" in r.stderr and len(seen) == 3
    # a scope template of the project's own
    other = RedisSeenStore(client, redis_keys("crawls/%(scope)s", "shop")["seen"])
    other.add(7)
    r = run("info", "--store", redis_server.url, "--key", "crawls/%(scope)s")
    assert "scope 'shop'" in r.stdout and "'acme'" not in r.stdout, r.stdout


def test_redis_info_on_an_empty_store_says_so(redis_server):
    r = run("info", "--store", redis_server.url)
    assert r.returncode == 0 and "no scope has a store under urlunify:%(scope)s" in r.stdout


def test_redis_cluster_info_and_clear_find_the_hash_tagged_keys(redis_cluster):
    """On a cluster the stores' keys are hash-tagged ({urlunify:acme:signatures}): info counts
    them and clear deletes them, as on one server."""
    client = connect(redis_cluster.url)
    keys = redis_keys("urlunify:%(scope)s", "acme")
    seen = RedisSeenStore(client, keys["seen"])
    seen.add(5)
    signatures = RedisSignatureStore(client, keys["signatures"])
    signatures.get_or_set(b"s" * 16, "acme|a.test/")
    assert signatures.key == "{urlunify:acme:signatures}"
    r = run("info", "--store", redis_cluster.url)
    assert r.returncode == 0, r.stderr
    assert "scope 'acme'" in r.stdout and "page signatures          1" in r.stdout, r.stdout
    r = run("clear", "--store", redis_cluster.url, "--scope", "acme", "--yes")
    assert r.returncode == 0, r.stderr
    assert len(seen) == 0 and len(signatures) == 0


def test_jobdir_clear_removes_the_near_duplicate_index(tmp_path):
    """A crawl reads the index back when it starts: left behind, the next crawl in the JOBDIR
    would take its pages for near-duplicates of pages it never fetched."""
    from scrapy_urlunify.stores._jobdir import NEAR_DUPLICATES_FILENAME as FILENAME

    (tmp_path / FILENAME).write_bytes(b"index")
    with JobdirSeenStore(tmp_path / SEEN_FILENAME) as seen:
        seen.add(1)
    r = run("clear", "--jobdir", str(tmp_path), "--yes")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
