"""Which query parameters and path parts carry no page identity.

Everything here is data plus tiny predicates, so the lists can be read, cited and tested on
their own. Names are compared lower-cased. Sources are named next to each entry; the
project's docs (``docs/rules.md``) repeat them in a table.

Two kinds of removal:

* *session ids* -- per-visitor tokens a server adds to keep state without cookies. Only exact,
  well-known names are removed; the generic names ``sid`` and ``sessionid`` only when their
  value looks like a token, since ``?sid=3`` is often a real identifier (a section id).
* *tracking parameters* -- added by ad and analytics tools to measure a click; the server
  answers without them. An anchored list (exact names, or a prefix ending in ``_``); never a
  substring regex, which is how courlan ends up stripping ``cid`` and ``source``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from fnmatch import translate

__all__ = [
    "SESSION_PARAMS",
    "TOKEN_SESSION_PARAMS",
    "TRACKING_PARAMS",
    "TRACKING_PREFIXES",
    "NameMatcher",
    "is_session_param",
    "is_tracking_param",
    "may_name_param",
    "may_name_session_param",
    "may_name_tracking_param",
]

#: Session parameters removed whatever their value.
#: ``jsessionid``: Java Servlet URL rewriting (Servlet spec, SRV.7.1.3; Heritrix, Nutch).
#: ``phpsessid``: PHP's default ``session.name`` with ``session.use_trans_sid`` (Heritrix, Nutch,
#: Norconex).
SESSION_PARAMS: frozenset[str] = frozenset({"jsessionid", "phpsessid"})

#: Generic names removed only when the value is token-like (see :func:`_is_token`).
#: ``sid``/``sessionid``: Nutch regex-normalize, urlcanon (``[0-9a-z]{16,}``), Heritrix (32 chars).
#: ``_sid``/``_sessionid``/``_session_id``: the same names with a leading underscore, which
#: several frameworks use and peers' normalizers strip (e.g. ``_sessionID=824A6C0A13a7e11205wxN28F44E3``).
TOKEN_SESSION_PARAMS: frozenset[str] = frozenset({
    "sid", "sessionid", "session_id", "_sid", "_sessionid", "_session_id",
})

#: Classic ASP: ``ASPSESSIONID`` + 8 letters, value of 24 letters (Heritrix StripSessionIDs,
#: surt, urlcanon).
_ASP_NAME = re.compile(r"aspsessionid[a-z]{8}\Z")
_ASP_VALUE = re.compile(r"[A-Za-z]{24}\Z")

#: ColdFusion client management: ``CFID`` (digits) together with ``CFTOKEN`` (Heritrix
#: StripSessionCFIDs, urlcanon). Removed only as a pair, see :func:`cold_fusion_pair`.
_CFID_VALUE = re.compile(r"[0-9]+\Z")
_CFTOKEN_VALUE = re.compile(r"[0-9A-Za-z-]+\Z")

_TOKEN = re.compile(r"[0-9A-Za-z]{16,}\Z")

#: Exact tracking-parameter names (lower-cased), by the tool that adds them.
TRACKING_PARAMS: frozenset[str] = frozenset({
    # Google Ads / DoubleClick click ids, Google Analytics linker and Merchant Center
    "gclid", "gclsrc", "gbraid", "wbraid", "dclid", "_ga", "_gl", "srsltid",
    # Meta (Facebook, Instagram)
    "fbclid", "igshid",
    # Microsoft Advertising, X/Twitter, TikTok, LinkedIn, Yandex, Pinterest
    "msclkid", "twclid", "ttclid", "li_fat_id", "yclid", "ysclid", "_openstat", "epik",
    # Mailchimp
    "mc_cid", "mc_eid",
    # HubSpot
    "_hsenc", "_hsmi", "__hstc", "__hssc", "__hsfp",
    # Marketo, Webtrends, Adobe, Omeda, Vero
    "mkt_tok", "wt.mc_id", "wt.mc_ev", "s_kwcid", "ef_id", "oly_anon_id", "oly_enc_id",
    "vero_id", "vero_conv",
    # Matomo/Piwik campaign names (the legacy pk_ ones are listed, not a pk_ prefix,
    # since pk_ also means "primary key" on many sites)
    "pk_campaign", "pk_kwd", "pk_keyword", "pk_source", "pk_medium", "pk_content",
})

#: Tracking-parameter prefixes: Google Analytics UTM, Matomo, HubSpot ads.
TRACKING_PREFIXES: tuple[str, ...] = ("utm_", "mtm_", "hsa_")


def _is_token(value: str) -> bool:
    """A session token: 16+ ASCII letters or digits with at least one digit.

    The digit rule keeps words (``?sid=documentation``) from being read as tokens; a random
    16-character hexadecimal token has no digit with probability (6/16)**16, about 1.5e-7.
    """
    return _TOKEN.match(value) is not None and not value.isalpha()


def is_session_param(name: str, value: str) -> bool:
    """True when ``name=value`` (``name`` lower-cased) is a session id on its own.

    The ColdFusion pair is handled by :func:`cold_fusion_pair`, since either half alone may be a
    real parameter.
    """
    if name in SESSION_PARAMS:
        return value != ""
    if name in TOKEN_SESSION_PARAMS:
        return _is_token(value)
    if name.startswith("aspsessionid"):
        return _ASP_NAME.match(name) is not None and _ASP_VALUE.match(value) is not None
    return False


def cold_fusion_pair(pairs: list[tuple[str, str]]) -> bool:
    """True when the ``(name, value)`` pairs hold a ColdFusion ``CFID`` + ``CFTOKEN`` pair."""
    cfid = cftoken = False
    for name, value in pairs:
        if name == "cfid" and _CFID_VALUE.match(value):
            cfid = True
        elif name == "cftoken" and _CFTOKEN_VALUE.match(value):
            cftoken = True
    return cfid and cftoken


def is_tracking_param(name: str) -> bool:
    """True when the lower-cased ``name`` is a known tracking parameter."""
    return name in TRACKING_PARAMS or name.startswith(TRACKING_PREFIXES)


def may_name_session_param(query: str) -> bool:
    """False when no item of ``query`` can be a session id: every session name contains
    ``sid``, ``session`` or ``cfid``. Three substring searches of the lower-cased query (as the
    step lower-cases each name) tell, before any split; ``re.IGNORECASE`` costs 8x as much."""
    q = query.lower()
    return "sid" in q or "session" in q or "cfid" in q


# a pattern that starts with a literal is searched for that literal first (in C): the names of
# a lower-cased query with "&" in front are tried only where an item starts
_TRACKING_SEARCH = re.compile(
    r"&(?:{}|{})".format(
        "|".join(re.escape(n) for n in sorted(TRACKING_PARAMS, key=len, reverse=True)),
        "|".join(re.escape(n) for n in TRACKING_PREFIXES),
    )
).search


def may_name_tracking_param(query: str) -> bool:
    """False when no item of ``query`` is a tracking parameter (one search tells; most queries
    have none, and splitting them item by item would cost more than the whole rest of a URL)."""
    return _TRACKING_SEARCH("&" + query.lower()) is not None


#: Path session ids. ``;jsessionid=...`` (and PHP's rarer ``;phpsessid=``) as a path parameter,
#: up to the next ``/`` or ``;``, so a ``.node1`` suffix goes with it (Norconex/crawler#311).
PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid)=[^/;]*", re.IGNORECASE)
#: ASP.NET cookieless state: a whole path segment of one-letter groups such as ``(S(id))``,
#: ``(X(1)S(id))``, ``(A(id))``, ``(F(id))``, in either case (``(a(…)s(…)f(…))``; Microsoft's
#: "Cookieless ASP.NET"; surt, urlcanon), or the ASP.NET 1.x form: a 24-character session id of
#: the letters and the digits 0-5 in parentheses, ``/(4hqa0555fwsecu455xqckv45)/``.
ASPNET_SEGMENT = re.compile(r"/\((?:(?:[AFSXafsx]\([0-9A-Za-z_-]*\))+|[a-z0-5]{24})\)(?=/|\Z)")


class NameMatcher:
    """Matches lower-cased parameter names against exact names and ``fnmatch`` globs."""

    __slots__ = ("_glob", "exact", "patterns", "query_search")

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(dict.fromkeys(p.lower() for p in patterns))
        self.exact = frozenset(p for p in self.patterns if not _has_glob(p))
        globs = [p for p in self.patterns if _has_glob(p)]
        self._glob = re.compile("|".join(translate(g) for g in globs)) if globs else None
        #: ``query_search("&" + query.lower())``: None when no item of ``query`` has a name this
        #: matcher matches (one search, no split); None itself for a pattern with a ``[...]``
        #: class, which is left to the matcher
        self.query_search = _query_search(self.patterns)

    def __call__(self, name: str) -> bool:
        if name in self.exact:
            return True
        return self._glob is not None and self._glob.match(name) is not None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __repr__(self) -> str:
        return f"NameMatcher({list(self.patterns)!r})"


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _query_search(patterns: tuple[str, ...]) -> Callable[[str], re.Match[str] | None] | None:
    if not patterns or any("[" in p for p in patterns):
        return None
    # an item's name runs from its start (the query's or an "&") to its first "=" (or the
    # item's end) and holds neither: a glob's "*" and "?" stand for characters other than those
    names = "|".join(_glob_pattern(p) for p in patterns)
    return re.compile(rf"&(?:{names})(?=[=&]|\Z)").search


def _glob_pattern(glob: str) -> str:
    """The pattern of the names ``glob`` matches, inside one query item, in time linear in the
    item: each ``*`` but the last takes the first place where the text up to the next ``*``
    matches, and never gives it back (an atomic group, as ``fnmatch.translate`` does), so
    ``x*y*z*`` does not try every way of cutting ``xyxyxy...``."""
    def chunk(text: str) -> str:
        return "".join("[^&=]" if c == "?" else re.escape(c) for c in text)

    head, *rest = glob.split("*")
    if not rest:
        return chunk(head)
    *middle, tail = rest
    return chunk(head) + "".join(f"(?>[^&=]*?{chunk(m)})" for m in middle) + "[^&=]*" + chunk(tail)


def may_name_param(matcher: NameMatcher, query: str) -> bool:
    """False when no item of ``query`` has a name ``matcher`` matches: the guard of the steps
    that filter a query by a host's parameter lists (which lower-case each name, as this
    lower-cases the query)."""
    search = matcher.query_search
    return search is None or search("&" + query.lower()) is not None
