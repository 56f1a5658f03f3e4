"""How a scope's seen set is laid out in Redis: buckets of integers, in shards.

A 64-bit key is split in two: its high ``bits`` pick its *bucket*, the rest (an integer below
``2**(64 - bits)``, so in signed 64-bit range) is its *member* in that bucket. Each bucket is
a Redis SET of decimal integers, small enough (``set-max-intset-entries``, 512 by default)
for Redis to keep it as an ``intset``: 8 bytes a member instead of ~66 for a SET of binary
strings. Buckets are grouped in *shards*, one Redis Cluster hash tag each: every key a shard's
script touches (its buckets, its owners hash, its counter) carries the shard's tag, so a
script never crosses slots, and a link batch costs one script call per shard it touches.

The sizing is chosen once per scope, when its first process creates the *layout* (a small
hash at the seen set's own key, written if absent, in one atomic step), and read back by every
later process and run: the bucket count is the power of two that keeps the expected number of
URLs (``URLUNIFY_REDIS_SEEN_SIZE``) at :data:`FILL` of the intset limit per bucket. Why the
count is fixed rather than grown, and what to do when a crawl outgrows it: ``docs/stores.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis import exceptions as rex

__all__ = [
    "DEFAULT_INTSET_LIMIT",
    "DEFAULT_SEEN_SIZE",
    "FILL",
    "LAYOUT",
    "LAYOUT_SCRIPT",
    "MAX_SHARDS",
    "SHARD_SCRIPT",
    "STAMPS_TTL",
    "Layout",
    "group",
    "intset_limit",
    "sized",
]

#: Tag of the layout this module writes (the ``layout`` field of the layout hash).
LAYOUT = "buckets-1"
#: ``set-max-intset-entries`` when the server will not say (CONFIG renamed, or not allowed).
DEFAULT_INTSET_LIMIT = 512
#: URLs a scope is sized for unless ``URLUNIFY_REDIS_SEEN_SIZE`` says otherwise.
DEFAULT_SEEN_SIZE = 10_000_000
#: Mean bucket fill at the expected size, as a share of the intset limit: the fullest of some
#: 30,000 buckets holds ~4.6 standard deviations more than the mean, still under the limit.
FILL = 0.6
#: Hash tags of a scope at most: enough to spread over a cluster's nodes, few enough that the
#: links of one page (a few hundred) cost a few dozen script calls, not one per link.
MAX_SHARDS = 64

#: Seconds a shard's owners hash (the stamps of the calls that touched it) outlives the last
#: call that stamped it: a job resumed later than that after a Redis outage cannot learn what
#: its cut-off link batch did, and fetches all its links (RedisSeenStore.batch_answer).
STAMPS_TTL = 7 * 86400
#: One call on one shard. KEYS: its owners hash, its counter, then the buckets the call touches.
#: ARGV: the caller's owner field, the call's id ("" for a call that needs no stamp: a plain
#: removal), how many (bucket index in KEYS, member) pairs to remove first, then those pairs,
#: then the pairs to add. A call with an id stamps its reply in the owners hash (field = owner,
#: value "<call id> <reply>"): a retry after a lost reply returns the reply of the attempt that
#: ran, instead of answering "seen" for members it added itself; and a run resuming requests
#: whose call never got its reply asks what it answered (RedisSeenStore.batch_answer). The
#: counter doubles as the shard's marker: gone means Redis lost the shard's data. The reply:
#: "1" if the counter was gone else "0", "1" if a bucket outgrew the intset limit (ARGV[3]) in
#: this call else "0", then one "1" (new) or "0" (seen) per member to add.
SHARD_SCRIPT = """
local stamp = ARGV[2] .. ' '
if ARGV[2] ~= '' then
  local done = redis.call('HGET', KEYS[1], ARGV[1])
  if done and string.sub(done, 1, #stamp) == stamp then
    return string.sub(done, #stamp + 1)
  end
end
local lost = '0'
if redis.call('EXISTS', KEYS[2]) == 0 then lost = '1' end
local limit = tonumber(ARGV[3])
local first = 5 + 2 * tonumber(ARGV[4])
local delta = 0
for i = 5, first - 1, 2 do
  delta = delta - redis.call('SREM', KEYS[tonumber(ARGV[i])], ARGV[i + 1])
end
local over = '0'
local out = {}
for i = first, #ARGV, 2 do
  local key = KEYS[tonumber(ARGV[i])]
  if redis.call('SADD', key, ARGV[i + 1]) == 1 then
    delta = delta + 1
    out[#out + 1] = '1'
    if redis.call('SCARD', key) == limit + 1 then over = '1' end
  else
    out[#out + 1] = '0'
  end
end
redis.call('INCRBY', KEYS[2], delta)
local reply = lost .. over .. table.concat(out)
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[1], ARGV[1], stamp .. reply)
  redis.call('EXPIRE', KEYS[1], STAMPS_TTL)
end
return reply
""".replace("STAMPS_TTL", str(STAMPS_TTL))

#: The layout hash at the seen set's key: created from ARGV (HSET arguments) when absent and
#: ARGV is given, then returned (empty when absent); "old" when the key is a SET (the layout of
#: earlier versions: one SET of 8-byte members).
LAYOUT_SCRIPT = """
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'set' then return 'old' end
if kind == 'none' and #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return redis.call('HGETALL', KEYS[1])
"""


def intset_limit(client: redis.Redis) -> int:
    """The server's ``set-max-intset-entries`` (:data:`DEFAULT_INTSET_LIMIT` if CONFIG is
    disabled, renamed or not allowed for this user)."""
    try:
        reply = client.config_get("set-max-intset-entries")
    except (rex.ResponseError, rex.NoPermissionError):
        return DEFAULT_INTSET_LIMIT
    value = next(iter(reply.values()), None) if isinstance(reply, dict) else None
    try:
        return max(1, int(value)) if value is not None else DEFAULT_INTSET_LIMIT
    except (TypeError, ValueError):
        return DEFAULT_INTSET_LIMIT


def sized(size: int, limit: int) -> tuple[int, int]:
    """``(bits, shards)`` for ``size`` expected URLs with buckets of at most ``limit`` intset
    entries: ``2**bits`` buckets (at least 2, so a member always fits in signed 64 bits)."""
    target = max(1.0, limit * FILL)
    bits = 1
    while (1 << bits) * target < size and bits < 40:
        bits += 1
    return bits, min(1 << bits, MAX_SHARDS)


@dataclass(frozen=True)
class Layout:
    """The buckets and shards of one seen set (``key``), as its layout hash records them."""

    key: str
    bits: int
    shards: int
    limit: int
    size: int

    @classmethod
    def create(cls, key: str, size: int, limit: int) -> Layout:
        bits, shards = sized(size, limit)
        return cls(key, bits, shards, limit, size)

    @classmethod
    def from_fields(cls, key: str, fields: dict[Any, Any]) -> Layout:
        """The layout a hash holds; ValueError if it is not one this module wrote."""
        text = {_text(k): _text(v) for k, v in fields.items()}
        if text.get("layout") != LAYOUT:
            raise ValueError(f"layout {text.get('layout')!r}, expected {LAYOUT!r}")
        bits, shards = int(text["bits"]), int(text["shards"])
        if not 1 <= bits <= 40 or shards < 1 or shards & (shards - 1) or shards > 1 << bits:
            raise ValueError(f"bits {bits}, shards {shards}")
        return cls(key, bits, shards, int(text["limit"]), int(text["size"]))

    def fields(self) -> list[str]:
        """The layout hash, as HSET arguments."""
        return [
            "layout",
            LAYOUT,
            "bits",
            str(self.bits),
            "shards",
            str(self.shards),
            "limit",
            str(self.limit),
            "size",
            str(self.size),
        ]

    @property
    def buckets(self) -> int:
        return 1 << self.bits

    def place(self, key: int) -> tuple[int, int]:
        """``(bucket, member)`` of ``key``: together they are ``key`` exactly."""
        if not isinstance(key, int):
            raise TypeError(f"key must be an int, not {type(key).__name__}")
        if not 0 <= key < 2**64:
            raise ValueError(f"key {key!r} is outside [0, 2**64)")
        shift = 64 - self.bits
        return key >> shift, key & ((1 << shift) - 1)

    def join(self, bucket: int, member: int) -> int:
        """The key :meth:`place` split into ``bucket`` and ``member``."""
        return (bucket << (64 - self.bits)) | member

    def shard_of(self, bucket: int) -> int:
        return bucket & (self.shards - 1)

    def tag(self, shard: int) -> str:
        """The prefix of every key of ``shard``: its hash tag names the seen set and the shard."""
        return f"{self.key}:{{{self.key}:{shard}}}"

    def bucket_key(self, bucket: int) -> str:
        return f"{self.tag(self.shard_of(bucket))}:{bucket}"

    def owners_key(self, shard: int) -> str:
        """The shard's stamps: the reply of each store's last call, by owner."""
        return f"{self.tag(shard)}:owners"

    def count_key(self, shard: int) -> str:
        """How many members the shard holds; it exists as long as Redis keeps the shard's data
        (a call that finds it gone learns that Redis lost its data)."""
        return f"{self.tag(shard)}:count"

    def shard_keys(self, shard: int) -> list[str]:
        """Every key of ``shard`` (what :meth:`RedisSeenStore.clear` deletes)."""
        buckets = range(shard, self.buckets, self.shards)
        return [
            self.owners_key(shard),
            self.count_key(shard),
            *(self.bucket_key(b) for b in buckets),
        ]

    def match(self) -> str:
        """A SCAN pattern matching every key of every shard (glob characters of the key escaped)."""
        escaped = "".join("\\" + c if c in "*?[]\\" else c for c in self.key)
        return f"{escaped}:{{{escaped}:*}}:*"


def group(layout: Layout, keys: Sequence[int]) -> dict[int, list[tuple[int, int, int]]]:
    """``keys`` by shard: ``(position in keys, bucket, member)`` each."""
    out: dict[int, list[tuple[int, int, int]]] = {}
    mask = layout.shards - 1
    for i, key in enumerate(keys):
        bucket, member = layout.place(key)
        out.setdefault(bucket & mask, []).append((i, bucket, member))
    return out


def _text(value: Any) -> str:
    return value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
