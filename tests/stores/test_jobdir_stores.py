"""scrapy_urlunify.stores: the key set, the record logs and the four stores.

Everything runs on real files in ``tmp_path``; the crash test SIGKILLs a real child.
"""

from __future__ import annotations

import errno
import logging
import os
import random
import signal
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scrapy_urlunify.stores._log as log_module
from scrapy_urlunify.stores._base import SeenStore, SignatureStore, StoreError
from scrapy_urlunify.stores._fingerprints import FingerprintSet
from scrapy_urlunify.stores._jobdir import JobdirSeenStore, JobdirSignatureStore
from scrapy_urlunify.stores._log import RecordLog, VarRecordLog
from scrapy_urlunify.stores._memory import MemorySeenStore, MemorySignatureStore

ROOT = Path(__file__).resolve().parents[2]
MAX = 2**64 - 1
HEADER = log_module.HEADER_SIZE


def random_keys(n: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(64) for _ in range(n)]


# --- FingerprintSet --------------------------------------------------------------


@pytest.mark.parametrize("key", [0, 1, 2**63, MAX])
def test_add_contains_edge_values(key: int) -> None:
    s = FingerprintSet()
    assert key not in s
    assert s.add(key) is True
    assert s.add(key) is False
    assert key in s
    assert len(s) == 1
    assert list(s) == [key]


def test_zero_is_exact_not_aliased() -> None:
    s = FingerprintSet()
    s.add(0)
    assert all(x not in s for x in (1, MAX, 2**32, 8))
    s2 = FingerprintSet([1, MAX, 8])
    assert 0 not in s2
    assert sorted(s2) == [1, 8, MAX]


@pytest.mark.parametrize("bad", [-1, 2**64, 2**64 + 5, -(2**64)])
def test_out_of_range(bad: int) -> None:
    s = FingerprintSet([5, 2**64 - 5 + 0])
    assert bad not in s
    with pytest.raises(ValueError, match="outside"):
        s.add(bad)
    assert len(s) == 2


def test_non_int_rejected() -> None:
    s = FingerprintSet()
    with pytest.raises(TypeError):
        s.add(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s.add("abc")  # type: ignore[arg-type]
    assert len(s) == 0


def test_growth_keeps_every_member_and_stays_compact() -> None:
    keys = random_keys(200_000, seed=1)
    s = FingerprintSet()
    for key in keys:
        assert s.add(key)
    assert len(s) == len(keys)
    assert all(key in s for keys_ in [keys] for key in keys_)
    assert set(s) == set(keys)
    assert s.nbytes / len(s) <= 24
    assert all(key not in s for key in random_keys(10_000, seed=2))


def test_sequential_and_low_bit_sharing_keys_are_correct() -> None:
    # Small sequential ints and multiples of 2**40 share their high bits: all in one bucket,
    # the documented slow case: slower, never wrong.
    for keys in (list(range(5000)), [i << 40 for i in range(300)]):
        s = FingerprintSet(keys)
        assert len(s) == len(keys) and set(s) == set(keys)
        assert all(key in s for key in keys)
        assert (len(keys) << 40) + 1 not in s


def test_capacity_and_reserve_keep_the_set_exact() -> None:
    s = FingerprintSet(capacity=1000)
    first = random_keys(1000)
    s.update(first)
    s.reserve(50_000)
    more = random_keys(4000, seed=3)
    s.update(more)
    assert len(s) == 5000
    assert list(s) == sorted(first + more)
    assert all(key in s for key in first[::7] + more[::7])


key_values = st.one_of(
    st.integers(0, MAX),
    st.integers(0, 64),
    st.sampled_from([0, 1, MAX, 2**63, 2**32, 2**32 + 8]),
    st.integers(0, 2**20 - 1).map(lambda x: x << 44),  # shared low bits: long probe runs
)


@settings(max_examples=150, deadline=None)
@given(st.lists(key_values, max_size=400), st.lists(key_values, max_size=50))
def test_matches_python_set(adds: list[int], probes: list[int]) -> None:
    # The table starts at 8 slots, so 400 adds go through up to 7 resizes.
    s = FingerprintSet()
    ref: set[int] = set()
    for key in adds:
        assert s.add(key) is (key not in ref)
        ref.add(key)
        assert len(s) == len(ref)
    assert set(s) == ref
    assert sorted(s) == sorted(ref)  # no duplicates in iteration
    for key in adds + probes:
        assert (key in s) is (key in ref)


# --- stores: protocols and in-memory behaviour -----------------------------------


def test_protocols(tmp_path: Path) -> None:
    with JobdirSeenStore(tmp_path / "seen") as js, JobdirSignatureStore(tmp_path / "sig") as jg:
        for store in (MemorySeenStore(), js):
            assert isinstance(store, SeenStore)
        for sig_store in (MemorySignatureStore(), jg):
            assert isinstance(sig_store, SignatureStore)


@pytest.mark.parametrize("kind", ["memory", "jobdir"])
def test_signature_store_first_identifier_wins(tmp_path: Path, kind: str) -> None:
    store = MemorySignatureStore() if kind == "memory" else JobdirSignatureStore(tmp_path / "sig")
    assert store.get_or_set(b"\x01sig", "https://a.test/") is None
    assert store.get_or_set(b"\x01sig", "https://b.test/") == "https://a.test/"
    assert store.get_or_set(b"", "") is None
    assert store.get_or_set(b"", "x") == ""
    assert len(store) == 2
    store.close()


# --- JOBDIR stores: persistence ----------------------------------------------------


def test_jobdir_seen_store_reopen_same_set(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    keys = [0, MAX, 1, *random_keys(5000, seed=4)]
    with JobdirSeenStore(path) as store:
        for key in keys:
            assert store.add(key)
        assert not store.add(keys[10])
    assert path.stat().st_size == HEADER + 8 * len(keys)
    with JobdirSeenStore(path) as store:
        assert len(store) == len(keys)
        assert all(key in store for key in keys)
        assert 2 not in store
        assert not store.add(0) and not store.add(MAX)
        assert store.add(2)
    with JobdirSeenStore(path) as store:
        assert len(store) == len(keys) + 1
    assert [int.from_bytes(r, "little") for r in RecordLog.read(path, 8)] == [*keys, 2]


def test_jobdir_seen_store_rejects_out_of_range_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    with JobdirSeenStore(path) as store:
        with pytest.raises(ValueError, match="outside"):
            store.add(2**64)
        with pytest.raises(ValueError):
            store.add(-1)
    assert path.stat().st_size == HEADER


def test_jobdir_signature_store_reopen(tmp_path: Path) -> None:
    path = tmp_path / "sig"
    pairs = {
        i.to_bytes(2, "big") * (1 + i % 20): f"https://site.test/page/{i}?\u00e9\udc80"
        for i in range(300)
    }
    with JobdirSignatureStore(path) as store:
        for sig, ident in pairs.items():
            assert store.get_or_set(sig, ident) is None
            assert store.get_or_set(sig, "later") == ident
    with JobdirSignatureStore(path) as store:
        assert len(store) == len(pairs)
        for sig, ident in pairs.items():
            assert store.get_or_set(sig, "later") == ident


def test_jobdir_signature_store_type_errors(tmp_path: Path) -> None:
    with JobdirSignatureStore(tmp_path / "sig") as store:
        with pytest.raises(TypeError):
            store.get_or_set("text", "x")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            store.get_or_set(b"s", None)  # type: ignore[arg-type]
        assert len(store) == 0


def test_closed_store_refuses_appends(tmp_path: Path) -> None:
    store = JobdirSeenStore(tmp_path / "seen")
    store.close()
    store.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        store.add(1)


def test_second_writer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    with JobdirSeenStore(path):
        with pytest.raises(StoreError, match="already open"):
            JobdirSeenStore(path)
        assert list(RecordLog.read(path, 8)) == []  # readers don't lock
    JobdirSeenStore(path).close()


def test_failed_write_leaves_no_partial_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "seen"
    store = JobdirSeenStore(path)
    store.add(1)
    real_write = os.write

    def half_then_enospc(fd: int, data: bytes) -> int:
        real_write(fd, data[:3])
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(log_module.os, "write", half_then_enospc)
        with pytest.raises(OSError, match="No space"):
            store.add(2)
    assert 2 not in store and len(store) == 1
    assert path.stat().st_size == HEADER + 8
    assert store.add(3)
    store.close()
    with JobdirSeenStore(path) as store:
        assert len(store) == 2 and 1 in store and 3 in store and 2 not in store


# --- crash safety ------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import random, sys
    from scrapy_urlunify.stores._jobdir import JobdirSeenStore, JobdirSignatureStore

    seen = JobdirSeenStore(sys.argv[1])
    sigs = JobdirSignatureStore(sys.argv[2])
    rng = random.Random(7)
    out = sys.stdout
    i = 0
    while True:
        key = rng.getrandbits(64)
        if seen.add(key):
            out.write(f"F {key}\\n")
        if sigs.get_or_set(key.to_bytes(8, "big"), f"https://site.test/{i}") is None:
            out.write(f"S {key} {i}\\n")
        out.flush()  # acknowledged only once the store call returned
        i += 1
    """
)


def test_sigkill_loses_nothing_acknowledged(tmp_path: Path) -> None:
    seen_path, sig_path = tmp_path / "seen", tmp_path / "sig"
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(seen_path), str(sig_path)],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )
    assert child.stdout is not None
    lines: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(lines) < 4000 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        lines.append(line)
    child.send_signal(signal.SIGKILL)  # mid-loop: no cleanup, no close(), no flush
    rest = child.stdout.read()
    child.wait()
    assert child.returncode == -signal.SIGKILL
    # Only complete lines count: a line cut by the kill was never fully acknowledged.
    acked = [line.split() for line in b"".join(lines + [rest]).split(b"\n")[:-1]]
    seen_acked = [int(f[1]) for f in acked if f[0] == b"F"]
    sig_acked = {int(f[1]): int(f[2]) for f in acked if f[0] == b"S"}
    assert len(seen_acked) >= 1000

    with JobdirSeenStore(seen_path) as seen, JobdirSignatureStore(sig_path) as sigs:
        assert all(key in seen for key in seen_acked)
        # At most the one key written but not yet printed when the kill came.
        assert len(seen_acked) <= len(seen) <= len(seen_acked) + 1
        for key, i in sig_acked.items():
            assert sigs.get_or_set(key.to_bytes(8, "big"), "other") == f"https://site.test/{i}"
        assert len(sig_acked) <= len(sigs) <= len(sig_acked) + 1


# --- torn tails ------------------------------------------------------------------


def test_torn_fixed_record_is_ignored_then_truncated(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "seen"
    with JobdirSeenStore(path) as store:
        for key in (1, 2, 3):
            store.add(key)
    with open(path, "ab") as f:
        f.write((4).to_bytes(8, "little")[:5])  # a kill in the middle of a record
    size = path.stat().st_size

    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores"):
        assert [int.from_bytes(r, "little") for r in RecordLog.read(path, 8)] == [1, 2, 3]
    assert path.stat().st_size == size  # reading alone changes nothing
    assert "ignoring an incomplete last record (5 bytes)" in caplog.text

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores"):
        store = JobdirSeenStore(path)
    assert [r.name for r in caplog.records] == ["scrapy_urlunify.stores"]
    assert (
        str(path) in caplog.text and "truncated an incomplete last record (5 bytes)" in caplog.text
    )
    assert path.stat().st_size == HEADER + 24
    assert len(store) == 3 and 4 not in store
    assert store.add(4)  # appends line up again after the cut
    store.close()
    assert [int.from_bytes(r, "little") for r in RecordLog.read(path, 8)] == [1, 2, 3, 4]


def test_torn_variable_record_is_ignored_then_truncated(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "sig"
    with JobdirSignatureStore(path) as store:
        store.get_or_set(b"a", "https://site.test/a")
        store.get_or_set(b"b", "https://site.test/b")
    intact = path.stat().st_size
    with VarRecordLog(tmp_path / "scratch") as scratch:  # a real record, to cut in half
        scratch.append(b"\x01\x00\x00\x00c" + b"https://site.test/c")
    whole = (tmp_path / "scratch").read_bytes()[HEADER:]
    for cut in (3, 8, len(whole) - 1):  # inside the frame header, at its end, in the payload
        with open(path, "ab") as f:
            f.write(whole[:cut])
        assert len(list(VarRecordLog.read(path))) == 2
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores"):
            with JobdirSignatureStore(path) as store:
                assert len(store) == 2
                assert store.get_or_set(b"a", "x") == "https://site.test/a"
        assert f"truncated an incomplete last record ({cut} bytes)" in caplog.text
        assert path.stat().st_size == intact
    with JobdirSignatureStore(path) as store:
        assert store.get_or_set(b"c", "https://site.test/c") is None
    with JobdirSignatureStore(path) as store:
        assert store.get_or_set(b"c", "x") == "https://site.test/c" and len(store) == 3


def test_torn_header_is_an_empty_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "seen"
    path.write_bytes(log_module.MAGIC[:5])  # killed while creating the file
    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores"):
        with JobdirSeenStore(path) as store:
            assert len(store) == 0
            store.add(9)
    assert "incomplete header" in caplog.text
    with JobdirSeenStore(path) as store:
        assert 9 in store


def test_empty_file_is_an_empty_log(tmp_path: Path) -> None:
    path = tmp_path / "seen"
    path.touch()
    with JobdirSeenStore(path) as store:
        assert len(store) == 0
    assert path.stat().st_size == HEADER


# --- wrong files -------------------------------------------------------------------


def _header(
    kind: int = 1, size: int = 8, version: int = 1, magic: bytes = log_module.MAGIC
) -> bytes:
    return struct.pack("<8sHBxI", magic, version, kind, size)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00",
            "not a scrapy_urlunify record log",
        ),
        (b"\x00\x00\x00\x00\x00\x00\x00\x00" * 4, "not a scrapy_urlunify record log"),
        (b"hi\n", "not a scrapy_urlunify record log"),
        (_header(version=2), "format version 2; this code reads version 1"),
        (_header(kind=2, size=0), "holds variable-length records, expected fixed-size records"),
        (_header(kind=7), "unknown kind 7"),
        (_header(size=20), "holds 20-byte records, expected 8-byte records"),
    ],
)
def test_foreign_or_mismatched_file_raises(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "requests.seen"
    path.write_bytes(content)
    with pytest.raises(StoreError) as info:
        JobdirSeenStore(path)
    assert str(path) in str(info.value) and message in str(info.value)
    with pytest.raises(StoreError, match="requests.seen"):
        list(RecordLog.read(path, 8))
    assert path.read_bytes() == content  # never "repaired" into something else


def test_signature_log_opened_as_seen_log_and_back(tmp_path: Path) -> None:
    with JobdirSignatureStore(tmp_path / "sig"), JobdirSeenStore(tmp_path / "seen"):
        pass
    with pytest.raises(StoreError, match="expected fixed-size"):
        JobdirSeenStore(tmp_path / "sig")
    with pytest.raises(StoreError, match="expected variable-length"):
        JobdirSignatureStore(tmp_path / "seen")


def test_corruption_before_the_tail_raises(tmp_path: Path) -> None:
    path = tmp_path / "sig"
    with JobdirSignatureStore(path) as store:
        store.get_or_set(b"a", "https://site.test/a")
        store.get_or_set(b"b", "https://site.test/b")
    data = bytearray(path.read_bytes())
    data[HEADER + 8 + 6] ^= 0x20  # a bit flip inside the first payload
    path.write_bytes(bytes(data))
    with pytest.raises(
        StoreError,
        match=rf"sig: corrupted record log: record at offset {HEADER} fails its checksum",
    ):
        JobdirSignatureStore(path)
    assert path.read_bytes() == data  # acknowledged data is not silently dropped


def test_at_most_10_bytes_per_member_at_every_size() -> None:
    # sorted buckets of 256-512 members, each array 1/16 over its length at most: ~8.6 bytes
    s = FingerprintSet()
    for k, key in enumerate(random_keys(150_000, seed=4), 1):
        s.add(key)
        if k >= 1000 and k % 997 == 0:
            assert s.nbytes / len(s) <= 10, k


def test_members_near_both_ends_of_the_range() -> None:
    keys = [MAX - i for i in range(3000)] + [i << 50 for i in range(1, 300)]
    s = FingerprintSet()
    for key in keys:
        assert s.add(key)
    assert list(s) == sorted(keys)  # members in order, none lost in the last bucket
    assert all(key in s for key in keys) and MAX - 3000 not in s and not s.add(MAX)


def _two_records(path: Path) -> int:
    with JobdirSignatureStore(path) as store:
        store.get_or_set(b"a", "https://site.test/a")
        store.get_or_set(b"b", "https://site.test/b")
    return path.stat().st_size


def test_a_zero_filled_tail_is_cut_off_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Blocks a power loss left allocated but never written: zeros after the last record."""
    path = tmp_path / "sig"
    intact = _two_records(path)
    with open(path, "ab") as f:
        f.write(b"\0" * 3 * 4096)
    with caplog.at_level(logging.WARNING, logger="scrapy_urlunify.stores"):
        with JobdirSignatureStore(path) as store:
            assert len(store) == 2
            assert store.get_or_set(b"c", "https://site.test/c") is None
    assert (
        f"truncated an incomplete last record ({3 * 4096} bytes) at offset {intact}" in caplog.text
    )
    with JobdirSignatureStore(path) as store:
        assert len(store) == 3 and store.get_or_set(b"c", "x") == "https://site.test/c"


@pytest.mark.parametrize("block", ["zeros", "garbage claiming past the end"])
def test_a_damaged_block_among_intact_records_raises_naming_the_offset(
    tmp_path: Path, block: str
) -> None:
    """Neither is what a crash leaves: the records after the block were acknowledged. Damage whose
    length field points past the end of the file must not pass for a torn tail (and be cut off
    with every record after it)."""
    path = tmp_path / "sig"
    with JobdirSignatureStore(path) as store:
        for i in range(20):
            store.get_or_set(b"k%d" % i, f"https://site.test/{i}")
    data = bytearray(path.read_bytes())
    at = HEADER
    for _ in range(5):  # the start of the sixth record: its frame is what the damage hits
        at += 8 + struct.unpack_from("<I", data, at)[0]
    if block == "zeros":
        data[at : at + 64] = bytes(64)
    else:
        data[at : at + 64] = struct.pack("<I", 1 << 20) + bytes(range(60))  # 1 MiB > the whole file
    path.write_bytes(bytes(data))
    with pytest.raises(
        StoreError, match=r"sig: corrupted record log: record at offset \d+ "
    ) as info:
        JobdirSignatureStore(path)
    offset = int(str(info.value).split("record at offset ")[1].split()[0])
    assert HEADER <= offset <= at
    assert path.read_bytes() == data  # nothing cut off
