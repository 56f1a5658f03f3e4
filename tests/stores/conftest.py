"""What the Redis store tests share: a client of the session's redis-server, as a store is given one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from redis_server import RedisServer

from scrapy_urlunify.stores._redis_connection import connect


@pytest.fixture
def client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    c = connect(redis_server.url, timeout=2)
    yield c
    c.close()
