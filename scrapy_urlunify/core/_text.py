"""The string work of the steps: functions over the text of a path, a query or a fragment.

Kept apart from the steps (:mod:`scrapy_urlunify.core._rules`) so that each can be read and
tested on its own, and shared with the learner, which reads paths as the identity layer does.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from functools import lru_cache

from scrapy_urlunify.core._recent import remembered, remembered_idempotent

# a "%" that does not start an escape
_STRAY = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX_DIGITS = "0123456789ABCDEFabcdef"
#: every spelling of an escape -> its normal one (RFC 3986 6.2.2): the character itself when it
#: is unreserved, else the escape upper-cased
_NORMAL = {
    e: c if (c := chr(int(e[1:], 16))) in _UNRESERVED else e.upper()
    for e in (f"%{a}{b}" for a in _HEX_DIGITS for b in _HEX_DIGITS)
}


#: after a "%", the digits of an escape whose normal spelling differs: a lower-case hex digit, or
#: an unreserved character (tests check it against _NORMAL)
_CHANGING = r"(?:[a-f][0-9A-Fa-f]|2[DEa-f]|3[0-9a-f]|[46][1-9A-Fa-f]|5[0-9AFa-f]|7[0-9AEa-f]|[0189A-F][a-f])"
#: such an escape, save an escaped hex digit (spelled in digits alone: %30-%39, %41-%46,
#: %61-%66) right after a stray "%", or a stray "%" and a hex digit: it stays escaped, since
#: decoded it would spell a new escape (each pattern starts with "%", which re finds fastest)
_TO_NORMALIZE = re.compile(
    "%" + _CHANGING + r"(?:(?<!%%..)(?<!%[0-9A-Fa-f]%..)|(?<!%3[0-9])(?<!%4[1-6])(?<!%6[1-6]))"
)
_KEPT = re.compile(r"%(?=3[0-9]|4[1-6]|6[1-6])(?:(?<=%%)|(?<=%[0-9A-Fa-f]%))")
#: each escaped hex digit, decoded where no stray "%" keeps it
_DIGITS_OUTSIDE_STRAYS = {
    e: re.compile(f"{e}(?<!%{e})(?<!%[0-9A-Fa-f]{e})")
    for e in (f"%{c:X}" for c in b"0123456789ABCDEFabcdef")
}
_CHANGING_ANYWHERE = re.compile("%" + _CHANGING)
_SPLIT_CHANGING = re.compile(f"(%{_CHANGING})")
#: passes of str.replace, one per spelling, before the rest is written escape by escape: a text
#: holds one or two spellings to change, a hostile one may hold hundreds
_REPLACE_PASSES = 8


@remembered_idempotent
def normalize_escapes_in(s: str) -> str:
    """Upper-case percent-escapes and decode the ones of unreserved characters (RFC 3986 6.2.2).

    Never creates an escape that was not there: after a stray ``%`` (one that starts no escape),
    an escaped hex digit stays escaped, since decoding it would spell a new escape
    (``%%36%31`` is not ``%61``, which is ``a``); so applying it twice changes nothing.

    A few passes over the text whatever it repeats: each spelling is rewritten everywhere at
    once (decoding one never spells another, nor makes a "%" stray: what it gives is no ``%``,
    and an escaped hex digit is kept where it could), where a Python step per escape would cost
    seconds on a megabyte of them.
    """
    if "%" not in s:
        return s
    strays = _has_stray(s)
    if not _to_change(s, strays):
        return s
    m = _TO_NORMALIZE.search(s)
    return s if m is None else _respelled(s, m, strays)


def _respelled(s: str, m: re.Match[str], strays: bool) -> str:
    """``s`` with its escapes in their normal spelling, ``m`` being the first to write otherwise
    (with ``strays``: ``s`` holds a stray "%", whose escaped hex digits stay)."""
    search = (_TO_NORMALIZE if strays else _CHANGING_ANYWHERE).search
    # an escape after a stray "%" and a hex digit ("%4%31"): then every escaped hex digit is
    # decoded by a pattern that looks behind it; else only those with a "%" right before them
    after_digit = strays and "%h%hh" in s.translate(_HEX_AS_H)
    for _ in range(_REPLACE_PASSES):
        e = m.group()
        if strays and e in _DIGITS_OUTSIDE_STRAYS and (after_digit or "%" + e in s):
            s = _DIGITS_OUTSIDE_STRAYS[e].sub(_NORMAL[e], s)
        else:
            s = s.replace(e, _NORMAL[e])
        # (the search would try each "%" to the end to find none)
        found = search(s, m.start()) if _to_change(s, strays) else None
        if found is None:
            return s
        m = found
    # many spellings: escape by escape, in C, the kept ones put aside
    hold = _absent_char(s)
    s, kept = _KEPT.subn(hold, s) if strays else (s, 0)
    parts = _SPLIT_CHANGING.split(s)
    parts[1::2] = map(_NORMAL.__getitem__, parts[1::2])
    s = "".join(parts)
    return s.replace(hold, "%") if kept else s


# hex digits as "h" (and "h" as something else): a "%" starts an escape where "%hh" is
_HEX_AS_H = str.maketrans({**dict.fromkeys(_HEX_DIGITS, "h"), "h": "g"})


# the hex digits a-f as "l", 2-7 as "q", the others as "u" (and "l", "q", "u" as something else):
# an escape with a lower-case digit is "%l" and a digit, or a digit and "l"; one of an ASCII
# character starts "%q"
_DIGIT_CLASSES = str.maketrans(
    {
        **dict.fromkeys("abcdef", "l"),
        **dict.fromkeys("234567", "q"),
        **dict.fromkeys("0189ABCDEF", "u"),
        **dict.fromkeys("lqu", "x"),
    }
)
_LOWER_CASE_ESCAPES = ("%ll", "%lq", "%lu", "%ql", "%ul")
# the escapes of unreserved characters in upper case, by first digit (each pattern starts with
# two literal characters, which re finds in C); then the same where an escaped hex digit after a
# stray "%" (or a stray "%" and a hex digit) stays
_UNRESERVED_ESCAPES = ("%2[DE]", "%3[0-9]", "%4[1-9A-F]", "%5[0-9AF]", "%6[1-9A-F]", "%7[0-9AE]")
_AFTER_NO_STRAY = "(?<!%%..)(?<!%[0-9A-Fa-f]%..)"
_UPPER = tuple(re.compile(p).search for p in _UNRESERVED_ESCAPES)
_UPPER_OUTSIDE_STRAYS = tuple(
    re.compile(p).search
    for p in (
        "%2[DE]",
        f"%3[0-9]{_AFTER_NO_STRAY}",
        f"%4(?:[7-9A-F]|[1-6]{_AFTER_NO_STRAY})",
        "%5[0-9AF]",
        f"%6(?:[7-9A-F]|[1-6]{_AFTER_NO_STRAY})",
        "%7[0-9AE]",
    )
)


def _to_change(s: str, strays: bool) -> bool:
    """Whether an escape of ``s`` is to write otherwise (``strays``: ``s`` holds a stray "%"):
    told by a translation and a few searches for two characters, in C, where a pattern of
    every such escape tries each "%" (a megabyte of escaped UTF-8 holds 300,000)."""
    t = s.translate(_DIGIT_CLASSES)
    if any(e in t for e in _LOWER_CASE_ESCAPES):
        return True
    return "%q" in t and any(search(s) for search in (_UPPER_OUTSIDE_STRAYS if strays else _UPPER))


def _has_stray(s: str) -> bool:
    """Whether ``s`` holds a "%" that starts no escape. (Counted on a translation, in C: a search
    for one tries a pattern at every "%", three times slower.)"""
    t = s.translate(_HEX_AS_H)
    return t.count("%") != t.count("%hh")


def _absent_char(s: str) -> str:
    """A character ``s`` does not hold: NUL for the parts of a URL (the WHATWG serializer escapes
    every control character)."""
    if "\x00" not in s:
        return "\x00"
    held = set(s)
    return next(c for c in map(chr, itertools.count(1)) if c not in held)


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


@remembered_idempotent
def strip_index_pages(path: str, index: frozenset[str]) -> str:
    """``/docs/index.html`` -> ``/docs`` for the (lower-case) file names in ``index``.

    Repeats (``/a/index.html/index.html``) so that applying it twice changes nothing. One
    pattern matched at the start of the reversed path finds every index page and slash to cut
    at the end (a Python step per segment costs 0.1 s on a megabyte of ``index.html/``).
    """
    k = path.rfind("/")
    if k < 0 or path[k + 1 :].lower() not in index:
        return path
    if not path.isascii():
        return _strip_index_pages_one_by_one(path, index)
    end = len(path) - _index_run(index).match(path[::-1]).end()  # type: ignore[union-attr]
    return path[:end] if end else "/"


@lru_cache(maxsize=16)
def _index_run(index: frozenset[str]) -> re.Pattern[str]:
    """The pattern of a reversed path's index pages and the slashes before them, repeated."""
    names = "|".join(re.escape(n[::-1]) for n in sorted(index, key=len, reverse=True))
    return re.compile(f"(?:(?:{names})/+)+", re.IGNORECASE | re.ASCII)


def _strip_index_pages_one_by_one(path: str, index: frozenset[str]) -> str:
    # a path that is not ASCII (never one of a URL: the WHATWG serializer escapes the rest),
    # where str.lower() and the pattern's case folding may differ
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


_AMP_ITEM = re.compile(r"&(?:amp;)*+amp(?=[=&]|\Z)")


@remembered
def has_amp_item(query: str) -> bool:
    """Whether an item of ``query`` is named ``amp`` (``?amp``, ``?amp=1``), its name read past
    the ``amp;`` that ``&amp;`` leaves, as ``drop_amp_marker`` reads it. (A pattern that starts
    with "&", searched for in C, on the lower-cased query.)"""
    return _AMP_ITEM.search("&" + query.lower()) is not None


#: what ``&amp;`` in a query leaves after its ``&``, as a page that escaped its HTML twice writes
#: it: one ``amp;`` or more (``&amp;amp;`` is three times) at the start of an item (also the
#: first: sorted, it may follow an ``&``)
_AMP_ENTITIES = re.compile("&(?:amp;)+")
_LEADING_AMP_ENTITIES = re.compile("(?:amp;)+")


@remembered_idempotent
def unescape_amp_in(text: str) -> str:
    """``text`` less the ``amp;`` that ``&amp;`` leaves at the start of each of its items (a query
    or a parameter's name: ``a=1&amp;b=2`` -> ``a=1&b=2``, ``amp;amp;b`` -> ``b``)."""
    if text[:4] == "amp;":
        text = text[_LEADING_AMP_ENTITIES.match(text).end() :]  # type: ignore[union-attr]
    # most are one "amp;" after an "&": str.replace takes them in C, where re.sub would pay a
    # Python-level replacement each; the pattern takes what is left (long runs of "amp;")
    for _ in range(2):
        if "&amp;" not in text:
            return text
        text = text.replace("&amp;", "&")
    return _AMP_ENTITIES.sub("&", text) if "&amp;" in text else text


# (one character class, then a look back at a "%" only: the class is what re scans for fastest)
_UNSAFE = re.compile(r'[%"<>\\^`{|}\[\]](?<!%(?=[0-9A-Fa-f]{2}))')


@remembered
def has_unsafe_chars(text: str) -> bool:
    """Whether ``text`` holds a raw character that RFC 3986 allows nowhere in a path or query:
    neither reserved nor unreserved (``"`` ``<`` ``>`` ``\\`` ``^`` `````` ``{`` ``|`` ``}``),
    reserved for the host alone (``[`` ``]``), or a ``%`` that starts no escape."""
    if len(text) < _LONG_SEARCH:
        return _UNSAFE.search(text) is not None
    # the pattern tries every "%", and a megabyte of escaped UTF-8 holds 300,000 of them: a
    # search per character instead (memchr, in C), and the count of the "%"s that start escapes
    return any(c in text for c, _ in _UNSAFE_ESCAPES) or ("%" in text and _has_stray(text))


#: texts at least this long are searched for characters one by one (see has_unsafe_chars)
_LONG_SEARCH = 1 << 12


#: the characters has_unsafe_chars finds, but "%", and their escapes
_UNSAFE_ESCAPES = tuple((c, f"%{ord(c):02X}") for c in '"<>\\^`{|}[]')


@remembered_idempotent
def without_slash_runs(path: str) -> str:
    """``/a//b`` -> ``/a/b``; a ``//`` right after ``:`` is kept, since it is an embedded URL
    (``/web/2020/http://example.com/``, Nutch's ``(?<!:)/{2,}``)."""
    return _SLASHES.sub("/", path)


# (the "/" first and the look back after it: a pattern that starts with a literal is searched
# for that literal first, in C)
_SLASHES = re.compile(r"/(?<!:/)/+")


@remembered_idempotent
def escape_unsafe(s: str) -> str:
    """``s`` with the characters :func:`has_unsafe_chars` finds escaped (a stray ``%`` as
    ``%25``). (One replace per character it holds: ``str.translate`` to several characters
    takes a Python-level lookup per character of the text.)"""
    strays = "%" in s and _has_stray(s)  # (before: the escapes below are none)
    for c, escaped in _UNSAFE_ESCAPES:
        if c in s:
            s = s.replace(c, escaped)
    if strays:
        # "%" alone is "%25"; the escaped hex digits the rewrite layer kept after it (so as not
        # to spell a new escape) can now be decoded like any unreserved character (no stray is
        # left to keep one). A "%" before another is one: str.replace takes those in C.
        while "%%" in s:
            s = s.replace("%%", "%25%")
        if _has_stray(s):
            s = _STRAY.sub("%25", s)
        m = _CHANGING_ANYWHERE.search(s)
        if m is not None:
            s = _respelled(s, m, strays=False)
    return s


@remembered_idempotent
def without_empty_items(q: str) -> str | None:
    """``a=&b=1&&`` -> ``b=1``; None when nothing is left."""
    if "&" not in q and q[-1:] != "=":
        return q or None  # one item, not empty
    if "&&" not in q and "=&" not in q:
        # (a few searches, in C) no empty item but at the ends, none ending in "=" but the last
        q = q.strip("&")
        if q[-1:] == "=":
            q = q[: max(q.rfind("&"), 0)]
        return q or None
    items = split_items(q)
    if len(items) < _MANY_ITEMS:
        return "&".join(i for i in items if i and i[-1] != "=") or None
    # each distinct item is looked at once, then the items are filtered in C: a Python step per
    # item costs 0.1 s on a megabyte of "a=&"
    distinct = set(items)
    empty = {i for i in distinct if not i or i[-1] == "="}
    if not empty:
        return q
    if len(empty) == len(distinct):
        return None
    return "&".join(itertools.filterfalse(empty.__contains__, items))


#: a query with this many items is filtered by its distinct items
_MANY_ITEMS = 64


def without_blank_items(q: str) -> str:
    """``&a&&b&`` -> ``a&b``: the items of ``q`` less the empty ones, in C (a run of a million
    "&" goes in twenty passes, each half as long as the one before)."""
    while "&&" in q:
        q = q.replace("&&", "&")
    return q.strip("&")


@remembered_idempotent
def spaces_as_plus(q: str) -> str:
    """``q`` with each ``%20`` written ``+``."""
    return q.replace("%20", "+")


@remembered_idempotent
def sorted_query(q: str) -> str:
    """``b=2&a=1`` -> ``a=1&b=2``."""
    return "&".join(sorted(split_items(q))) if "&" in q else q


@remembered
def split_items(query: str) -> tuple[str, ...]:
    """The items of ``query`` (split at each "&"): several steps split one long query."""
    return tuple(query.split("&"))


@remembered
def without_items(query: str, items: re.Pattern[str]) -> tuple[bool, str | None]:
    """Whether ``items`` matches items of ``query``, and the query less them (``None`` when
    nothing is left): ``items`` is matched at each "&" of the query with "&" in front, each item
    with the "&" before it (``params.TRACKING_ITEMS``); when it removes any, the empty items go
    too (the URL is rewritten anyway: no "?&" or "?" left behind). In C, not a Python step per
    item (a second on a megabyte of them): one substitution, or, for a query that repeats its
    items, one match per distinct item."""
    repeated = _repeated_items(query)
    if repeated is not None:
        split, distinct = repeated
        drop = {i for i in distinct if items.fullmatch("&" + i)}
        if not drop:
            return False, None
        return True, "&".join(filter(None, itertools.filterfalse(drop.__contains__, split))) or None
    # the empty items go anyway when one is removed: a pattern that need not try each of a
    # million "&" (one with a name that may be empty, "*", removes them, as the items it names)
    blank = query[:1] == "&" or query[-1:] == "&" or "&&" in query
    if blank:
        query = without_blank_items(query)
    new, removed = items.subn("", "&" + query)
    if not removed and not (blank and items.fullmatch("&")):
        return False, None
    return True, without_blank_items(new) or None


@remembered
def without_named(query: str, items: tuple[re.Pattern[str], ...]) -> tuple[bool, str | None]:
    """Whether the patterns ``items`` match items of ``query`` (as :func:`without_items`), and
    the query less them, its empty items kept."""
    repeated = _repeated_items(query)
    if repeated is not None:
        split, distinct = repeated
        drop = {i for i in distinct if any(p.fullmatch("&" + i) for p in items)}
        return bool(drop), "&".join(itertools.filterfalse(drop.__contains__, split)) or None
    new, removed = "&" + query, 0
    for pattern in items:
        new, n = pattern.subn("", new)
        removed += n
    return bool(removed), new[1:] or None


def _repeated_items(query: str) -> tuple[tuple[str, ...], set[str]] | None:
    """The items of ``query`` and the distinct ones, when there are many and they repeat (each
    distinct item is then matched once, and the items filtered in C); else None."""
    if query.count("&") < _MANY_ITEMS:
        return None
    split = split_items(query)
    distinct = set(split)
    return (split, distinct) if len(distinct) * 4 <= len(split) else None
