"""The string work of the steps, against each rule written plainly, escape by escape and item by
item: on short texts, and on long ones (over ``recent.LONG_TEXT``), where the steps take their
fast paths (a replace per spelling, a match per distinct item) and remember their results."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import scrapy_urlunify.core._recent as recent
from scrapy_urlunify.core._params import (
    SESSION_ITEMS,
    TRACKING_ITEMS,
    NameMatcher,
    is_session_param,
    is_tracking_param,
)
from scrapy_urlunify.core._text import (
    escape_unsafe,
    has_unsafe_chars,
    normalize_escapes_in,
    without_empty_items,
    without_items,
    without_named,
)

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset("0123456789ABCDEFabcdef")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_STRAY = re.compile(r"%(?![0-9A-Fa-f]{2})")


def normalized_one_by_one(s: str) -> str:
    """RFC 3986 6.2.2, escape by escape: an escape of an unreserved character decoded, any other
    upper-cased; but an escaped hex digit right after a stray "%" (or a stray "%" and a hex digit
    written so far) stays escaped, since decoded it would spell a new escape."""
    out: list[str] = []
    last = 0
    written = ""  # the last two characters written
    for m in _ESCAPE.finditer(s):
        text, esc = s[last : m.start()], m.group()
        c = chr(int(esc[1:], 16))
        before = (written + text)[-2:]
        after_stray = before[-1:] == "%" or (before[:1] == "%" and before[1:] in _HEX)
        piece = c if c in _UNRESERVED and not (c in _HEX and after_stray) else esc.upper()
        out += (text, piece)
        written = (before + piece)[-2:]
        last = m.end()
    out.append(s[last:])
    return "".join(out)


def escaped_one_by_one(s: str) -> str:
    for c in '"<>\\^`{|}[]':
        s = s.replace(c, f"%{ord(c):02X}")
    if _STRAY.search(s):
        s = normalized_one_by_one(_STRAY.sub("%25", s))
    return s


# escapes of hex digits (decoded, or kept after a stray "%"), of other unreserved characters, of
# others, in either case; stray "%"s and hex digits to put them in every context
_pieces = st.sampled_from(
    [
        "%",
        "%%",
        "%3",
        "%4",
        "%36",
        "%31",
        "%41",
        "%46",
        "%61",
        "%66",
        "%4a",
        "%4A",
        "%7e",
        "%2d",
        "%25",
        "%c3",
        "%C3",
        "%3a",
        "%20",
        "a",
        "F",
        "1",
        "6",
        "g",
        "h",
        "/",
        "|",
        "[",
        "x",
    ]
)
_soup = st.lists(_pieces, max_size=16).map("".join)
# long enough to be remembered, and with more spellings to change than one replace each
_long = st.builds(
    lambda s, n: s * n,
    _soup.filter(bool),
    st.integers(recent.LONG_TEXT // 8, recent.LONG_TEXT // 4),
).map(lambda s: s + "%7e%2d%41%4a%6b%c3%e9%30%%31%3a%%41%4%31")

settings_ = settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow], deadline=None)


@settings_
@given(st.one_of(_soup, _long))
@example("%%36%31%31%4%31%41%%41")
@example("%c3%7e%7E%2d%C3")
def test_escapes_are_normalized_as_the_rule_says_one_by_one(s):
    assert normalize_escapes_in(s) == normalized_one_by_one(s)
    assert normalize_escapes_in(s) == normalized_one_by_one(s)  # (remembered, when long)


@settings_
@given(st.one_of(_soup, _long))
def test_unsafe_characters_are_escaped_as_the_rule_says_one_by_one(s):
    assert has_unsafe_chars(s) == (escaped_one_by_one(s) != s)
    assert escape_unsafe(s) == escaped_one_by_one(s)


_names = st.sampled_from(
    [
        "utm_source",
        "UTM_x",
        "gclid",
        "amp;gclid",
        "AMP;amp;fbclid",
        "jsessionid",
        "PHPSESSID",
        "amp;jsessionid",
        "AMP;sid",
        "sid",
        "SessionId",
        "aspsessionidabcdefgh",
        "id",
        "ID",
        "xyz",
        "xaybzc",
        "ign",
        "ignore",
        "a",
        "",
        "amp",
    ]
)
_values = st.sampled_from(
    ["", "1", "0123456789abcdef0", "abcdefghijklmnopq", "ABCDEFGHIJKLMNOPQRSTUVWX", "a=b", "%20"]
)
_items = st.one_of(st.just(""), _names, st.builds(lambda n, v: f"{n}={v}", _names, _values)).map(
    str
)
_queries = st.one_of(
    st.lists(_items, min_size=1, max_size=8).map("&".join),
    # a long query: its items repeat (a match per distinct item) or not (one substitution)
    st.builds(
        lambda items, n, tail: "&".join(items * n + tail),
        st.lists(_items, min_size=1, max_size=4),
        st.integers(recent.LONG_TEXT // 40, recent.LONG_TEXT // 10),
        st.lists(st.integers(0, 10**6).map(lambda i: f"k{i}=v"), max_size=3),
    ),
)


def removed_one_by_one(query: str, drop) -> tuple[bool, str | None]:
    """The items whose name (lower-cased, read past "amp;") ``drop`` takes removed, and the empty
    ones too when any is."""
    items = query.split("&")
    kept = [
        i for i in items if not drop(re.sub(r"\A(?:amp;)+", "", i.partition("=")[0].lower()), i)
    ]
    if len(kept) == len(items):
        return False, None
    return True, "&".join(i for i in kept if i) or None


@settings_
@given(_queries)
@example("amp;jsessionid=1&a=1&AMP;amp;fbclid=x")
@example("&&utm_source=1&&sid=0123456789abcdef0&&")
@example("id=1&ID=2&xaybzc=3&amp;ignore=1&=")
def test_query_items_are_removed_as_the_predicates_say(query):
    assert without_items(query, TRACKING_ITEMS) == removed_one_by_one(
        query, lambda n, i: is_tracking_param(n)
    )
    assert without_items(query, SESSION_ITEMS) == removed_one_by_one(
        query, lambda n, i: is_session_param(n, i.partition("=")[2])
    )
    for globs in (["x*y*z*", "drop"], ["ign*"], ["*"], ["id", "s?d"]):
        m = NameMatcher(globs)
        assert without_items(query, m.items) == removed_one_by_one(query, lambda n, i, m=m: m(n))
        # as written, not read past "amp;" (key parameters, rule contexts); empty items kept
        items = query.split("&")
        kept = [i for i in items if not m(i.partition("=")[0].lower())]
        assert without_named(query, (m.named_items,)) == (
            len(kept) != len(items),
            "&".join(kept) or None,
        )


@settings_
@given(_queries)
def test_empty_items_go_as_the_rule_says_one_by_one(query):
    plain = "&".join(i for i in query.split("&") if i and not i.endswith("=")) or None
    assert without_empty_items(query) == plain


def test_long_texts_remembered_are_bounded_and_answered_right():
    recent.forget()
    texts = [f"%{i:02x}" * (recent.LONG_TEXT // 3 + 1) for i in range(40)]
    for s in texts:
        assert normalize_escapes_in(s) == normalized_one_by_one(s)
    for s in texts:  # answered again, from what is remembered or not
        assert normalize_escapes_in(s) == normalized_one_by_one(s)
    # a few megabyte URLs at most, whatever went through
    assert 0 < recent.held() <= recent.CAPACITY
