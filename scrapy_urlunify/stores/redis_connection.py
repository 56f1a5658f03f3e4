"""Talking to Redis: connecting, and getting through its outages.

:func:`connect` makes a client from a URL and PINGs it; :class:`RedisStore`, the base of every
Redis store (one key each), runs each command in a retry loop: through an outage a call blocks
(the crawl with it) for at most ``unavailable_timeout`` seconds, then raises
:class:`RedisUnavailable`; it never guesses, since "seen" would lose a page and "new" would
fetch pages twice. The store counts the retries and the outages they belonged to. Why it blocks
and what a lost reply does: ``docs/stores.md``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis import exceptions as rex
from redis.backoff import NoBackoff
from redis.retry import Retry

from .base import ClosingContext, StoreError, StoreUnavailable
from .location import is_redis_url, mask_url, quote_userinfo, without_secret

__all__ = [
    "BACKOFF_MAX",
    "BACKOFF_START",
    "PIPELINE_CHUNK",
    "RedisStore",
    "RedisUnavailable",
    "client_url",
    "connect",
    "own_retries",
    "ping",
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
#: Members per pipeline or per variadic command (bounds the reply buffer).
PIPELINE_CHUNK = 1000


class RedisUnavailable(StoreUnavailable):
    """Redis cannot be reached (at start, or for longer than ``unavailable_timeout``).

    ``url`` is the server's URL with any password masked; the message names it."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = mask_url(url)
        self.reason = without_secret(reason, url)
        super().__init__(f"Redis store {self.url} is unavailable: {self.reason}")


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
    know when a command was retried (a lost reply, see :mod:`.redis_seen`)."""
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


class RedisStore(ClosingContext):
    """One Redis key, and the retry loop every command of the store goes through (the base of
    every Redis store: :mod:`.redis_seen`, :mod:`.redis_tables`)."""

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
