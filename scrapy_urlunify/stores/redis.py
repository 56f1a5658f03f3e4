"""Redis-backed stores: many crawler processes share one "already seen" set.

Three stores over one ``redis.Redis`` client, each on its own key (see :func:`redis_keys`):

* :class:`RedisSeenStore` -- a :class:`~scrapy_urlunify.stores.SeenStore`: a Redis SET whose
  members are the 64-bit fingerprints as 8-byte big-endian binary strings. ``SADD`` answers 1
  when the member is new, so "seen?" and "record" are one atomic step *in Redis*: two
  processes racing on one URL get exactly one "new". ``add_batch`` checks and records many
  keys (a response's links) in one round trip, each as atomically (one Lua script).
* :class:`RedisSignatureStore` -- a :class:`~scrapy_urlunify.stores.SignatureStore`: a HASH
  signature -> identifier; ``HSETNX`` + ``HGET`` in one ``MULTI``/``EXEC`` transaction (one
  round trip, no other client's command runs in between).
* :class:`RedisRulesStore` -- a HASH of learned rules, name -> JSON text.

Every command runs in a retry loop: through an outage a call blocks (the crawl with it) for at
most ``unavailable_timeout`` seconds, then raises :class:`StoreUnavailable`; it never guesses,
since "seen" would lose a page and "new" would fetch pages twice. A retried ``SADD`` whose
first reply was lost still answers "new" exactly once (a Lua script stamps the member with the
call's id). Why it blocks, what a lost reply does, and what a URL costs in Redis:
``docs/stores.md``; speed and memory against scrapy-redis: ``benchmarks/README.md``.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import redis
from redis import exceptions as rex
from redis.backoff import NoBackoff
from redis.retry import Retry

from . import _ClosingContext
from .errors import StoreError, StoreUnavailable
from .factory import (
    DEFAULT_KEY_TEMPLATE,
    is_redis_url,
    mask_url,
    quote_userinfo,
    redis_keys,
    without_secret,
)
from .kept import KeptEntry, pack_entry, unpack_entry

__all__ = [
    "DEFAULT_KEY_TEMPLATE",
    "RedisFetchedStore",
    "RedisKeptStore",
    "RedisRulesStore",
    "RedisSeenStore",
    "RedisSignatureStore",
    "RedisUnavailable",
    "StoreUnavailable",
    "connect",
    "is_redis_url",
    "mask_url",
    "own_retries",
    "ping",
    "redis_keys",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Errors after which the same command may succeed: the server is restarting, unreachable,
#: still loading its data set, or is a replica that is being promoted. Authentication
#: errors are ConnectionErrors in redis-py but never heal by waiting, so they are excluded.
_TRANSIENT: tuple[type[BaseException], ...] = (
    rex.ConnectionError,
    rex.TimeoutError,
    rex.ReadOnlyError,
    rex.TryAgainError,
    rex.ClusterDownError,
    ConnectionError,  # builtins: OSError subclasses redis-py may let through
    TimeoutError,
)
_FATAL: tuple[type[BaseException], ...] = (rex.AuthenticationError, rex.AuthorizationError)

BACKOFF_START = 0.05
BACKOFF_MAX = 2.0
#: Seconds the owners hash of a seen set (the stamps of add() and add_batch()) outlives the last
#: call that stamped it: a job resumed later than that after a Redis outage cannot learn what
#: its cut-off link batch did, and fetches all its links (RedisSeenStore.batch_answer).
STAMPS_TTL = 7 * 86400
#: Fingerprints per pipeline in :meth:`RedisSeenStore.add_many` (bounds the reply buffer).
PIPELINE_CHUNK = 1000


class RedisUnavailable(StoreUnavailable):
    """Redis cannot be reached (at start, or for longer than ``unavailable_timeout``).

    ``url`` is the server's URL with any password masked; the message names it."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = mask_url(url)
        self.reason = without_secret(reason, url)
        super().__init__(f"Redis store {self.url} is unavailable: {self.reason}")


# --- URLs, keys and connections ----------------------------------------------------------


def client_url(client: redis.Redis) -> str:
    """A password-free URL naming the server ``client`` talks to, for messages."""
    try:
        kw = client.connection_pool.connection_kwargs
        if kw.get("path"):
            return f"unix://{kw['path']}?db={kw.get('db', 0)}"
        scheme = "rediss" if client.connection_pool.connection_class.__name__.startswith("SSL") else "redis"
        return f"{scheme}://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
    except (AttributeError, KeyError, TypeError):
        # a client object of another kind (scrapy-redis accepts any): naming it must not fail
        return f"<{type(client).__name__} client>"


def own_retries(client: redis.Redis) -> redis.Redis:
    """Turn off redis-py's own retries on ``client``: the stores retry themselves, and must
    know when a command was retried (a lost reply, see the module docstring)."""
    client.set_retry(Retry(NoBackoff(), 0))
    return client


def ping(client: redis.Redis, url: str | None = None) -> None:
    """PING ``client``'s server once; :class:`StoreUnavailable` naming ``url`` if it fails."""
    try:
        client.ping()
    except rex.RedisError as exc:
        raise RedisUnavailable(url or client_url(client), f"{type(exc).__name__}: {exc}") from None


def connect(url: str, *, timeout: float = 10.0, health_check_interval: int = 30) -> redis.Redis:
    """A client for ``url`` (``redis://[:password@]host:port/db``, ``rediss://`` for TLS,
    ``unix:///path?db=N``), checked with a PING.

    ``timeout`` bounds connecting and each reply, so a dead server is noticed within it;
    connections idle longer than ``health_check_interval`` seconds are PINGed before use.
    Raises :class:`StoreUnavailable` (password masked) if the server does not answer, and
    ValueError for a URL that is not a Redis URL."""
    if not is_redis_url(url):
        raise ValueError(f"not a Redis URL (redis://, rediss:// or unix://): {mask_url(url)!r}")
    options: dict[str, Any] = {}
    if not url.strip().lower().startswith("unix://"):
        options["socket_keepalive"] = True  # TCP only: a unix socket connection refuses it
    try:
        client = redis.Redis.from_url(
            quote_userinfo(url.strip()),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            health_check_interval=health_check_interval,
            retry=Retry(NoBackoff(), 0),
            **options,
        )
    except ValueError as exc:  # a malformed port, db or query
        raise ValueError(f"bad Redis URL {mask_url(url)!r}: {without_secret(str(exc), url)}") from None
    try:
        ping(client, url)
    except BaseException:
        client.close()
        raise
    return client


# --- the stores ----------------------------------------------------------------------------


def _text(value: bytes | str) -> str:
    # bytes unless the client was made with decode_responses=True
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def _raw(value: bytes | str) -> bytes:
    # str only if the client was made with decode_responses=True
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value


def _member(fp: int) -> bytes:
    try:
        return fp.to_bytes(8, "big")
    except OverflowError:
        raise ValueError(f"fingerprint {fp!r} is outside [0, 2**64)") from None
    except AttributeError:
        raise TypeError(f"fingerprint must be an int, not {type(fp).__name__}") from None


class _RedisStore(_ClosingContext):
    """One Redis key, and the retry loop every command of the store goes through."""

    def __init__(
        self,
        client: redis.Redis,
        key: str,
        *,
        unavailable_timeout: float = 60.0,
        owns_client: bool = False,
    ) -> None:
        if unavailable_timeout < 0:
            raise ValueError(f"unavailable_timeout must be >= 0, got {unavailable_timeout}")
        self.client = client
        self.key = key
        self.unavailable_timeout = unavailable_timeout
        #: close() closes the client too (the store made it, or was handed it to keep)
        self.owns_client = owns_client
        self.url = client_url(client)
        #: commands tried again after a transient error; outages those retries belonged to
        self.retries = 0
        self.outages = 0
        # set when a call gave up: later calls try once and fail fast until Redis answers
        self._gave_up = False

    def _call(self, what: str, command: Callable[[], T]) -> tuple[T, bool]:
        """Run ``command`` until it succeeds; return its result and whether it was retried.

        Blocks through an outage for up to ``unavailable_timeout`` seconds, then raises
        :class:`StoreUnavailable`; until Redis answers again, later calls try once and raise
        at once, rather than each blocking for the whole timeout again. Any other Redis error
        becomes a :class:`StoreError`."""
        deadline = 0.0
        delay = 0.0  # the first retry is immediate: usually a connection the server dropped
        failed_since: float | None = None
        while True:
            try:
                result = command()
            except _FATAL as exc:
                raise RedisUnavailable(self.url, f"{what} {self.key!r}: {type(exc).__name__}: {exc}") from None
            except _TRANSIENT as exc:
                now = time.monotonic()
                if self._gave_up:  # the outage already outlasted unavailable_timeout
                    raise RedisUnavailable(self.url, f"{what} {self.key!r}: still down: "
                                                     f"{type(exc).__name__}: {exc}") from None
                if failed_since is None:
                    failed_since, deadline = now, now + self.unavailable_timeout
                    self.outages += 1
                    logger.warning("Redis %s unavailable (%s); retrying for up to %gs",
                                   self.url, exc, self.unavailable_timeout)
                if now >= deadline:
                    self._gave_up = True
                    raise RedisUnavailable(
                        self.url,
                        f"{what} {self.key!r} failed for {now - failed_since:.1f}s "
                        f"(unavailable_timeout {self.unavailable_timeout:g}s): {type(exc).__name__}: {exc}",
                    ) from None
                self.retries += 1
                time.sleep(min(delay, deadline - now))
                delay = min(max(delay * 2, BACKOFF_START), BACKOFF_MAX)
            except rex.RedisError as exc:  # WRONGTYPE, OOM, ...: waiting does not help
                raise StoreError(f"Redis {self.url}, {what} {self.key!r}: {type(exc).__name__}: {exc}") from None
            else:
                self._gave_up = False
                if failed_since is not None:
                    logger.info("Redis %s is back after %.1fs", self.url, time.monotonic() - failed_since)
                return result, failed_since is not None

    def _run(self, what: str, command: Callable[[], T]) -> T:
        return self._call(what, command)[0]

    def clear(self) -> None:
        """Delete this store's key (every process sharing it loses it too)."""
        self._run("DEL", lambda: self.client.delete(self.key))

    def close(self) -> None:
        if self.owns_client:
            self.client.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url} key={self.key!r}>"


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


class RedisSeenStore(_RedisStore):
    """A :class:`~scrapy_urlunify.stores.SeenStore` in a Redis SET of 8-byte members,
    shared by every process given the same key."""

    def __init__(self, client: redis.Redis, key: str, **kwargs: Any) -> None:
        super().__init__(client, key, **kwargs)
        #: every store's stamp (the id of its last call that added a member), by owner
        self.owners_key = f"{key}:owners"
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        #: exists as long as Redis keeps the set's data: an add that finds it gone (Redis restarted
        #: without persistence, or flushed) warns that every page seen before is new again
        self.marker_key = f"{key}:marker"
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


class RedisSignatureStore(_RedisStore):
    """A :class:`~scrapy_urlunify.stores.SignatureStore` in a Redis HASH signature -> identifier."""

    def get_or_set(self, signature: bytes, identifier: str) -> str | None:
        if not isinstance(signature, bytes):
            raise TypeError(f"signature must be bytes, not {type(signature).__name__}")
        if not isinstance(identifier, str):
            raise TypeError(f"identifier must be str, not {type(identifier).__name__}")
        value = identifier.encode("utf-8", "surrogatepass")

        def hsetnx_hget() -> list[Any]:
            # MULTI/EXEC: both commands run with no other client's command between them
            pipe = self.client.pipeline(transaction=True)
            pipe.hsetnx(self.key, signature, value)
            pipe.hget(self.key, signature)
            return pipe.execute()

        (created, stored), retried = self._call("HSETNX+HGET", hsetnx_hget)
        if created:
            return None
        known = _text(stored)
        # after a retry, our own identifier means our lost HSETNX stored it
        return None if retried and known == identifier else known

    def __len__(self) -> int:
        return int(self._run("HLEN", lambda: self.client.hlen(self.key)))


class RedisRulesStore(_RedisStore):
    """Learned rules of a scope, shared by its processes: a HASH name -> JSON text."""

    def get_all(self) -> dict[str, str]:
        raw = self._run("HGETALL", lambda: self.client.hgetall(self.key))
        return {_text(k): _text(v) for k, v in raw.items()}

    def set(self, name: str, value: str) -> None:
        self._run("HSET", lambda: self.client.hset(self.key, name, value))

    def __len__(self) -> int:
        return int(self._run("HLEN", lambda: self.client.hlen(self.key)))

    def set_many(self, fields: dict[str, str]) -> None:
        """Set several fields in one ``HSET``: a reader sees all of them or none."""
        self._run("HSET", lambda: self.client.hset(self.key, mapping=fields))  # type: ignore[arg-type]


class RedisKeptStore(_RedisStore):
    """Requests merged by rules on probation (``stores.kept``), shared by the processes of a
    scope: a HASH entry id -> rules and pickled request. Read whole only when a rule is revoked,
    a crawl opens, or a crawl goes idle with a rule on probation; one ``HSET`` per kept request,
    one ``HDEL`` per batch forgotten."""

    def entries(self) -> list[KeptEntry]:
        raw = self._run("HGETALL", lambda: self.client.hgetall(self.key))
        where = f"Redis {self.url} key {self.key!r}"
        return [(_raw(k), *unpack_entry(_raw(v), where)) for k, v in raw.items()]

    def add(self, entry_id: bytes, rules: tuple[str, ...], data: bytes) -> None:
        value = pack_entry(rules, data)
        self._run("HSET", lambda: self.client.hset(self.key, entry_id, value))  # type: ignore[arg-type]

    def remove(self, entry_ids: Iterable[bytes]) -> None:
        ids = list(entry_ids)
        for start in range(0, len(ids), PIPELINE_CHUNK):
            chunk = ids[start : start + PIPELINE_CHUNK]
            self._run("HDEL", lambda chunk=chunk: self.client.hdel(self.key, *chunk))  # type: ignore[misc]

    def __len__(self) -> int:
        return int(self._run("HLEN", lambda: self.client.hlen(self.key)))


class RedisFetchedStore(_RedisStore):
    """The pages fetched under a learned policy, shared by the processes of a scope: a SET of
    8-byte keys of their identifiers under the policy of the process that fetched them. The
    dequeue re-check asks it for a request queued under another policy; new members wait in
    :attr:`pending` and go with that question (one round trip for both), or by
    :data:`PIPELINE_CHUNK` at most."""

    def __init__(self, client: redis.Redis, key: str, **kwargs: Any) -> None:
        super().__init__(client, key, **kwargs)
        self.pending: list[bytes] = []

    def add(self, member: bytes) -> None:
        """Record ``member`` (sent with the next :meth:`fetched`, or now if many wait)."""
        self.pending.append(member)
        if len(self.pending) >= PIPELINE_CHUNK:
            self.flush()

    def add_many(self, members: Iterable[bytes]) -> None:
        """Record many members now, :data:`PIPELINE_CHUNK` per round trip."""
        self.pending.extend(members)
        self.flush()

    def flush(self) -> None:
        while self.pending:
            chunk, rest = self.pending[:PIPELINE_CHUNK], self.pending[PIPELINE_CHUNK:]
            self._run("SADD", lambda chunk=chunk: self.client.sadd(self.key, *chunk))  # type: ignore[misc]
            self.pending = rest

    def fetched(self, member: bytes) -> bool:
        """Whether any process recorded ``member``; the members waiting go in the same round trip."""
        pending = self.pending[:PIPELINE_CHUNK]

        def ask() -> list[Any]:
            pipe = self.client.pipeline(transaction=False)
            if pending:
                pipe.sadd(self.key, *pending)
            pipe.sismember(self.key, member)  # type: ignore[arg-type]
            return pipe.execute()

        answers = self._run("SADD+SISMEMBER", ask)
        self.pending = self.pending[len(pending):]
        return bool(answers[-1])

    def close(self) -> None:
        try:
            self.flush()
        finally:
            super().close()

    def __len__(self) -> int:
        return int(self._run("SCARD", lambda: self.client.scard(self.key)))
