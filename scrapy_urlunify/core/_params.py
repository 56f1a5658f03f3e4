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

And one list left out of identifiers only: *action parameters* (``replytocom``,
``add-to-cart``...), which ask the server to act from the page they are on, so the URL to fetch
keeps them (:data:`ACTION_PARAMS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import translate

from scrapy_urlunify.core._recent import remembered
from scrapy_urlunify.core._text import split_items

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
    if len(query) > _LONG_QUERY:
        return _session_named_in_long(query)
    q = query.lower()
    return "sid" in q or "session" in q or "cfid" in q


@remembered
def _session_named_in_long(query: str) -> bool:
    q = query.lower()
    return "sid" in q or "session" in q or "cfid" in q


def _trie(words: Iterable[str]) -> str:
    """A pattern matching the ``words`` as a trie: one branch per first character, so a search
    tries a handful of branches where an item starts, not every name (``re`` tries the branches
    of an alternation one by one)."""
    groups: dict[str, set[str]] = {}
    ends = False
    for w in words:
        if w:
            groups.setdefault(w[0], set()).add(w[1:])
        else:
            ends = True
    if not groups:
        return ""
    alts = [re.escape(c) + _trie(rest) for c, rest in sorted(groups.items())]
    trie = alts[0] if len(alts) == 1 and not ends else "(?:" + "|".join(alts) + ")"
    return trie + "?" if ends else trie


def _first_chars(words: Iterable[str]) -> str:
    """A class of the first characters of ``words`` and of ``amp;`` (a name read past it)."""
    return "[" + "".join(sorted({re.escape(w[0]) for w in words} | {"a"})) + "]"


#: an item's name ends at its "=", its "&" or the query's end
_NAME_END = r"(?=[=&]|\Z)"
# the tracking names, then the prefixes and what follows them in the name
_TRACKING_NAMES = (
    f"(?:{_trie(TRACKING_PARAMS)}{_NAME_END}|{_trie(TRACKING_PREFIXES)}[^&=]*{_NAME_END})"
)
# a pattern that starts with a literal is searched for that literal first (in C): the names of a
# query with "&" in front are tried only where an item starts, past the "amp;" that "&amp;"
# leaves (as the steps read names), and only after a character a name can start with (a class
# tells at once, where the trie's branches are tried one by one)
_TRACKING = (
    f"&(?={_first_chars([*TRACKING_PARAMS, *TRACKING_PREFIXES])})(?:amp;)*+{_TRACKING_NAMES}"
)
_TRACKING_SEARCH = re.compile(_TRACKING)
#: The tracking items of a query with "&" in front, each with the "&" before it: removed at
#: once (``re.sub``), not item by item. Case-insensitive: a name is compared lower-cased (the
#: query of a serialized URL is ASCII).
TRACKING_ITEMS = re.compile(_TRACKING + "[^&]*", re.IGNORECASE | re.ASCII)


def may_name_tracking_param(query: str) -> bool:
    """False when no item of ``query`` is a tracking parameter (one search tells; most queries
    have none, and splitting them item by item would cost more than the whole rest of a URL)."""
    return _names_one(query, _TRACKING_SEARCH)


def _names_one(query: str, search: re.Pattern[str]) -> bool:
    """Whether ``search`` finds a name in ``query`` (a long one: in its distinct items)."""
    if len(query) > _LONG_QUERY:
        return _named_in_long(query, search)
    return search.search("&" + query.lower()) is not None


#: Action parameters: what a CMS adds to a link to a page to act on the visitor's session, or to
#: show the page's own form elsewhere, never to choose what the page is. Exact names, each of one
#: piece of software on millions of sites:
#: ``replytocom``: WordPress's comment "Reply" link (``comment_reply_link``), the post with its
#: comment form under that comment (what Yoast SEO's "Remove ?replytocom variables" is for);
#: ``add-to-cart``: WooCommerce's add-to-cart link (``?add-to-cart=<product id>`` on a listing or
#: a product), the page with the product put in the cart;
#: ``add_to_wishlist``: YITH WooCommerce Wishlist's button, the page with it put in a wishlist;
#: ``_wpnonce``: WordPress's nonce (``wp_nonce_url``), a token of one user for 12 to 24 hours.
#: Left out of identifiers only: the server acts on them, so the URL to fetch keeps them.
ACTION_PARAMS: frozenset[str] = frozenset(
    {"replytocom", "add-to-cart", "add_to_wishlist", "_wpnonce"}
)

_ACTION = f"&(?={_first_chars(ACTION_PARAMS)})(?:amp;)*+{_trie(ACTION_PARAMS)}{_NAME_END}"
_ACTION_SEARCH = re.compile(_ACTION)
#: The action items of a query with "&" in front, each with the "&" before it (as TRACKING_ITEMS).
ACTION_ITEMS = re.compile(_ACTION + "[^&]*", re.IGNORECASE | re.ASCII)


def may_name_action_param(query: str) -> bool:
    """False when no item of ``query`` is an action parameter (one search, as trackers)."""
    return _names_one(query, _ACTION_SEARCH)


#: a query longer than this is searched in its distinct items (see searched_items)
_LONG_QUERY = 1 << 12


def searched_items(query: str) -> str:
    """What to search for an item in ``query``: the query itself, or, for a long one, its
    distinct items, "&"-joined in no useful order (an empty one kept when there is one). A
    search tries a pattern at every "&": a megabyte of them costs tens of milliseconds a search,
    and a layer asks several; a query has few distinct items, or long ones (few "&")."""
    return query if len(query) <= _LONG_QUERY else _distinct_items(query)


@remembered
def _distinct_items(query: str) -> str:
    if "&&" in query:  # runs of "&" (a million of them split into a million items)
        while "&&" in query:
            query = query.replace("&&", "&")
        items = set(query.split("&"))
        items.add("")
    else:
        items = set(split_items(query))
    return "&".join(items)


@remembered
def _named_in_long(query: str, search: re.Pattern[str]) -> bool:
    """Whether ``search`` finds a name in a long query (in its distinct items)."""
    return search.search("&" + _distinct_items(query).lower()) is not None


#: The items of a query with "&" in front that :func:`is_session_param` removes, each with the
#: "&" before it (as TRACKING_ITEMS): a listed name with a value; a generic one with a token
#: (16 letters or digits, one digit at least, or a UUID); Classic ASP's name and value.
SESSION_ITEMS = re.compile(
    "&(?:amp;)*+(?:"
    f"{_trie(SESSION_PARAMS)}=[^&]+"
    f"|{_trie(TOKEN_SESSION_PARAMS)}="
    r"(?:(?=[a-z]*[0-9])[0-9a-z]{16,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})(?=&|\Z)"
    r"|aspsessionid[a-z]{8}=[a-z]{24}(?=&|\Z))",
    re.IGNORECASE | re.ASCII,
)
#: ColdFusion's pair, in a query with "&" in front: a ``CFID`` of digits and a ``CFTOKEN``
#: (names read past the "amp;" a page that escaped its HTML twice leaves, as the items to
#: remove are), and every item of either name, to remove
_CFID = re.compile(r"&(?:amp;)*+cfid=[0-9]+(?=&|\Z)", re.IGNORECASE | re.ASCII)
_CFTOKEN = re.compile(r"&(?:amp;)*+cftoken=[0-9a-z-]+(?=&|\Z)", re.IGNORECASE | re.ASCII)
COLD_FUSION_ITEMS = re.compile(
    f"&(?:amp;)*+(?:cfid|cftoken){_NAME_END}[^&]*", re.IGNORECASE | re.ASCII
)


def has_cold_fusion_pair(query: str) -> bool:
    """:func:`cold_fusion_pair` of the items of ``query``, with two searches."""
    q = "&" + query
    return _CFID.search(q) is not None and _CFTOKEN.search(q) is not None


#: Path session ids. ``;jsessionid=...`` (and PHP's rarer ``;phpsessid=``) as a path parameter,
#: up to the next ``/`` or ``;``, so a ``.node1`` suffix goes with it (Norconex/crawler#311).
PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid)=[^/;]*", re.IGNORECASE)
#: ASP.NET cookieless state: a whole path segment of one-letter groups such as ``(S(id))``,
#: ``(X(1)S(id))``, ``(A(id))``, ``(F(id))``, in either case (``(a(…)s(…)f(…))``; Microsoft's
#: "Cookieless ASP.NET"; surt, urlcanon), or the ASP.NET 1.x form: a 24-character session id of
#: the letters and the digits 0-5 in parentheses, ``/(4hqa0555fwsecu455xqckv45)/``.
ASPNET_SEGMENT = re.compile(r"/\((?:(?:[AFSXafsx]\([0-9A-Za-z_-]*\))+|[a-z0-5]{24})\)(?=/|\Z)")


@remembered
def without_path_sessions(path: str) -> str:
    """``path`` less its PATH_SESSION and ASPNET_SEGMENT session ids."""
    if ";" in path:
        path = PATH_SESSION.sub("", path)
    if "(" in path:
        path = ASPNET_SEGMENT.sub("", path) or "/"
    return path


class NameMatcher:
    """Matches lower-cased parameter names against exact names and ``fnmatch`` globs."""

    __slots__ = (
        "_glob",
        "exact",
        "items",
        "named_items",
        "other_items",
        "patterns",
        "query_search",
    )

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(dict.fromkeys(p.lower() for p in patterns))
        self.exact = frozenset(p for p in self.patterns if not _has_glob(p))
        globs = [p for p in self.patterns if _has_glob(p)]
        self._glob = re.compile("|".join(translate(g) for g in globs)) if globs else None
        names = _names_pattern(self.patterns)
        #: searched in "&" + query.lower(): None when no item of the query has a name this
        #: matcher matches (one search, no split); None itself for a pattern with a ``[...]``
        #: class, which is left to the matcher
        self.query_search = None if names is None else re.compile(f"&(?:amp;)*+{names}")
        #: in a query with "&" in front, with the "&" before each (removed at once, see
        #: TRACKING_ITEMS): the items this matcher names, read past "amp;" (``items``) or as
        #: written (``named_items``), and the items it does not name as written
        #: (``other_items``); None for a pattern with a ``[...]`` class
        self.items = self.named_items = self.other_items = None
        if names is not None:
            flags = re.IGNORECASE | re.ASCII
            self.items = re.compile(f"&(?:amp;)*+{names}[^&]*", flags)
            self.named_items = re.compile(f"&{names}[^&]*", flags)
            self.other_items = re.compile(f"&(?!{names})[^&]*", flags)

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


def _names_pattern(patterns: tuple[str, ...]) -> str | None:
    """A pattern of a whole name that one of ``patterns`` matches, None for none or for a
    pattern with a ``[...]`` class (fnmatch's classes are left to the matcher)."""
    if not patterns or any("[" in p for p in patterns):
        return None
    # an item's name runs from its start (the query's or an "&") to its first "=" (or the
    # item's end) and holds neither: a glob's "*" and "?" stand for characters other than those
    return "(?:" + "|".join(_glob_pattern(p) for p in patterns) + ")" + _NAME_END


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
    if search is None:
        return True
    if len(query) > _LONG_QUERY:
        return _named_in_long(query, search)
    return search.search("&" + query.lower()) is not None
