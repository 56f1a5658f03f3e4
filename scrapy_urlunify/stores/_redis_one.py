"""The one-key calls of a Redis seen set: what ``RedisSeenStore.add`` sends for a request checked
alone (a start request, a redirect, a request another middleware made), one
:data:`~.redis_buckets.ONE_SCRIPT` call each, and how: its keys and its one argument, built
from a plan kept per shard and generation count, and its send, on a plain client straight on a
pooled connection. Why a lost reply stays exact: ``docs/stores.md``, "A reply lost in flight".
"""

from __future__ import annotations

from collections.abc import Callable
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


class OneKeyCalls:
    """The one-key calls of a store whose owner is ``owner`` on ``client``;
    ``count_round_trips(n)`` hears of the script loads they send."""

    def __init__(self, client: Any, owner: str, count_round_trips: Callable[[int], None]) -> None:
        self.client = client
        self.owner = owner
        self._count = count_round_trips
        self.script = client.register_script(ONE_SCRIPT)
        self.loaded = False
        # sent on a pooled connection on a plain client of a redis-py whose pool hands one out
        # for no command name (5.3+); through execute_command on any other (a subclass may wrap
        # it)
        self.plain = type(client) is redis.Redis and client.connection is None and NO_NAME_POOL
        #: every attempt looks for its stamp when redis-py may send one again unseen
        self.always_check = not self.plain and resends(client)
        #: (shard, generations) -> its plan
        self.plans: dict[tuple[int, int], OnePlan] = {}

    def args(
        self, layout: Layout, shard: int, generations: int, key: int, call_id: bytes, refresh: bool
    ) -> tuple[list[bytes], bytes, bytes]:
        """The KEYS of the call adding ``key``, and its one argument before and after the digit
        that says whether to look for a stamp."""
        plan = self.plans.get((shard, generations))
        if plan is None:
            plan = self.plans[shard, generations] = self._plan(layout, shard, generations)
        names, namers, tail = plan
        keys = names + [prefix + b"%d" % ((key & mask) >> shift) for prefix, mask, shift in namers]
        head = b"%d %s " % (key & layout.member_mask, call_id)
        return keys, head, (b"1 " if refresh else b"0 ") + tail

    def _plan(self, layout: Layout, shard: int, generations: int) -> OnePlan:
        names = [
            layout.generations_key(shard).encode(),
            layout.count_key(shard).encode(),
            layout.owners_key(shard).encode(),
        ]
        namers = [(p.encode(), mask, shift) for p, mask, shift in layout.namers(shard, generations)]
        tail = b"%d %d %s" % (layout.opens_at(generations), layout.limit, self.owner.encode())
        return names, namers, tail

    def attempt(self, keys: list[bytes], head: bytes, tail: bytes, doubt: list[bool]) -> int:
        """One attempt of a call: its reply. ``doubt[0]``: an earlier attempt may have run
        without its reply arriving, so this one answers from that attempt's stamp if it left
        one; set when this one fails so."""
        try:
            return int(self.eval(keys, [head + (b"1" if doubt[0] else b"0") + tail]))
        except Exception:  # (only a transient error is retried: a lost reply, a timeout)
            doubt[0] = True
            raise

    def eval(self, keys: list[bytes], args: list[Any]) -> Any:
        if is_cluster(self.client):
            return run_scripts(self.client, [(self.script, keys, args)])[0]
        send = self._direct if self.plain else self.client.execute_command
        if not self.loaded:  # once per store, as the store loads SHARD_SCRIPT
            self._count(1)
            self.client.script_load(ONE_SCRIPT)
            self.loaded = True
        sha = self.script.sha
        try:
            return send("EVALSHA", sha, len(keys), *keys, *args)
        except rex.NoScriptError:  # a restarted or flushed server: the call did not run
            self._count(2)
            self.client.script_load(ONE_SCRIPT)
            return send("EVALSHA", sha, len(keys), *keys, *args)

    def _direct(self, *command: Any) -> Any:
        """``command`` on a connection of the client's pool, without redis-py's
        ``execute_command`` around it (its retry wrapper, its metrics): a third of what a
        one-key call costs the crawl's process. Retries are the store's."""
        pool = self.client.connection_pool
        conn = pool.get_connection()
        try:
            conn.send_packed_command(conn.pack_command(*command))
            return conn.read_response()
        except rex.ResponseError:  # an error reply: the connection is in step
            raise
        except BaseException:  # cut off mid-command: its next user must not read this reply
            conn.disconnect()
            raise
        finally:
            pool.release(conn)
