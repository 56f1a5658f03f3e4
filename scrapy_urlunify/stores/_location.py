"""Where a crawl's stores live: ``"memory"`` or a Redis URL (checked, and printed with its
password masked), and the Redis keys of a scope's stores. The only checks of a location, so no
other module needs its own.

Pure Python, no ``redis`` import: the settings check a location without the optional client
(:func:`redis_missing` only asks whether it is installed).
"""

from __future__ import annotations

import importlib.util
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MEMORY = "memory"
#: A Redis Cluster: ``redis+cluster://[user:password@]host:port[,host:port...]`` (``rediss+cluster``:
#: TLS). No other library names a cluster in a URL (redis-py's ``RedisCluster.from_url`` takes
#: a plain ``redis://`` URL of one node), so the scheme says it, and lists the seed nodes.
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
REDIS_SCHEMES = ("redis", "rediss", "unix", *CLUSTER_SCHEMES)

#: Default key template of a Redis store: one namespace per scope.
DEFAULT_KEY_TEMPLATE = "urlunify:%(scope)s"
#: The stores of one scope, as suffixes of its namespace. None is a suffix of another, so
#: two (scope, store) pairs never share a key as long as the template holds the scope.
KEY_SUFFIXES = {
    "seen": ":seen",
    "signatures": ":signatures",
    "rules": ":rules",
    "kept": ":kept",
    "fetched": ":fetched",
}


def is_redis_url(value: object) -> bool:
    """True for ``redis://``, ``rediss://`` (TLS) and ``unix://`` URLs: the only check of it."""
    if not isinstance(value, str):
        return False
    scheme, sep, _ = value.strip().partition("://")
    return bool(sep) and scheme.lower() in REDIS_SCHEMES


def is_cluster_url(value: object) -> bool:
    """True for a ``redis+cluster://`` (``rediss+cluster://``) URL."""
    return is_redis_url(value) and str(value).strip().partition("://")[0].lower() in CLUSTER_SCHEMES


def cluster_nodes(url: str) -> tuple[str, list[tuple[str, int]]]:
    """The seed nodes of a cluster URL, and the URL of the first as redis-py reads it
    (``redis://`` or ``rediss://``, with the user-info and query of ``url``): ``(seed_url,
    [(host, port), ...])``. ValueError (password-free) for no node, a bad port, or a database
    other than 0 (a cluster has only one)."""
    text = url.strip()
    scheme, _, rest = text.partition("://")
    parts = _userinfo(text)
    userinfo, hostpart = (parts[1] + "@", parts[2]) if parts is not None else ("", rest)
    hostpart, _, query = hostpart.partition("?")
    hosts, _, path = hostpart.partition("/")
    if path.strip("/") not in ("", "0"):
        raise ValueError(f"a Redis Cluster has only the database 0, not {path.strip('/')!r}")
    nodes: list[tuple[str, int]] = []
    for node in filter(None, (n.strip() for n in hosts.split(","))):
        host, colon, port = node.rpartition(":")
        if not colon:
            host, port = node, "6379"
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"bad port in the cluster node {node!r}")
        nodes.append((host.strip("[]") or "localhost", int(port)))
    if not nodes:
        raise ValueError("no node in the cluster URL (redis+cluster://host:port,host:port,...)")
    plain = "rediss" if scheme.lower().startswith("rediss") else "redis"
    first, first_port = nodes[0]
    first = f"[{first}]" if ":" in first else first
    return f"{plain}://{userinfo}{first}:{first_port}" + (f"?{query}" if query else ""), nodes


def hash_tagged(key: str) -> str:
    """``key`` as the name of a group of keys on one Redis Cluster slot: ``key`` itself when it
    holds a hash tag already (a non-empty ``{...}``: the user chose the slot), else ``{key}``.
    Keys made by appending to the result (``<tagged>:owners``) share its slot."""
    start = key.find("{")
    if start >= 0:
        end = key.find("}", start + 1)
        if end > start + 1:
            return key
    return "{" + key + "}"


def redis_missing(location: str) -> str | None:
    """Why the Redis store ``location`` cannot be used in this environment (the optional
    ``redis`` package is not installed: what to install), or None."""
    try:
        found = importlib.util.find_spec("redis") is not None
    except ValueError:  # a "redis" module without a spec (sys.modules holds a stand-in)
        found = True
    if found:
        return None
    return (
        f"the Redis store {mask_url(location)} needs the redis package, which is not installed: "
        "pip install 'scrapy-urlunify[redis]'"
    )


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
            query = urlencode(
                [
                    (k, "***" if k.lower() == "password" else v)
                    for k, v in parse_qsl(split.query, keep_blank_values=True)
                ],
                safe="*",
            )
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
        raise ValueError(
            f"expected a string holding %(scope)s, got {type(template).__name__} {template!r}"
        )
    if "%(scope)s" not in template:
        raise ValueError(
            f"{template!r} does not contain %(scope)s: every scope would share one key"
        )
    try:
        base = template % {"scope": scope}
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueError(
            f"{template!r} is not a valid key template ({exc!r}); only %(scope)s may be used"
        ) from None
    return {name: base + suffix for name, suffix in KEY_SUFFIXES.items()}
