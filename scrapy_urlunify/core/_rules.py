"""The unification rules: small named steps over the parts of a URL.

A URL is first resolved and serialized the way a browser does (:func:`resolve`), then split into
:class:`Parts`, then passed through two ordered lists of steps:

* ``REWRITE_STEPS`` (*rewrite* layer): changes a server answers identically. Their result is the
  URL to fetch (:func:`scrapy_urlunify.standardize`).
* ``IDENTITY_STEPS`` (*identity* layer): merges variants that name one page but that we must not
  send as such (scheme, ``www``, index pages, key parameters, aliases...). Their result is the
  identifier (:func:`scrapy_urlunify.identify`), never fetched.

Each step is a function ``step(parts, ctx) -> bool | str``: it edits ``parts`` in place and
returns a truthy value when it changed something (a string names the sub-rule that fired). ``ctx``
is the :class:`~scrapy_urlunify.core._unify.Unifier`, which holds the policy and per-host rules.
:func:`~scrapy_urlunify.core._guards.rule` makes it a named step of its layer, so docs,
``urlunify explain`` and tests read the same names, with its policy test and its *guard*, the
function written above it: when the step can apply at all. A step runs only where its guard
holds (:mod:`scrapy_urlunify.core._guards`).
"""

from __future__ import annotations

import re

from scrapy_urlunify.core._guards import IDENTITY, REWRITE, Context, Step, rule
from scrapy_urlunify.core._hosts import HostRules
from scrapy_urlunify.core._params import (
    ACTION_ITEMS,
    COLD_FUSION_ITEMS,
    SESSION_ITEMS,
    TRACKING_ITEMS,
    NameMatcher,
    has_cold_fusion_pair,
    may_name_action_param,
    may_name_param,
    may_name_session_param,
    may_name_tracking_param,
    searched_items,
    without_path_sessions,
)
from scrapy_urlunify.core._text import (
    escape_unsafe,
    fragment_is_route,
    has_amp_item,
    has_unsafe_chars,
    normalize_escapes_in,
    sorted_query,
    spaces_as_plus,
    strip_index_pages,
    strip_trailing_slash,
    unescape_amp_in,
    without_empty_items,
    without_items,
    without_named,
    without_slash_runs,
)
from scrapy_urlunify.core._url import Parts

# -- rewrite layer ------------------------------------------------------------------------------


def _set_path(p: Parts, new: str) -> bool:
    """Give ``p`` the path ``new``; whether that changed it (what a step returns)."""
    if new == p.path:
        return False
    p.path = new
    return True


def _has_fragment(p: Parts, hr: HostRules, ctx: Context) -> bool:
    # (fragment[:1] first: a route starts with "!" or "/", and most fragments are anchors, which
    # this tells apart without reading the policy or calling the pattern)
    f = p.fragment
    return f is not None and not (
        f[:1] in "!/" and ctx.policy.route_fragments and fragment_is_route(f) is not None
    )


# Settled: a serialized URL less its fragment is serialized, and no other rewrite step's guard
# holds for lack of a fragment.
@rule(REWRITE, guard=_has_fragment, settled=True)
def drop_fragment(p: Parts, ctx: Context) -> bool:
    """Drop the fragment (never sent to the server), except routes of single-page apps:
    ``#!...`` (hashbang) and ``#/...``, which name different content (policy
    ``route_fragments``)."""
    p.fragment = None
    return True


def _has_percent(p: Parts, hr: HostRules, ctx: Context) -> bool:
    q, f = p.query, p.fragment
    return "%" in p.path or (q is not None and "%" in q) or (f is not None and "%" in f)


@rule(REWRITE, guard=_has_percent, on_plain=False)
def normalize_escapes(p: Parts, ctx: Context) -> bool:
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


def _may_hold_path_session(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return ";" in p.path or "(" in p.path


@rule(REWRITE, guard=_may_hold_path_session, when=lambda policy: policy.strip_session_ids)
def remove_path_session_ids(p: Parts, ctx: Context) -> bool:
    """``/a;jsessionid=0AF3...`` -> ``/a``; ASP.NET ``/(S(id))/page.aspx`` -> ``/page.aspx`` (also
    lower-case ``/(s(id))/`` and the 1.x form ``/(4hqa0555fwsecu455xqckv45)/``)."""
    return _set_path(p, without_path_sessions(p.path))


def _has_double_slash(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return "//" in p.path


@rule(REWRITE, guard=_has_double_slash)
def collapse_slashes(p: Parts, ctx: Context) -> bool:
    """``/a//b`` -> ``/a/b``; a ``//`` right after ``:`` is kept, since it is an embedded URL
    (``/web/2020/http://example.com/``, Nutch's ``(?<!:)/{2,}``)."""
    return _set_path(p, without_slash_runs(p.path))


def _has_empty_query(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query == ""


@rule(REWRITE, guard=_has_empty_query, on_query=True)
def drop_empty_query(p: Parts, ctx: Context) -> bool:
    """``/a?`` -> ``/a`` (an empty query string is not sent differently by servers)."""
    p.query = None
    return True


def _drop_items(p: Parts, items: re.Pattern[str]) -> bool:
    """Remove the items of the query that ``items`` matches (see ``text.without_items``); keep
    the rest verbatim, in order, so a URL the server accepted stays one it accepts (no ``?a``
    -> ``?a=``). The patterns read a name past the ``amp;`` that ``&amp;`` leaves (a page that
    escaped its HTML twice): ``amp;utm_source`` is a tracker the server never reads either."""
    removed, new = without_items(p.query, items)  # type: ignore[arg-type]
    if removed:
        p.query = new
    return removed


def _drop_named(p: Parts, matcher: NameMatcher) -> bool:
    """Remove the items whose name (read past ``amp;``) ``matcher`` matches (as _drop_items)."""
    if matcher.items is not None:
        return _drop_items(p, matcher.items)
    # a glob with a [...] class, which only fnmatch reads: item by item
    items = p.query.split("&")  # type: ignore[union-attr]
    kept = [i for i in items if not matcher(unescape_amp_in(i.partition("=")[0].lower()))]
    if len(kept) == len(items):
        return False
    p.query = "&".join(i for i in kept if i) or None
    return True


def _may_name_session_param(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query is not None and may_name_session_param(p.query)


@rule(
    REWRITE,
    guard=_may_name_session_param,
    when=lambda policy: policy.strip_session_ids,
    on_query=True,
)
def remove_session_params(p: Parts, ctx: Context) -> bool:
    """``?PHPSESSID=...``, ``jsessionid``, ``ASPSESSIONIDxxxxxxxx``, token-like ``sid``/``sessionid``,
    and the ColdFusion ``CFID``+``CFTOKEN`` pair (see :mod:`scrapy_urlunify.core._params`)."""
    changed = _drop_items(p, SESSION_ITEMS)
    if p.query and "cfid" in p.query.lower() and has_cold_fusion_pair(p.query):
        changed = _drop_items(p, COLD_FUSION_ITEMS) or changed
    return changed


def _may_name_tracking_param(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query is not None and may_name_tracking_param(p.query)


@rule(
    REWRITE,
    guard=_may_name_tracking_param,
    when=lambda policy: policy.strip_tracking_params,
    on_query=True,
)
def remove_tracking_params(p: Parts, ctx: Context) -> bool:
    """``utm_*``, ``fbclid``, ``gclid``, ``msclkid``, ``mc_cid``... (see :mod:`scrapy_urlunify.core._params`)."""
    return _drop_items(p, TRACKING_ITEMS)


def _may_name_removed_param(p: Parts, hr: HostRules, ctx: Context) -> bool:
    if not p.query or hr.remove is None:
        return False
    return may_name_param(hr.remove, p.query)


@rule(
    REWRITE,
    guard=_may_name_removed_param,
    when=lambda policy: bool(policy.remove_params),
    on_query=True,
)
def remove_policy_params(p: Parts, ctx: Context) -> bool:
    """The policy's ``remove_params`` for this host (names or globs)."""
    return _drop_named(p, ctx.host_rules(p.host).remove)  # type: ignore[arg-type]


# -- identity layer -----------------------------------------------------------------------------


@rule(IDENTITY, when=lambda policy: policy.ignore_scheme)
def ignore_scheme(p: Parts, ctx: Context) -> bool:
    """``http`` and ``https`` name one page (policy ``ignore_scheme``)."""
    p.scheme = None
    return True


def _has_userinfo(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.userinfo != ""


@rule(IDENTITY, guard=_has_userinfo, on_plain=False)
def drop_userinfo(p: Parts, ctx: Context) -> bool:
    """``http://user:pw@host/`` is the page of ``http://host/`` (credentials are not identity)."""
    p.userinfo = ""
    return True


def _host_is_not_its_identity(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return hr.identity_host != p.host


@rule(IDENTITY, guard=_host_is_not_its_identity)
def unify_host(p: Parts, ctx: Context) -> str | bool:
    """Drop a trailing dot, strip ``www``-like prefixes, then map domain aliases and sister
    suffixes to one host.

    Computed once per host (:class:`~scrapy_urlunify.core._hosts.HostTable`); returns the names of the sub-rules that
    fired: ``strip_trailing_dot``, ``strip_host_prefix``, ``domain_alias``, ``sister_suffix``.
    """
    hr = ctx.host_rules(p.host)
    p.host = hr.identity_host
    return hr.host_rules_fired


def _host_has_path_prefixes(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return hr.path_prefixes is not None


@rule(
    IDENTITY,
    guard=_host_has_path_prefixes,
    when=lambda policy: bool(policy.ignore_path_prefixes),
)
def drop_path_prefix(p: Parts, ctx: Context) -> bool:
    """``/print/x`` is ``/x`` when ``print`` is one of the host's ``ignore_path_prefixes``
    (configured or learned); a path that is only the segment (``/print/``) keeps it."""
    prefixes: frozenset[str] = ctx.host_rules(p.host).path_prefixes  # type: ignore[assignment]
    first, sep, tail = p.path[1:].partition("/")
    if not sep or not tail or first not in prefixes:
        return False
    p.path = "/" + tail
    return True


def _host_has_path_suffixes(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return hr.path_suffixes is not None


@rule(
    IDENTITY,
    guard=_host_has_path_suffixes,
    when=lambda policy: bool(policy.ignore_path_suffixes),
)
def drop_path_suffix(p: Parts, ctx: Context) -> bool:
    """``/x/print.html``, ``/x/amp/`` and ``/x/comment-page-2/`` are ``/x/`` when their last
    segment (before a trailing slash) is one of the host's ``ignore_path_suffixes``
    (configured or learned); a path that is only the segment (``/amp/``) keeps it."""
    matches = ctx.host_rules(p.host).path_suffixes
    path = p.path
    head, _, last = (path[:-1] if path.endswith("/") else path).rpartition("/")
    if not head or not last or matches is None or not matches(last):
        return False
    p.path = head + "/"
    return True


def _ends_in_slash(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.path[-1] == "/"


@rule(IDENTITY, guard=_ends_in_slash)
def drop_trailing_slash(p: Parts, ctx: Context) -> bool:
    """``/docs/`` and ``/docs`` name one page (the root ``/`` stays)."""
    return _set_path(p, strip_trailing_slash(p.path))


def _ends_in_index_page(p: Parts, hr: HostRules, ctx: Context) -> bool:
    path = p.path
    return "." in path and path[path.rfind("/") + 1 :].lower() in ctx.index_pages


@rule(IDENTITY, guard=_ends_in_index_page, when=lambda policy: bool(policy.index_pages))
def drop_index_page(p: Parts, ctx: Context) -> bool:
    """``/docs/index.html`` is ``/docs/`` (policy ``index_pages``, case-insensitive)."""
    return _set_path(p, strip_index_pages(p.path, ctx.index_pages))


def _may_hold_amp_marker(p: Parts, hr: HostRules, ctx: Context) -> bool:
    q = p.query
    return p.path[-4:].lower() == "/amp" or (q is not None and has_amp_item(searched_items(q)))


@rule(IDENTITY, guard=_may_hold_amp_marker, when=lambda policy: policy.ignore_amp)
def drop_amp_marker(p: Parts, ctx: Context) -> bool:
    """``/news/story/amp`` and ``/news/story?amp=1`` are ``/news/story`` (policy ``ignore_amp``):
    the AMP version of a page is the page. The index pages and slashes that removing a last
    ``amp`` segment leaves at the end go too (``/a/index.html/amp`` is ``/a``), as
    ``drop_index_page`` would have removed them, so that applying the layer twice changes
    nothing."""
    changed = _set_path(p, strip_index_pages(p.path, ctx.index_pages | _AMP))
    if p.query and has_amp_item(p.query):
        changed = _drop_items(p, _AMP_ITEMS) or changed
    return changed


_AMP = frozenset({"amp"})
# the items named "amp", with the "&" before each, in a query with "&" in front
_AMP_ITEMS = re.compile(r"&(?:amp;)*+amp(?=[=&]|\Z)[^&]*", re.IGNORECASE | re.ASCII)


def _has_amp_entity(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query is not None and "amp;" in p.query


@rule(IDENTITY, guard=_has_amp_entity, on_query=True)
def unescape_amp(p: Parts, ctx: Context) -> bool:
    """``?a=1&amp;b=2`` is ``?a=1&b=2``: the page meant ``&``, and escaped its HTML twice.

    Identity only: a server reads ``amp;b`` as a parameter of that name (``b`` is missing), so
    the URL to fetch keeps what the page wrote; the identifier merges the two spellings of one
    link."""
    return _set_query(p, unescape_amp_in(p.query))  # type: ignore[arg-type]


def _host_has_contexts(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return bool(p.query) and hr.contexts is not None


@rule(
    IDENTITY,
    guard=_host_has_contexts,
    when=lambda policy: any("/" in key for key, _ in policy.ignore_params),
    on_query=True,
)
def drop_context_params(p: Parts, ctx: Context) -> bool:
    """The policy's ``ignore_params`` scoped by a rule context (configured, or learned): in a
    URL of the context's host with its path and every one of its items (the parameters that
    identify the page there), the context's names are left out of the identifier
    (``/w/index.php?title=Special:UserLogin&returnto=X`` is
    ``/w/index.php?title=Special:UserLogin``); kept in the fetched URL. Runs before the other
    identity steps touch the path or the query: a context names the path and items as fetched."""
    contexts = ctx.host_rules(p.host).contexts
    query: str = p.query  # type: ignore[assignment]
    # the items as a context names them (context_items), each between "&"s: an item is there
    # when "&item&" is, one search, no split
    written: str | None = None
    names: list[NameMatcher] = []
    required: frozenset[str] = frozenset()
    for path, needed, matcher in contexts:  # type: ignore[union-attr]
        if path != p.path:
            continue
        if written is None:
            written = "&" + spaces_as_plus(query) + "&"
        if all(f"&{item}&" in written for item in needed):
            names.append(matcher)
            required |= needed
    if not names:
        return False
    if any(m.named_items is None for m in names) or any(
        "+" in name or any(m(name.lower()) for m in names)
        for name in (r.partition("=")[0] for r in required)
    ):
        # a context whose own items have a name it ignores, or a glob with a [...] class
        items = query.split("&")
        kept = [
            i
            for i in items
            if not any(m(i.partition("=")[0].lower()) for m in names)
            or i.replace("%20", "+") in required
        ]
        if len(kept) == len(items):
            return False
        p.query = "&".join(kept) or None
        return True
    # no item the context requires has a name it ignores: remove every item so named
    removed, new = without_named(query, tuple(m.named_items for m in names))  # type: ignore[misc]
    if removed:
        p.query = new
    return removed


def _may_name_action_param(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query is not None and may_name_action_param(p.query)


@rule(
    IDENTITY,
    guard=_may_name_action_param,
    when=lambda policy: policy.ignore_action_params,
    on_query=True,
)
def drop_action_params(p: Parts, ctx: Context) -> bool:
    """``?replytocom=5``, ``?add-to-cart=12``, ``?add_to_wishlist=12``, ``?_wpnonce=...``: a link
    that acts from the page is the page (see :mod:`scrapy_urlunify.core._params`). Identity
    only: the server acts on them, and a page may link nothing else of the action."""
    return _drop_items(p, ACTION_ITEMS)


def _may_name_ignored_param(p: Parts, hr: HostRules, ctx: Context) -> bool:
    if not p.query or hr.ignore is None:
        return False
    return may_name_param(hr.ignore, p.query)


@rule(
    IDENTITY,
    guard=_may_name_ignored_param,
    when=lambda policy: bool(policy.ignore_params),
    on_query=True,
)
def drop_ignored_params(p: Parts, ctx: Context) -> bool:
    """The policy's ``ignore_params`` for this host (configured or learned): kept in the fetched
    URL, left out of the identifier."""
    return _drop_named(p, ctx.host_rules(p.host).ignore)  # type: ignore[arg-type]


def _may_name_key_param(p: Parts, hr: HostRules, ctx: Context) -> bool:
    if not p.query or hr.key is None:
        return False
    return may_name_param(hr.key, p.query)


@rule(
    IDENTITY,
    guard=_may_name_key_param,
    when=lambda policy: bool(policy.key_params),
    on_query=True,
)
def keep_key_params(p: Parts, ctx: Context) -> bool:
    """When a URL carries one of its host's ``key_params``, only key parameters identify it."""
    key: NameMatcher = ctx.host_rules(p.host).key  # type: ignore[assignment]
    if key.other_items is None:
        # a glob with a [...] class, which only fnmatch reads: item by item
        items = p.query.split("&")  # type: ignore[union-attr]
        kept = [i for i in items if key(i.partition("=")[0].lower())]
        if not kept or len(kept) == len(items):
            return False
        p.query = "&".join(kept)
        return True
    removed, new = without_named(p.query, (key.other_items,))  # type: ignore[arg-type]
    if not removed or new is None:  # every item a key parameter, or none
        return False
    p.query = new
    return True


def _has_unsafe_chars(p: Parts, hr: HostRules, ctx: Context) -> bool:
    q = p.query
    return has_unsafe_chars(p.path) or (q is not None and has_unsafe_chars(q))


@rule(IDENTITY, guard=_has_unsafe_chars, on_plain=False)
def escape_unsafe_chars(p: Parts, ctx: Context) -> bool:
    """``?q=foobar|`` and ``?q=foobar%7C``, ``/x[y]`` and ``/x%5By%5D`` name one page: a server
    decodes a character that is neither reserved nor unreserved the same, raw or escaped. The
    identifier writes it escaped, as RFC 3986 does (reserved characters keep their spelling:
    ``%2F`` is not ``/``).

    So is a stray ``%`` (one that starts no escape): ``/100%`` and ``/100%25``, ``?q=5%`` and
    ``?q=5%25`` are one page to a server that accepts it. Identity only: a browser sends it as it
    is (WHATWG), and a server may refuse it (Apache and nginx answer 400 to ``/a%zz``) while
    serving ``/a%25zz``."""
    p.path = escape_unsafe(p.path)
    if p.query:
        p.query = escape_unsafe(p.query)
    return True


def _set_query(p: Parts, new: str | None) -> bool:
    """Give ``p`` the query ``new``; whether that changed it (what a step returns)."""
    if new == p.query:
        return False
    p.query = new
    return True


def _has_query(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query is not None


@rule(IDENTITY, guard=_has_query, on_query=True)
def drop_empty_params(p: Parts, ctx: Context) -> bool:
    """``?a=&b=1&&`` -> ``?b=1``: parameters with an empty value say nothing about the page.
    (A bare ``?a`` is kept: it is a flag, and often the whole query of a page.)"""
    return _set_query(p, without_empty_items(p.query))  # type: ignore[arg-type]


def _has_escaped_space(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query is not None and "%20" in p.query


@rule(IDENTITY, guard=_has_escaped_space, on_query=True)
def plus_for_space(p: Parts, ctx: Context) -> bool:
    """``?q=a%20b`` and ``?q=a+b`` name one page: form decoding (what PHP, Java servlets, Python
    frameworks... apply to a query) reads both as a space."""
    p.query = spaces_as_plus(p.query)  # type: ignore[arg-type]
    return True


def _has_two_items(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return p.query is not None and "&" in p.query


def _host_has_forms(p: Parts, hr: HostRules, ctx: Context) -> bool:
    return hr.forms is not None


@rule(IDENTITY, guard=_host_has_forms, when=lambda policy: bool(policy.url_forms))
def apply_url_form(p: Parts, ctx: Context) -> bool:
    """``/shop/shoes/red-boot`` is ``/product/red-boot`` when ``/shop/*/{slug}`` ->
    ``/product/{slug}`` is one of the host's ``url_forms`` (configured or learned): the URL is
    matched as the steps before left it (no trailing slash, ignored parameters gone; a
    citation's slash is kept), and its identifier is the target form filled (its query sorted)."""
    slash = len(p.path) > 1 and p.path.endswith("/")
    path = p.path[:-1] if slash else p.path
    out = ctx.host_rules(p.host).forms.apply(path, p.query)  # type: ignore[union-attr]
    if out is None:
        return False
    p.path, p.query = out
    if slash and p.path != "/":
        p.path += "/"
    return True


@rule(IDENTITY, guard=_has_two_items, on_query=True)
def sort_params(p: Parts, ctx: Context) -> bool:
    """``?b=2&a=1`` and ``?a=1&b=2`` name one page."""
    return _set_query(p, sorted_query(p.query))  # type: ignore[arg-type]


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
    drop_context_params,
    drop_path_prefix,
    drop_path_suffix,
    drop_trailing_slash,
    drop_index_page,
    drop_amp_marker,
    unescape_amp,
    drop_action_params,
    drop_ignored_params,
    keep_key_params,
    escape_unsafe_chars,
    drop_empty_params,
    plus_for_space,
    apply_url_form,
    sort_params,
)
