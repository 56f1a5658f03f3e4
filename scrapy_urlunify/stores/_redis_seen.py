"""The seen set shared by many crawler processes: buckets of integers in Redis.

:class:`RedisSeenStore` -- a :class:`~.base.SeenStore` laid out as :mod:`.redis_buckets` says:
each 64-bit key is a decimal integer member of one small SET (an ``intset``, ~9 bytes a URL) of
the newest generation of its shard, one Redis Cluster hash tag each. One script call on the
shard checks every generation and adds the member (``SADD``), so "seen?" and "record" are one
atomic step *in Redis*: two processes racing on one URL get exactly one "new". Every write is
one Lua script call per shard it touches, all of one call pipelined: ``add_batch`` checks and
records a response's links in one round trip. A retried call whose first reply was lost answers
what the attempt that ran answered (each call stamps its reply in its shard's owners hash). What
a lost reply does, what a URL costs in Redis and how a scope grows: ``docs/stores.md``; speed
and memory against scrapy-redis: ``benchmarks/README.md``.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, TypeVar

import redis
from redis import exceptions as rex

from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._redis_buckets import (
    LAYOUT_SCRIPT,
    SHARD_SCRIPT,
    STAMPS_REFRESH,
    Layout,
    group,
    intset_limit,
)
from scrapy_urlunify.stores._redis_connection import (
    PIPELINE_CHUNK,
    RedisStore,
    is_cluster,
    run_scripts,
)
from scrapy_urlunify.stores._redis_one import OneKeyCalls

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: One script call on a shard: the shard, the call's id ("": no stamp), and the keys to remove
#: and to add there, each with its position in what the caller asked.
Call = tuple[int, str, list[tuple[int, int]], list[tuple[int, int]]]

#: Rounds of one call at most: a shard answers a caller that does not know its generations with
#: their count, and is called again (a generation opened meanwhile by another process).
MAX_ROUNDS = 8

#: ``scrapy urlunify store migrate`` keeps a seen set of the one-SET layout at this suffix of
#: its key while it copies it into buckets.
MIGRATING_SUFFIX = ":migrating"


def old_layout_error(url: str, key: str, what: str = "holds") -> StoreError:
    """The error of a crawl that meets a seen set of the one-SET layout (or half migrated)."""
    return StoreError(
        f"Redis {url}: {key!r} {what} a seen set of the layout of earlier versions of "
        "scrapy-urlunify (one SET of 8-byte members): run `scrapy urlunify store migrate` "
        "(or `urlunify store migrate --store URL --scope SCOPE`) with every crawl of "
        "this scope stopped, then start the crawl again"
    )


class RedisSeenStore(RedisStore):
    """A :class:`~.base.SeenStore` in buckets of integers (:mod:`.redis_buckets`), shared by
    every process given the same key. ``size``: the URLs a new scope's first generation is sized
    for (None or :data:`~.redis_buckets.DEFAULT_SEEN_SIZE`: it starts small and grows; a scope
    that exists keeps the layout it was created with)."""

    def __init__(
        self, client: redis.Redis, key: str, *, size: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(client, key, **kwargs)
        if is_cluster(client):
            # each shard's keys carry their own hash tag ({<key>:<shard>}): a store key tagged as
            # a whole ({<key>}) would put every shard on one slot, one node
            self.key = key
        if size is not None and size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.size = size
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._layout: Layout | None = None
        self._migrating = False  # migrate() is filling the buckets from the old layout
        self._sha: str | None = None
        self._layout_script = client.register_script(LAYOUT_SCRIPT)
        self._shard_script = client.register_script(SHARD_SCRIPT)
        #: the calls of add(), one key each
        self.ones = OneKeyCalls(client, self.owner, self._count_round_trips)
        #: times a shard's marker was found gone after this store had seen it (Redis lost its data)
        self.data_lost = 0
        self._marked: set[int] = set()  # shards whose marker this store has seen or made
        self._generations: dict[int, int] = {}  # shard -> its generations, as last answered
        self._refreshed: dict[int, float] = {}  # shard -> when a call pushed its stamps' expiry
        # (shard, generations) -> its counter's, stamps' and generation count's keys, how its
        # keys name their buckets, and when it opens its next generation
        self._plans: dict[tuple[int, int], tuple[list[str], list[tuple[str, int, int]], int]] = {}
        #: buckets this store saw grow past the intset limit (each then costs ~10x per URL)
        self.converted = 0
        self._call_ids = itertools.count(1)
        #: calls of :meth:`add_batch` (one round trip each, unless Redis had to load the script)
        self.batches = 0
        #: requests to Redis sent (a pipeline is one): what a crawl waits on
        self.round_trips = 0
        #: ``"<owner> <call id>"`` of the last :meth:`add_batch`, and where each key went in it
        self.last_batch = ""
        self._last_places: list[tuple[int, int]] = []

    def _count_round_trips(self, n: int) -> None:
        self.round_trips += n

    def _call(self, what: str, command: Callable[[], T]) -> tuple[T, bool]:
        def counted() -> T:
            self.round_trips += 1
            return command()

        return super()._call(what, counted)

    # --- the layout ---------------------------------------------------------------------------

    def layout(self, create: bool = True) -> Layout | None:
        """The seen set's layout, read once (created first when absent and ``create``); None
        when absent. :class:`StoreError` for a seen set of the old layout, or a half-migrated one."""
        if self._layout is not None:
            return self._layout
        args: list[str] = []
        if create:
            limit = self._run("CONFIG GET", lambda: intset_limit(self.client))
            args = Layout.create(self.key, self.size, limit).fields()
        migrating = self.key + MIGRATING_SUFFIX
        if not self._migrating and self._run("EXISTS", lambda: self.client.exists(migrating)):
            raise old_layout_error(self.url, migrating, "is being migrated from")
        reply = self._run("HGETALL", lambda: self._layout_script(keys=[self.key], args=args))
        if reply in (b"old", "old"):
            raise old_layout_error(self.url, self.key)
        if not reply:
            return None
        fields = dict(zip(reply[::2], reply[1::2], strict=True))
        try:
            self._layout = Layout.from_fields(self.key, fields)
        except (KeyError, ValueError) as e:
            raise StoreError(
                f"Redis {self.url}: {self.key!r} is not a seen set's layout ({e})"
            ) from None
        return self._layout

    # --- one pipelined round trip of per-shard script calls -----------------------------------

    def _send(self, what: str, items: list[Call]) -> list[str]:
        """Run the script once per :data:`Call`, all in one pipeline (one round trip; two when
        Redis has to learn the script first, one more for the shards that opened a generation
        this store did not know of); their replies, in order."""
        layout = self._layout
        assert layout is not None
        replies = [""] * len(items)
        pending = list(range(len(items)))
        for _ in range(MAX_ROUNDS):
            calls = [self._call_args(layout, *items[n]) for n in pending]
            stale = []
            for n, reply in zip(
                pending, self._run(what, partial(self._execute, calls)), strict=True
            ):
                if reply[:1] == "S":  # nothing ran: the shard has generations this store missed
                    self._generations[items[n][0]] = int(reply[1:])
                    stale.append(n)
                else:
                    replies[n] = reply
            if not stale:
                break
            pending = stale
        else:
            raise StoreError(
                f"Redis {self.url}, {what} {self.key!r}: the shards' generations kept changing "
                f"for {MAX_ROUNDS} rounds"
            )
        self._answered(
            [
                (shard, reply[:1] == "1", int(reply[1:2] or 0))
                for (shard, *_), reply in zip(items, replies, strict=True)
            ]
        )
        return replies

    def _answered(self, answers: list[tuple[int, bool, int]]) -> None:
        """Learn what the calls of a round trip found, per shard called: whether its marker was
        gone, and flags: 1 if a bucket outgrew the intset limit, 2 if the call opened the
        shard's next generation."""
        lost = False
        for shard, gone, flags in answers:
            if gone and shard in self._marked:
                lost = True
            if flags & 1:
                self.converted += 1
                self._outgrown()
            if flags & 2:
                self._generations[shard] = self._generations.get(shard, 1) + 1
        if lost:
            self._lost()
            layout = self._layout
            assert layout is not None
            self._run("HSET", lambda: self._layout_script(keys=[self.key], args=layout.fields()))
        for shard, _, _ in answers:
            self._marked.add(shard)

    def _execute(self, calls: list[tuple[list[str], list[Any]]]) -> list[str]:
        """The script run once per ``(keys, args)`` in one pipeline: their replies."""
        if is_cluster(self.client):  # one pipeline per node the shards are on
            replies = run_scripts(
                self.client, [(self._shard_script, keys, args) for keys, args in calls]
            )
        else:
            replies = self._pipelined(calls)
        return [r.decode("ascii") if isinstance(r, bytes) else str(r) for r in replies]

    def _pipelined(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        if self._sha is None:
            self.round_trips += 1
            self._sha = self.client.script_load(SHARD_SCRIPT)
        replies: list[Any]
        if len(calls) == 1:  # (redis-py's pipeline costs more than the command alone)
            keys, args = calls[0]
            try:
                replies = [self.client.evalsha(self._sha, len(keys), *keys, *args)]
            except rex.NoScriptError as e:
                replies = [e]
        else:
            pipe = self.client.pipeline(transaction=False)
            for keys, args in calls:
                pipe.evalsha(self._sha, len(keys), *keys, *args)
            replies = pipe.execute(raise_on_error=False)
        missing = [n for n, r in enumerate(replies) if isinstance(r, rex.NoScriptError)]
        if missing:  # a restarted or flushed server: those calls did not run
            self.round_trips += 2
            self._sha = self.client.script_load(SHARD_SCRIPT)
            pipe = self.client.pipeline(transaction=False)
            for n in missing:
                keys, args = calls[n]
                pipe.evalsha(self._sha, len(keys), *keys, *args)
            for n, reply in zip(missing, pipe.execute(raise_on_error=False), strict=True):
                replies[n] = reply
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    def _call_args(
        self,
        layout: Layout,
        shard: int,
        call_id: str,
        release: list[tuple[int, int]],
        add: list[tuple[int, int]],
    ) -> tuple[list[str], list[Any]]:
        generations = self._generations.get(shard, 1)
        plan = self._plans.get((shard, generations))
        if plan is None:
            plan = self._plans[shard, generations] = (
                [layout.owners_key(shard), layout.count_key(shard), layout.generations_key(shard)],
                layout.namers(shard, generations),
                layout.opens_at(generations),
            )
        keys, namers, opens_at = plan[0][:], plan[1], plan[2]
        index: dict[str, int] = {}
        now = time.monotonic()
        refresh = (
            call_id != "" and now - self._refreshed.get(shard, -STAMPS_REFRESH) >= STAMPS_REFRESH
        )
        if refresh:
            self._refreshed[shard] = now
        args: list[Any] = [
            self.owner,
            call_id,
            layout.limit,
            len(release),
            generations,
            opens_at,
            "1" if refresh else "0",
        ]
        member_mask = layout.member_mask
        for _, key in itertools.chain(release, add):
            for prefix, mask, shift in namers:
                bucket = prefix + str((key & mask) >> shift)
                at = index.get(bucket)
                if at is None:
                    keys.append(bucket)
                    at = index[bucket] = len(keys)
                args.append(at)
            args.append(key & member_mask)
        return keys, args

    def _lost(self) -> None:
        self.data_lost += 1
        self._marked.clear()  # the shards not touched since were lost too: one warning for all
        logger.warning(
            "Redis %s lost its data (the seen set %r lost its shards' markers: restarted without "
            "persistence, or flushed by someone else): every page seen before is new again "
            "and may be fetched a second time",
            self.url,
            self.key,
        )

    def _outgrown(self) -> None:
        layout = self._layout
        assert layout is not None
        if self.converted == 1 and layout.grows:
            logger.warning(
                "A bucket of the seen set %r holds more than Redis's set-max-intset-entries "
                "(%d) members, and costs ~10x the memory per URL from now on (stat "
                "urlunify/redis/seen_hashtables): its keys are not spread evenly over the 64-bit "
                "range (the fingerprints of a fingerprinter that does not hash?)",
                self.key,
                layout.limit,
            )
        elif self.converted == 1:
            logger.warning(
                "The seen set %r outgrew its sizing (%d buckets for %d URLs): a bucket now "
                "holds more than Redis's set-max-intset-entries (%d) members, and costs ~10x "
                "the memory per URL from now on (stat urlunify/redis/seen_hashtables). See "
                "'Sizing' in docs/stores.md",
                self.key,
                layout.buckets,
                layout.size,
                layout.limit,
            )

    # --- SeenStore ----------------------------------------------------------------------------

    def add_batch(self, keys: Sequence[int], release: Sequence[int] = ()) -> list[bool]:
        """:meth:`add` for each of ``keys`` in one round trip (one script call per shard they
        fall in, pipelined): for each, True if it was new. Each member is new for exactly one
        call of one process, as with :meth:`add`, a retry after a lost reply included; a member
        repeated in ``keys`` is new once at most. ``release`` is removed first
        (:meth:`discard_many`), in the same round trip."""
        self.batches += 1
        return self._add(keys, release)

    def _add(self, keys: Sequence[int], release: Sequence[int] = ()) -> list[bool]:
        layout = self.layout()
        assert layout is not None
        call_id = str(next(self._call_ids))
        self.last_batch = f"{self.owner} {call_id}"
        adds, releases = group(layout, keys), group(layout, release)
        shards = list(adds.keys() | releases.keys())
        self._last_places = [(0, 0)] * len(keys)
        for shard in adds:
            for pos, (i, _) in enumerate(adds[shard]):
                self._last_places[i] = (shard, pos)
        if not shards:
            return []
        replies = self._send(
            "SADD (batch)",
            [(s, call_id, releases.get(s, []), adds.get(s, [])) for s in shards],
        )
        new = [False] * len(keys)
        for shard, reply in zip(shards, replies, strict=True):
            added = adds.get(shard, [])
            if len(reply) != len(added) + 2:
                raise StoreError(
                    f"Redis {self.url}, SADD (batch) {self.key!r}: "
                    f"{len(reply) - 2} answers for {len(added)} members"
                )
            for (i, _), flag in zip(added, reply[2:], strict=True):
                new[i] = flag == "1"
        return new

    def add(self, key: int) -> bool:
        # the scheduler's request_seen, once a request: one ONE_SCRIPT call, which costs a
        # duplicate a SISMEMBER per generation looked in (SHARD_SCRIPT's five commands and more)
        # and stamps only what it changed
        layout = self._layout or self.layout()
        assert layout is not None
        if not isinstance(key, int):
            raise TypeError(f"key must be an int, not {type(key).__name__}")
        if not 0 <= key < 2**64:
            raise ValueError(f"key {key!r} is outside [0, 2**64)")
        shard = layout.shard_of(key)
        call_id = b"%d" % next(self._call_ids)
        now = time.monotonic()
        refresh = now - self._refreshed.get(shard, -STAMPS_REFRESH) >= STAMPS_REFRESH
        if refresh:
            self._refreshed[shard] = now
        ones = self.ones
        doubt = [ones.always_check]  # an attempt may have run unanswered: look for its stamp
        for _ in range(MAX_ROUNDS):
            generations = self._generations.get(shard, 1)
            keys, member, rest = ones.args(layout, shard, generations, key, call_id)
            reply = self._run("SADD", partial(ones.attempt, keys, member, rest, refresh, doubt))
            if reply >= 0:
                break
            self._generations[shard] = -reply  # nothing ran: a generation this store missed
        else:
            raise StoreError(
                f"Redis {self.url}, SADD {self.key!r}: the shard's generations kept changing "
                f"for {MAX_ROUNDS} rounds"
            )
        if reply > 1 or shard not in self._marked:
            self._answered([(shard, bool(reply & 8), reply >> 1 & 3)])
        return bool(reply & 1)

    def batch_call(self, index: int) -> str:
        """What :meth:`batch_answer` needs to tell what the last :meth:`add_batch` did with its
        key number ``index`` (kept with a request whose batch got no reply)."""
        shard, pos = self._last_places[index]
        return f"{self.last_batch} {shard} {pos}"

    def batch_answer(self, call: str) -> bool | None:
        """Whether the :meth:`add_batch` call ``call`` (a :meth:`batch_call`, from this or an
        earlier process) added its key: True if it did, False if that key was seen already,
        None if the call never ran on its shard (the owner's stamp there is of an earlier call:
        check the key as usual). When Redis cannot tell (no stamp of that owner: it expired after
        :data:`STAMPS_TTL`, or the call was the owner's first; a call of the old layout), or
        ``call`` is malformed: True, since fetching a page twice is better than never."""
        layout = self.layout(create=False)
        try:
            owner, call_id, shard_text, pos = call.split(" ")
            shard = int(shard_text)
            position = len(call_id) + 3 + int(pos)  # "<call id> ", then the two flags
        except (AttributeError, ValueError):
            return True
        if layout is None or not 0 <= shard < layout.shards:
            return True
        stamp = self._run("HGET", lambda: self.client.hget(layout.owners_key(shard), owner))
        if stamp is None:
            return True
        stamp = stamp if isinstance(stamp, bytes) else stamp.encode("ascii")
        if not stamp.startswith(call_id.encode("ascii") + b" "):
            # an owner's calls are stamped in order, and a store stops calling once one failed
            return None
        return position >= len(stamp) or stamp[position] == 0x31

    def discard_many(self, keys: Iterable[int]) -> None:
        """Remove ``keys`` from the set (SREM): each becomes new again, for every process."""
        keys = list(keys)
        layout = self.layout(create=False) if keys else None
        if layout is None:
            return
        self._send("SREM", [(s, "", members, []) for s, members in group(layout, keys).items()])

    def discard(self, key: int) -> None:
        """Remove ``key`` (a request recorded as new that could not be logged as scheduled)."""
        self.discard_many((key,))

    def add_many(self, keys: Iterable[int]) -> list[bool]:
        """:meth:`add` for many keys, :meth:`add_batch` of 1,000 at a time."""
        keys = list(keys)
        out: list[bool] = []
        for start in range(0, len(keys), PIPELINE_CHUNK):
            out += self._add(keys[start : start + PIPELINE_CHUNK])
        return out

    def __contains__(self, key: object) -> bool:
        return isinstance(key, int) and self.contains_many([key])[0]

    def contains_many(self, keys: Sequence[int]) -> list[bool]:
        """For each of ``keys``, whether the set holds it: :meth:`__contains__` for many keys in
        one round trip a :data:`PIPELINE_CHUNK` (one more for the shards that opened a generation
        this store did not know of)."""
        out = [False] * len(keys)
        layout = self.layout(create=False)
        if layout is None:
            return out
        todo = [i for i, key in enumerate(keys) if isinstance(key, int) and 0 <= key < 2**64]
        for start in range(0, len(todo), PIPELINE_CHUNK):
            chunk = todo[start : start + PIPELINE_CHUNK]
            for _ in range(MAX_ROUNDS):
                chunk = self._contains_chunk(layout, keys, chunk, out)
                if not chunk:
                    break
            else:
                raise StoreError(
                    f"Redis {self.url}, SISMEMBER {self.key!r}: the shards' generations kept "
                    "changing"
                )
        return out

    def _contains_chunk(
        self, layout: Layout, keys: Sequence[int], chunk: list[int], out: list[bool]
    ) -> list[int]:
        """Look up ``keys[i]`` for ``i`` in ``chunk`` into ``out``; the positions to look up
        again, whose shard opened a generation meanwhile."""
        shards = sorted({layout.shard_of(keys[i]) for i in chunk})
        assumed = {shard: self._generations.get(shard, 1) for shard in shards}

        def ask() -> list[Any]:
            pipe = self.client.pipeline(transaction=False)
            for shard in shards:
                pipe.get(layout.generations_key(shard))
            for i in chunk:
                key = keys[i]
                member = layout.member_of(key)
                for generation in range(assumed[layout.shard_of(key)]):
                    pipe.sismember(layout.bucket_of(key, generation), member)  # type: ignore[arg-type]
            return pipe.execute()  # type: ignore[no-any-return]

        replies = self._run("SISMEMBER", ask)
        generations = {shard: int(replies[n] or 1) for n, shard in enumerate(shards)}
        again = []
        at = len(shards)
        for i in chunk:
            shard = layout.shard_of(keys[i])
            found = replies[at : at + assumed[shard]]
            at += assumed[shard]
            if generations[shard] == assumed[shard]:
                out[i] = any(int(f) for f in found)
            else:
                again.append(i)
        self._generations.update(generations)
        return again

    def __len__(self) -> int:
        """The members, as the shards' counters hold them (one pipelined GET per shard)."""
        layout = self.layout(create=False)
        if layout is None:
            return 0

        def count() -> int:
            pipe = self.client.pipeline(transaction=False)
            for shard in range(layout.shards):
                pipe.get(layout.count_key(shard))
            return sum(int(v or 0) for v in pipe.execute())

        return self._run("GET", count)

    def migrate(self) -> tuple[int, int]:
        """Copy a seen set of the old layout (one SET of 8-byte members at this key) into
        buckets: ``(members copied, members skipped as not 8 bytes)``; ``(0, 0)`` when there is
        none. The old set is renamed first (to the key + :data:`MIGRATING_SUFFIX`, which a crawl
        refuses to start on) and deleted last, so an interrupted migration is finished by
        running it again. Run it with no crawl of the scope running."""
        old = self.key + MIGRATING_SUFFIX
        kind = self._run("TYPE", lambda: self.client.type(self.key))
        if kind in (b"set", "set"):
            self._run("RENAME", lambda: self.client.renamenx(self.key, old))
        if not self._run("EXISTS", lambda: self.client.exists(old)):
            return 0, 0
        self._migrating = True
        try:
            copied = skipped = 0
            cursor: Any = 0
            while True:
                cursor, members = self._run(
                    "SSCAN", partial(self.client.sscan, old, cursor, count=PIPELINE_CHUNK)
                )
                keys = [
                    int.from_bytes(m, "big")
                    for m in members
                    if isinstance(m, bytes) and len(m) == 8
                ]
                skipped += len(members) - len(keys)
                copied += len(keys)
                self.add_many(keys)
                if not int(cursor):
                    break
            self._run(
                "UNLINK",
                lambda: self.client.unlink(old, self.key + ":owners", self.key + ":marker"),
            )
        finally:
            self._migrating = False
        return copied, skipped

    def close(self) -> None:
        self.ones.close()
        super().close()

    def clear(self) -> None:
        """Delete every key of the set: its layout, buckets, counters and stamps (SCAN for the
        buckets, whatever layout made them), and a seen set of the old layout at its key."""
        probe = Layout(self.key, 0, 1, 0, 0)

        def delete() -> None:
            pipe = self.client.pipeline(transaction=False)
            for n, key in enumerate(self.client.scan_iter(match=probe.match(), count=1000), 1):
                pipe.unlink(key)  # one key a command: a cluster may hold them on several nodes
                if n % PIPELINE_CHUNK == 0:
                    pipe.execute()
            for key in (
                self.key,
                self.key + MIGRATING_SUFFIX,
                self.key + ":owners",
                self.key + ":marker",
            ):
                pipe.unlink(key)
            pipe.execute()

        self._run("UNLINK", delete)
        self._layout = None
        self._marked.clear()
        self._generations.clear()
        self._plans.clear()
        self.ones.plans.clear()
