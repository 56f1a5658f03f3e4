"""URLs as a browser reads them: the WHATWG parser (ada), resolution, and the parts of a result.

Everything the rules need before they start: :func:`resolve` (parse and serialize as a browser
does, with :mod:`~scrapy_urlunify.core._ada`; :class:`InvalidURL` where the standard fails),
:class:`Parts` (a serialized http(s) URL split without parsing it again) and :func:`host_of` (the
host of such a URL, for the callers that need nothing else).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from scrapy_urlunify.core._ada import ada_join, ada_normalize


class InvalidURL(ValueError):
    """The input cannot be parsed as a URL (the WHATWG URL Standard says: failure)."""


#: Per part of an http(s) URL, characters the WHATWG parser keeps as they are (no percent-encode
#: set of the standard holds them, they are no delimiter there and no ``\\``): a URL written
#: with these alone, with a host the parser gives back unchanged, no user info and no port, no
#: dot segment (no ``/.`` in the path; ``%`` is left out by the callers), parses to itself.
#: Conservative: ``'`` is left out of the query, ``^`` ``|`` ``[`` ``]`` ``{`` ``}`` `````` everywhere.
CANONICAL_CHARS: dict[str, frozenset[str]] = {
    "path": frozenset(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@%/"
    ),
    "query": frozenset(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,;=:@%/?"
    ),
    "fragment": frozenset(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@%/?#"
    ),
}


def canonical_splitter(absent: dict[str, frozenset[str]]) -> Callable[[str], re.Match[str] | None]:
    """``match(url)``: for an http(s) URL written only with :data:`CANONICAL_CHARS` less the
    characters ``absent`` names per part, a match of groups scheme, host, path, query and
    fragment (``None`` when absent); else ``None``.

    The caller still checks that the host is one the parser gives back unchanged (a lower-case
    name without ``xn--``, no port or user info: see ``HostRules.canonical``) and that the path
    has no ``/.``; then the URL is what ``ada_normalize`` would return, and parsing it can be
    skipped. One pattern of single-character repeats only, the fastest kind for ``re``.
    """

    def cls(part: str) -> str:
        return "[" + "".join(re.escape(c) for c in canonical_chars(part, absent)) + "]*"

    return re.compile(
        rf"(https?)://([a-z0-9.\-]+)(/{cls('path')})(?:\?({cls('query')}))?(?:#({cls('fragment')}))?\Z"
    ).match


def canonical_chars(part: str, absent: dict[str, frozenset[str]]) -> str:
    """The characters :func:`canonical_splitter` accepts in ``part``, in order."""
    return "".join(sorted(CANONICAL_CHARS[part] - absent.get(part, frozenset())))


def resolve(href: str, base: str | None = None) -> str:
    """Resolve ``href`` against ``base`` and serialize it as a browser would (WHATWG URL Standard).

    Strips surrounding white space and removes tabs and newlines, turns ``\\`` into ``/`` in
    http(s) URLs, resolves ``.``/``..`` segments (also ``%2e``), lower-cases the scheme and
    host, IDNA-encodes the host, drops the scheme's default port and percent-encodes what a
    browser encodes. Raises :class:`InvalidURL` where the standard fails.

    >>> resolve("../c/./d.html#x", "http://Example.COM:80/a/b/")
    'http://example.com/a/c/d.html#x'
    """
    if not isinstance(href, str):
        raise TypeError(f"href must be str, got {type(href).__name__}")
    try:
        if base is None:
            return ada_normalize(href)
        return ada_join(base, href)
    except ValueError:  # includes UnicodeError (lone surrogates)
        shown = href if len(href) <= 200 else href[:200] + "..."
        where = "" if base is None else f" against base {base[:200]!r}"
        raise InvalidURL(f"invalid URL {shown!r}{where}") from None


class Parts:
    """The components of a resolved http(s) URL, as strings in their serialized (encoded) form.

    ``query`` and ``fragment`` are ``None`` when absent, ``""`` when present but empty (``?``,
    ``#``). ``scheme`` is ``None`` once an identity step has dropped it.
    """

    __slots__ = ("fragment", "host", "path", "port", "query", "scheme", "userinfo")

    def __init__(
        self,
        scheme: str | None,
        userinfo: str,
        host: str,
        port: str,
        path: str,
        query: str | None,
        fragment: str | None,
    ) -> None:
        self.scheme = scheme
        self.userinfo = userinfo
        self.host = host
        self.port = port
        self.path = path
        self.query = query
        self.fragment = fragment

    @classmethod
    def split(cls, href: str) -> Parts:
        """Split a WHATWG-serialized http(s) URL without re-parsing it.

        The serialization is canonical: the path of an http(s) URL always starts with ``/``,
        ``?`` and ``#`` only delimit, and ``@``/``/`` in user info are percent-encoded.
        """
        i = href.index("://") + 3
        j = href.find("/", i)
        authority = href[i:j]
        rest = href[j:]
        fragment = query = None
        k = rest.find("#")
        if k >= 0:
            fragment = rest[k + 1 :]
            rest = rest[:k]
        k = rest.find("?")
        if k >= 0:
            query = rest[k + 1 :]
            rest = rest[:k]
        userinfo = ""
        if "@" in authority:
            userinfo, _, authority = authority.rpartition("@")
        port = ""
        k = authority.rfind(":")
        if k >= 0 and not authority.endswith("]"):
            port = authority[k + 1 :]
            authority = authority[:k]
        return cls(href[: i - 3], userinfo, authority, port, rest, query, fragment)

    def copy(self) -> Parts:
        return Parts(
            self.scheme, self.userinfo, self.host, self.port, self.path, self.query, self.fragment
        )

    def url(self) -> str:
        """Serialize as a URL (requires ``scheme``)."""
        return f"{self.scheme}://{self.tail()}"

    def tail(self) -> str:
        """Everything after ``scheme://``."""
        s = f"{self.userinfo}@{self.host}" if self.userinfo else self.host
        if self.port:
            s = f"{s}:{self.port}"
        s += self.path
        if self.query is not None:
            s = f"{s}?{self.query}"
        if self.fragment is not None:
            s = f"{s}#{self.fragment}"
        return s

    def __repr__(self) -> str:
        return f"Parts({self.url() if self.scheme else self.tail()!r})"


def host_of(url: str) -> str:
    """The host of a WHATWG-serialized URL, without user info and port (an IPv6 address keeps
    its brackets); ``""`` unless it is an http(s) URL.

    >>> host_of("https://user@Example.com:8080/a"), host_of("http://[::1]:8000/"), host_of("mailto:x@y")
    ('Example.com', '[::1]', '')
    """
    if not url.startswith(("http://", "https://")):
        return ""
    authority = url.split("/", 3)[2].rpartition("@")[2]
    if authority.startswith("["):
        return authority[: authority.find("]") + 1]
    return authority.partition(":")[0]
