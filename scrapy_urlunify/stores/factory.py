"""One place that turns a store location (``"memory"`` or a Redis URL, and a JOBDIR) into the
stores of a crawl; and the checks of such a location (is it a Redis URL? which keys?), so no
other module needs its own.

Pure Python, no Scrapy and no ``redis`` import until a Redis store is opened.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from . import (
    ITEMS_FILENAME,
    KEPT_FILENAME,
    LEARNED_FILENAME,
    SEEN_FILENAME,
    SIGNATURES_FILENAME,
    JobdirSeenStore,
    JobdirSignatureStore,
    MemorySeenStore,
    MemorySignatureStore,
    SeenStore,
    SignatureStore,
)
from .kept import JobdirKeptStore, KeptStore, MemoryKeptStore

if TYPE_CHECKING:
    import redis

    from .redis import RedisFetchedStore, RedisRulesStore

__all__ = [
    "DEFAULT_KEY_TEMPLATE",
    "KEY_SUFFIXES",
    "MEMORY",
    "REDIS_SCHEMES",
    "Stores",
    "is_redis_url",
    "mask_url",
    "quote_userinfo",
    "redis_keys",
    "without_secret",
]

MEMORY = "memory"
REDIS_SCHEMES = ("redis", "rediss", "unix")

#: Default key template of a Redis store: one namespace per scope.
DEFAULT_KEY_TEMPLATE = "urlunify:%(scope)s"
#: The stores of one scope, as suffixes of its namespace. None is a suffix of another, so
#: two (scope, store) pairs never share a key as long as the template holds the scope.
KEY_SUFFIXES = {"seen": ":seen", "signatures": ":signatures", "rules": ":rules", "kept": ":kept",
                "fetched": ":fetched"}


def is_redis_url(value: object) -> bool:
    """True for ``redis://``, ``rediss://`` (TLS) and ``unix://`` URLs: the only check of it."""
    if not isinstance(value, str):
        return False
    scheme, sep, _ = value.strip().partition("://")
    return bool(sep) and scheme.lower() in REDIS_SCHEMES


def _userinfo(url: str) -> tuple[str, str, str] | None:
    """``(scheme://, userinfo, rest)`` when ``url`` has user-info. The user-info ends at the
    *last* ``@``: a password holding ``/``, ``#`` or ``?`` (not percent-encoded, as people
    write them) must not leak into what a URL parser would call the path or the fragment."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return None
    userinfo, _, hostpart = rest.rpartition("@")
    return scheme + sep, userinfo, hostpart


def quote_userinfo(url: str) -> str:
    """``url`` with ``/ # ? @`` inside its user-info percent-encoded, so a URL parser (redis-py's)
    reads the whole password instead of cutting it there."""
    parts = _userinfo(url)
    if parts is None:
        return url
    head, userinfo, hostpart = parts
    for char in "/#?@":
        userinfo = userinfo.replace(char, f"%{ord(char):02X}")
    return f"{head}{userinfo}@{hostpart}"


def mask_url(url: object) -> str:
    """``url`` with its password (in the user-info or a ``password=`` query) as ``***``."""
    if not isinstance(url, str):
        return repr(type(url).__name__)
    text = url.strip()
    parts = _userinfo(text)
    if parts is not None:
        head, userinfo, hostpart = parts
        user, colon, _ = userinfo.partition(":")
        text = f"{head}{user}:***@{hostpart}" if colon else f"{head}***@{hostpart}"
    if "password" in text.lower():
        try:
            split = urlsplit(text)
            query = urlencode([(k, "***" if k.lower() == "password" else v)
                               for k, v in parse_qsl(split.query, keep_blank_values=True)], safe="*")
            text = urlunsplit(split._replace(query=query))
        except ValueError:
            return "<unparsable store URL>"
    return text


def _secrets(url: str) -> list[str]:
    secrets: list[str] = []
    parts = _userinfo(url)
    if parts is not None:
        userinfo = parts[1]
        secrets.append(userinfo.partition(":")[2] or userinfo)
    secrets += re.findall(r"(?i)password=([^&#]*)", url)
    pieces = [p for s in secrets for p in re.split(r"[/#?@:&]", s) if len(p) >= 3]
    # longest first, so a piece never leaves the rest of a longer secret behind
    return sorted({s for s in secrets + pieces if s}, key=len, reverse=True)


def without_secret(text: str, url: object) -> str:
    """``text`` (an error message about ``url``) with every piece of ``url``'s password masked:
    a URL parser may have cut the password at a ``/`` or ``#`` and quoted only a part of it."""
    if not isinstance(url, str):
        return text
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text


def redis_keys(template: str, scope: str) -> dict[str, str]:
    """The keys of one scope's stores: ``{"seen": ..., "signatures": ..., "rules": ..., "kept": ...,
    "fetched": ...}``.

    ``template`` must contain ``%(scope)s`` (the default, :data:`DEFAULT_KEY_TEMPLATE`, gives
    ``urlunify:<scope>:seen``): every process of a scope then shares its keys, and two scopes
    never do. Raises ValueError for a template without the scope or with other fields."""
    if not isinstance(scope, str) or not scope:
        raise ValueError(f"the scope must be a non-empty string, got {scope!r}")
    if not isinstance(template, str):
        raise ValueError(f"expected a string holding %(scope)s, got {type(template).__name__} {template!r}")
    if "%(scope)s" not in template:
        raise ValueError(f"{template!r} does not contain %(scope)s: every scope would share one key")
    try:
        base = template % {"scope": scope}
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueError(f"{template!r} is not a valid key template ({exc!r}); only %(scope)s may be used") \
            from None
    return {name: base + suffix for name, suffix in KEY_SUFFIXES.items()}


class Stores:
    """The stores of one crawl, built from where they live.

    ``location`` is ``"memory"`` (the process, and ``jobdir`` files when given) or a Redis URL
    (shared by every process of ``scope``, under the keys of ``key_template``). ``client``, when
    given, is the Redis client to use instead of connecting to ``location`` (scrapy-redis's
    connection). One Redis client serves every store of the crawl; it is made on first use.
    """

    def __init__(
        self,
        location: str = MEMORY,
        *,
        jobdir: str | os.PathLike[str] | None = None,
        scope: str | None = None,
        key_template: str = DEFAULT_KEY_TEMPLATE,
        timeout: float = 10.0,
        unavailable_timeout: float = 60.0,
        client: Callable[[], redis.Redis] | None = None,
    ) -> None:
        location = MEMORY if location in (None, "") else location
        if location != MEMORY and not is_redis_url(location):
            raise ValueError(f'expected "memory" or a redis://, rediss:// or unix:// URL, got {mask_url(location)!r}')
        self.location = location
        self.jobdir = Path(jobdir) if jobdir else None
        self.scope = scope
        self.key_template = key_template
        self.timeout = timeout
        self.unavailable_timeout = unavailable_timeout
        self._client_factory = client
        self._client: redis.Redis | None = None

    @property
    def in_redis(self) -> bool:
        """Whether the stores live in Redis."""
        return self.location != MEMORY or self._client_factory is not None

    def client(self) -> redis.Redis:
        """The crawl's Redis client (connected and PINGed on first use)."""
        if self._client is None:
            if self._client_factory is not None:
                self._client = self._client_factory()
            else:
                from .redis import connect

                self._client = connect(self.location, timeout=self.timeout)
        return self._client

    def keys(self) -> dict[str, str]:
        if not self.scope:
            raise ValueError("a Redis store needs a scope (URLUNIFY_SCOPE or the spider's name)")
        return redis_keys(self.key_template, self.scope)

    def _redis_kwargs(self) -> dict[str, Any]:
        return {"unavailable_timeout": self.unavailable_timeout}

    def seen(self) -> SeenStore:
        """The "already scheduled" fingerprints."""
        if self.in_redis:
            from .redis import RedisSeenStore

            return RedisSeenStore(self.client(), self.keys()["seen"], **self._redis_kwargs())
        if self.jobdir is not None:
            return JobdirSeenStore(self.jobdir / SEEN_FILENAME)
        return MemorySeenStore()

    def signatures(self) -> SignatureStore:
        """The page-source hash index: signature -> first page with it."""
        if self.in_redis:
            from .redis import RedisSignatureStore

            return RedisSignatureStore(self.client(), self.keys()["signatures"], **self._redis_kwargs())
        if self.jobdir is not None:
            return JobdirSignatureStore(self.jobdir / SIGNATURES_FILENAME)
        return MemorySignatureStore()

    def rules(self) -> RedisRulesStore | Path | None:
        """Where learned rules are kept between runs: a Redis hash, a JOBDIR file, or nowhere."""
        if self.in_redis:
            from .redis import RedisRulesStore

            return RedisRulesStore(self.client(), self.keys()["rules"], **self._redis_kwargs())
        return self.jobdir / LEARNED_FILENAME if self.jobdir is not None else None

    def kept(self) -> KeptStore:
        """Requests merged by learned rules on probation, kept until the rules are confirmed or
        revoked: a Redis hash of the scope, a JOBDIR log, or nowhere (the crawl's memory)."""
        if self.in_redis:
            from .redis import RedisKeptStore

            return RedisKeptStore(self.client(), self.keys()["kept"], **self._redis_kwargs())
        if self.jobdir is not None:
            return JobdirKeptStore(self.jobdir / KEPT_FILENAME)
        return MemoryKeptStore()

    def fetched(self) -> RedisFetchedStore | None:
        """The identifiers fetched under the learned policy, shared by the processes of a scope
        (Redis only: in one process the signature middleware knows its own fetches)."""
        if not self.in_redis:
            return None
        from .redis import RedisFetchedStore

        return RedisFetchedStore(self.client(), self.keys()["fetched"], **self._redis_kwargs())

    def items(self) -> SignatureStore:
        """Item identifier -> the page it first came from (the unicity filter); never shared."""
        if self.jobdir is not None:
            return JobdirSignatureStore(self.jobdir / ITEMS_FILENAME)
        return MemorySignatureStore()

    def __repr__(self) -> str:
        return f"<Stores {mask_url(self.location)} jobdir={self.jobdir} scope={self.scope!r}>"
