"""Server-side interpretation of a requested URL.

This is how the demo *server* reads a URL, i.e. the ground truth a URL unifier
tries to guess: host case and trailing dots, explicit default ports, ``\\``
(IIS style), doubled slashes, dot segments, ``/index.html``, ``;jsessionid=``
path parameters are all interpreted away here.  Which *query* parameters
matter is decided per route by :class:`~scrapy_urlunify.demo.site.DemoSite`;
everything else (tracking, session ids, ``arglink`` ...) is ignored there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit

from scrapy_urlunify.demo.hosts import DEFAULT_PORTS, site_of_host

#: Query parameters carrying a session id, per session style.
SESSION_QUERY_PARAMS = ("PHPSESSID", "sid")

_JSESSIONID = re.compile(r";jsessionid=([^/;?#]*)", re.IGNORECASE)
_SLASHES = re.compile(r"/{2,}")


@dataclass(frozen=True)
class Target:
    """A requested URL as the server understands it."""

    scheme: str
    host: str  # lower case, no trailing dot, no port
    port: int  # effective port (default port when none was given)
    site: str | None  # site key, None for an unknown host
    path: str  # normalized path (see :func:`normalize_path`)
    params: tuple[tuple[str, str], ...]  # all query parameters, in request order
    raw_query: str = ""  # the query string exactly as requested (kept by redirects)
    sessions: dict[str, str] = field(default_factory=dict)  # style -> session id

    def param(self, name: str) -> str | None:
        """First value of query parameter ``name`` (exact, case-sensitive name)."""
        for key, value in self.params:
            if key == name:
                return value
        return None


def normalize_path(raw_path: str) -> str:
    """Map a raw request path to the path the server routes on.

    Order matters and mirrors a typical Java/IIS front end: drop
    ``;jsessionid=``, percent-decode, treat ``\\`` as ``/``, collapse slash
    runs, resolve ``.``/``..`` and finally serve ``dir/index.html`` as ``dir/``.
    """
    path = _JSESSIONID.sub("", raw_path)
    path = unquote(path).replace("\\", "/")
    path = _SLASHES.sub("/", path or "/")
    out: list[str] = []
    segments = path.split("/")[1:] if path.startswith("/") else path.split("/")
    trailing = False
    for seg in segments:
        trailing = seg in (".", "..", "")
        if seg == "..":
            if out:
                out.pop()
        elif seg not in (".", ""):
            out.append(seg)
    result = "/" + "/".join(out)
    if out and trailing:
        result += "/"
    if result.endswith("/index.html"):
        result = result[: -len("index.html")]
    return result


def parse_target(url: str) -> Target | None:
    """Interpret an absolute http(s) URL; None if it is not one or the port is odd.

    The demo server only listens on the (virtual) default ports, so
    ``http://site.test:443/`` is not served (None), while ``http://site.test:80/``
    is the same as ``http://site.test/``.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if port is not None and port != DEFAULT_PORTS[scheme]:
        return None
    host = parts.hostname.lower().rstrip(".")
    params = tuple(parse_qsl(parts.query, keep_blank_values=True))
    sessions: dict[str, str] = {}
    match = _JSESSIONID.search(parts.path)
    if match:
        sessions["jsessionid"] = match.group(1)
    for key, value in params:
        if key in SESSION_QUERY_PARAMS and key not in sessions:
            sessions[key] = value
    return Target(
        scheme=scheme,
        host=host,
        port=DEFAULT_PORTS[scheme],
        site=site_of_host(host),
        path=normalize_path(parts.path),
        params=params,
        raw_query=parts.query,
        sessions=sessions,
    )
