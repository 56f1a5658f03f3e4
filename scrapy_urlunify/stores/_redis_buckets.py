"""How a scope's seen set is laid out in Redis: generations of buckets of integers, in shards.

A 64-bit key's top 6 bits pick its *shard*, one of 64, one Redis Cluster hash tag each; the rest
(an integer below ``2**58``) is its *member* there, as a decimal string. A shard keeps its
members in *generations* of *buckets*: each bucket a Redis SET of integers, small enough
(``set-max-intset-entries``, 512 by default) for Redis to keep it as an ``intset``: 8 bytes a
member instead of ~66 for a SET of binary strings. A member's bucket in a generation is picked
by its top bits. Shard, generation number and bucket are in the bucket's name; shard and member
together are the key exactly.

A shard's first generation is sized for ~1,200 members (4 buckets); once the shard holds what
its generations were sized for, the call that finds it so opens the next one, sized for three
times what the shard holds (its capacity times :data:`GROWTH`'s factor, 4), with buckets enough
that each holds :data:`FILL` of the intset limit or less when it is full. New members go to the
newest generation; a call checks every older generation for each member first. All of it runs
in one Lua script call per shard (:data:`SHARD_SCRIPT`): every key it touches (the shard's
buckets, its generation count, its counter, its owners hash) carries the shard's tag, so a
script never crosses slots, and a link batch costs one script call per shard it touches. A
scope nobody sized thus costs about the same per URL at 100,000 URLs as at 10**9, in 2
generations at 100,000 URLs, 5 at 10**7, 8 at 10**9.

A scope created by an earlier version (:data:`FIXED_LAYOUT`) keeps its layout: one generation,
its bucket count fixed at creation for ``URLUNIFY_REDIS_SEEN_SIZE`` URLs, its shard the low bits
of the bucket number. What a scope that outgrows it does: ``docs/stores.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis import exceptions as rex

#: Tag of the layout this module creates (the ``layout`` field of the layout hash).
LAYOUT = "buckets-2"
#: Tag of the layout of earlier versions, still served: one generation, sized at creation.
FIXED_LAYOUT = "buckets-1"
#: ``set-max-intset-entries`` when the server will not say (CONFIG renamed, or not allowed).
DEFAULT_INTSET_LIMIT = 512
#: ``URLUNIFY_REDIS_SEEN_SIZE``'s default: the value of a project that did not size its scopes,
#: which then start small and grow (a scope sized for it would cost ~16 bytes per URL at 500,000).
DEFAULT_SEEN_SIZE = 10_000_000
#: Mean bucket fill of a full generation, as a share of the intset limit: the fullest of some
#: 30,000 buckets holds ~4.6 standard deviations more than the mean, still under the limit.
FILL = 0.6
#: Shards of a scope: enough to spread over a cluster's nodes, few enough that the links of one
#: page (a few hundred) cost a few dozen script calls, not one per link.
MAX_SHARDS = 64
#: log2 of the buckets per shard of a scope's first generation when nobody sized it: 256
#: buckets of ~307 members, ~79,000 URLs (an unsized scope of 100,000 URLs holds two generations).
START_BITS = 2
#: log2 of the factor by which each generation multiplies its shard's capacity: a shard opens
#: its next generation, sized for three times what it holds, when its generations are full.
#: Doubling would cost ~0.7 bytes less per URL and twice the generations a key is checked in
#: (6 instead of 4 at 2M URLs, 15 instead of 8 at 10**9; benchmarks/README.md).
GROWTH = 2

#: Seconds a shard's owners hash (the stamps of the calls that touched it) outlives the last
#: call that stamped it: a job resumed later than that after a Redis outage cannot learn what
#: its cut-off link batch did, and fetches all its links (RedisSeenStore.batch_answer).
STAMPS_TTL = 7 * 86400
#: Seconds between two calls of a store that push a shard's owners hash's expiry back.
STAMPS_REFRESH = 3600
#: One call on one shard. KEYS: its owners hash, its counter, its generation count, then the
#: buckets the call touches. ARGV: the caller's owner field, the call's id ("" for a call that
#: needs no stamp: a plain removal), the intset limit, how many members to remove first, the
#: shard's generations as the caller knows them (G), the count at which the shard opens its next
#: generation ("0": never), "1" to push the owners hash's expiry back (else only a new owner's
#: first stamp does: each store asks every :data:`STAMPS_REFRESH` seconds, sparing a command
#: per call), then per member to remove and then per member to add: its bucket in
#: each generation, oldest first (G indexes in KEYS), and the member. A member to add is looked
#: for in the older generations oldest first (the links a crawl meets most, its navigation, were
#: met first), and added to the newest unless found.
#:
#: A call with an id stamps its reply in the owners hash (field = owner, value "<call id>
#: <reply>"): a retry after a lost reply returns the reply of the attempt that ran, instead of
#: answering "seen" for members it added itself; and a run resuming requests whose call never
#: got its reply asks what it answered (RedisSeenStore.batch_answer). A caller that does not know
#: the shard's generations is answered "S<G>" and nothing runs: it sends the call again with the
#: buckets of all G (the answer is not stamped). The generation count is written at the shard's
#: first call, so that every call's keys exist while a Redis Cluster moves the shard's slot (a
#: script whose keys are partly missing there is refused until the move ends), and doubles as the
#: shard's marker: gone means Redis lost the shard's data (or the shard had no call yet). The
#: reply: "1" if it was gone else "0"; a digit, 1 if a bucket outgrew the intset limit in this
#: call, plus 2 if the call opened a generation; then one "1" (new) or "0" (seen) per member to
#: add.
SHARD_SCRIPT = """
local stamp = ARGV[2] .. ' '
if ARGV[2] ~= '' then
  local done = redis.call('HGET', KEYS[1], ARGV[1])
  if done and string.sub(done, 1, #stamp) == stamp then
    return string.sub(done, #stamp + 1)
  end
end
local known = redis.call('GET', KEYS[3])
local gens = tonumber(known or '1')
local g = tonumber(ARGV[5])
if gens ~= g then return 'S' .. gens end
local lost = '0'
if not known then
  redis.call('SET', KEYS[3], 1)
  lost = '1'
end
local limit = tonumber(ARGV[3])
local first = 8 + (g + 1) * tonumber(ARGV[4])
local delta = 0
for i = 8, first - 1, g + 1 do
  for k = i, i + g - 1 do
    delta = delta - redis.call('SREM', KEYS[tonumber(ARGV[k])], ARGV[i + g])
  end
end
local flags = 0
local out = {}
for i = first, #ARGV, g + 1 do
  local member = ARGV[i + g]
  local new = true
  for k = i, i + g - 2 do
    if redis.call('SISMEMBER', KEYS[tonumber(ARGV[k])], member) == 1 then
      new = false
      break
    end
  end
  local newest = KEYS[tonumber(ARGV[i + g - 1])]
  if new then new = redis.call('SADD', newest, member) == 1 end
  if new then
    delta = delta + 1
    out[#out + 1] = '1'
    if redis.call('SCARD', newest) == limit + 1 then flags = 1 end
  else
    out[#out + 1] = '0'
  end
end
local count = redis.call('INCRBY', KEYS[2], delta)
local opens = tonumber(ARGV[6])
if opens > 0 and count >= opens then
  redis.call('SET', KEYS[3], gens + 1)
  flags = flags + 2
end
local reply = lost .. flags .. table.concat(out)
if ARGV[2] ~= '' then
  if redis.call('HSET', KEYS[1], ARGV[1], stamp .. reply) == 1 or ARGV[7] == '1' then
    redis.call('EXPIRE', KEYS[1], STAMPS_TTL)
  end
end
return reply
""".replace("STAMPS_TTL", str(STAMPS_TTL))

#: :data:`SHARD_SCRIPT` for one member and no removal, the scheduler's ``request_seen`` one
#: request at a time, at a fraction of its cost in Redis for a duplicate: a member found seen
#: costs one ``SISMEMBER`` per generation looked in and writes nothing, and a first attempt reads
#: no stamp. KEYS: the shard's generation count, its counter, its owners hash, then the member's
#: bucket in each of its generations (G: as many as KEYS after the first three), oldest first.
#: ARGV: the member, then one string for the rest (each argument costs a Lua string, and a call
#: that finds its member seen does not split it), "<check><refresh> <call id> <opens> <limit>
#: <owner>": check "1" if an attempt of this call may have run without its reply arriving (its
#: stamp is looked for first); refresh "1" to push the owners hash's expiry back; opens, the
#: count at which the shard opens its next generation ("0": never); limit, the intset limit;
#: owner, the caller's field in the owners hash. The reply is an integer: 0 if the member was
#: seen; -G' for a caller that does not know the shard's G' generations (nothing ran); else the
#: sum of 1 (the member was new), 2 if its bucket outgrew the intset limit, 4 if the call opened
#: a generation, 8 if the shard's marker was gone.
#:
#: A member found in a bucket of any generation the caller names is seen, whatever generations
#: the shard has: bucket names are the layout's, the same for every process, and only a call
#: that found the member in none of the shard's generations added it. The generation count is
#: read only before adding, so that a member is added to the shard's newest generation alone.
#: Only a call that changed something (a reply other than 0) stamps it, "<call id> <reply>": so a
#: retry that finds no stamp of its call knows no attempt of it added the member (one that runs
#: after the retry finds the member there, and its reply is never read), and answers "seen" only
#: for a member that was there before the call; one that finds its stamp answers it.
ONE_SCRIPT = """
local member = ARGV[1]
if string.byte(ARGV[2]) == 49 then
  local id, owner = string.match(ARGV[2], '^%d%d (%d+) %d+ %d+ (.+)$')
  local done = redis.call('HGET', KEYS[3], owner)
  if done and string.sub(done, 1, #id + 1) == id .. ' ' then
    return tonumber(string.sub(done, #id + 2))
  end
end
local g = #KEYS - 3
for k = 4, g + 3 do
  if redis.call('SISMEMBER', KEYS[k], member) == 1 then return 0 end
end
local known = redis.call('GET', KEYS[1])
local gens = tonumber(known or '1')
if gens ~= g then return -gens end
local refresh, id, opens, limit, owner = string.match(ARGV[2], '^%d(%d) (%d+) (%d+) (%d+) (.+)$')
local reply = 1
if not known then
  redis.call('SET', KEYS[1], 1)
  reply = 9
end
local newest = KEYS[g + 3]
redis.call('SADD', newest, member)
if redis.call('SCARD', newest) == tonumber(limit) + 1 then reply = reply + 2 end
opens = tonumber(opens)
if redis.call('INCRBY', KEYS[2], 1) >= opens and opens > 0 then
  redis.call('SET', KEYS[1], gens + 1)
  reply = reply + 4
end
if redis.call('HSET', KEYS[3], owner, id .. ' ' .. reply) == 1 or refresh == '1' then
  redis.call('EXPIRE', KEYS[3], STAMPS_TTL)
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


def first_generation_bits(size: int | None, limit: int) -> int:
    """log2 of the buckets per shard of a new scope's first generation: :data:`START_BITS`
    when nobody sized it (``size`` None or :data:`DEFAULT_SEEN_SIZE`), else the fewest that hold
    ``size`` members at :data:`FILL` of ``limit``."""
    if size is None or size == DEFAULT_SEEN_SIZE:
        return START_BITS
    fill = _fill(limit)
    bits = 0
    while (fill * MAX_SHARDS << bits) < size and bits < 34:
        bits += 1
    return bits


def _fill(limit: int) -> int:
    return max(1, int(limit * FILL))


@dataclass(frozen=True)
class Layout:
    """The shards, generations and buckets of one seen set (``key``), as its layout hash
    records them: ``bits``, log2 of the buckets per shard of the first generation (of the whole
    scope for a :data:`FIXED_LAYOUT`); ``limit``, the intset limit it was sized for; ``size``,
    the URLs it was sized for (unsized: those its first generation holds)."""

    key: str
    bits: int
    shards: int
    limit: int
    size: int
    #: log2 of the factor by which each generation multiplies its shard's capacity (0: one
    #: generation, sized at creation: a :data:`FIXED_LAYOUT`)
    growth: int = GROWTH

    @classmethod
    def create(cls, key: str, size: int | None, limit: int) -> Layout:
        bits = first_generation_bits(size, limit)
        if size is None or size == DEFAULT_SEEN_SIZE:
            size = _fill(limit) * MAX_SHARDS << bits
        return cls(key, bits, MAX_SHARDS, limit, size, GROWTH)

    @classmethod
    def from_fields(cls, key: str, fields: dict[Any, Any]) -> Layout:
        """The layout a hash holds; ValueError if it is not one this module wrote."""
        text = {_text(k): _text(v) for k, v in fields.items()}
        kind = text.get("layout")
        if kind not in (LAYOUT, FIXED_LAYOUT):
            raise ValueError(f"layout {kind!r}, expected {LAYOUT!r}")
        bits, shards = int(text["bits"]), int(text["shards"])
        growth = int(text["growth"]) if kind == LAYOUT else 0
        if kind == FIXED_LAYOUT:
            valid = 1 <= bits <= 40 and shards <= 1 << bits
        else:
            valid = 0 <= bits <= 34 and 1 <= growth <= 4
        if not valid or shards < 1 or shards & (shards - 1) or shards > MAX_SHARDS:
            raise ValueError(f"bits {bits}, shards {shards}")
        return cls(key, bits, shards, int(text["limit"]), int(text["size"]), growth)

    def fields(self) -> list[str]:
        """The layout hash, as HSET arguments."""
        growth = ["growth", str(self.growth)] if self.grows else []
        return [
            *growth,
            "layout",
            LAYOUT if self.grows else FIXED_LAYOUT,
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
    def grows(self) -> bool:
        """Whether shards open generations as they fill (False: a :data:`FIXED_LAYOUT`)."""
        return self.growth > 0

    @property
    def buckets(self) -> int:
        """The buckets of the first generation, over all shards."""
        return self.shards << self.bits if self.grows else 1 << self.bits

    @property
    def _rest(self) -> int:
        """Bits of a key below those that pick its shard (of its bucket, in a fixed layout)."""
        return 64 - (self.shards.bit_length() - 1 if self.grows else self.bits)

    def shard_of(self, key: int) -> int:
        if self.grows:
            return key >> self._rest
        return (key >> self._rest) & (self.shards - 1)

    @property
    def member_mask(self) -> int:
        """``key & member_mask`` is the member ``key`` is in its buckets: with its shard (its
        bucket, in a fixed layout) it is ``key`` exactly, and it is below ``2**63``, in a Redis
        integer's range."""
        return (1 << self._rest) - 1

    def member_of(self, key: int) -> int:
        return key & self.member_mask

    def opens_at(self, generations: int) -> int:
        """The members a shard of ``generations`` generations holds when it opens the next one
        (0: never, in a fixed layout): the capacity of those it has."""
        if not self.grows:
            return 0
        return (_fill(self.limit) << self.bits) << self.growth * (generations - 1)

    def bucket_of(self, key: int, generation: int = 0) -> str:
        """The name of ``key``'s bucket in ``generation`` (of its shard)."""
        prefix, mask, shift = self.namers(self.shard_of(key), generation + 1)[generation]
        return prefix + str((key & mask) >> shift)

    def namers(self, shard: int, generations: int) -> list[tuple[str, int, int]]:
        """How the keys of ``shard`` name their bucket in each of its first ``generations``:
        ``(prefix, mask, shift)``, the name being ``prefix + str((key & mask) >> shift)`` (the
        name of a fixed layout's bucket is its number over the whole scope)."""
        tag, rest = self.tag(shard), self._rest
        if not self.grows:
            return [(f"{tag}:", (1 << 64) - 1, rest)]
        mask = (1 << rest) - 1
        return [(f"{tag}:{g}:", mask, rest - self.generation_bits(g)) for g in range(generations)]

    def generation_bits(self, generation: int) -> int:
        """log2 of the buckets per shard of ``generation``: those that hold what it is sized for
        (the capacity of the generations before it, times the growth factor less one) at
        :data:`FILL`."""
        if not generation:
            return self.bits
        factor = 1 << self.growth
        return self.bits + self.growth * (generation - 1) + (factor - 2).bit_length()

    def tag(self, shard: int) -> str:
        """The prefix of every key of ``shard``: its hash tag names the seen set and the shard."""
        return f"{self.key}:{{{self.key}:{shard}}}"

    def owners_key(self, shard: int) -> str:
        """The shard's stamps: the reply of each store's last call, by owner."""
        return f"{self.tag(shard)}:owners"

    def count_key(self, shard: int) -> str:
        """How many members the shard holds."""
        return f"{self.tag(shard)}:count"

    def generations_key(self, shard: int) -> str:
        """How many generations the shard has; written at the shard's first call, it exists as
        long as Redis keeps the shard's data (a call that finds it gone after the store had seen
        it learns that Redis lost its data)."""
        return f"{self.tag(shard)}:generations"

    def match(self) -> str:
        """A SCAN pattern matching every key of every shard (glob characters of the key escaped)."""
        escaped = "".join("\\" + c if c in "*?[]\\" else c for c in self.key)
        return f"{escaped}:{{{escaped}:*}}:*"


def group(layout: Layout, keys: Sequence[int]) -> dict[int, list[tuple[int, int]]]:
    """``keys`` by shard: ``(position in keys, key)`` each; ValueError for a key outside
    ``[0, 2**64)``, TypeError for one that is not an int."""
    out: dict[int, list[tuple[int, int]]] = {}
    for i, key in enumerate(keys):
        if not isinstance(key, int):
            raise TypeError(f"key must be an int, not {type(key).__name__}")
        if not 0 <= key < 2**64:
            raise ValueError(f"key {key!r} is outside [0, 2**64)")
        out.setdefault(layout.shard_of(key), []).append((i, key))
    return out


def _text(value: Any) -> str:
    return value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
