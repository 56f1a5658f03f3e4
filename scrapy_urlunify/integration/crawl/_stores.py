"""Where a crawl keeps what it has seen: ``URLUNIFY_STORE`` (memory, with ``JOBDIR`` files when
that is set, or a Redis URL), read once into the crawl's
:class:`~scrapy_urlunify.stores._factory.Stores` (docs/stores.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.utils.job import job_dir

from scrapy_urlunify.integration import settings as urlunify_settings
from scrapy_urlunify.integration.settings import SettingsError
from scrapy_urlunify.stores._factory import Stores

if TYPE_CHECKING:
    import redis


def uses_redis(settings: Any) -> bool:
    """Whether ``URLUNIFY_STORE`` names Redis; a value that is neither fails at start-up."""
    return urlunify_settings.get(settings, "URLUNIFY_STORE") != "memory"


def crawl_stores(settings: Any, scope: str | None, *, redis_fallback: bool = False) -> Stores:
    """The crawl's :class:`Stores` (one Redis client for all of them).

    ``redis_fallback``: the crawl's dupefilter is a ``RedisDupeFilter`` whose ``URLUNIFY_STORE``
    is not a Redis URL: it uses scrapy-redis's connection settings (``REDIS_URL``,
    ``REDIS_HOST``...) for its seen set."""
    location = urlunify_settings.get(settings, "URLUNIFY_STORE")
    timeout = urlunify_settings.get(settings, "URLUNIFY_REDIS_TIMEOUT")
    client = None
    if location != "memory":

        def client() -> redis.Redis:
            return _connect(location, timeout)

    elif redis_fallback:

        def client() -> redis.Redis:
            return scrapy_redis_client(settings)

    return Stores(
        location,
        jobdir=job_dir(settings),
        scope=scope,
        key_template=urlunify_settings.get(settings, "URLUNIFY_REDIS_KEY"),
        timeout=timeout,
        unavailable_timeout=urlunify_settings.get(settings, "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT"),
        client=client,
        seen_size=urlunify_settings.get(settings, "URLUNIFY_REDIS_SEEN_SIZE"),
    )


def _connect(url: str, timeout: float) -> redis.Redis:
    from scrapy_urlunify.stores._redis_connection import RedisUnavailable, connect

    try:
        return connect(url, timeout=timeout)
    except ValueError as exc:  # a malformed port, db or query (the message is password-free)
        raise SettingsError("URLUNIFY_STORE", str(exc)) from None
    except RedisUnavailable as exc:
        raise RedisUnavailable(url, f"{exc.reason} (check the setting URLUNIFY_STORE)") from None


def scrapy_redis_client(settings: Any) -> redis.Redis:
    """A Redis client from scrapy-redis's connection settings, PINGed once."""
    from scrapy_urlunify.stores._redis_connection import own_retries, ping

    try:
        from scrapy_redis.connection import get_redis_from_settings
    except ImportError:
        raise SettingsError(
            "URLUNIFY_STORE",
            "RedisDupeFilter needs a redis:// URL here, or scrapy-redis installed to use REDIS_URL",
        ) from None
    # A client of our own (scrapy-redis makes a new one per call), so changing its retry
    # policy affects no one else.
    client = own_retries(get_redis_from_settings(settings))
    ping(client)
    return client
