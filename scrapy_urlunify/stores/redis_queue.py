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
  tests: each is a request that may be fetched twice).

No Scrapy import: the Scrapy side (``scrapy_urlunify.integration.redis_queue``) encodes
requests and decides when one is done. A Redis error is raised to the caller as redis-py raises
it. The scripts build the in-flight keys of other workers from ``<key>``, so every key of the
queue must be on one slot of a Redis Cluster: with a cluster client ``<key>`` is hash-tagged
(``{<key>}``, unless it holds a tag already: :func:`~.redis_connection.store_key`), and the other
keys, made by appending to it, share its tag.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .redis_connection import store_key

__all__ = ["Popped", "ReliableQueue"]

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
  if n > 0 then redis.call('INCRBY', queue .. ':given_back', n) end
  return n
end
"""

# KEYS: queue, seq, pushed, inflight of the pusher. ARGV: payload, score, dedup key, mode
# ('check': only if never pushed; 'record'), id this entry replaces in flight ('' none).
_PUSH = """
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

# KEYS: queue, workers, inflight of the worker. ARGV: worker, lease (ms).
_POP = _NOW + """
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
local top = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #top == 0 then return false end
redis.call('ZREM', KEYS[1], top[1])
redis.call('HSET', KEYS[3], string.sub(top[1], 1, 16), top[2] .. '|' .. top[1])
return top[1]
"""

# KEYS: queue, workers. ARGV: worker ('' none), lease (ms). Renews the worker's lease and gives
# back the entries of (at most 100) dead workers; returns how many.
_BEAT = _NOW + _GIVE_BACK + """
if ARGV[1] ~= '' then redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1]) end
local n = 0
for _, w in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)) do
  n = n + give_back(KEYS[1], KEYS[2], w)
end
return n
"""

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

# KEYS: queue, seq, pushed, workers, given_back. Every key of the queue.
_CLEAR = """
for _, w in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  redis.call('DEL', KEYS[1] .. ':inflight:' .. w)
end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
"""


class Popped(NamedTuple):
    """An entry taken from the queue, in flight under the worker that took it."""

    id: str
    payload: bytes
    #: given back by a worker that died (or closed) with it in flight
    given_back: bool


class ReliableQueue:
    """The queue ``key`` on ``client`` (a ``redis.Redis``), seen from the worker ``worker``.

    ``lease`` (seconds): how long the worker counts as alive after its last pop or
    :meth:`heartbeat`; it must beat more often than that (a third of it is safe)."""

    def __init__(self, client: Any, key: str, worker: str, *, lease: float = 30.0) -> None:
        if lease <= 0:
            raise ValueError(f"lease must be positive, not {lease!r}")
        self.client = client
        #: on a cluster, hash-tagged: every key of the queue on its slot
        self.key = key = store_key(client, key)
        self.worker = worker
        self.lease_ms = int(lease * 1000)
        self.seq_key = f"{key}:seq"
        self.pushed_key = f"{key}:pushed"
        self.workers_key = f"{key}:workers"
        self.given_back_key = f"{key}:given_back"
        self.inflight_key = f"{key}:inflight:{worker}"
        self._push = client.register_script(_PUSH)
        self._pop = client.register_script(_POP)
        self._beat = client.register_script(_BEAT)
        self._leave = client.register_script(_LEAVE)
        self._in_flight = client.register_script(_IN_FLIGHT)
        self._clear = client.register_script(_CLEAR)

    def push(self, payload: bytes, score: float, *, dedup: bytes = b"", check: bool = False,
             replaces: str = "") -> bool:
        """Queue ``payload``, recording ``dedup`` among the keys ever pushed; with ``check``,
        only if ``dedup`` was never pushed (False then). ``replaces``: the id of this worker's
        in-flight entry that this one takes the place of (a redirect, a retry), acknowledged in
        the same step."""
        if check and not dedup:
            raise ValueError("check=True needs a dedup key")
        keys = [self.key, self.seq_key, self.pushed_key, self.inflight_key]
        return bool(self._push(keys=keys, args=[payload, repr(score), dedup, "check" if check else "record", replaces]))

    def pop(self) -> Popped | None:
        """Take the entry of the lowest score, in flight under this worker (lease renewed)."""
        member = self._pop(keys=[self.key, self.workers_key, self.inflight_key], args=[self.worker, self.lease_ms])
        if member is None:
            return None
        member = bytes(member)
        return Popped(member[:16].decode("ascii"), member[17:], member[16:17] == b"R")

    def ack(self, entry_id: str) -> bool:
        """The entry is done: forget it (False if it was not in flight under this worker any
        more: given back already, so someone may handle it again)."""
        return bool(self.client.hdel(self.inflight_key, entry_id))

    def heartbeat(self) -> int:
        """Renew this worker's lease; give back the entries of dead workers (how many)."""
        return int(self._beat(keys=[self.key, self.workers_key], args=[self.worker, self.lease_ms]))

    def requeue_dead(self) -> int:
        """Give back the entries of dead workers, without renewing any lease (how many)."""
        return int(self._beat(keys=[self.key, self.workers_key], args=["", self.lease_ms]))

    def leave(self) -> int:
        """This worker stops: its entries still in flight go back to the queue (how many)."""
        return int(self._leave(keys=[self.key, self.workers_key], args=[self.worker]))

    def mine(self) -> int:
        """Entries in flight under this worker."""
        return int(self.client.hlen(self.inflight_key))

    def mine_ids(self) -> set[str]:
        """The ids of the entries in flight under this worker."""
        return {bytes(k).decode("ascii") for k in self.client.hkeys(self.inflight_key)}

    def in_flight(self) -> int:
        """Entries in flight under any worker, dead or alive."""
        return int(self._in_flight(keys=[self.key, self.workers_key]))

    def given_back(self) -> int:
        """How many entries were ever given back (by dead workers' peers, or at a close)."""
        return int(self.client.get(self.given_back_key) or 0)

    def __len__(self) -> int:
        """Entries waiting in the queue (not those in flight)."""
        return int(self.client.zcard(self.key))

    def clear(self) -> None:
        """Delete the queue, what is in flight and the record of what was pushed."""
        self._clear(keys=[self.key, self.seq_key, self.pushed_key, self.workers_key, self.given_back_key])
