"""The unifier: one compiled :class:`~scrapy_urlunify.core.policy.Policy`, with its caches.

The public functions of the package (``standardize``, ``identify``, ``filter_reason``, ``explain``,
``same``) are thin wrappers over :class:`Unifier`. Work that depends only on the host (prefixes,
aliases, sister suffixes, per-host parameter lists) is computed once per host; the result of a
whole URL is cached too, since a crawl sees the same links again and again (the link stream in
``benchmarks/README.md`` is mostly repeats).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from . import filters
from .domains import Domain, is_ip, prefix_matcher, split_domain, strip_prefixes
from .params import NameMatcher
from .policy import ParamRules, Policy
from .rules import (
    _TRACKING_HINT,
    IDENTITY_STEPS,
    REWRITE_STEPS,
    InvalidURL,
    Parts,
    Step,
    ada_join,
    ada_normalize,
    collapse_slashes,
    drop_empty_params,
    drop_empty_query,
    drop_fragment,
    drop_ignored_params,
    drop_path_prefix,
    keep_key_params,
    normalize_escapes,
    plus_for_space,
    remove_path_session_ids,
    remove_policy_params,
    remove_session_params,
    remove_tracking_params,
    resolve,
    sort_params,
    sorted_query,
    strip_index_pages,
    strip_trailing_slash,
    without_empty_items,
)

__all__ = [
    "DEFAULT_POLICY",
    "Comparison",
    "Explanation",
    "Fired",
    "Result",
    "Unifier",
    "explain",
    "filter_reason",
    "identify",
    "same",
    "standardize",
]

_CACHE_SIZE = 1 << 17

# An http(s) URL with nothing but host, port, path and fragment, in the form a WHATWG parser
# serializes it; such URLs take the short path of Unifier._run_fast. ``%``, ``;``, ``(`` and
# ``//`` in the path send a URL to the full rules, which know what to do with them.
_PLAIN = re.compile(r"https?://(\[[^\]@/]*\]|[^:@/\[]*)(?::([0-9]+))?(/[^?#%;(]*)(?:#(.*))?\Z", re.DOTALL).match


class Result(NamedTuple):
    """What the unifier makes of one URL: the URL to fetch, its identifier, and why not to
    follow it (``None``: follow). ``fetch_url`` and ``identifier`` are ``None`` when invalid.

    In the cached results of :meth:`Unifier.result`, ``filter_reason`` only holds the reasons
    found on the way (``invalid``, ``scheme:...``); the path-based ones (``too-long``,
    ``extension:...``, ``trap``) are looked up by :meth:`Unifier.filter_reason`, so that
    :func:`identify` does not pay for them, and stored back once found (``""``: checked, follow).
    """

    fetch_url: str | None
    identifier: str | None
    filter_reason: str | None


_new_result = tuple.__new__  # Result(...) without the Python-level __new__ of NamedTuple


class HostRules(NamedTuple):
    """Everything the rules need to know about one host, computed once."""

    identity_host: str
    host_rules_fired: str
    # None when the policy names no parameter for the host: tested on every URL with a query,
    # where a NameMatcher's Python-level __bool__ would cost more than the rest of the test
    remove: NameMatcher | None
    ignore: NameMatcher | None
    key: NameMatcher | None
    path_prefixes: frozenset[str] | None


class Unifier:
    """A compiled policy: the steps, the per-host table and a bounded cache of results.

    Not thread-safe, like the rest of a Scrapy crawl (the caches are plain dicts).
    """

    def __init__(self, policy: Policy, skip: Iterable[str] = ()) -> None:
        self.policy = policy
        skip = frozenset(skip)
        self.rewrite_steps: tuple[Step, ...] = tuple(s for s in REWRITE_STEPS if s.__name__ not in skip)
        self.identity_steps: tuple[Step, ...] = tuple(s for s in IDENTITY_STEPS if s.__name__ not in skip)
        self._skip = skip
        self._fast = not skip
        self.index_pages = frozenset(policy.index_pages)
        self._prefix = prefix_matcher(policy.strip_host_prefixes)
        self._aliases = {h: group[0] for group in policy.domain_aliases for h in group}
        sites = policy.sister_suffixes if isinstance(policy.sister_suffixes, tuple) else policy.sites
        self._sister_sites: tuple[Domain, ...] = ()
        if policy.sister_suffixes:
            self._sister_sites = tuple(
                d for d in (split_domain(strip_prefixes(h, self._prefix)) for h in sites) if d.suffix and d.label
            )
        self._extensions = filters.compile_extensions(policy.deny_extensions)
        self._prefix_text = f"{policy.scope}|" if policy.scope else ""
        self._ignore_scheme = policy.ignore_scheme
        self._routes = policy.route_fragments
        self._hosts: dict[str, HostRules] = {}
        self._cache: dict[str, Result] = {}

    # -- per host ------------------------------------------------------------------------------

    def host_rules(self, host: str) -> HostRules:
        """The :class:`HostRules` of ``host`` (a WHATWG-serialized host name)."""
        hr = self._hosts.get(host)
        if hr is None:
            if len(self._hosts) >= _CACHE_SIZE:
                self._hosts.clear()
            hr = self._hosts[host] = self._compute_host_rules(host)
        return hr

    def _compute_host_rules(self, host: str) -> HostRules:
        fired = []
        ident = host
        if "unify_host" not in self._skip:
            if ident.endswith(".") and "strip_trailing_dot" not in self._skip:
                # "example.com." is the fully qualified spelling of "example.com": one host
                ident = ident.rstrip(".") or ident
                fired.append("strip_trailing_dot")
            stripped = strip_prefixes(ident, self._prefix) if "strip_host_prefix" not in self._skip else ident
            if stripped != ident:
                fired.append("strip_host_prefix")
                ident = stripped
            aliased = self._alias(ident) if "domain_alias" not in self._skip else ident
            if aliased != ident:
                fired.append("domain_alias")
                ident = aliased
            sister = self._sister(ident) if "sister_suffix" not in self._skip else ident
            if sister != ident:
                fired.append("sister_suffix")
                ident = sister
        policy = self.policy
        return HostRules(
            identity_host=ident,
            host_rules_fired=",".join(fired),
            remove=NameMatcher(_names_for(policy.remove_params, host, ident)) or None,
            ignore=NameMatcher(_names_for(policy.ignore_params, host, ident)) or None,
            key=NameMatcher(_names_for(policy.key_params, host, ident)) or None,
            path_prefixes=frozenset(_names_for(policy.ignore_path_prefixes, host, ident)) or None,
        )

    def _alias(self, host: str) -> str:
        if not self._aliases or is_ip(host):
            return host
        # the host itself, else its closest aliased parent domain (shop.b.test -> shop.a.test)
        candidate = host
        while True:
            canonical = self._aliases.get(candidate)
            if canonical is not None:
                return host[: len(host) - len(candidate)] + canonical
            dot = candidate.find(".")
            if dot < 0:
                return host
            candidate = candidate[dot + 1:]

    def _sister(self, host: str) -> str:
        if not self._sister_sites or is_ip(host):
            return host
        d = split_domain(host)
        if not d.suffix or not d.label:
            return host
        matches = {s.suffix for s in self._sister_sites if s.label == d.label}
        if not matches or d.suffix in matches or len(matches) > 1:
            return host  # a site itself, no sister, or ambiguous: never guess
        (suffix,) = matches
        return f"{d.subdomain}.{d.label}.{suffix}" if d.subdomain else f"{d.label}.{suffix}"

    # -- per URL --------------------------------------------------------------------------------

    def result(self, url: str, base: str | None = None) -> Result:
        """Fetch URL, identifier and filter reason of ``url`` (resolved against ``base``)."""
        if base is None:
            r = self._cache.get(url)
            if r is not None:
                return r
        try:
            # ada directly rather than resolve(): this is the hot path of every link
            resolved = ada_normalize(url) if base is None else ada_join(base, url)
        except ValueError:
            r = Result(None, None, filters.INVALID)
        else:
            if self._fast and resolved.startswith(("https://", "http://")):
                r = self._run_fast(resolved)
            else:
                r = self._run(resolved, None)
        if base is None:
            cache = self._cache
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[url] = r
            # the URL to fetch has the same result (standardize is idempotent): a request the
            # middleware rewrote finds its identifier here when the dupefilter asks for it
            fetch = r.fetch_url
            if fetch is not None and fetch != url:
                cache[fetch] = r
        return r

    def _run(self, resolved: str, trace: list[Fired] | None) -> Result:
        reason = filters.scheme_reason(resolved)
        if reason is not None:
            # nothing to unify in mailto:, javascript:, data:...; kept verbatim
            return Result(resolved, self._prefix_text + resolved, reason)
        if trace is None and not self._skip:
            return self._run_fast(resolved)
        p = Parts.split(resolved)
        for step in self.rewrite_steps:
            if trace is None:
                step(p, self)
            else:
                before = p.url()
                fired = step(p, self)
                if fired:
                    trace.append(Fired(step.__name__, step.layer, before, p.url(), fired))  # type: ignore[attr-defined]
        fetch = p.url()
        reason = self._reason(fetch, p.path)
        for step in self.identity_steps:
            if trace is None:
                step(p, self)
            else:
                before = _identity_text(p)
                fired = step(p, self)
                if fired:
                    trace.append(Fired(step.__name__, step.layer, before, _identity_text(p), fired))  # type: ignore[attr-defined]
        ident = self._prefix_text + (p.url() if p.scheme else p.tail())
        return Result(fetch, ident, reason)

    def filter_reason(self, url: str, base: str | None = None) -> str | None:
        """Why ``url`` must not be followed (see :mod:`scrapy_urlunify.core.filters`), or ``None``."""
        r = self.result(url, base)
        if r.filter_reason is not None:
            return r.filter_reason or None
        fetch: str = r.fetch_url  # type: ignore[assignment]
        start = fetch.find("/", fetch.find("//") + 2)
        end = len(fetch)
        for c in "?#":
            k = fetch.find(c, start)
            if 0 <= k < end:
                end = k
        reason = self._reason(fetch, fetch[start:end])
        if base is None and self._cache.get(url) is r:
            # the middleware asks for every link, and links repeat: check each URL once
            self._cache[url] = _new_result(Result, (r.fetch_url, r.identifier, reason or ""))
        return reason

    def _reason(self, fetch: str, path: str) -> str | None:
        if len(fetch) > self.policy.max_url_length:
            return filters.TOO_LONG
        return filters.extension_reason(path, self._extensions) or filters.trap_reason(
            path, self.policy.trap_repetitions
        )

    def _run_fast(self, resolved: str) -> Result:
        """The steps of :meth:`_run`, each called only when its input can be there at all.

        Every link of a crawl goes through here, and most links have no escapes, user info or
        session ids, and no query or a query with nothing to remove: for those, the few rules
        that can apply run on plain strings, with no :class:`Parts` and no step calls. A test checks this path against the plain loop of
        :meth:`_run` on the conformance corpora and on generated URLs.
        """
        # a failed match of _PLAIN costs three times a successful one (it backtracks through
        # the host): send URLs with escapes, path parameters or user info on at once
        if "%" in resolved or ";" in resolved or "(" in resolved or "@" in resolved:
            return self._run_guarded(resolved)
        query = None
        if "?" in resolved:
            # a query none of whose items the rewrite layer removes, on a host with no
            # parameter lists: only empty items and the order change in the identifier
            before, hash_, frag = resolved.partition("#")
            if "?" not in before or "?" in frag:
                return self._run_guarded(resolved)
            base, _, query = before.partition("?")
            lq = query.lower()
            if (not query or "sid" in lq or "session" in lq or "cfid" in lq
                    or _TRACKING_HINT.search(query) is not None):
                return self._run_guarded(resolved)
            m = _PLAIN(base + hash_ + frag)
        else:
            m = _PLAIN(resolved)
        if m is None:
            return self._run_guarded(resolved)
        host, port, path, fragment = m.groups()
        if "//" in path:
            return self._run_guarded(resolved)
        hr = self._hosts.get(host) or self.host_rules(host)
        if hr.path_prefixes is not None or (query is not None and (
                hr.remove is not None or hr.ignore is not None or hr.key is not None)):
            return self._run_guarded(resolved)
        fetch = resolved
        if fragment is not None and not (self._routes and fragment[:1] in "!/" and fragment):  # fragment_is_route
            fetch = resolved[: len(resolved) - len(fragment) - 1]
            fragment = None
        if path[-1] == "/":
            path = strip_trailing_slash(path)
        if "." in path:
            path = strip_index_pages(path, self.index_pages)
        head = self._prefix_text if self._ignore_scheme else self._ident_head(fetch)
        if port:
            ident = f"{head}{hr.identity_host}:{port}{path}"
        else:
            ident = head + hr.identity_host + path
        if query is not None:
            query = without_empty_items(query)
            if query is not None:
                ident = f"{ident}?{sorted_query(query)}"
        if fragment is not None:
            ident = f"{ident}#{fragment}"
        return _new_result(Result, (fetch, ident, None))

    def _ident_head(self, fetch: str) -> str:
        if self.policy.ignore_scheme:
            return self._prefix_text
        return self._prefix_text + fetch[: fetch.index(":")] + "://"

    def _run_guarded(self, resolved: str) -> Result:
        """:meth:`_run` for URLs with a query, escapes or path parameters: steps whose input is
        absent are not called."""
        p = Parts.split(resolved)
        path = p.path
        changed = False
        if p.fragment is not None:
            changed = drop_fragment(p, self)
        if "%" in resolved:
            changed = normalize_escapes(p, self) or changed
        if ";" in path or "(" in path:
            changed = remove_path_session_ids(p, self) or changed
        if "//" in p.path:
            changed = collapse_slashes(p, self) or changed
        hr = self._hosts.get(p.host) or self.host_rules(p.host)
        q = p.query
        if q is not None:
            if q == "":
                changed = drop_empty_query(p, self) or changed
            else:
                # the steps' own cheap tests, made here first: most queries have nothing to remove
                lq = q.lower()
                if "sid" in lq or "session" in lq or "cfid" in lq:
                    changed = remove_session_params(p, self) or changed
                if p.query and _TRACKING_HINT.search(p.query) is not None:
                    changed = remove_tracking_params(p, self) or changed
                if hr.remove is not None:
                    changed = remove_policy_params(p, self) or changed
        fetch = p.url() if changed else resolved
        if self._ignore_scheme:
            p.scheme = None
        p.userinfo = ""
        p.host = hr.identity_host
        if hr.path_prefixes is not None:
            drop_path_prefix(p, self)
        p.path = strip_index_pages(strip_trailing_slash(p.path), self.index_pages)
        q = p.query
        if q:
            if hr.ignore is not None:
                drop_ignored_params(p, self)
            if hr.key is not None and p.query:
                keep_key_params(p, self)
            q = p.query
            if q and ("&" in q or q[-1] == "="):
                drop_empty_params(p, self)
                q = p.query
            if q and "%20" in q:
                plus_for_space(p, self)
                q = p.query
            if q and "&" in q:
                sort_params(p, self)
        return _new_result(Result, (fetch, self._prefix_text + (p.url() if p.scheme else p.tail()), None))

    def standardize(self, url: str, base: str | None = None) -> str:
        r = self.result(url, base)
        if r.fetch_url is None:
            raise InvalidURL(f"invalid URL {url[:200]!r}")
        return r.fetch_url

    def identify(self, url: str, base: str | None = None) -> str:
        r = self.result(url, base)
        if r.identifier is None:
            raise InvalidURL(f"invalid URL {url[:200]!r}")
        return r.identifier

    def explain(self, url: str, base: str | None = None) -> Explanation:
        """Like :meth:`result`, recording every step that changed something."""
        trace: list[Fired] = []
        try:
            resolved = resolve(url, base)
        except InvalidURL as e:
            return Explanation(url, base, None, Result(None, None, filters.INVALID), trace, str(e))
        if resolved != url:
            trace.append(Fired("resolve", "rewrite", url, resolved, True))
        return Explanation(url, base, resolved, self._run(resolved, trace), trace)

    def cache_clear(self) -> None:
        """Forget cached results (the Scrapy integration calls it when learned rules change)."""
        self._cache.clear()
        self._hosts.clear()


def _identity_text(p: Parts) -> str:
    return p.url() if p.scheme else p.tail()


def _names_for(rules: ParamRules, host: str, ident: str) -> list[str]:
    names: list[str] = []
    for domain, params in rules:
        if not domain or _within(host, domain) or _within(ident, domain):
            names.extend(params)
    return names


def _within(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


@dataclass(frozen=True)
class Fired:
    """One step that changed the URL: its name, its layer, the text before and after it, and
    what it reported (``True`` or the names of its sub-rules)."""

    rule: str
    layer: str
    before: str
    after: str
    detail: object = True

    @property
    def names(self) -> tuple[str, ...]:
        """The rule names this step stands for (sub-rules when it reported them)."""
        if isinstance(self.detail, str) and self.detail:
            return tuple(self.detail.split(","))
        return (self.rule,)


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found: the input, the resolved URL, the result and the rules fired."""

    url: str
    base: str | None
    resolved: str | None
    result: Result
    fired: list[Fired] = field(default_factory=list)
    error: str | None = None

    @property
    def rule_names(self) -> tuple[str, ...]:
        return tuple(n for f in self.fired for n in f.names)


@dataclass(frozen=True)
class Comparison:
    """What :func:`same` found: whether two URLs are one page, and which rules decide it.

    ``deciding`` lists the rules without which the answer would flip from "same" to "different"
    (for two different pages it is empty: no rule merged them); ``any_of`` lists rules that
    are each enough on their own but not needed alone (``remove_params`` and ``key_params``
    both dropping ``arglink``): without all of them, the answer flips.
    """

    same: bool
    first: Explanation
    second: Explanation
    deciding: tuple[str, ...]
    any_of: tuple[str, ...] = ()


DEFAULT_POLICY = Policy()


def _unifier(policy: Policy | None) -> Unifier:
    return (policy or DEFAULT_POLICY).unifier


def standardize(url: str, base: str | None = None, policy: Policy | None = None) -> str:
    """The URL to *fetch*: resolved, with only the rewrites a server answers identically
    (the *rewrite* layer of :mod:`scrapy_urlunify.core.rules`). Raises :class:`InvalidURL`.

    >>> standardize("HTTP://Example.COM:80/a//b/./c;jsessionid=0123456789abcdef0123?utm_source=x#top")
    'http://example.com/a/b/c'
    """
    return _unifier(policy).standardize(url, base)


def identify(url: str, policy: Policy | None = None, base: str | None = None) -> str:
    """The *unicity identifier*: a readable string two URLs share exactly when ``policy`` deems
    them one page (both layers of :mod:`scrapy_urlunify.core.rules`, with the scope in front).
    Raises :class:`InvalidURL`.

    >>> identify("https://www.example.com/docs/index.html?b=2&a=1#x")
    'example.com/docs?a=1&b=2'
    >>> identify("http://example.com/docs/?a=1&b=2", Policy(scope="job1"))
    'job1|example.com/docs?a=1&b=2'
    """
    return _unifier(policy).identify(url, base)


def filter_reason(url: str, policy: Policy | None = None, base: str | None = None) -> str | None:
    """Why the link must not be followed (FO-flt), as a stable code (:mod:`scrapy_urlunify.core.filters`),
    or ``None`` to follow it. Never raises for a string: an unparsable link gives ``"invalid"``.

    >>> filter_reason("mailto:someone@example.com"), filter_reason("http://example.com/a.PDF")
    ('scheme:mailto', 'extension:pdf')
    """
    return _unifier(policy).filter_reason(url, base)


def explain(url: str, base: str | None = None, policy: Policy | None = None) -> Explanation:
    """Every rule that fired on ``url``, with the fetch URL and the identifier."""
    return _unifier(policy).explain(url, base)


def same(a: str, b: str, policy: Policy | None = None) -> Comparison:
    """Whether ``a`` and ``b`` are one page under ``policy``, and which rules decide it."""
    policy = policy or DEFAULT_POLICY
    u = policy.unifier
    ea, eb = u.explain(a), u.explain(b)
    ia, ib = ea.result.identifier, eb.result.identifier
    is_same = ia is not None and ia == ib
    deciding: list[str] = []
    together: list[str] = []
    if is_same:
        fired = [n for n in dict.fromkeys(ea.rule_names + eb.rule_names) if n != "resolve"]
        for name in fired:
            if _differ_without(policy, a, b, {name}):
                deciding.append(name)
        # rules none of which is needed alone but which merge the two URLs between them: skip
        # them all, add what fires instead (a key parameter rule covering for a removal), and
        # repeat until the URLs differ or nothing new fires
        rest = {n for n in fired if n not in deciding}
        while rest:
            if _differ_without(policy, a, b, rest):
                for n in sorted(rest):  # keep only the rules that matter: a minimal set
                    if _differ_without(policy, a, b, rest - {n}):
                        rest.discard(n)
                together = [n for n in dict.fromkeys([*fired, *sorted(rest)]) if n in rest]
                break
            alt = Unifier(policy, skip=rest)
            more = {n for n in alt.explain(a).rule_names + alt.explain(b).rule_names
                    if n != "resolve" and n not in deciding} - rest
            if not more:
                break
            rest |= more
        if not deciding and not together:
            # the browser-level resolution already made the two URLs equal
            deciding = ["resolve"]
    return Comparison(is_same, ea, eb, tuple(deciding), tuple(together))


def _differ_without(policy: Policy, a: str, b: str, skip: set[str]) -> bool:
    alt = Unifier(policy, skip=skip)
    try:
        return alt.identify(a) != alt.identify(b)
    except InvalidURL:
        return True


