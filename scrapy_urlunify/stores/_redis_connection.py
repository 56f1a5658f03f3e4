"""Talking to Redis: connecting, and getting through its outages.

:func:`connect` makes a client from a URL and PINGs it: a ``redis.Redis``, or a
``redis.cluster.RedisCluster`` for a ``redis+cluster://`` URL. :class:`RedisStore`, the base of
every Redis store (one key each), runs each command in a retry loop: through an outage a call
blocks (the crawl with it) for at most ``unavailable_timeout`` seconds, then raises
:class:`RedisUnavailable`; it never guesses, since "seen" would lose a page and "new" would
fetch pages twice. The store counts the retries and the outages they belonged to. Why it blocks
and what a lost reply does: ``docs/stores.md``.

On a cluster, redis-py follows ``MOVED`` and ``ASK`` itself (the command did not run where it
was sent); every other cluster error (``CLUSTERDOWN``, ``TRYAGAIN``, ``MASTERDOWN``, a node that
died, a slot no node serves yet during a failover) goes through the same retry loop, which reads
the cluster's slot map again before each retry (:func:`remap`, at most every
:data:`REMAP_INTERVAL` seconds per client), so every command of every store finds the promoted
replica, however redis-py sent it. Every key of a store is on the slot of its hash tag
(:func:`~.location.hash_tagged`), so its scripts and multi-key commands touch one slot.
:func:`run_scripts` runs many script calls as one pipeline: one round trip per node.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis import exceptions as rex
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

from scrapy_urlunify.stores._base import ClosingContext, StoreError, StoreUnavailable
from scrapy_urlunify.stores._location import (
    cluster_nodes,
    hash_tagged,
    is_cluster_url,
    is_redis_url,
    mask_url,
    quote_userinfo,
    without_secret,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Errors after which the same command may succeed: the server is restarting, unreachable,
#: still loading its data set, or is a replica that is being promoted; on a cluster, a
#: failover in progress (CLUSTERDOWN, MASTERDOWN: subclasses of ClusterDownError; TRYAGAIN; a
#: slot no node serves in the client's map yet; ClusterError: redirections without end; a
#: MOVED or ASK that redis-py does not follow, as in a MULTI/EXEC, which then ran nothing).
#: Authentication errors are ConnectionErrors in redis-py but never heal by waiting, so they
#: are excluded.
_TRANSIENT: tuple[type[BaseException], ...] = (
    rex.ConnectionError,
    rex.TimeoutError,
    rex.ReadOnlyError,
    rex.TryAgainError,
    rex.ClusterError,
    rex.SlotNotCoveredError,
    rex.AskError,  # and MovedError, its subclass
    ConnectionError,  # builtins: OSError subclasses redis-py may let through
    TimeoutError,
)
_FATAL: tuple[type[BaseException], ...] = (rex.AuthenticationError, rex.AuthorizationError)

BACKOFF_START = 0.05
BACKOFF_MAX = 2.0
#: Members per pipeline or per variadic command (bounds the reply buffer).
PIPELINE_CHUNK = 1000
#: Least seconds between two re-reads of a cluster's slot map by the retry loop (one
#: ``CLUSTER SLOTS``): through an outage every store of a client retries, none hammers the cluster.
REMAP_INTERVAL = 0.5

_remapped_at: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
_remap_lock = threading.Lock()


def _transient(exc: BaseException) -> bool:
    """Whether waiting may cure ``exc``: a transient error, or redis-py's cluster client failing to
    map the cluster again because of one (it wraps the cause in a RedisClusterException)."""
    if isinstance(exc, _FATAL):
        return False
    if isinstance(exc, _TRANSIENT):
        return True
    cause = exc.__cause__
    return isinstance(exc, rex.RedisClusterException) and cause is not None and _transient(cause)


class RedisUnavailable(StoreUnavailable):
    """Redis cannot be reached (at start, or for longer than ``unavailable_timeout``).

    ``url`` is the server's URL with any password masked; the message names it."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = mask_url(url)
        self.reason = without_secret(reason, url)
        super().__init__(f"Redis store {self.url} is unavailable: {self.reason}")


def is_cluster(client: object) -> bool:
    """Whether ``client`` talks to a Redis Cluster (a ``redis.cluster.RedisCluster``)."""
    return isinstance(client, RedisCluster)


def store_key(client: object, key: str) -> str:
    """The key a store of ``client`` keeps under the name ``key``: ``key`` itself on one server
    (the layout every release used), the hash-tagged ``{key}`` on a cluster
    (:func:`~.location.hash_tagged`), so the store's other keys (``<key>:owners``...) are on the
    same slot."""
    return hash_tagged(key) if is_cluster(client) else key


def client_url(client: Any) -> str:
    """A password-free URL naming the server ``client`` talks to, for messages."""
    if is_cluster(client):
        try:
            nodes = client.nodes_manager.startup_nodes
            return "redis+cluster://" + ",".join(sorted(nodes))
        except AttributeError:
            return "<RedisCluster client>"
    try:
        kw = client.connection_pool.connection_kwargs
        if kw.get("path"):
            return f"unix://{kw['path']}?db={kw.get('db', 0)}"
        scheme = (
            "rediss"
            if client.connection_pool.connection_class.__name__.startswith("SSL")
            else "redis"
        )
        return f"{scheme}://{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
    except (AttributeError, KeyError, TypeError):
        # a client object of another kind (scrapy-redis accepts any): naming it must not fail
        return f"<{type(client).__name__} client>"


def own_retries(client: redis.Redis) -> redis.Redis:
    """Turn off redis-py's own retries on ``client``: the stores retry themselves, and must
    know when a command was retried (a lost reply, see :mod:`.redis_seen`)."""
    client.set_retry(Retry(NoBackoff(), 0))
    return client


def resends(client: Any) -> bool:
    """Whether redis-py may send a command again by itself after a connection error, unknown to
    the store: a client with retries of its own (one handed in, not made by :func:`connect`), or
    a cluster client (its pipelines send a call again, alone, when its node dropped the
    connection: :func:`run_scripts`)."""
    if is_cluster(client):
        return True
    get_retry = getattr(client, "get_retry", None)
    retry = get_retry() if get_retry is not None else None
    return retry is not None and getattr(retry, "_retries", 1) != 0


def remap(client: Any, interval: float = REMAP_INTERVAL) -> bool:
    """On a cluster client, read the slot map again (``CLUSTER SLOTS`` from a node that answers),
    unless it was read less than ``interval`` seconds ago; whether it was read.

    redis-py re-reads it itself after most errors, but not every time: a transactional
    ``ClusterPipeline`` (``MULTI``/``EXEC``) with retries off counts its errors on the pipeline
    object, new for each call, and never gets to re-read it, so it would call a dead master until
    the store gave up, while its replica was promoted within seconds. The one reach into the
    client: ``nodes_manager.initialize()``, a public method redis-py's own error paths call."""
    if not is_cluster(client):
        return False
    now = time.monotonic()
    with _remap_lock:
        if now - _remapped_at.get(client, -interval) < interval:
            return False
        _remapped_at[client] = now
    try:
        client.nodes_manager.initialize()
    except (rex.RedisError, rex.RedisClusterException, OSError):
        return False  # no node answers yet: the next retry's error says so, and maps again
    return True


def ping(client: redis.Redis | RedisCluster, url: str | None = None) -> None:
    """PING ``client``'s server once; :class:`StoreUnavailable` naming ``url`` if it fails."""
    try:
        client.ping()
    except rex.RedisError as exc:
        raise RedisUnavailable(url or client_url(client), f"{type(exc).__name__}: {exc}") from None


def connect(url: str, *, timeout: float = 10.0, health_check_interval: int = 30) -> redis.Redis:
    """A client for ``url`` (``redis://[:password@]host:port/db``, ``rediss://`` for TLS,
    ``unix:///path?db=N``; ``redis+cluster://[:password@]host:port,host:port,...`` for a
    ``RedisCluster``), checked with a PING.

    ``timeout`` bounds connecting and each reply, so a dead server is noticed within it;
    connections idle longer than ``health_check_interval`` seconds are PINGed before use.
    Raises :class:`StoreUnavailable` (password masked) if the server does not answer, and
    ValueError for a URL that is not a Redis URL."""
    if not is_redis_url(url):
        raise ValueError(
            f"not a Redis URL (redis://, rediss://, unix:// or redis+cluster://): {mask_url(url)!r}"
        )
    if is_cluster_url(url):
        return _connect_cluster(url, timeout, health_check_interval)
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
        raise ValueError(
            f"bad Redis URL {mask_url(url)!r}: {without_secret(str(exc), url)}"
        ) from None
    try:
        ping(client, url)
        _not_a_cluster_node(client, url)
    except BaseException:
        client.close()
        raise
    return client


def _not_a_cluster_node(client: redis.Redis, url: str) -> None:
    """ValueError if ``url`` names a node of a Redis Cluster: a plain client would fail on every
    key another node serves (MOVED), in the middle of the crawl."""
    try:
        enabled = client.info("cluster").get("cluster_enabled")
    except rex.RedisError:  # INFO renamed or denied (a proxy, an ACL): nothing to tell
        return
    if str(enabled) == "1":
        raise ValueError(
            f"{mask_url(url)} is a node of a Redis Cluster: name the cluster as "
            "redis+cluster://host:port[,host:port...]"
        )


def _connect_cluster(url: str, timeout: float, health_check_interval: int) -> redis.Redis:
    """:func:`connect` for a ``redis+cluster://`` URL: the same timeouts, and no retries of
    redis-py's own beyond following ``MOVED``/``ASK`` (the stores retry, see :class:`RedisStore`)."""
    try:
        seed, nodes = cluster_nodes(quote_userinfo(url))
    except ValueError as exc:
        raise ValueError(
            f"bad Redis Cluster URL {mask_url(url)!r}: {without_secret(str(exc), url)}"
        ) from None
    try:
        client = RedisCluster(
            url=seed,
            startup_nodes=[ClusterNode(host, port) for host, port in nodes[1:]],
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            socket_keepalive=True,
            health_check_interval=health_check_interval,
            retry=Retry(NoBackoff(), 0),
        )
    except ValueError as exc:  # a malformed query
        raise ValueError(
            f"bad Redis Cluster URL {mask_url(url)!r}: {without_secret(str(exc), url)}"
        ) from None
    except (rex.RedisError, rex.RedisClusterException) as exc:  # no node answers, or not a cluster
        raise RedisUnavailable(url, f"{type(exc).__name__}: {exc}") from None
    try:
        ping(client, url)
    except BaseException:
        client.close()
        raise
    return client  # type: ignore[return-value]


def run_scripts(client: redis.Redis, calls: list[tuple[Any, list[Any], list[Any]]]) -> list[Any]:
    """The replies of many Lua script calls (``(script, keys, args)``, ``script`` from
    ``client.register_script``) sent as one pipeline: one round trip to one server, one per node
    on a cluster (redis-py's ``ClusterPipeline`` groups the calls by the node serving their
    keys' slot, and follows ``MOVED``/``ASK``). A node that does not know a script yet (it was
    started, or promoted, since: ``NOSCRIPT``) gets it loaded, and only the calls that failed so
    are sent again (no ``SCRIPT EXISTS`` round trip first, as redis-py's pipeline of scripts
    makes). The first error of a call is raised once every call is through.

    A call may run more than once: redis-py sends again, alone, a call whose node dropped the
    connection, and :meth:`RedisStore._call` sends the whole batch again after a transient error
    (the calls that went through included). So each script must answer the same when run again
    with the same arguments, as the seen set's stamped scripts do."""
    replies = _pipelined(client, calls)
    missing = [i for i, reply in enumerate(replies) if isinstance(reply, rex.NoScriptError)]
    if missing:
        for script in {calls[i][0].sha: calls[i][0] for i in missing}.values():
            client.script_load(script.script)  # on every master of a cluster
        for i, reply in zip(missing, _pipelined(client, [calls[i] for i in missing]), strict=True):
            replies[i] = reply
    for reply in replies:
        if isinstance(reply, BaseException):
            raise reply
    return replies


def _pipelined(client: redis.Redis, calls: list[tuple[Any, list[Any], list[Any]]]) -> list[Any]:
    pipe = client.pipeline(transaction=False)
    cluster = is_cluster(client)
    for script, keys, args in calls:
        # EVALSHA by name: ClusterPipeline blocks its evalsha() method, not the command. The node
        # from the client's slot map: left to find it, ClusterPipeline asks the server for the
        # keys of each EVALSHA (COMMAND GETKEYS, a round trip per call). A MOVED reply is followed.
        options = {"target_nodes": client.get_node_from_key(keys[0])} if cluster and keys else {}  # type: ignore[attr-defined]
        pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args, **options)
    return pipe.execute(raise_on_error=False)


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
        #: on a cluster, hash-tagged (:func:`store_key`)
        self.key = store_key(client, key)
        self.unavailable_timeout = unavailable_timeout
        #: close() closes the client too (the store made it, or was handed it to keep)
        self.owns_client = owns_client
        self.url = client_url(client)
        #: commands tried again after a transient error; outages those retries belonged to
        self.retries = 0
        self.outages = 0
        # set when a call gave up: later calls try once and fail fast until Redis answers
        self._gave_up = False
        if self.key != key:
            self._report_old_key(key)

    def _report_old_key(self, old: str) -> None:
        """On a cluster, the store's key without its hash tag is not read: say so if it holds data
        (written by a client that did not tag it), rather than start again from nothing unawares."""
        try:
            found = self.client.exists(old)
        except (rex.RedisError, rex.RedisClusterException):
            return  # a report only: the store's own calls meet the outage
        if found:
            logger.warning(
                "Redis %s holds the key %r, which this store does not read: on a Redis Cluster "
                'its data is under %r (hash-tagged, see docs/stores.md, "Redis Cluster"); '
                "copy it there (DUMP, then RESTORE) or delete it",
                self.url,
                old,
                self.key,
            )

    def _call(self, what: str, command: Callable[[], T]) -> tuple[T, bool]:
        """Run ``command`` until it succeeds; return its result and whether it was retried.

        Blocks through an outage for up to ``unavailable_timeout`` seconds, then raises
        :class:`StoreUnavailable`; until Redis answers again, later calls try once and raise
        at once, rather than each blocking for the whole timeout again. On a cluster, the slot
        map is read again (:func:`remap`) after each transient error, so a retry goes to the
        replica promoted in a failover. Any other Redis error becomes a :class:`StoreError`."""
        deadline = 0.0
        delay = 0.0  # the first retry is immediate: usually a connection the server dropped
        failed_since: float | None = None
        while True:
            try:
                result = command()
            except _FATAL as exc:
                raise RedisUnavailable(
                    self.url, f"{what} {self.key!r}: {type(exc).__name__}: {exc}"
                ) from None
            except Exception as exc:
                if not _transient(exc):
                    if isinstance(exc, (rex.RedisError, rex.RedisClusterException)):
                        # WRONGTYPE, OOM, a command across slots...: waiting does not help
                        raise StoreError(
                            f"Redis {self.url}, {what} {self.key!r}: {type(exc).__name__}: {exc}"
                        ) from None
                    raise
                now = time.monotonic()
                if self._gave_up:  # the outage already outlasted unavailable_timeout
                    remap(self.client)  # so a later call, once the cluster is whole, finds its node
                    raise RedisUnavailable(
                        self.url, f"{what} {self.key!r}: still down: {type(exc).__name__}: {exc}"
                    ) from None
                if failed_since is None:
                    failed_since, deadline = now, now + self.unavailable_timeout
                    self.outages += 1
                    logger.warning(
                        "Redis %s unavailable (%s); retrying for up to %gs",
                        self.url,
                        exc,
                        self.unavailable_timeout,
                    )
                if now >= deadline:
                    self._gave_up = True
                    remap(self.client)
                    raise RedisUnavailable(
                        self.url,
                        f"{what} {self.key!r} failed for {now - failed_since:.1f}s "
                        f"(unavailable_timeout {self.unavailable_timeout:g}s): {type(exc).__name__}: {exc}",
                    ) from None
                self.retries += 1
                time.sleep(min(delay, deadline - now))
                delay = min(max(delay * 2, BACKOFF_START), BACKOFF_MAX)
                remap(
                    self.client
                )  # after the wait: the map read is the freshest the retry can have
            else:
                self._gave_up = False
                if failed_since is not None:
                    logger.info(
                        "Redis %s is back after %.1fs", self.url, time.monotonic() - failed_since
                    )
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
