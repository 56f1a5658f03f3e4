"""The seen set shared by many crawler processes: a Redis SET of 8-byte keys.

:class:`RedisSeenStore` -- a :class:`~.base.SeenStore` whose members are the 64-bit keys as
8-byte big-endian binary strings. ``SADD`` answers 1 when the member is new, so "seen?" and
"record" are one atomic step *in Redis*: two processes racing on one URL get exactly one "new".
``add_batch`` checks and records many keys (a response's links) in one round trip, each as
atomically (one Lua script). A retried ``SADD`` whose first reply was lost still answers "new"
exactly once (a Lua script stamps the member with the call's id). What a lost reply does, and
what a URL costs in Redis: ``docs/stores.md``; speed and memory against scrapy-redis:
``benchmarks/README.md``.
"""

from __future__ import annotations

import itertools
import logging
import os
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import redis

from .base import StoreError
from .redis_connection import PIPELINE_CHUNK, RedisStore

__all__ = ["STAMPS_TTL", "RedisSeenStore"]

logger = logging.getLogger(__name__)

#: Seconds the owners hash of a seen set (the stamps of add() and add_batch()) outlives the last
#: call that stamped it: a job resumed later than that after a Redis outage cannot learn what
#: its cut-off link batch did, and fetches all its links (RedisSeenStore.batch_answer).
STAMPS_TTL = 7 * 86400


def _member(fp: int) -> bytes:
    try:
        return fp.to_bytes(8, "big")
    except OverflowError:
        raise ValueError(f"fingerprint {fp!r} is outside [0, 2**64)") from None
    except AttributeError:
        raise TypeError(f"fingerprint must be an int, not {type(fp).__name__}") from None


#: SADD that knows whether an earlier attempt of the same call added the member: a new member
#: stamps this store's field (ARGV[3]) of the set's owners hash (KEYS[2]) with the call's id
#: (ARGV[2]), so a retry after a lost reply finds its own stamp ("new"), while a member that was
#: already there is "seen". One hash per set, so clear() deletes every process's stamps at once.
_ADD_ONCE = """
local lost = 0
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], '1')
  lost = 2
end
if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
  redis.call('EXPIRE', KEYS[2], STAMPS_TTL)
  return 1 + lost
end
if redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[2] then return 1 + lost end
return lost
""".replace("STAMPS_TTL", str(STAMPS_TTL))


#: :meth:`RedisSeenStore.add_batch`: SADD of many members in one call, each new exactly once
#: across processes (each SADD is atomic, and no other client's command runs inside a script).
#: ARGV: the owner's field, the call's id, how many members to release (SREM first), those
#: members, then the members to add. Every call stamps its reply in the owners hash (field
#: "<owner>/batch" = "<call id> <reply>"): a retry after a lost reply returns the reply of the
#: attempt that ran, instead of answering "seen" for members it added itself; and a later run
#: resuming requests whose call never got its reply asks what that call answered
#: (:meth:`RedisSeenStore.batch_answer`). The reply: "1" if the marker had vanished (Redis lost
#: its data) else "0", then one "1" (new) or "0" (seen) per member to add.
_ADD_BATCH = """
local field = ARGV[1] .. '/batch'
local stamp = ARGV[2] .. ' '
local done = redis.call('HGET', KEYS[2], field)
if done and string.sub(done, 1, #stamp) == stamp then
  return string.sub(done, #stamp + 1)
end
local lost = '0'
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], '1')
  lost = '1'
end
local released = tonumber(ARGV[3])
local first = 4 + released
for i = 4, first - 1 do redis.call('SREM', KEYS[1], ARGV[i]) end
local out = {lost}
for i = first, #ARGV do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    out[#out + 1] = '1'
  else
    out[#out + 1] = '0'
  end
end
local reply = table.concat(out)
redis.call('HSET', KEYS[2], field, stamp .. reply)
redis.call('EXPIRE', KEYS[2], STAMPS_TTL)
return reply
""".replace("STAMPS_TTL", str(STAMPS_TTL))


class RedisSeenStore(RedisStore):
    """A :class:`~.base.SeenStore` in a Redis SET of 8-byte members,
    shared by every process given the same key."""

    def __init__(self, client: redis.Redis, key: str, **kwargs: Any) -> None:
        super().__init__(client, key, **kwargs)
        #: every store's stamp (the id of its last call that added a member), by owner
        self.owners_key = f"{self.key}:owners"
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        #: exists as long as Redis keeps the set's data: an add that finds it gone (Redis restarted
        #: without persistence, or flushed) warns that every page seen before is new again
        self.marker_key = f"{self.key}:marker"
        #: times the marker was found gone
        self.data_lost = 0
        self._marked = False  # this store has seen (or made) the marker
        self._call_ids = itertools.count(1)
        self._add_once = client.register_script(_ADD_ONCE)
        self._add_batch = client.register_script(_ADD_BATCH)
        #: calls of :meth:`add_batch` (one round trip each, unless Redis had to load the script)
        self.batches = 0
        self.last_batch = ""

    def add(self, fp: int) -> bool:
        member = _member(fp)
        call_id = str(next(self._call_ids))
        # every attempt of this call carries the same id: exactly one of them can add the member
        result = self._run("SADD", lambda: self._add_once(keys=[self.key, self.owners_key, self.marker_key],
                                                          args=[member, call_id, self.owner]))
        if result & 2 and self._marked:
            self._lost()
        self._marked = True
        return bool(result & 1)

    def _lost(self) -> None:
        self.data_lost += 1
        logger.warning("Redis %s lost its data (the key %r vanished: restarted without persistence, "
                       "or flushed by someone else): every page seen before is new again and may be "
                       "fetched a second time", self.url, self.marker_key)

    def add_batch(self, fps: Sequence[int], release: Sequence[int] = ()) -> list[bool]:
        """:meth:`add` for each of ``fps`` in one round trip (one Lua script): for each, True if
        it was new. Each member is new for exactly one call of one process, as with :meth:`add`,
        a retry after a lost reply included; a member repeated in ``fps`` is new once at most.
        ``release`` is removed first (:meth:`discard_many`), in the same round trip."""
        call_id = str(next(self._call_ids))
        #: the call (``"<owner> <call id>"``) :meth:`batch_answer` can be asked about later
        self.last_batch = f"{self.owner} {call_id}"
        args: list[Any] = [self.owner, call_id, len(release)]
        args.extend(_member(fp) for fp in release)
        args.extend(_member(fp) for fp in fps)
        reply = self._run("SADD (batch)", lambda: self._add_batch(
            keys=[self.key, self.owners_key, self.marker_key], args=args))
        self.batches += 1
        flags = bytes(reply) if not isinstance(reply, str) else reply.encode("ascii")
        if len(flags) != len(fps) + 1:
            raise StoreError(f"Redis {self.url}, SADD (batch) {self.key!r}: "
                             f"{len(flags) - 1} answers for {len(fps)} members")
        if flags[0] == 0x31 and self._marked:
            self._lost()
        self._marked = True
        return [flag == 0x31 for flag in flags[1:]]

    def batch_answer(self, call: str) -> bool | None:
        """Whether the :meth:`add_batch` call ``call`` (``"<owner> <call id> <index>"``: its
        :attr:`last_batch` and a position in it, from this or an earlier process) added its
        member ``index``: True if it did, False if that member was seen already, None if the
        call never ran (the owner's stamp is of an earlier call: check the member as usual).
        When Redis cannot tell (no stamp of that owner: it expired after :data:`STAMPS_TTL`, or
        the call was the owner's first), or ``call`` is malformed: True, since fetching a page
        twice is better than never."""
        try:
            owner, call_id, index = call.split(" ")
            position = len(call_id) + 2 + int(index)  # "<call id> " then the lost-data flag
        except (AttributeError, ValueError):
            return True
        stamp = self._run("HGET", lambda: self.client.hget(self.owners_key, owner + "/batch"))
        if stamp is None:
            return True
        stamp = stamp if isinstance(stamp, bytes) else stamp.encode("ascii")
        if not stamp.startswith(call_id.encode("ascii") + b" "):
            # an owner's calls are stamped in order, and a store stops calling once one failed
            return None
        return position >= len(stamp) or stamp[position] == 0x31

    def discard_many(self, fps: Iterable[int]) -> None:
        """Remove ``fps`` from the set (SREM): each becomes new again, for every process."""
        members = [_member(fp) for fp in fps]
        if members:
            self._run("SREM", lambda: self.client.srem(self.key, *members))  # type: ignore[arg-type]

    def discard(self, fp: int) -> None:
        """Remove ``fp`` (a request recorded as new that could not be logged as scheduled)."""
        self.discard_many((fp,))

    def add_many(self, fps: Iterable[int]) -> list[bool]:
        """:meth:`add` for many fingerprints, pipelined (one round trip per 1,000): for each,
        True if it was new. Not atomic as a whole; each SADD is."""
        members = [_member(fp) for fp in fps]
        out: list[bool] = []
        for start in range(0, len(members), PIPELINE_CHUNK):
            chunk = members[start : start + PIPELINE_CHUNK]

            def send(chunk: list[bytes] = chunk) -> list[Any]:
                pipe = self.client.pipeline(transaction=False)
                for member in chunk:
                    pipe.sadd(self.key, member)
                return pipe.execute()

            # (one stamp per store cannot tell which of 1,000 members a lost pipeline added:
            # here a retry still says "new" when in doubt; crawls use add(), not add_many())
            added, retried = self._call("SADD (pipeline)", send)
            out.extend(bool(a) or retried for a in added)
        return out

    def __contains__(self, fp: object) -> bool:
        if not isinstance(fp, int) or not 0 <= fp < 2**64:
            return False
        member = fp.to_bytes(8, "big")
        # redis-py sends bytes as they are; its hint says str
        return bool(self._run("SISMEMBER", lambda: self.client.sismember(self.key, member)))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return int(self._run("SCARD", lambda: self.client.scard(self.key)))

    def clear(self) -> None:
        """Delete the set, every store's stamps and the marker (no key is left behind)."""
        self._run("DEL", lambda: self.client.delete(self.owners_key, self.marker_key))
        self._marked = False
        super().clear()
