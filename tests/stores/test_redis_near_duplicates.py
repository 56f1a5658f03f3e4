"""The scope's Redis list of near-duplicate page records, shared live by its processes
(stores/_redis_near_duplicates.py) against a real redis-server: each exchange reads what the
other processes appended since the last one, never this process's own records, and a record
pushed twice by a retried exchange is harmless."""

from __future__ import annotations

import pytest
import redis
import wikisite
from lxml import html
from redis import exceptions as rex
from redis_server import RedisServer

from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages
from scrapy_urlunify.stores._redis_connection import PIPELINE_CHUNK
from scrapy_urlunify.stores._redis_near_duplicates import RedisNearDuplicateLog

pytestmark = pytest.mark.redis

KEY = "urlunify:s:signatures:near"


class LosingPipeline(redis.client.Pipeline):
    """A MULTI/EXEC that runs on the server and then loses its reply (the connection drops), while armed."""

    lose = False

    def execute(self, raise_on_error: bool = True):  # type: ignore[no-untyped-def]
        replies = super().execute(raise_on_error)
        if LosingPipeline.lose:
            LosingPipeline.lose = False
            raise rex.ConnectionError("Connection reset by peer")
        return replies


class LosingClient(redis.Redis):
    def pipeline(self, transaction: bool = True, shard_hint: object = None) -> LosingPipeline:
        return LosingPipeline(
            self.connection_pool, self.response_callbacks, transaction, shard_hint
        )


def test_each_exchange_reads_the_others_records_once_and_never_its_own(client: redis.Redis) -> None:
    a, b = RedisNearDuplicateLog(client, KEY), RedisNearDuplicateLog(client, KEY)
    assert a.exchange([]) == []  # both open on an empty list
    assert b.exchange([]) == []
    assert a.exchange([b"a1", b"a2"]) == []
    assert b.exchange([b"b1"]) == [b"a1", b"a2"]
    assert a.exchange([]) == [b"b1"]  # a read alone (a process with nothing to write)
    assert a.exchange([b"a3"]) == []
    assert b.exchange([]) == [b"a3"]
    assert b.exchange([]) == []
    assert a.exchange([]) == []
    # a process opening later reads everything, then only what comes after
    c = RedisNearDuplicateLog(client, KEY)
    assert c.exchange([]) == [b"a1", b"a2", b"b1", b"a3"]
    assert c.exchange([b"c1"]) == []
    assert a.exchange([]) == [b"c1"]
    assert a.offset == b.offset + 1 == c.offset == client.llen(KEY) == 5


def test_a_process_far_behind_reads_every_chunk_in_order(client: redis.Redis) -> None:
    a, b = RedisNearDuplicateLog(client, KEY), RedisNearDuplicateLog(client, KEY)
    a.exchange([])
    many = [b"r%d" % i for i in range(2 * PIPELINE_CHUNK + 10)]
    b.append(many)  # a close's write: appended, nothing read
    assert a.exchange([b"mine"]) == many
    assert b.exchange([]) == [*many, b"mine"]  # b's offset did not move with its append
    assert a.exchange([]) == []


def test_a_list_shorter_than_the_offset_is_read_again_from_its_start(client: redis.Redis) -> None:
    a, b = RedisNearDuplicateLog(client, KEY), RedisNearDuplicateLog(client, KEY)
    a.exchange([b"a1", b"a2", b"a3"])
    b.clear()  # or a failover that lost the master's last writes
    b.exchange([b"b1"])
    assert a.exchange([]) == [b"b1"]


def test_a_retried_exchange_pushes_twice_harmlessly(
    redis_server: RedisServer, client: redis.Redis
) -> None:
    """The reply of a's exchange is lost after it ran: the retry pushes a's record again, still
    reads b's record once and none of a's, and b's index, reading a's record twice, holds it once."""
    a = RedisNearDuplicateLog(LosingClient(port=redis_server.port), KEY)
    b = RedisNearDuplicateLog(client, KEY)
    a.exchange([])
    pages_a = NearDuplicatePages(1 << 20, 7, 7)
    pages_a.pending = []
    pages_a.check("s|w", html.fromstring(wikisite.wiki_page("A1")), "s|w/A1", b"1" * 16)
    records = pages_a.pending
    assert len(records) == 2  # its fingerprint, and its digest up to numbers
    b.exchange([b"b1"])
    LosingPipeline.lose = True
    assert a.exchange(records) == [b"b1"]
    assert a.retries == 1
    assert client.lrange(KEY, 0, -1) == [b"b1", *records, *records]
    assert a.offset == 5
    assert a.exchange([]) == []
    pages_b = NearDuplicatePages(1 << 20, 7, 7)
    assert pages_b.replay(b.exchange([])) == 4
    assert len(pages_b) == 1  # the same key and fingerprint again add nothing
    _, found = pages_b.check(
        "s|w",
        html.fromstring(wikisite.wiki_page("A1", banner="<p>Printable version</p>")),
        "s|w/A1?print=1",
        b"2" * 16,
    )
    assert found is not None
    assert (found.of, found.distance) == ("s|w/A1", 0)
