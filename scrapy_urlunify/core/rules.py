"""The unification rules: small named steps over the parts of a URL.

A URL is first resolved and serialized the way a browser does (:func:`resolve`), then split into
:class:`Parts`, then passed through two ordered lists of steps:

* ``REWRITE_STEPS`` (*rewrite* layer): changes a server answers identically. Their result is the
  URL to fetch (:func:`scrapy_urlunify.standardize`).
* ``IDENTITY_STEPS`` (*identity* layer): merges variants that name one page but that we must not
  send as such (scheme, ``www``, index pages, key parameters, aliases...). Their result is the
  identifier (:func:`scrapy_urlunify.identify`), never fetched.

Each step is a plain function ``step(parts, ctx) -> bool | str``: it edits ``parts`` in place and
returns a truthy value when it changed something (a string names the sub-rule that fired). ``ctx``
is the :class:`~scrapy_urlunify.core.unify.Unifier`, which holds the policy and per-host tables. Steps
are tagged with their layer by :func:`rule`, so docs, ``urlunify explain`` and tests read the
same names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ada_url

from .params import (
    ASPNET_SEGMENT,
    PATH_SESSION,
    TRACKING_PARAMS,
    TRACKING_PREFIXES,
    cold_fusion_pair,
    is_session_param,
    is_tracking_param,
)

if TYPE_CHECKING:
    from .unify import Unifier

__all__ = ["IDENTITY", "IDENTITY_STEPS", "REWRITE", "REWRITE_STEPS", "InvalidURL", "Parts", "resolve", "rule"]

REWRITE = "rewrite"
IDENTITY = "identity"


class InvalidURL(ValueError):
    """The input cannot be parsed as a URL (the WHATWG URL Standard says: failure)."""


def _bind_ada():  # type: ignore[no-untyped-def]
    """Parse-and-serialize functions over ada's C API.

    ``ada_url.normalize_url`` builds a dict of attributes through ``getattr`` and a garbage-
    collected handle, which costs as much again as the parse itself (2.0 against 1.1 µs per URL
    here); calling the same C functions directly halves the cost of every link. The public
    functions are the fallback should a future ``ada-url`` move its private module (a test
    checks that both give the same results on the WHATWG test suite).
    """
    try:
        from ada_url.ada_adapter import ffi, lib

        parse, parse_with_base, is_valid = lib.ada_parse, lib.ada_parse_with_base, lib.ada_is_valid
        get_href, free, unpack = lib.ada_get_href, lib.ada_free, ffi.unpack
    except (ImportError, AttributeError):  # pragma: no cover - depends on the installed ada-url
        return ada_url.normalize_url, ada_url.join_url

    def href(obj) -> str:  # type: ignore[no-untyped-def]
        try:
            if not is_valid(obj):
                raise ValueError("Invalid URL")
            h = get_href(obj)
            return unpack(h.data, h.length).decode()
        finally:
            free(obj)

    def normalize(s: str) -> str:
        b = s.encode()  # UnicodeEncodeError (a ValueError) on lone surrogates
        return href(parse(b, len(b)))

    def join(base: str, s: str) -> str:
        b, bb = s.encode(), base.encode()
        return href(parse_with_base(b, len(b), bb, len(bb)))

    return normalize, join


#: ``ada_normalize(url)`` and ``ada_join(base, href)``: WHATWG parse and serialize; ValueError
#: on failure.
ada_normalize, ada_join = _bind_ada()


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

    def __init__(self, scheme: str | None, userinfo: str, host: str, port: str, path: str,
                 query: str | None, fragment: str | None) -> None:
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
            fragment = rest[k + 1:]
            rest = rest[:k]
        k = rest.find("?")
        if k >= 0:
            query = rest[k + 1:]
            rest = rest[:k]
        userinfo = ""
        if "@" in authority:
            userinfo, _, authority = authority.rpartition("@")
        port = ""
        k = authority.rfind(":")
        if k >= 0 and not authority.endswith("]"):
            port = authority[k + 1:]
            authority = authority[:k]
        return cls(href[:i - 3], userinfo, authority, port, rest, query, fragment)

    def copy(self) -> Parts:
        return Parts(self.scheme, self.userinfo, self.host, self.port, self.path, self.query, self.fragment)

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


Step = Callable[[Parts, "Unifier"], Any]


def rule(layer: str) -> Callable[[Step], Step]:
    """Tag a step with its layer (``"rewrite"`` or ``"identity"``)."""

    def tag(fn: Step) -> Step:
        fn.layer = layer  # type: ignore[attr-defined]
        fn.rule_name = fn.__name__  # type: ignore[attr-defined]
        return fn

    return tag


# -- rewrite layer ------------------------------------------------------------------------------

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _fix_escape(m: re.Match[str]) -> str:
    c = chr(int(m.group()[1:], 16))
    return c if c in _UNRESERVED else m.group().upper()


def normalize_escapes_in(s: str) -> str:
    """Upper-case percent-escapes and decode the ones of unreserved characters (RFC 3986 6.2.2)."""
    return _ESCAPE.sub(_fix_escape, s) if "%" in s else s


def _set_path(p: Parts, new: str) -> bool:
    """Give ``p`` the path ``new``; whether that changed it (what a step returns)."""
    if new == p.path:
        return False
    p.path = new
    return True


@rule(REWRITE)
def drop_fragment(p: Parts, ctx: Unifier) -> bool:
    """Drop the fragment (never sent to the server), except routes of single-page apps:
    ``#!...`` (hashbang) and ``#/...``, which name different content (policy
    ``route_fragments``)."""
    f = p.fragment
    if f is None or (ctx.policy.route_fragments and fragment_is_route(f)):
        return False
    p.fragment = None
    return True


@rule(REWRITE)
def normalize_escapes(p: Parts, ctx: Unifier) -> bool:
    """``%7e`` -> ``~``, ``%2f`` -> ``%2F`` in path, query and kept fragment."""
    changed = False
    if "%" in p.path:
        new = normalize_escapes_in(p.path)
        changed = new != p.path
        p.path = new
    if p.query and "%" in p.query:
        new = normalize_escapes_in(p.query)
        changed = changed or new != p.query
        p.query = new
    if p.fragment and "%" in p.fragment:
        new = normalize_escapes_in(p.fragment)
        changed = changed or new != p.fragment
        p.fragment = new
    return changed


@rule(REWRITE)
def remove_path_session_ids(p: Parts, ctx: Unifier) -> bool:
    """``/a;jsessionid=0AF3...`` -> ``/a``; ASP.NET ``/(S(id))/page.aspx`` -> ``/page.aspx``."""
    if not ctx.policy.strip_session_ids:
        return False
    path = p.path
    if ";" in path:
        path = PATH_SESSION.sub("", path)
    if "(" in path:
        path = ASPNET_SEGMENT.sub("", path) or "/"
    return _set_path(p, path)


_SLASHES = re.compile(r"(?<!:)//+")


@rule(REWRITE)
def collapse_slashes(p: Parts, ctx: Unifier) -> bool:
    """``/a//b`` -> ``/a/b``; a ``//`` right after ``:`` is kept, since it is an embedded URL
    (``/web/2020/http://example.com/``, Nutch's ``(?<!:)/{2,}``)."""
    if "//" not in p.path:
        return False
    return _set_path(p, _SLASHES.sub("/", p.path))


@rule(REWRITE)
def drop_empty_query(p: Parts, ctx: Unifier) -> bool:
    """``/a?`` -> ``/a`` (an empty query string is not sent differently by servers)."""
    if p.query == "":
        p.query = None
        return True
    return False


def _filter_query(p: Parts, drop: Callable[[str, str], bool]) -> bool:
    """Remove ``name=value`` items for which ``drop(lower_name, value)``; keep the rest verbatim,
    in order, so a URL the server accepted stays one it accepts (no ``?a`` -> ``?a=``)."""
    items = p.query.split("&")  # type: ignore[union-attr]
    kept = []
    for item in items:
        name, _, value = item.partition("=")
        if not drop(name.lower(), value):
            kept.append(item)
    if len(kept) == len(items):
        return False
    # the URL is rewritten anyway: leave no "?&" or "?" behind
    p.query = "&".join(i for i in kept if i) or None
    return True


@rule(REWRITE)
def remove_session_params(p: Parts, ctx: Unifier) -> bool:
    """``?PHPSESSID=...``, ``jsessionid``, ``ASPSESSIONIDxxxxxxxx``, token-like ``sid``/``sessionid``,
    and the ColdFusion ``CFID``+``CFTOKEN`` pair (see :mod:`scrapy_urlunify.core.params`)."""
    q = p.query
    if not q or not ctx.policy.strip_session_ids:
        return False
    lq = q.lower()
    if "sid" not in lq and "session" not in lq and "cfid" not in lq:
        return False  # cheap pre-check: every session name contains one of these
    changed = _filter_query(p, is_session_param)
    if p.query and "cfid" in p.query.lower():
        pairs = [(n.lower(), v) for n, _, v in (i.partition("=") for i in p.query.split("&"))]
        if cold_fusion_pair(pairs):
            changed = _filter_query(p, lambda n, v: n in ("cfid", "cftoken")) or changed
    return changed


# One search over the query tells whether any tracking name is there at all; most queries have
# none, and splitting them item by item would cost more than the whole rest of a URL.
_TRACKING_HINT = re.compile(
    r"(?:\A|&)(?:{}|{})".format(
        "|".join(re.escape(n) for n in sorted(TRACKING_PARAMS, key=len, reverse=True)),
        "|".join(re.escape(n) for n in TRACKING_PREFIXES),
    ),
    re.IGNORECASE,
)


@rule(REWRITE)
def remove_tracking_params(p: Parts, ctx: Unifier) -> bool:
    """``utm_*``, ``fbclid``, ``gclid``, ``msclkid``, ``mc_cid``... (see :mod:`scrapy_urlunify.core.params`)."""
    if not p.query or not ctx.policy.strip_tracking_params or _TRACKING_HINT.search(p.query) is None:
        return False
    return _filter_query(p, lambda n, v: is_tracking_param(n))


def _filter_host_params(p: Parts, ctx: Unifier, which: str) -> bool:
    """Remove the parameters a host's ``remove`` or ``ignore`` matcher names."""
    if not p.query:
        return False
    matcher = getattr(ctx.host_rules(p.host), which)
    if matcher is None:
        return False
    return _filter_query(p, lambda n, v: matcher(n))


@rule(REWRITE)
def remove_policy_params(p: Parts, ctx: Unifier) -> bool:
    """The policy's ``remove_params`` for this host (names or globs)."""
    return _filter_host_params(p, ctx, "remove")


# -- identity layer -----------------------------------------------------------------------------


@rule(IDENTITY)
def ignore_scheme(p: Parts, ctx: Unifier) -> bool:
    """``http`` and ``https`` name one page (policy ``ignore_scheme``)."""
    if not ctx.policy.ignore_scheme:
        return False
    p.scheme = None
    return True


@rule(IDENTITY)
def drop_userinfo(p: Parts, ctx: Unifier) -> bool:
    """``http://user:pw@host/`` is the page of ``http://host/`` (credentials are not identity)."""
    if not p.userinfo:
        return False
    p.userinfo = ""
    return True


@rule(IDENTITY)
def unify_host(p: Parts, ctx: Unifier) -> str | bool:
    """Drop a trailing dot, strip ``www``-like prefixes, then map domain aliases and sister
    suffixes to one host.

    Computed once per host (:meth:`Unifier.host_rules`); returns the names of the sub-rules that
    fired: ``strip_trailing_dot``, ``strip_host_prefix``, ``domain_alias``, ``sister_suffix``.
    """
    hr = ctx.host_rules(p.host)
    if hr.identity_host == p.host:
        return False
    p.host = hr.identity_host
    return hr.host_rules_fired


def strip_trailing_slash(path: str) -> str:
    """``/docs/`` -> ``/docs``; the root ``/`` stays."""
    return path.rstrip("/") or "/" if len(path) > 1 and path[-1] == "/" else path


def strip_index_pages(path: str, index: frozenset[str]) -> str:
    """``/docs/index.html`` -> ``/docs`` for the (lower-case) file names in ``index``.

    Repeats (``/a/index.html/index.html``) so that applying it twice changes nothing.
    """
    while True:
        k = path.rfind("/")
        last = path[k + 1:]
        if "." not in last or last.lower() not in index:
            return path
        path = path[:k].rstrip("/") or "/"


def fragment_is_route(fragment: str) -> bool:
    """``#!/inbox`` and ``#/inbox`` are routes of a single-page app: they name content."""
    return fragment[:1] in ("!", "/") and fragment != ""


@rule(IDENTITY)
def drop_path_prefix(p: Parts, ctx: Unifier) -> bool:
    """``/print/x`` is ``/x`` when ``print`` is one of the host's ``ignore_path_prefixes``
    (configured or learned); a path that is only the segment (``/print/``) keeps it."""
    prefixes = ctx.host_rules(p.host).path_prefixes
    if prefixes is None:
        return False
    first, sep, tail = p.path[1:].partition("/")
    if not sep or not tail or first not in prefixes:
        return False
    p.path = "/" + tail
    return True


@rule(IDENTITY)
def drop_trailing_slash(p: Parts, ctx: Unifier) -> bool:
    """``/docs/`` and ``/docs`` name one page (the root ``/`` stays)."""
    return _set_path(p, strip_trailing_slash(p.path))


@rule(IDENTITY)
def drop_index_page(p: Parts, ctx: Unifier) -> bool:
    """``/docs/index.html`` is ``/docs/`` (policy ``index_pages``, case-insensitive)."""
    return _set_path(p, strip_index_pages(p.path, ctx.index_pages))


@rule(IDENTITY)
def drop_ignored_params(p: Parts, ctx: Unifier) -> bool:
    """The policy's ``ignore_params`` for this host (configured or learned): kept in the fetched
    URL, left out of the identifier."""
    return _filter_host_params(p, ctx, "ignore")


@rule(IDENTITY)
def keep_key_params(p: Parts, ctx: Unifier) -> bool:
    """When a URL carries one of its host's ``key_params``, only key parameters identify it."""
    if not p.query:
        return False
    key = ctx.host_rules(p.host).key
    if key is None:
        return False
    items = p.query.split("&")
    kept = [i for i in items if key(i.partition("=")[0].lower())]
    if not kept or len(kept) == len(items):
        return False
    p.query = "&".join(kept)
    return True


def without_empty_items(q: str) -> str | None:
    """``a=&b=1&&`` -> ``b=1``; None when nothing is left."""
    if "&" not in q and q[-1:] != "=":
        return q or None  # one item, not empty
    return "&".join(i for i in q.split("&") if i and not i.endswith("=")) or None


def sorted_query(q: str) -> str:
    """``b=2&a=1`` -> ``a=1&b=2``."""
    return "&".join(sorted(q.split("&"))) if "&" in q else q


@rule(IDENTITY)
def drop_empty_params(p: Parts, ctx: Unifier) -> bool:
    """``?a=&b=1&&`` -> ``?b=1``: parameters with an empty value say nothing about the page.
    (A bare ``?a`` is kept: it is a flag, and often the whole query of a page.)"""
    q = p.query
    if q is None:
        return False
    new = without_empty_items(q)
    if new == q:
        return False
    p.query = new
    return True


@rule(IDENTITY)
def plus_for_space(p: Parts, ctx: Unifier) -> bool:
    """``?q=a%20b`` and ``?q=a+b`` name one page: form decoding (what PHP, Java servlets, Python
    frameworks... apply to a query) reads both as a space."""
    q = p.query
    if not q or "%20" not in q:
        return False
    p.query = q.replace("%20", "+")
    return True


@rule(IDENTITY)
def sort_params(p: Parts, ctx: Unifier) -> bool:
    """``?b=2&a=1`` and ``?a=1&b=2`` name one page."""
    q = p.query
    if not q:
        return False
    new = sorted_query(q)
    if new == q:
        return False
    p.query = new
    return True


REWRITE_STEPS: tuple[Step, ...] = (
    drop_fragment,
    normalize_escapes,
    remove_path_session_ids,
    collapse_slashes,
    drop_empty_query,
    remove_session_params,
    remove_tracking_params,
    remove_policy_params,
)

IDENTITY_STEPS: tuple[Step, ...] = (
    ignore_scheme,
    drop_userinfo,
    unify_host,
    drop_path_prefix,
    drop_trailing_slash,
    drop_index_page,
    drop_ignored_params,
    keep_key_params,
    drop_empty_params,
    plus_for_space,
    sort_params,
)
