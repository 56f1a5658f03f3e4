"""Per-host rules: what the policy says about one host, worked out once per host.

The identity host (trailing dot, ``www``-like prefixes, domain aliases, sister suffixes) and the
parameter and path rules that name the host or one of its parent domains do not depend
on the rest of the URL, so :class:`HostTable` computes them when a host is first seen and keeps
them (:class:`HostRules`); the steps of :mod:`scrapy_urlunify.core._rules` read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import translate
from typing import NamedTuple

from scrapy_urlunify.core._ada import ada_normalize
from scrapy_urlunify.core._domains import (
    Domain,
    is_ip,
    prefix_matcher,
    split_domain,
    strip_prefixes,
    within,
)
from scrapy_urlunify.core._forms import FormTable, UrlForm
from scrapy_urlunify.core._params import NameMatcher
from scrapy_urlunify.core._policy import ParamRules, Policy

#: per-host tables kept at most (a crawl sees a few hundred hosts; a broad crawl's table is
#: cleared when full, ~0.5 KiB a host)
_CACHE_SIZE = 1 << 14


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
    path_suffixes: SegmentMatcher | None
    # whether "http://<host>/" is what the WHATWG parser makes of itself
    canonical: bool = False
    # ignore_params scoped by a rule context: (path, items that must all be in the query, names)
    contexts: tuple[tuple[str, frozenset[str], NameMatcher], ...] | None = None
    # url_forms of the host (and its parent domains)
    forms: FormTable | None = None


class HostTable:
    """The :class:`HostRules` of every host seen under one policy (``skip``: names of the steps
    and host sub-rules switched off), computed on first sight."""

    def __init__(self, policy: Policy, skip: Iterable[str] = ()) -> None:
        self.policy = policy
        self._skip = frozenset(skip)
        #: host -> its rules (read directly on the unifier's hot path; cleared when full)
        self.rules: dict[str, HostRules] = {}
        self._matchers: dict[tuple[str, ...], NameMatcher | None] = {}
        self._segment_matchers: dict[tuple[str, ...], SegmentMatcher] = {}
        self._form_tables: dict[tuple[tuple[str, str], ...], FormTable] = {}
        self._prefix = prefix_matcher(policy.strip_host_prefixes)
        self._aliases = {h: group[0] for group in policy.domain_aliases for h in group}
        self._alias_length = max(map(len, self._aliases), default=0)
        # ignore_params keyed by a rule context ("host/path?items"): (host, path, items, names)
        self._contexts = [
            (
                host,
                "/" + rest.partition("?")[0],
                frozenset(filter(None, rest.partition("?")[2].split("&"))),
                names,
            )
            for key, names in policy.ignore_params
            if "/" in key
            for host, _, rest in (key.partition("/"),)
        ]
        sites = (
            policy.sister_suffixes if isinstance(policy.sister_suffixes, tuple) else policy.sites
        )
        self._sister_sites: tuple[Domain, ...] = ()
        if policy.sister_suffixes:
            self._sister_sites = tuple(
                d
                for d in (split_domain(strip_prefixes(h, self._prefix)) for h in sites)
                if d.suffix and d.label
            )

    def get(self, host: str) -> HostRules:
        """The rules of ``host`` (a WHATWG-serialized host name)."""
        hr = self.rules.get(host)
        if hr is None:
            if len(self.rules) >= _CACHE_SIZE:
                self.rules.clear()
            hr = self.rules[host] = self._compute(host)
        return hr

    def _compute(self, host: str) -> HostRules:
        skip = self._skip
        fired = []
        ident = host
        if "unify_host" not in skip:
            if ident.endswith(".") and "strip_trailing_dot" not in skip:
                # "example.com." is the fully qualified spelling of "example.com": one host
                ident = ident.rstrip(".") or ident
                fired.append("strip_trailing_dot")
            stripped = (
                strip_prefixes(ident, self._prefix) if "strip_host_prefix" not in skip else ident
            )
            if stripped != ident:
                fired.append("strip_host_prefix")
                ident = stripped
            aliased = self._alias(ident) if "domain_alias" not in skip else ident
            if aliased != ident:
                fired.append("domain_alias")
                ident = aliased
            sister = self._sister(ident) if "sister_suffix" not in skip else ident
            if sister != ident:
                fired.append("sister_suffix")
                ident = sister
        policy = self.policy
        return HostRules(
            identity_host=ident,
            host_rules_fired=",".join(fired),
            remove=self._matcher(_names_for(policy.remove_params, host, ident)),
            ignore=self._matcher(_names_for(policy.ignore_params, host, ident)),
            key=self._matcher(_names_for(policy.key_params, host, ident)),
            path_prefixes=frozenset(_names_for(policy.ignore_path_prefixes, host, ident)) or None,
            path_suffixes=self._segment_matcher(
                _names_for(policy.ignore_path_suffixes, host, ident)
            ),
            canonical=is_canonical_host(host),
            contexts=tuple(
                (path, items, self._matcher(list(names)))  # type: ignore[misc]
                for h, path, items, names in self._contexts
                if within(host, h) or within(ident, h)
            )
            or None,
            forms=self._forms(host, ident),
        )

    def _forms(self, host: str, ident: str) -> FormTable | None:
        pairs = tuple(
            pair
            for domain, forms in self.policy.url_forms
            if not domain or within(host, domain) or within(ident, domain)
            for pair in forms
        )
        if not pairs:
            return None
        table = self._form_tables.get(pairs)
        if table is None:
            table = self._form_tables[pairs] = FormTable(UrlForm(*p) for p in pairs)
        return table

    def _segment_matcher(self, names: list[str]) -> SegmentMatcher | None:
        if not names:
            return None
        key = tuple(names)
        m = self._segment_matchers.get(key)
        if m is None:
            m = self._segment_matchers[key] = SegmentMatcher(names)
        return m

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
        # the host itself, else its closest aliased parent domain (shop.b.test -> shop.a.test);
        # only the parents no longer than the longest alias can be one (a million labels are not
        # cut a million times)
        k = -1
        if len(host) > self._alias_length:
            k = host.find(".", len(host) - self._alias_length - 1)
            if k < 0:
                return host
        while True:
            canonical = self._aliases.get(host[k + 1 :])
            if canonical is not None:
                return host[: k + 1] + canonical
            k = host.find(".", k + 1)
            if k < 0:
                return host

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


class SegmentMatcher:
    """Matches path segments, case-sensitive like the paths they are in, against exact
    segments and ``fnmatch`` globs (``comment-page-*``)."""

    __slots__ = ("exact", "glob")

    def __init__(self, segments: Iterable[str]) -> None:
        segments = tuple(dict.fromkeys(segments))
        self.exact = frozenset(s for s in segments if not any(c in s for c in "*?["))
        globs = [translate(s) for s in segments if s not in self.exact]
        self.glob = re.compile("|".join(globs)) if globs else None

    def __call__(self, segment: str) -> bool:
        if segment in self.exact:
            return True
        return self.glob is not None and self.glob.match(segment) is not None


def is_canonical_host(host: str) -> bool:
    """Whether ``host`` (no port, no user info) is what the WHATWG parser makes of itself."""
    if not host or ":" in host or "@" in host:
        return False
    url = f"http://{host}/"
    try:
        return ada_normalize(url) == url
    except ValueError:
        return False


def _names_for(rules: ParamRules, host: str, ident: str) -> list[str]:
    names: list[str] = []
    for domain, params in rules:
        if "/" in domain:  # a rule context: HostRules.contexts
            continue
        if not domain or within(host, domain) or within(ident, domain):
            names.extend(params)
    return names
