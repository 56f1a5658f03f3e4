"""A shared priority queue in Redis whose popped entries stay in flight, owned by their worker,
until it acknowledges them: a worker that dies takes nothing with it.

The reliable-queue pattern of Redis's documentation (``LMOVE`` into an in-flight list), kept on
a sorted set so priorities survive, with one Lua script per step (no other client's command
runs in between):

* ``<key>`` -- ZSET, the queue: score ``-priority`` (lowest first, as scrapy-redis's
  ``PriorityQueue``), member ``id (16 hex digits) | flag (1 byte) | payload``. Ids come from a
  counter (``<key>:seq``), so entries of one priority leave in the order they came. The flag is
  ``N``, or ``R`` for an entry given back by a worker that died or closed with it in flight (its
  page was perhaps half handled: :meth:`ReliableQueue.pop` says so);
* ``<key>:inflight:<worker>`` -- HASH id -> ``score|member``: what the worker popped and did not
  acknowledge yet;
* ``<key>:workers`` -- ZSET worker -> the time (ms, Redis's clock) its lease ends. A pop and a
  heartbeat renew it; a worker whose lease ended is dead, and whichever worker notices first
  moves its in-flight entries back to the queue (one script: two workers never both do);
* ``<key>:pushed`` -- SET of the dedup keys of every entry ever pushed. A page handled again
  after a death yields links that the dead worker had recorded as seen but perhaps not pushed;
  :meth:`ReliableQueue.push` with ``check=True`` pushes such a link only if no one ever did.
  It costs about what the seen set costs (one short member per request);
* ``<key>:given_back`` -- how many entries were ever given back (a counter, for operators and
  tests: each is a request that may be fetched twice);
* ``<key>:applied`` -- HASH worker -> the number of its last push, ``<worker>:pop`` -> the number
  and id of its last pop: a push or pop sent again after a lost reply (the store retries through
  an outage, :class:`~.redis_connection.RedisStore`) is not applied twice, and a pop sent again
  returns the entry the first one took (else it would stay in flight, unknown to its worker).

Durable across a failover: Redis replicates asynchronously, so a push the master acknowledged
may be missing on the replica promoted when it dies, and that request would be lost without a
word (the seen set, elsewhere, holds its key). With ``replicas="auto"`` each push is followed, in
the same pipeline and on the same connection to the queue's master, by ``WAIT n`` for the ``n``
replicas the master has (``ROLE``, counted again at each heartbeat; 0 on a server without
replicas: no ``WAIT``). Replication is in order, so a push on the replicas carries every earlier
write of the queue there too (the pop of the request whose link it is). When fewer replicas
acknowledge within ``wait_ms`` the push is sent again (numbered: applied once) until
``unavailable_timeout``, then :class:`~.redis_connection.RedisUnavailable` names the cause.

No Scrapy import: the Scrapy side (``scrapy_urlunify.integration.queue._redis_queue``) encodes
requests and decides when one is done. A Redis error is raised to the caller as redis-py raises
it. The scripts build the in-flight keys of other workers from ``<key>``, so every key of the
queue must be on one slot of a Redis Cluster: with a cluster client ``<key>`` is hash-tagged
(``{<key>}``, unless it holds a tag already: :func:`~.redis_connection.store_key`), and the other
keys, made by appending to it, share its tag.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from redis import exceptions as rex

from scrapy_urlunify.stores._redis_connection import RedisStore, is_cluster

logger = logging.getLogger(__name__)

_NOW = "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

# Give back every in-flight entry of worker w (flag R), forget the worker; n counts them.
_GIVE_BACK = """
local function give_back(queue, workers, w)
  local h = queue .. ':inflight:' .. w
  local n = 0
  for _, e in ipairs(redis.call('HVALS', h)) do
    local sep = string.find(e, '|', 1, true)
    local member = string.sub(e, sep + 1)
    redis.call('ZADD', queue, string.sub(e, 1, sep - 1), string.sub(member, 1, 16) .. 'R' .. string.sub(member, 18))
    n = n + 1
  end
  redis.call('DEL', h)
  redis.call('ZREM', workers, w)
  redis.call('HDEL', queue .. ':applied', w, w .. ':pop')
  if n > 0 then redis.call('INCRBY', queue .. ':given_back', n) end
  return n
end
"""

# KEYS: queue, seq, pushed, inflight of the pusher, applied. ARGV: payload, score, dedup key,
# mode ('check': only if never pushed; 'record'), id this entry replaces in flight ('' none),
# worker, number of this push. A push sent again is not applied again (2), but still writes, so
# the WAIT after it waits for this connection's writes.
_PUSH = """
local last = tonumber(redis.call('HGET', KEYS[5], ARGV[6]) or '0')
redis.call('HSET', KEYS[5], ARGV[6], math.max(last, tonumber(ARGV[7])))
if last >= tonumber(ARGV[7]) then return 2 end
if ARGV[4] == 'check' then
  if redis.call('SADD', KEYS[3], ARGV[3]) == 0 then
    if ARGV[5] ~= '' then redis.call('HDEL', KEYS[4], ARGV[5]) end
    return 0
  end
elseif ARGV[3] ~= '' then
  redis.call('SADD', KEYS[3], ARGV[3])
end
local id = string.format('%016x', redis.call('INCR', KEYS[2]))
redis.call('ZADD', KEYS[1], ARGV[2], id .. 'N' .. ARGV[1])
if ARGV[5] ~= '' then redis.call('HDEL', KEYS[4], ARGV[5]) end
return 1
"""

# KEYS: queue, workers, inflight of the worker, applied. ARGV: worker, lease (ms), number of
# this pop. A pop sent again returns what the first one took (if still in flight).
_POP = (
    _NOW
    + """
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('HGET', KEYS[4], ARGV[1] .. ':pop')
if last then
  local sep = string.find(last, '|', 1, true)
  if tonumber(string.sub(last, 1, sep - 1)) >= tonumber(ARGV[3]) then
    local e = redis.call('HGET', KEYS[3], string.sub(last, sep + 1))
    if not e then return false end
    return string.sub(e, string.find(e, '|', 1, true) + 1)
  end
end
local top = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #top == 0 then return false end
redis.call('ZREM', KEYS[1], top[1])
redis.call('HSET', KEYS[3], string.sub(top[1], 1, 16), top[2] .. '|' .. top[1])
redis.call('HSET', KEYS[4], ARGV[1] .. ':pop', ARGV[3] .. '|' .. string.sub(top[1], 1, 16))
return top[1]
"""
)

# KEYS: queue, workers. ARGV: worker ('' none), lease (ms). Renews the worker's lease and gives
# back the entries of (at most 100) dead workers; returns how many.
_BEAT = (
    _NOW
    + _GIVE_BACK
    + """
if ARGV[1] ~= '' then redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1]) end
local n = 0
for _, w in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)) do
  n = n + give_back(KEYS[1], KEYS[2], w)
end
return n
"""
)

# KEYS: queue, workers. ARGV: worker.
_LEAVE = _GIVE_BACK + "return give_back(KEYS[1], KEYS[2], ARGV[1])\n"

# KEYS: queue, workers. Entries in flight, fleet-wide.
_IN_FLIGHT = """
local n = 0
for _, w in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  n = n + redis.call('HLEN', KEYS[1] .. ':inflight:' .. w)
end
return n
"""

# KEYS: queue, seq, pushed, workers, given_back, applied. Every key of the queue.
_CLEAR = """
for _, w in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  redis.call('DEL', KEYS[1] .. ':inflight:' .. w)
end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
"""

#: ``replicas``: wait for the replicas the queue's master has, or never
REPLICAS = ("auto", "off")


class NotReplicated(rex.TimeoutError):
    """Fewer replicas than the queue's master has acknowledged a push within the WAIT timeout: a
    failover now could lose it. Transient (a replica catching up, restarting): sent again."""


class Popped(NamedTuple):
    """An entry taken from the queue, in flight under the worker that took it."""

    id: str
    payload: bytes
    #: given back by a worker that died (or closed) with it in flight
    given_back: bool


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _connected_replicas(role: Any) -> int:
    """The replicas in a ``ROLE`` reply of a master (0 from a replica)."""
    return len(role[2]) if role and _text(role[0]) == "master" and len(role) > 2 else 0


def _cluster_replicas(nodes: Any) -> int:
    """The replicas of the node that answered ``CLUSTER NODES`` (raw, or parsed by redis-py)."""
    if isinstance(nodes, dict):
        rows = [
            (_text(n.get("node_id")), _text(n.get("flags")), _text(n.get("master_id")))
            for n in nodes.values()
        ]
    else:
        rows = [
            (f[0], f[2], f[3])
            for f in (line.split() for line in _text(nodes).splitlines())
            if len(f) > 3
        ]
    me = next((node_id for node_id, flags, _ in rows if "myself" in flags.split(",")), None)
    return sum(1 for _, _, master in rows if me is not None and master == me)


class ReliableQueue(RedisStore):
    """The queue ``key`` on ``client`` (a ``redis.Redis`` or ``RedisCluster``), seen from the
    worker ``worker``.

    ``lease`` (seconds): how long the worker counts as alive after its last pop or
    :meth:`heartbeat`; it must beat more often than that (a third of it is safe).
    ``unavailable_timeout``: how long a push, pop or acknowledgement waits through an outage or
    for replicas (:class:`~.redis_connection.RedisStore`). ``replicas``: ``"auto"`` (a push is
    done once every replica of the queue's master has it) or ``"off"``; ``wait_ms``: each WAIT's
    timeout."""

    def __init__(
        self,
        client: Any,
        key: str,
        worker: str,
        *,
        lease: float = 30.0,
        unavailable_timeout: float = 60.0,
        replicas: str = "auto",
        wait_ms: int = 1000,
    ) -> None:
        if lease <= 0:
            raise ValueError(f"lease must be positive, not {lease!r}")
        if replicas not in REPLICAS:
            raise ValueError(f"replicas must be one of {REPLICAS}, not {replicas!r}")
        #: on a cluster, hash-tagged: every key of the queue on its slot
        super().__init__(client, key, unavailable_timeout=unavailable_timeout)
        key = self.key
        self.worker = worker
        self.lease_ms = int(lease * 1000)
        self.replicas = replicas
        self.wait_ms = int(wait_ms)
        #: replicas each push waits for (the master's, counted at start and at each heartbeat)
        self.wait_for = 0
        self.seq_key = f"{key}:seq"
        self.pushed_key = f"{key}:pushed"
        self.workers_key = f"{key}:workers"
        self.given_back_key = f"{key}:given_back"
        self.applied_key = f"{key}:applied"
        self.inflight_key = f"{key}:inflight:{worker}"
        self._push = client.register_script(_PUSH)
        self._pop = client.register_script(_POP)
        self._beat = client.register_script(_BEAT)
        self._leave = client.register_script(_LEAVE)
        self._in_flight = client.register_script(_IN_FLIGHT)
        self._clear = client.register_script(_CLEAR)
        self._pushes = 0
        self._pops = 0
        if replicas == "auto":
            self.count_replicas()

    # --- durability -------------------------------------------------------------------------

    def _node(self) -> Any:
        """The client of the server holding the queue: on a cluster, of the master of its slot
        (in the client's map), so a WAIT goes on the connection of the writes it waits for."""
        client: Any = self.client
        if is_cluster(client):
            return client.get_redis_connection(client.get_node_from_key(self.key))
        return client

    def _remap(self) -> None:
        """After a connection error or MOVED on a cluster: read the slot map again (the master
        may have failed over)."""
        client: Any = self.client
        if is_cluster(client):
            # no node answers yet: the next try maps again
            with contextlib.suppress(rex.RedisError, rex.RedisClusterException):
                client.nodes_manager.initialize()

    def count_replicas(self) -> int:
        """Read how many replicas the queue's master has: what a push waits for. On a cluster,
        every replica the cluster lists for it (``CLUSTER NODES``), connected or not: one cut off
        for a while may still be promoted, without what it missed. On one server, the replicas
        connected to it (``ROLE``)."""
        node = self._node()
        try:
            count = (
                _cluster_replicas(node.execute_command("CLUSTER NODES"))
                if is_cluster(self.client)
                else _connected_replicas(node.execute_command("ROLE"))
            )
        except (rex.RedisError, rex.RedisClusterException):
            return self.wait_for  # an outage, the command denied: keep the last count
        if count != self.wait_for:
            logger.info(
                "Queue %s: its master has %d replicas: a push waits for %s",
                self.key,
                count,
                "them" if count else "none",
            )
        self.wait_for = count
        return count

    def _script(self, script: Any, keys: list[Any], args: list[Any], durable: bool) -> Any:
        """One script call on the queue's server, followed (``durable``) by WAIT in the same
        pipeline; raises :class:`NotReplicated` when fewer replicas acknowledge than the master
        has."""
        wait_for = self.wait_for if durable else 0
        node = self._node()
        for _ in range(2):  # a NOSCRIPT (a master started or promoted since) loads it once
            pipe = node.pipeline(transaction=False)
            pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            if wait_for:
                pipe.execute_command("WAIT", wait_for, self.wait_ms)
            try:
                replies = pipe.execute(raise_on_error=False)
            except (rex.ConnectionError, rex.TimeoutError):
                self._remap()
                raise
            if isinstance(replies[0], rex.NoScriptError):
                node.script_load(script.script)
                continue
            break
        for reply in replies:
            if isinstance(reply, (rex.MovedError, rex.AskError)):
                self._remap()
                raise rex.TryAgainError(str(reply))
            if isinstance(reply, BaseException):
                raise reply
        if wait_for and int(replies[1]) < wait_for:
            acked = int(replies[1])
            if self.replicas == "auto" and self.count_replicas() <= acked:
                # the master has fewer replicas now (one left it, or this is a promoted replica
                # whose old master is down): no replica of it lacks the push
                logger.warning(
                    "Queue %s: its master has %d replicas now, not %d; %d acknowledged a push",
                    self.key,
                    self.wait_for,
                    wait_for,
                    acked,
                )
                return replies[0]
            raise NotReplicated(
                f"WAIT: {acked} of {wait_for} replicas of the queue's master acknowledged "
                f"a push within {self.wait_ms} ms (a failover now would lose it)"
            )
        return replies[0]

    def _run_script(
        self,
        what: str,
        script: Any,
        keys: list[Any],
        args: Callable[[], list[Any]],
        durable: bool = False,
    ) -> Any:
        return self._run(what, lambda: self._script(script, keys, args(), durable))

    # --- the queue --------------------------------------------------------------------------

    def push(
        self,
        payload: bytes,
        score: float,
        *,
        dedup: bytes = b"",
        check: bool = False,
        replaces: str = "",
    ) -> bool:
        """Queue ``payload``, recording ``dedup`` among the keys ever pushed; with ``check``,
        only if ``dedup`` was never pushed (False then). ``replaces``: the id of this worker's
        in-flight entry that this one takes the place of (a redirect, a retry), acknowledged in
        the same step. Returns once the replicas have it (``replicas="auto"``)."""
        if check and not dedup:
            raise ValueError("check=True needs a dedup key")
        self._pushes += 1
        keys = [self.key, self.seq_key, self.pushed_key, self.inflight_key, self.applied_key]
        args = [
            payload,
            repr(score),
            dedup,
            "check" if check else "record",
            replaces,
            self.worker,
            self._pushes,
        ]
        return bool(self._run_script("push", self._push, keys, lambda: args, durable=True))

    def pop(self) -> Popped | None:
        """Take the entry of the lowest score, in flight under this worker (lease renewed)."""
        self._pops += 1
        keys = [self.key, self.workers_key, self.inflight_key, self.applied_key]
        args = [self.worker, self.lease_ms, self._pops]
        member = self._run_script("pop", self._pop, keys, lambda: args)
        if member is None:
            return None
        member = bytes(member)
        return Popped(member[:16].decode("ascii"), member[17:], member[16:17] == b"R")

    def ack(self, entry_id: str) -> bool:
        """The entry is done: forget it (False if it was not in flight under this worker any
        more: given back already, so someone may handle it again)."""
        return bool(self._run("HDEL", lambda: self.client.hdel(self.inflight_key, entry_id)))

    def heartbeat(self) -> int:
        """Renew this worker's lease; give back the entries of dead workers (how many). Counts
        the master's replicas again (``replicas="auto"``)."""
        if self.replicas == "auto":
            self.count_replicas()
        return int(self._beat(keys=[self.key, self.workers_key], args=[self.worker, self.lease_ms]))

    def requeue_dead(self) -> int:
        """Give back the entries of dead workers, without renewing any lease (how many)."""
        return int(self._beat(keys=[self.key, self.workers_key], args=["", self.lease_ms]))

    def leave(self) -> int:
        """This worker stops: its entries still in flight go back to the queue (how many)."""
        return int(self._leave(keys=[self.key, self.workers_key], args=[self.worker]))

    def mine(self) -> int:
        """Entries in flight under this worker."""
        return int(self._run("HLEN", lambda: self.client.hlen(self.inflight_key)))

    def mine_ids(self) -> set[str]:
        """The ids of the entries in flight under this worker."""
        ids: list[Any] = self._run("HKEYS", lambda: self.client.hkeys(self.inflight_key))
        return {bytes(k).decode("ascii") for k in ids}

    def in_flight(self) -> int:
        """Entries in flight under any worker, dead or alive."""
        return int(
            self._run("in flight", lambda: self._in_flight(keys=[self.key, self.workers_key]))
        )

    def given_back(self) -> int:
        """How many entries were ever given back (by dead workers' peers, or at a close)."""
        return int(self.client.get(self.given_back_key) or 0)

    def __len__(self) -> int:
        """Entries waiting in the queue (not those in flight)."""
        return int(self._run("ZCARD", lambda: self.client.zcard(self.key)))

    def clear(self) -> None:
        """Delete the queue, what is in flight and the record of what was pushed."""
        self._clear(
            keys=[
                self.key,
                self.seq_key,
                self.pushed_key,
                self.workers_key,
                self.given_back_key,
                self.applied_key,
            ]
        )
