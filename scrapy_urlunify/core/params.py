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
    "context_items",
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
#: ``bv_sessionid``: BroadVision's session (``BV_SessionID=@@@@0123456789.1234567890@@@@``; Nutch
#: regex-normalize's ``bv_`` names).
SESSION_PARAMS: frozenset[str] = frozenset({"jsessionid", "phpsessid", "bv_sessionid"})

#: Generic names removed only when the value is token-like (see :func:`_is_token`).
#: ``sid``/``sessionid``: Nutch regex-normalize, urlcanon (``[0-9a-z]{16,}``), Heritrix (32 chars).
#: ``_sid``/``_sessionid``/``_session_id``: the same names with a leading underscore, which
#: several frameworks use and peers' normalizers strip (e.g. ``_sessionID=824A6C0A13a7e11205wxN28F44E3``).
#: ``jsid``/``bv_sid``: Nutch regex-normalize's ``(j|bv_)?sid`` (BroadVision, Java).
TOKEN_SESSION_PARAMS: frozenset[str] = frozenset(
    {
        "sid",
        "sessionid",
        "session_id",
        "_sid",
        "_sessionid",
        "_session_id",
        "jsid",
        "bv_sid",
    }
)

#: Classic ASP: ``ASPSESSIONID`` + 8 letters, value of 24 letters (Heritrix StripSessionIDs,
#: surt, urlcanon).
_ASP_NAME = re.compile(r"aspsessionid[a-z]{8}\Z")
_ASP_VALUE = re.compile(r"[A-Za-z]{24}\Z")

#: ColdFusion client management: ``CFID`` (digits) together with ``CFTOKEN`` (Heritrix
#: StripSessionCFIDs, urlcanon). Removed only as a pair, see :func:`cold_fusion_pair`.
_CFID_VALUE = re.compile(r"[0-9]+\Z")
_CFTOKEN_VALUE = re.compile(r"[0-9A-Za-z-]+\Z")

_TOKEN = re.compile(r"[0-9A-Za-z]{16,}\Z")
#: a UUID (``3f2b8c1e-9d4a-4e6b-8f0a-1c2d3e4f5a6b``), as frameworks that issue session ids as
#: UUIDs write them
_UUID = re.compile(r"[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}\Z")

#: Exact tracking-parameter names (lower-cased), by the tool that adds them.
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        # Google Ads / DoubleClick click ids, Google Analytics linker and Merchant Center
        "gclid",
        "gclsrc",
        "gbraid",
        "wbraid",
        "dclid",
        "_ga",
        "_gl",
        "srsltid",
        # Meta (Facebook, Instagram)
        "fbclid",
        "igshid",
        # Microsoft Advertising, X/Twitter, TikTok, LinkedIn, Yandex, Pinterest
        "msclkid",
        "twclid",
        "ttclid",
        "li_fat_id",
        "yclid",
        "ysclid",
        "_openstat",
        "epik",
        # Mailchimp
        "mc_cid",
        "mc_eid",
        # HubSpot
        "_hsenc",
        "_hsmi",
        "__hstc",
        "__hssc",
        "__hsfp",
        # Marketo, Webtrends, Adobe, Omeda, Vero
        "mkt_tok",
        "wt.mc_id",
        "wt.mc_ev",
        "s_kwcid",
        "ef_id",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "vero_conv",
        # Matomo/Piwik campaign names (the legacy pk_ ones are listed, not a pk_ prefix,
        # since pk_ also means "primary key" on many sites)
        "pk_campaign",
        "pk_kwd",
        "pk_keyword",
        "pk_source",
        "pk_medium",
        "pk_content",
        # Google Ads auto-tagging (since 2023, beside gclid)
        "gad_source",
        "gad_campaignid",
        # AT Internet (Xiti) campaigns (ural, courlan's "xtor")
        "xtor",
        "xtref",
        "xtcr",
        "xtnp",
        "xtloc",
        # Echobox social posts, Meta share links, X/Twitter embeds, Yahoo's consent redirect,
        # Google's AMP cache (ural)
        "echobox",
        "fb_action_ids",
        "fb_action_types",
        "fb_source",
        "mibextid",
        "__tn__",
        "__twitter_impression",
        "guccounter",
        "_guc_consent_skip",
        "usqp",
        # internal campaign links named like UTM (courlan's "itm_"; listed, not a prefix, since "itm"
        # also abbreviates "item")
        "itm_source",
        "itm_medium",
        "itm_campaign",
        "itm_content",
        "itm_term",
    }
)

#: Tracking-parameter prefixes: Google Analytics UTM, Matomo, HubSpot ads.
TRACKING_PREFIXES: tuple[str, ...] = ("utm_", "mtm_", "hsa_")


def _is_token(value: str) -> bool:
    """A session token: 16+ ASCII letters or digits with at least one digit, or a UUID.

    The digit rule keeps words (``?sid=documentation``) from being read as tokens; a random
    16-character hexadecimal token has no digit with probability (6/16)**16, about 1.5e-7. Short
    values (``?sid=3``, ``?sid=news``: a site or section id) are never tokens.
    """
    if len(value) < 16:
        return False
    return (_TOKEN.match(value) is not None and not value.isalpha()) or _UUID.match(
        value
    ) is not None


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


def _trie(words: set[str]) -> str:
    """A pattern matching the ``words`` (none a prefix of another) as a trie: one branch per
    first character, so a search tries a handful of branches where an item starts, not every
    name (``re`` tries the branches of an alternation one by one)."""
    if words == {""}:
        return ""
    groups: dict[str, set[str]] = {}
    for w in words:
        groups.setdefault(w[0], set()).add(w[1:])
    alts = [re.escape(c) + _trie(rest) for c, rest in sorted(groups.items())]
    return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"


def _prefix_free(words: Iterable[str]) -> set[str]:
    """``words`` less those that start with another of them (matching the shorter is enough)."""
    kept: set[str] = set()
    for w in sorted(words, key=len):
        if not any(w.startswith(k) for k in kept):
            kept.add(w)
    return kept


# a pattern that starts with a literal is searched for that literal first (in C): the names of
# a lower-cased query with "&" in front are tried only where an item starts (past the "amp;"
# that "&amp;" leaves, as the steps read names); a name starting with a listed one is enough for
# the guard, the step checks each name
_TRACKING_NAMES = _trie(_prefix_free({*TRACKING_PARAMS, *TRACKING_PREFIXES}))
# (the "amp;" branch second: a repeat tried at every "&" costs more than the literal)
_TRACKING_SEARCH = re.compile(f"&(?:{_TRACKING_NAMES}|amp;(?:amp;)*{_TRACKING_NAMES})").search


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
    return re.compile(rf"&(?:(?:{names})|amp;(?:amp;)*(?:{names}))(?=[=&]|\Z)").search


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


def context_items(query: str) -> list[str]:
    """The items of ``query`` as a rule context names them (the learner reads pages the same
    way): empty items and ``name=`` items left out, ``%20`` read as ``+``, in query order."""
    if "%20" in query:
        query = query.replace("%20", "+")
    return [i for i in query.split("&") if i and i[-1] != "="]


def may_name_param(matcher: NameMatcher, query: str) -> bool:
    """False when no item of ``query`` has a name ``matcher`` matches: the guard of the steps
    that filter a query by a host's parameter lists (which lower-case each name, as this
    lower-cases the query)."""
    search = matcher.query_search
    return search is None or search("&" + query.lower()) is not None
