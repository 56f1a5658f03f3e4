"""The unifier: one compiled :class:`~scrapy_urlunify.core.policy.Policy`, with its caches.

The public functions of the package (``standardize``, ``identify``, ``filter_reason``, ``explain``,
``same``) are thin wrappers over :class:`Unifier`. Work that depends only on the host (prefixes,
aliases, sister suffixes, per-host parameter lists) is computed once per host; the result of a
whole URL is cached too, since a crawl sees the same links again and again (the link stream in
``benchmarks/README.md`` is mostly repeats).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from ..compiled import speedups
from . import filters
from .domains import Domain, is_ip, prefix_matcher, split_domain, strip_prefixes, within
from .guards import TAKE_STEPS, HostTests, compile_layer, guard_of, trigger_chars
from .params import NameMatcher
from .policy import ParamRules, Policy
from .rules import (
    IDENTITY_STEPS,
    REWRITE_STEPS,
    Step,
    drop_empty_params,
    drop_fragment,
    drop_index_page,
    drop_trailing_slash,
    ignore_scheme,
    sort_params,
    sorted_query,
    strip_index_pages,
    strip_trailing_slash,
    unify_host,
    without_empty_items,
)
from .url import (
    CANONICAL_CHARS,
    InvalidURL,
    Parts,
    ada_join,
    ada_normalize,
    canonical_chars,
    canonical_splitter,
    resolve,
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
    "unifier_for",
]

#: per-host tables kept at most (a crawl sees a few hundred hosts; a broad crawl's table is
#: cleared when full, ~0.5 KiB a host)
_CACHE_SIZE = 1 << 14
#: The result cache (see Unifier.result) is two generations of dicts: new results and hits go
#: to the young one; when it holds ``limit`` entries it becomes the old one and the previous
#: old one is dropped, so the URLs a crawl keeps seeing (navigation links) stay while the rest
#: go. ``limit`` follows the crawl: ``_CACHE_MIN`` entries for a small crawl (about 1.6 MiB a
#: generation), then one entry for every ``_CACHE_PER_ENTRY`` entries it has held, up to
#: ``_CACHE_MAX``. A distinct URL makes about 1.5 entries (its URL to fetch too, when it had a
#: fragment); at about 400 bytes an entry (the URL, its Result and identifier), the two
#: generations hold at most ~40 bytes per distinct URL of the crawl, well under the ~90 bytes a
#: URL costs in Scrapy's own seen set (benchmarks/bench_process_memory.py).
_CACHE_MIN = 4096
_CACHE_PER_ENTRY = 30
_CACHE_MAX = 1 << 16
# rewrite passes before the URL to fetch must have settled (two always do so far)
_MAX_PASSES = 4

# The parts of an http(s) URL without user info, as a WHATWG parser serializes it: scheme, host,
# port, path, query, fragment (the serialization is canonical: ``?`` and ``#`` only delimit).
# A URL with user info does not match: drop_userinfo applies to it, so it takes the steps anyway.
_SPLIT = re.compile(
    r"(https?)://(\[[^\]/@]*\]|[^:/?#@\[]*)(?::([0-9]+))?(/[^?#]*)(?:\?([^#]*))?(?:#(.*))?\Z", re.DOTALL
).match

#: The steps :meth:`Unifier._run_plain` does on strings, for URLs no other step applies to.
PLAIN_STEPS: frozenset[Step] = frozenset({
    drop_fragment, ignore_scheme, unify_host, drop_trailing_slash, drop_index_page, drop_empty_params, sort_params,
})


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
    # the test Unifier._run_plain makes on a URL of this host (guards.HostTests)
    plain_test: Callable[..., object] | None = None
    # the same test for a URL that the unifier's canonical splitter matched
    fast_test: Callable[..., object] | None = None
    # whether "http://<host>/" is what the WHATWG parser makes of itself
    canonical: bool = False


class Unifier:
    """A compiled policy: the steps, the per-host table and a bounded cache of results.

    Not thread-safe, like the rest of a Scrapy crawl (the caches are plain dicts).
    """

    def __init__(self, policy: Policy, skip: Iterable[str] = (), *, compiled: bool = True) -> None:
        self.policy = policy
        skip = frozenset(skip)
        self.rewrite_steps: tuple[Step, ...] = tuple(s for s in REWRITE_STEPS if s.__name__ not in skip)
        self.identity_steps: tuple[Step, ...] = tuple(s for s in IDENTITY_STEPS if s.__name__ not in skip)
        self._skip = skip
        self._rewrite = compile_layer(self.rewrite_steps)
        self._identify = compile_layer(self.identity_steps)
        # the short path does the plain steps itself: with one of them skipped, every URL takes
        # the steps; otherwise a URL takes them when the guard of any other step holds
        active = self.rewrite_steps + self.identity_steps
        self._plain = PLAIN_STEPS.issubset(active)
        others = tuple(s for s in active if s not in PLAIN_STEPS)
        # The fast path: a URL already written as the WHATWG parser writes it is not parsed
        # again, and it is split by one pattern that leaves out the characters the other steps'
        # guards test for (escapes, ";", "(", unsafe characters): a URL it matches makes those
        # tests false, so its host's test is compiled without them.
        triggers = trigger_chars(others)
        absent = {part: _ASCII - (chars - triggers.get(part, frozenset())) for part, chars in CANONICAL_CHARS.items()}
        self._fast_split = canonical_splitter(absent)
        self._plain_tests = HostTests(policy, others, drop_fragment, absent)
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
        # what an identifier starts with when the scheme is not part of it (None: it is)
        self._ident_head = self._prefix_text if policy.ignore_scheme else None
        self._hosts: dict[str, HostRules] = {}
        self._matchers: dict[tuple[str, ...], NameMatcher | None] = {}
        #: the short path of _compute: PlainPath of the C extension where it was built (and
        #: ``compiled``), else its Python twin _plain_path; None where the short path is off
        self.plain_path: Callable[[str], object] | None = None
        if self._plain:
            self.plain_path = self._plain_path
            if compiled and speedups is not None:
                self.plain_path = speedups.PlainPath(
                    self._hosts, *(canonical_chars(part, absent) for part in ("path", "query", "fragment")),
                    self.index_pages, self._ident_head, self._prefix_text, TAKE_STEPS, Result,
                    tuple(HostRules._fields.index(f) for f in ("identity_host", "fast_test", "canonical")),
                )
        # the result cache's young and old generations, and the young one's size limit
        self._cache: dict[str, Result] = {}
        self._old: dict[str, Result] = {}
        self._cache_limit = _CACHE_MIN
        # entries the young generations held before they were dropped: the crawl's distinct
        # URLs, about (a result is kept under its URL, its URL to fetch, and again when found old)
        self._held = 0

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
        hr = HostRules(
            identity_host=ident,
            host_rules_fired=",".join(fired),
            remove=self._matcher(_names_for(policy.remove_params, host, ident)),
            ignore=self._matcher(_names_for(policy.ignore_params, host, ident)),
            key=self._matcher(_names_for(policy.key_params, host, ident)),
            path_prefixes=frozenset(_names_for(policy.ignore_path_prefixes, host, ident)) or None,
        )
        return hr._replace(plain_test=self._plain_tests.for_host(hr), fast_test=self._plain_tests.fast_for_host(hr),
                           canonical=_is_canonical_host(host))

    def _matcher(self, names: list[str]) -> NameMatcher | None:
        """One NameMatcher per list of names (hosts share them; compiling globs is not cheap)."""
        key = tuple(names)
        m = self._matchers.get(key, False)
        if m is False:
            m = self._matchers[key] = NameMatcher(names) or None
        return m  # type: ignore[return-value]

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
            if r is None:
                r = self._old.get(url)
                if r is None:
                    return self._compute(url)
                self._keep(url, r)
            return r
        try:
            # ada directly rather than resolve(): this is the hot path of every link
            resolved = ada_join(base, url)
        except ValueError:
            return Result(None, None, filters.INVALID)
        return self._run(resolved)

    def _compute(self, url: str) -> Result:
        """The result of ``url`` (no base), computed and cached."""
        plain = self.plain_path
        r: Result = plain(url) if plain is not None else None  # type: ignore[assignment]
        if r is None:
            try:
                resolved = ada_normalize(url)
            except ValueError:
                r = Result(None, None, filters.INVALID)
            else:
                r = self._run(resolved)
        elif r is TAKE_STEPS:  # type: ignore[comparison-overlap]
            r = self._run_steps(url)
        # _keep, inline: this is every new URL's path
        cache = self._cache
        cache[url] = r
        # the URL to fetch has the same result (it is a fixed point of the rewrite layer, see
        # _settle): a request the middleware rewrote finds its identifier here when the
        # dupefilter asks for it
        fetch = r[0]
        if fetch is not None and fetch != url:
            cache[fetch] = r
        if len(cache) >= self._cache_limit:
            self._rotate()
        return r

    def _plain_path(self, url: str) -> Result | str | None:
        """The short path of :meth:`_compute` for a URL already written as the WHATWG parser
        writes it (so it is not parsed again, and its parts are the splitter's match): its
        Result; :data:`~scrapy_urlunify.core.guards.TAKE_STEPS` when a step outside
        :data:`PLAIN_STEPS` applies; None for any other URL (a host not seen yet or not
        canonical, a dot segment, a character the splitter leaves out): parse it.
        ``_speedups.PlainPath`` is the same function in C."""
        m = self._fast_split(url)
        if m is None:
            return None
        scheme, host, path, query, fragment = m.groups()
        hr = self._hosts.get(host)
        if hr is None or not hr.canonical or "/." in path:
            return None
        test = hr.fast_test(path, query, fragment, "", host)  # type: ignore[misc]
        if test is TAKE_STEPS:
            return TAKE_STEPS
        return self._plain_parts(url, scheme, hr, "", path, query, fragment, test)

    def _keep(self, url: str, r: Result) -> None:
        """Cache ``r`` under ``url`` in the young generation."""
        cache = self._cache
        cache[url] = r
        if len(cache) >= self._cache_limit:
            self._rotate()

    def _rotate(self) -> None:
        """The full young generation becomes the old one (the old one goes), and the limit
        follows the number of distinct URLs computed."""
        self._held += len(self._cache)
        self._old = self._cache
        self._cache = {}
        self._cache_limit = min(_CACHE_MAX, max(_CACHE_MIN, self._held // _CACHE_PER_ENTRY))

    def _run(self, resolved: str) -> Result:
        reason = filters.scheme_reason(resolved)
        if reason is not None:
            # nothing to unify in mailto:, javascript:, data:...; kept verbatim
            return Result(resolved, self._prefix_text + resolved, reason)
        return self._run_plain(resolved) if self._plain else self._run_steps(resolved)

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

    def _run_steps(self, resolved: str) -> Result:
        """Both layers on the :class:`Parts` of an http(s) URL, each step where its guard holds.

        (The path-based filter reasons are left to :meth:`filter_reason`.)"""
        p = Parts.split(resolved)
        hr = self._hosts.get(p.host) or self.host_rules(p.host)
        fetch = resolved
        if self._rewrite(p, hr, self):
            fetch, p = self._settle(p, resolved)
        self._identify(p, self._hosts.get(p.host) or self.host_rules(p.host), self)
        return _new_result(Result, (fetch, self._prefix_text + _identity_text(p), None))

    def _settle(self, p: Parts, resolved: str) -> tuple[str, Parts]:
        """The URL to fetch once a rewrite step changed ``p``, and its parts: resolved and rewritten
        again until nothing changes (removing ``;jsessionid=...`` from ``/a/..;jsessionid=1/b``
        leaves a ``..`` segment), so that :meth:`standardize` gives it back unchanged. That is
        what lets :meth:`result` cache a result under its URL to fetch too. Should the passes not
        settle (no rule is known to do that), the resolved URL is fetched as it is."""
        for _ in range(_MAX_PASSES):
            fetch = p.url()
            try:
                again = ada_normalize(fetch)
            except ValueError:  # pragma: no cover - the rules only remove parts of a valid URL
                break
            q = Parts.split(again)
            if not self._rewrite(q, self._hosts.get(q.host) or self.host_rules(q.host), self) and again == fetch:
                return fetch, q
            p = q
        return resolved, p

    def _run_plain(self, resolved: str) -> Result:
        """:meth:`_run_steps` for the URLs that only the :data:`PLAIN_STEPS` apply to, on strings.

        Every link of a crawl goes through here, and most links have no escapes, user info or
        session ids, and no query or a query with nothing to remove: for those, the few steps
        that apply are done on the parts of the string, with no :class:`Parts` and no step
        calls. Any other URL (the guard of a step outside :data:`PLAIN_STEPS` holds) takes the
        steps. Tests check this path against the steps on a corpus and on generated URLs.
        """
        m = _SPLIT(resolved)
        if m is None:
            return self._run_steps(resolved)
        scheme, host, port, path, query, fragment = m.groups()
        hr = self._hosts.get(host) or self.host_rules(host)
        return self._plain_parts(resolved, scheme, hr, port or "", path, query, fragment,
                                 hr.plain_test(path, query, fragment, "", host))  # type: ignore[misc]

    def _plain_parts(self, resolved: str, scheme: str, hr: HostRules, port: str, path: str, query: str | None,
                     fragment: str | None, test: object) -> Result:
        """:meth:`_run_plain` on the parts of ``resolved`` (a URL without user info), given the
        value of its host's test."""
        if test is TAKE_STEPS:
            return self._run_steps(resolved)
        fetch = resolved
        if test:  # drop_fragment applies
            fetch = resolved[: len(resolved) - len(fragment) - 1]  # type: ignore[arg-type]
            fragment = None
        if path[-1] == "/":
            path = strip_trailing_slash(path)
        # strip_index_pages' own first test, inline: most paths end in a page that is no index
        if "." in path and path[path.rfind("/") + 1:].lower() in self.index_pages:
            path = strip_index_pages(path, self.index_pages)
        head = self._ident_head
        if head is None:
            head = f"{self._prefix_text}{scheme}://"
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

    def standardize(self, url: str, base: str | None = None) -> str:
        r = self.result(url, base)
        if r.fetch_url is None:
            raise InvalidURL(f"invalid URL {url[:200]!r}")
        return r.fetch_url

    def identify(self, url: str, base: str | None = None) -> str:
        # result() inline: the dupefilter asks for every scheduled request
        if base is None:
            r = self._cache.get(url)
            if r is None:
                r = self._old.get(url)
                if r is None:
                    r = self._compute(url)
                else:
                    self._keep(url, r)
        else:
            r = self.result(url, base)
        identifier = r[1]
        if identifier is None:
            raise InvalidURL(f"invalid URL {url[:200]!r}")
        return identifier

    def explain(self, url: str, base: str | None = None) -> Explanation:
        """Like :meth:`result`, recording every step that changed something."""
        trace: list[Fired] = []
        try:
            resolved = resolve(url, base)
        except InvalidURL as e:
            return Explanation(url, base, None, Result(None, None, filters.INVALID), trace, str(e))
        if resolved != url:
            trace.append(Fired("resolve", "rewrite", url, resolved, True))
        reason = filters.scheme_reason(resolved)
        if reason is not None:
            result = Result(resolved, self._prefix_text + resolved, reason)
            return Explanation(url, base, resolved, result, trace)
        # the steps one by one, in the order and under the guards compile_layer runs them in,
        # and the passes of _settle
        p = Parts.split(resolved)
        fetch = resolved
        if self._trace(p, self.rewrite_steps, trace):
            for _ in range(_MAX_PASSES):
                fetch = p.url()
                try:
                    again = resolve(fetch)
                except InvalidURL:  # pragma: no cover - as in _settle
                    fetch = resolved
                    break
                if again != fetch:
                    trace.append(Fired("resolve", "rewrite", fetch, again, True))
                q = Parts.split(again)
                changed = self._trace(q, self.rewrite_steps, trace)
                p = q
                if not changed and again == fetch:
                    break
            else:
                fetch = resolved
        self._trace(p, self.identity_steps, trace)
        result = Result(fetch, self._prefix_text + _identity_text(p), self._reason(fetch, Parts.split(fetch).path))
        return Explanation(url, base, resolved, result, trace)

    def _trace(self, p: Parts, steps: tuple[Step, ...], trace: list[Fired]) -> bool:
        """Run ``steps`` on ``p`` one by one where their guards hold, recording each that fires."""
        changed = False
        for step in steps:
            if not guard_of(step)(p.path, p.query, p.fragment, p.userinfo, p.host, self.host_rules(p.host),
                                  self.policy):
                continue
            before = _identity_text(p)
            fired = step(p, self)
            if fired:
                changed = True
                trace.append(Fired(step.__name__, step.layer, before, _identity_text(p), fired))  # type: ignore[attr-defined]
        return changed

    def cache_clear(self) -> None:
        """Forget cached results (the Scrapy integration calls it when learned rules change)."""
        self._cache = {}
        self._old = {}
        self._cache_limit = _CACHE_MIN
        self._held = 0
        self._hosts.clear()


_ASCII = frozenset(map(chr, range(128)))


def _is_canonical_host(host: str) -> bool:
    """Whether ``host`` (no port, no user info) is what the WHATWG parser makes of itself."""
    if not host or ":" in host or "@" in host:
        return False
    url = f"http://{host}/"
    try:
        return ada_normalize(url) == url
    except ValueError:
        return False


def _identity_text(p: Parts) -> str:
    return p.url() if p.scheme else p.tail()


def _names_for(rules: ParamRules, host: str, ident: str) -> list[str]:
    names: list[str] = []
    for domain, params in rules:
        if not domain or within(host, domain) or within(ident, domain):
            names.extend(params)
    return names


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


def unifier_for(policy: Policy) -> Unifier:
    """The compiled :class:`Unifier` of ``policy``, built on first use. A policy is immutable, so
    its unifier, caches included, serves every caller; it is kept with the policy (in the
    instance's ``__dict__``, not a field of the data) and goes when the policy goes."""
    u: Unifier | None = policy.__dict__.get(_COMPILED)
    if u is None:
        u = policy.__dict__[_COMPILED] = Unifier(policy)
    return u


_COMPILED = "compiled_unifier"


def _unifier(policy: Policy | None) -> Unifier:
    # unifier_for's lookup, inline: every call of the public functions goes through here
    policy = policy or DEFAULT_POLICY
    return policy.__dict__.get(_COMPILED) or unifier_for(policy)


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
    # _unifier() inline
    return ((policy or DEFAULT_POLICY).__dict__.get(_COMPILED) or unifier_for(policy or DEFAULT_POLICY)).identify(
        url, base)


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
    u = unifier_for(policy)
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


