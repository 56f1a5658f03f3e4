"""The one-key calls of a Redis seen set: what ``RedisSeenStore.add`` sends for a request checked
alone (a start request, a redirect, a request another middleware made), one
:data:`~.redis_buckets.ONE_SCRIPT` call each, and how: its keys and arguments, built from a plan
kept per shard and generation count, and its send: on a plain client, its bytes written here and
sent on a connection of the client's pool that the store keeps for these calls. Why a lost
reply stays exact: ``docs/stores.md``, "A reply lost in flight".
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import redis
from redis import exceptions as rex

from scrapy_urlunify.stores._redis_buckets import ONE_SCRIPT, Layout
from scrapy_urlunify.stores._redis_connection import is_cluster, resends, run_scripts

#: What a call on a shard of known generations needs besides its key: the generation count's,
#: counter's and owners hash's names; how the key names its bucket in each generation
#: (``(prefix, mask, shift)``, as :meth:`Layout.namers`, the prefix encoded); and the end of its
#: argument (the count that opens a generation, the intset limit, the owner), encoded once.
OnePlan = tuple[list[bytes], list[tuple[bytes, int, int]], bytes]

#: redis-py 5.3+: ``ConnectionPool.get_connection()`` takes no command name (5.0-5.2 need one).
NO_NAME_POOL = tuple(int(p) for p in redis.__version__.split(".")[:2] if p.isdigit()) >= (5, 3)
#: The fewest connections a pool must allow for a store to keep one of them for its one-key
#: calls: a pool limited below it is a deliberate limit (redis-py's default is 100), and the
#: store takes a connection from it for each call instead.
KEEP_MIN_CONNECTIONS = 8
#: Seconds a kept connection may sit idle before a call checks that the server did not close it
#: meanwhile (``can_read``: three system calls, which the pool makes at every call).
IDLE_CHECK = 1.0


class OneKeyCalls:
    """The one-key calls of a store whose owner is ``owner`` on ``client``;
    ``count_round_trips(n)`` hears of the script loads they send."""

    def __init__(self, client: Any, owner: str, count_round_trips: Callable[[int], None]) -> None:
        self.client = client
        self.owner = owner
        self._count = count_round_trips
        self.script = client.register_script(ONE_SCRIPT)
        self.sha = self.script.sha.encode()
        self.loaded = False
        # sent on a pooled connection on a plain client of a redis-py whose pool hands one out
        # for no command name (5.3+); through execute_command on any other (a subclass may wrap
        # it)
        self.plain = type(client) is redis.Redis and client.connection is None and NO_NAME_POOL
        pool = client.connection_pool if self.plain else None
        #: one connection kept for these calls (:meth:`_connection`), of an unwrapped pool
        self.keeps = (
            type(pool) is redis.ConnectionPool
            and getattr(pool, "max_connections", 0) >= KEEP_MIN_CONNECTIONS
        )
        self._kept: Any = None
        self._keeper = (0, 0)  # the process and thread that keep it
        self._used = 0.0  # when it last sent a call
        #: every attempt looks for its stamp when redis-py may send one again unseen
        self.always_check = not self.plain and resends(client)
        #: (shard, generations) -> its plan
        self.plans: dict[tuple[int, int], OnePlan] = {}

    def args(
        self, layout: Layout, shard: int, generations: int, key: int, call_id: bytes
    ) -> tuple[list[bytes], bytes, bytes]:
        """The KEYS of the call adding ``key``, its member, and its second argument after the
        two digits that say whether to look for a stamp and to push its expiry back."""
        plan = self.plans.get((shard, generations))
        if plan is None:
            plan = self.plans[shard, generations] = self._plan(layout, shard, generations)
        names, namers, tail = plan
        keys = names + [prefix + b"%d" % ((key & mask) >> shift) for prefix, mask, shift in namers]
        return keys, b"%d" % (key & layout.member_mask), b" %s %s" % (call_id, tail)

    def _plan(self, layout: Layout, shard: int, generations: int) -> OnePlan:
        names = [
            layout.generations_key(shard).encode(),
            layout.count_key(shard).encode(),
            layout.owners_key(shard).encode(),
        ]
        namers = [(p.encode(), mask, shift) for p, mask, shift in layout.namers(shard, generations)]
        tail = b"%d %d %s" % (layout.opens_at(generations), layout.limit, self.owner.encode())
        return names, namers, tail

    def attempt(
        self, keys: list[bytes], member: bytes, rest: bytes, refresh: bool, doubt: list[bool]
    ) -> int:
        """One attempt of a call: its reply. ``doubt[0]``: an earlier attempt may have run
        without its reply arriving, so this one answers from that attempt's stamp if it left
        one; set when this one fails so."""
        flags = (b"1" if doubt[0] else b"0") + (b"1" if refresh else b"0")
        try:
            return int(self.eval(keys, [member, flags + rest]))
        except Exception:  # (only a transient error is retried: a lost reply, a timeout)
            doubt[0] = True
            raise

    def eval(self, keys: list[bytes], args: list[bytes]) -> Any:
        if is_cluster(self.client):
            return run_scripts(self.client, [(self.script, keys, args)])[0]
        if not self.loaded:  # once per store, as the store loads SHARD_SCRIPT
            self._count(1)
            self.client.script_load(ONE_SCRIPT)
            self.loaded = True
        sha = self.script.sha
        if self.plain:
            packed = resp([b"EVALSHA", self.sha, b"%d" % len(keys), *keys, *args])
            send: Callable[[], Any] = partial(self._direct, packed)
        else:
            send = partial(self.client.execute_command, "EVALSHA", sha, len(keys), *keys, *args)
        try:
            return send()
        except rex.NoScriptError:  # a restarted or flushed server: the call did not run
            self._count(2)
            self.client.script_load(ONE_SCRIPT)
            return send()

    def _direct(self, packed: bytes) -> Any:
        """The call ``packed`` on a connection of the client's pool, without redis-py's
        ``execute_command`` around it (its retry wrapper, its metrics): a third of what a
        one-key call costs the crawl's process; and on the connection this store keeps
        (:meth:`_connection`) rather than one taken from the pool and handed back each time:
        another fifth. Retries are the store's."""
        conn, kept = self._connection()
        try:
            conn.send_packed_command([packed])  # (a list of chunks: bytes alone would be iterated)
            return conn.read_response()
        except rex.ResponseError:  # an error reply: the connection is in step
            raise
        except BaseException:  # cut off mid-command: its next user must not read this reply
            conn.disconnect()
            raise
        finally:
            if not kept:
                self.client.connection_pool.release(conn)

    def _connection(self) -> tuple[Any, bool]:
        """A connection for one call, and whether it is the one this store keeps: taken from
        the pool at the first call of the process and thread that keep it (any other gets one
        from the pool for the call, as redis-py does: a connection is not shared across threads,
        nor inherited by a forked process), and looked at before a call when it was idle for
        :data:`IDLE_CHECK` seconds, as the pool looks at every connection it hands out: one
        the server closed meanwhile, or holding data nobody asked for, is connected again, so
        that the call goes out whole rather than failing and being retried."""
        pool = self.client.connection_pool
        if not self.keeps:
            return pool.get_connection(), False
        conn = self._kept
        now = time.monotonic()
        if conn is None or self._keeper != (os.getpid(), threading.get_ident()):
            if conn is not None and self._keeper[0] == os.getpid():
                return pool.get_connection(), False  # another thread: the keeper's is its own
            self._kept = conn = pool.get_connection()  # (a forked process's pool starts afresh)
            self._keeper = (os.getpid(), threading.get_ident())
        elif now - self._used >= IDLE_CHECK:
            try:
                if conn.can_read():
                    conn.disconnect()
            except (rex.ConnectionError, rex.TimeoutError, OSError):
                conn.disconnect()  # (send_packed_command connects again)
        self._used = now
        return conn, True

    def close(self) -> None:
        """Hand the kept connection back to the pool (in the process that took it)."""
        conn, self._kept = self._kept, None
        if conn is not None and self._keeper[0] == os.getpid():
            self.client.connection_pool.release(conn)


def resp(parts: list[bytes]) -> bytes:
    """``parts`` as one command in Redis's protocol (RESP: an array of bulk strings), as
    redis-py's ``pack_command`` writes it for bytes arguments at less than half its cost."""
    return b"*%d\r\n" % len(parts) + b"".join([b"$%d\r\n%s\r\n" % (len(p), p) for p in parts])
