"""Requests kept for rules on probation: a JOBDIR log that survives a kill, and a Redis hash
shared by the processes of a scope (stores/_jobdir.py, stores/_redis_tables.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._factory import Stores
from scrapy_urlunify.stores._jobdir import COMPACT_AFTER, JobdirKeptStore
from scrapy_urlunify.stores._log import VarRecordLog
from scrapy_urlunify.stores._memory import MemoryKeptStore

RULE = ("param|site.test|ref",)


def _id(n: int) -> bytes:
    return n.to_bytes(8, "big")


def test_jobdir_entries_survive_reopening_and_forgetting_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "urlunify-kept.log"
    with_closing = JobdirKeptStore(path)
    with_closing.add(_id(1), RULE, b"request one")
    with_closing.add(_id(2), ("~param|site.test|ref", "alias|m.site.test|site.test"), b"\x00two")
    with_closing.add(_id(1), RULE, b"request one")  # the same request kept twice: one entry
    with_closing.remove([_id(1), _id(9)])  # 9 was never kept
    with_closing.close()
    again = JobdirKeptStore(path)
    assert again.entries() == [
        (_id(2), ("~param|site.test|ref", "alias|m.site.test|site.test"), b"\x00two")
    ]
    again.close()


def test_jobdir_a_kill_mid_write_loses_only_the_torn_entry(tmp_path: Path) -> None:
    path = tmp_path / "urlunify-kept.log"
    store = JobdirKeptStore(path)
    store.add(_id(1), RULE, b"one")
    store.close()
    with open(path, "ab") as f:  # the first bytes of a second record, as a kill leaves them
        f.write(b"\x40\x00\x00\x00\x12\x34")
    again = JobdirKeptStore(path)
    assert [e[0] for e in again.entries()] == [_id(1)]
    again.add(_id(2), RULE, b"two")  # appended after the cut-off tail
    again.close()
    assert [e[0] for e in JobdirKeptStore(path).entries()] == [_id(1), _id(2)]


def test_jobdir_damage_amid_entries_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "urlunify-kept.log"
    store = JobdirKeptStore(path)
    for n in range(5):
        store.add(_id(n), RULE, b"x" * 40)
    store.close()
    with open(path, "r+b") as f:
        f.seek(40)
        f.write(b"\xff" * 8)
    with pytest.raises(StoreError, match=r"urlunify-kept\.log"):
        JobdirKeptStore(path)


def test_jobdir_a_record_of_another_kind_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "urlunify-kept.log"
    with VarRecordLog(path) as log:
        log.append(b"Q" + _id(1))
    with pytest.raises(StoreError, match="malformed kept-request record"):
        JobdirKeptStore(path)


def test_jobdir_log_starts_afresh_once_nothing_is_live(tmp_path: Path) -> None:
    path = tmp_path / "urlunify-kept.log"
    store = JobdirKeptStore(path)
    for n in range(COMPACT_AFTER):
        store.add(_id(n), RULE, b"request")
    store.remove([_id(n) for n in range(COMPACT_AFTER - 1)])
    grown = path.stat().st_size
    store.remove([_id(COMPACT_AFTER - 1)])  # the last live entry: the log is replaced
    assert path.stat().st_size < 100 < grown
    store.add(_id(5), RULE, b"after")
    store.close()
    assert not path.with_name(path.name + ".tmp").exists()
    assert JobdirKeptStore(path).entries() == [(_id(5), RULE, b"after")]


def test_jobdir_sigkill_keeps_every_acknowledged_entry(tmp_path: Path) -> None:
    path = tmp_path / "urlunify-kept.log"
    ack = tmp_path / "ack"
    code = textwrap.dedent(f"""
        import time
        from scrapy_urlunify.stores._jobdir import JobdirKeptStore
        store = JobdirKeptStore({str(path)!r})
        with open({str(ack)!r}, "w", buffering=1) as ack:
            for n in range(100_000):
                store.add(n.to_bytes(8, "big"), ("param|h|v",), b"r" * (n % 300))
                if n % 3 == 0:
                    store.remove([n.to_bytes(8, "big")])
                ack.write(f"{{n}}\\n")
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    while not ack.exists() or len(ack.read_text().splitlines()) < 2000:
        assert proc.poll() is None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    acknowledged = int(ack.read_text().splitlines()[-1])
    live = {int.from_bytes(e[0], "big") for e in JobdirKeptStore(path).entries()}
    expected = {n for n in range(acknowledged + 1) if n % 3}
    assert expected <= live <= expected | {acknowledged + 1}


def test_memory_keeps_nothing_and_the_factory_picks_the_store(tmp_path: Path) -> None:
    store = Stores().kept()
    assert isinstance(store, MemoryKeptStore)
    store.add(_id(1), RULE, b"x")
    assert store.entries() == []
    jobdir = Stores(jobdir=tmp_path).kept()
    assert isinstance(jobdir, JobdirKeptStore)
    assert Path(jobdir.path).name == "urlunify-kept.log"
    jobdir.close()
    assert Stores().fetched() is None
    assert Stores(jobdir=tmp_path).fetched() is None


# --- Redis ------------------------------------------------------------------------------------------


def test_redis_kept_entries_are_shared_by_the_scope(redis_server) -> None:
    one = Stores(redis_server.url, scope="shop")
    two = Stores(redis_server.url, scope="shop")
    other = Stores(redis_server.url, scope="blog")
    a, b, c = one.kept(), two.kept(), other.kept()
    a.add(_id(1), RULE, b"\x00one")
    a.add(_id(2), ("~param|site.test|ref",), b"two")
    assert sorted(b.entries()) == [
        (_id(1), RULE, b"\x00one"),
        (_id(2), ("~param|site.test|ref",), b"two"),
    ]
    assert c.entries() == []
    b.remove([_id(1)])
    assert [e[0] for e in a.entries()] == [_id(2)]
    assert redis_server.client().hlen("urlunify:shop:kept") == 1


def test_redis_a_foreign_value_at_the_kept_key_is_a_store_error(redis_server) -> None:
    client = redis_server.client()
    client.hset("urlunify:shop:kept", "x", b"\xff\xff garbage")
    with pytest.raises(StoreError, match="urlunify:shop:kept"):
        Stores(redis_server.url, scope="shop").kept().entries()


def test_redis_fetched_members_go_with_the_next_question(redis_server) -> None:
    one = Stores(redis_server.url, scope="shop").fetched()
    two = Stores(redis_server.url, scope="shop").fetched()
    assert one is not None
    assert two is not None
    one.add(b"page-one")
    assert not two.fetched(b"page-one")  # not sent yet
    assert one.fetched(b"page-two") is False  # the question carries the waiting member
    assert one.pending == []
    assert two.fetched(b"page-one")
    one.add_many([b"a", b"b"])
    assert len(two) == 3
    two.add(b"c")
    two.close()  # sends what waits
    assert one.fetched(b"c")
