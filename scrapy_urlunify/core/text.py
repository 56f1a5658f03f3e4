"""The string work of the steps: functions over the text of a path, a query or a fragment.

Kept apart from the steps (:mod:`scrapy_urlunify.core.rules`) so that each can be read and
tested on its own, and shared with the learner, which reads paths as the identity layer does.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "escape_unsafe",
    "fragment_is_route",
    "has_amp_item",
    "has_unsafe_chars",
    "normalize_escapes_in",
    "sorted_query",
    "strip_index_pages",
    "strip_trailing_slash",
    "unescape_amp_in",
    "without_empty_items",
]

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
# a "%" that does not start an escape
_STRAY = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset("0123456789ABCDEFabcdef")


def _fix_escape(m: re.Match[str]) -> str:
    c = chr(int(m.group()[1:], 16))
    return c if c in _UNRESERVED else m.group().upper()


def normalize_escapes_in(s: str) -> str:
    """Upper-case percent-escapes and decode the ones of unreserved characters (RFC 3986 6.2.2).

    Never creates an escape that was not there: after a stray ``%`` (one that starts no escape),
    an escaped hex digit stays escaped, since decoding it would spell a new escape
    (``%%36%31`` is not ``%61``, which is ``a``); so applying it twice changes nothing.
    """
    if "%" not in s:
        return s
    if _STRAY.search(s) is None:
        return _ESCAPE.sub(_fix_escape, s)
    out = []
    last = 0
    tail = ""  # the last two characters written
    for m in _ESCAPE.finditer(s):
        text = s[last : m.start()]
        esc = m.group()
        c = chr(int(esc[1:], 16))
        before = (tail + text)[-2:]
        if c in _UNRESERVED and not (
            c in _HEX and (before[-1:] == "%" or (before[:1] == "%" and before[1:] in _HEX))
        ):
            piece = c
        else:
            piece = esc.upper()
        out.append(text)
        out.append(piece)
        tail = (before + piece)[-2:]
        last = m.end()
    out.append(s[last:])
    return "".join(out)


#: ``fragment_is_route(fragment)``: a match when the fragment is a route of a single-page app,
#: which names content: ``#!/inbox``, ``#!inbox``, ``#/inbox``. An empty route (``#!``, ``#!/``,
#: ``#/``) is the app's start, the page itself. (A pattern's own match: most links have a
#: fragment, and this is tested on each.)
fragment_is_route: Callable[[str], re.Match[str] | None] = re.compile(
    r"(?:!/|!(?!/)|/).", re.DOTALL
).match


def strip_trailing_slash(path: str) -> str:
    """``/docs/`` -> ``/docs``; the root ``/`` stays."""
    return path.rstrip("/") or "/" if len(path) > 1 and path[-1] == "/" else path


def strip_index_pages(path: str, index: frozenset[str]) -> str:
    """``/docs/index.html`` -> ``/docs`` for the (lower-case) file names in ``index``.

    Repeats (``/a/index.html/index.html``) so that applying it twice changes nothing. Linear in
    the path's length: it moves an end index back over the segments it drops and cuts once
    (cutting at every segment costs the square of the length on ``index.html/`` repeated).
    """
    end = len(path)
    while True:
        k = path.rfind("/", 0, end)
        last = path[k + 1 : end]
        if k < 0 or last.lower() not in index:
            return path if end == len(path) else path[:end]
        end = k
        while end > 0 and path[end - 1] == "/":
            end -= 1
        if end == 0:
            return "/"


#: ``has_amp_item(query)``: a match when an item of ``query`` is named ``amp`` (``?amp``, ``?amp=1``),
#: its name read past the ``amp;`` that ``&amp;`` leaves, as ``drop_amp_marker`` reads it
has_amp_item = re.compile(r"(?:\A|&)(?:amp;)*+amp(?=[=&]|\Z)", re.IGNORECASE).search

#: what ``&amp;`` in a query leaves after its ``&``, as a page that escaped its HTML twice writes
#: it: one ``amp;`` or more (``&amp;amp;`` is three times) at the start of an item (also the
#: first: sorted, it may follow an ``&``)
_AMP_ENTITY = re.compile(r"(?:(?<=&)|\A)(?:amp;)+")


def unescape_amp_in(text: str) -> str:
    """``text`` less the ``amp;`` that ``&amp;`` leaves at the start of each of its items (a query
    or a parameter's name: ``a=1&amp;b=2`` -> ``a=1&b=2``, ``amp;amp;b`` -> ``b``)."""
    return _AMP_ENTITY.sub("", text)


#: ``has_unsafe_chars(text)``: a match when ``text`` holds a raw character that RFC 3986 allows
#: nowhere in a path or query: neither reserved nor unreserved (``"`` ``<`` ``>`` ``\\`` ``^``
#: `````` ``{`` ``|`` ``}``), reserved for the host alone (``[`` ``]``), or a ``%`` that starts no
#: escape. (One character class, then a look back at a ``%`` only: the class is what ``re``
#: scans for fastest, and this is tested on every URL.)
has_unsafe_chars = re.compile(r'[%"<>\\^`{|}\[\]](?<!%(?=[0-9A-Fa-f]{2}))').search

_ESCAPE_UNSAFE = str.maketrans({c: f"%{ord(c):02X}" for c in '"<>\\^`{|}[]'})


def escape_unsafe(s: str) -> str:
    """``s`` with the characters :func:`has_unsafe_chars` finds escaped (a stray ``%`` as
    ``%25``)."""
    s = s.translate(_ESCAPE_UNSAFE)
    if "%" in s and _STRAY.search(s) is not None:
        # "%" alone is "%25"; the escaped hex digits the rewrite layer kept after it (so as not
        # to spell a new escape) can now be decoded like any unreserved character
        s = normalize_escapes_in(_STRAY.sub("%25", s))
    return s


def without_empty_items(q: str) -> str | None:
    """``a=&b=1&&`` -> ``b=1``; None when nothing is left."""
    if "&" not in q and q[-1:] != "=":
        return q or None  # one item, not empty
    return "&".join(i for i in q.split("&") if i and not i.endswith("=")) or None


def sorted_query(q: str) -> str:
    """``b=2&a=1`` -> ``a=1&b=2``."""
    return "&".join(sorted(q.split("&"))) if "&" in q else q
