"""The unifier: one compiled :class:`~scrapy_urlunify.core._policy.Policy`, with its caches.

The public functions of the package (``standardize``, ``identify``, ``filter_reason``) are thin
wrappers over :class:`Unifier`, which runs the steps of :mod:`scrapy_urlunify.core._rules` where
their guards hold (:mod:`scrapy_urlunify.core._guards`). Work that depends only on the host is
done once per host (:mod:`scrapy_urlunify.core._hosts`); the result of a whole URL is cached too,
since a crawl sees the same links again and again (the link stream in ``benchmarks/README.md``
is mostly repeats).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import scrapy_urlunify.core._filters as filters
from scrapy_urlunify.core._ada import ada_join, ada_normalize
from scrapy_urlunify.core._guards import SETTLED, Step, compile_layer
from scrapy_urlunify.core._hosts import HostRules, HostTable
from scrapy_urlunify.core._policy import Policy
from scrapy_urlunify.core._recent import forget
from scrapy_urlunify.core._rules import IDENTITY_STEPS, REWRITE_STEPS
from scrapy_urlunify.core._url import InvalidURL, Parts, canonical_splitter

#: The result cache (see Unifier.result) is two generations of dicts: new results and hits go
#: to the young one; when it holds ``limit`` entries it becomes the old one and the previous
#: old one is dropped, so the URLs a crawl keeps seeing (navigation links) stay while the rest
#: go. ``limit`` follows the crawl: ``_CACHE_MIN`` entries for a small crawl (about 1.6 MiB a
#: generation), then one entry for every ``_CACHE_PER_ENTRY`` entries it has held, up to
#: ``_CACHE_MAX``, reached after ~500,000 entries (a distinct URL makes one, 1.5 with its URL to
#: fetch when it had a fragment). At about 400 bytes an entry (the URL, its Result and
#: identifier), the two generations hold ~26 MiB at most, whatever the crawl's length: a crawl
#: past a million URLs pays only its seen set per URL (benchmarks/bench_seen_memory.py --whole),
#: and a smaller one at most ~55 bytes per distinct URL, well under the ~90 bytes a URL costs in
#: Scrapy's own seen set (benchmarks/bench_process_memory.py).
_CACHE_MIN = 4096
_CACHE_PER_ENTRY = 15
_CACHE_MAX = 1 << 15
#: rewrite passes before the URL to fetch must have settled (two always do so far)
MAX_PASSES = 4

# The splitter of the URLs written as the WHATWG parser writes them (see Unifier._compute): "%"
# is left out (an escaped dot may make a dot segment the parser resolves). What it accepts is a
# plain URL (see core/_guards.py): no user info, no "%", none of the characters to escape.
_CANONICAL_SPLIT = canonical_splitter(
    {part: frozenset("%") for part in ("path", "query", "fragment")}
)


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


class Unifier:
    """A compiled policy: the steps, the per-host table and a bounded cache of results.

    ``skip`` names steps (and host sub-rules) to leave out, which is how
    :func:`~scrapy_urlunify.core._explain.same` finds the rules that decide. Not thread-safe, like the rest of a Scrapy crawl (the caches are plain
    dicts).
    """

    def __init__(self, policy: Policy, skip: Iterable[str] = ()) -> None:
        self.policy = policy
        skip = frozenset(skip)
        rewrite = compile_layer((s for s in REWRITE_STEPS if s.name not in skip), policy)
        identity = compile_layer((s for s in IDENTITY_STEPS if s.name not in skip), policy)
        #: the steps of each layer that the policy lets apply, in order (``explain`` runs them)
        self.rewrite_steps: tuple[Step, ...] = rewrite.steps
        self.identity_steps: tuple[Step, ...] = identity.steps
        self._rewrite = rewrite.run
        self._identify = identity.run
        self._rewrite_plain = rewrite.run_plain
        self._identify_plain = identity.run_plain
        self.index_pages = frozenset(policy.index_pages)
        self.hosts = HostTable(policy, skip)
        # the table's dict itself, read first on the hot path
        self._hosts = self.hosts.rules
        self._extensions = filters.compile_extensions(policy.deny_extensions)
        #: what every identifier starts with: the scope and "|", or nothing
        self.prefix_text = f"{policy.scope}|" if policy.scope else ""
        # the result cache's young and old generations, and the young one's size limit
        self._cache: dict[str, Result] = {}
        self._old: dict[str, Result] = {}
        self._cache_limit = _CACHE_MIN
        # entries the young generations held before they were dropped: the crawl's distinct
        # URLs, about (a result is kept under its URL, its URL to fetch, and again when found old)
        self._held = 0

    def host_rules(self, host: str) -> HostRules:
        """The :class:`~scrapy_urlunify.core._hosts.HostRules` of ``host`` (a WHATWG-serialized host name)."""
        return self._hosts.get(host) or self.hosts.get(host)

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
        # An http(s) URL written as the WHATWG parser writes it is not parsed again: the
        # splitter's groups are its parts, when its host is one the parser gives back unchanged
        # and its path has no dot segment.
        m = _CANONICAL_SPLIT(url)
        r = None
        if m is not None:
            scheme, host, path, query, fragment = m.groups()
            hr = self._hosts.get(host) or self.hosts.get(host)
            if hr.canonical and "/." not in path:
                p = Parts(scheme, "", host, "", path, query, fragment)
                r = self._run_steps(url, p, hr, plain=True)
        if r is None:
            try:
                resolved = ada_normalize(url)
            except ValueError:
                r = Result(None, None, filters.INVALID)
            else:
                r = self._run(resolved)
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
            return Result(resolved, self.prefix_text + resolved, reason)
        p = Parts.split(resolved)
        return self._run_steps(resolved, p, self._hosts.get(p.host) or self.hosts.get(p.host))

    def filter_reason(self, url: str, base: str | None = None) -> str | None:
        """Why ``url`` must not be followed (see :mod:`scrapy_urlunify.core._filters`), or ``None``."""
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
        reason = self.path_reason(fetch, fetch[start:end])
        if base is None and self._cache.get(url) is r:
            # the middleware asks for every link, and links repeat: check each URL once
            self._cache[url] = _new_result(Result, (r.fetch_url, r.identifier, reason or ""))
        return reason

    def path_reason(self, fetch: str, path: str) -> str | None:
        """The filter reason of the URL to fetch ``fetch`` found on it and its ``path`` (too long,
        a denied extension, a trap), or ``None``."""
        if len(fetch) > self.policy.max_url_length:
            return filters.TOO_LONG
        return filters.extension_reason(path, self._extensions) or filters.trap_reason(
            path, self.policy.trap_repetitions
        )

    def _run_steps(self, resolved: str, p: Parts, hr: HostRules, plain: bool = False) -> Result:
        """Both layers on the parts ``p`` of the http(s) URL ``resolved`` (whose host has the
        rules ``hr``; ``plain``: the URL is plain, see core/_guards.py), each step where its
        guard holds. (The path-based filter reasons are left to :meth:`filter_reason`.)"""
        fetch = resolved
        host = p.host
        changed = (self._rewrite_plain if plain else self._rewrite)(p, hr, self)
        if changed is SETTLED:
            fetch = p.url()
        elif changed:
            # parsed again: what the parser writes is not known to be plain
            fetch, p = self._settle(p, resolved)
            plain = False
            if p.host != host:
                hr = self.host_rules(p.host)
        (self._identify_plain if plain else self._identify)(p, hr, self)
        # identity_text, inline
        return _new_result(
            Result, (fetch, self.prefix_text + (p.url() if p.scheme else p.tail()), None)
        )

    def _settle(self, p: Parts, resolved: str) -> tuple[str, Parts]:
        """The URL to fetch once a rewrite step changed ``p``, and its parts: resolved and rewritten
        again until nothing changes (removing ``;jsessionid=...`` from ``/a/..;jsessionid=1/b``
        leaves a ``..`` segment), so that :meth:`standardize` gives it back unchanged. That is
        what lets :meth:`result` cache a result under its URL to fetch too. Should the passes not
        settle (no rule is known to do that), the resolved URL is fetched as it is."""
        for _ in range(MAX_PASSES):
            fetch = p.url()
            try:
                again = ada_normalize(fetch)
            except ValueError:  # pragma: no cover - the rules only remove parts of a valid URL
                break
            q = Parts.split(again)
            if (
                not self._rewrite(q, self._hosts.get(q.host) or self.hosts.get(q.host), self)
                and again == fetch
            ):
                return fetch, q
            p = q
        return resolved, p

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

    def cache_clear(self) -> None:
        """Forget cached results and host rules, and what the steps made of long texts (the
        benchmarks time a cold unifier)."""
        forget()
        self._cache = {}
        self._old = {}
        self._cache_limit = _CACHE_MIN
        self._held = 0
        self._hosts.clear()


def identity_text(p: Parts) -> str:
    """The text of an identifier from the parts the identity layer left (scope aside)."""
    return p.url() if p.scheme else p.tail()


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
    (the *rewrite* layer of :mod:`scrapy_urlunify.core._rules`). Raises :class:`InvalidURL`.

    >>> standardize("HTTP://Example.COM:80/a//b/./c;jsessionid=0123456789abcdef0123?utm_source=x#top")
    'http://example.com/a/b/c'
    """
    return _unifier(policy).standardize(url, base)


def identify(url: str, policy: Policy | None = None, base: str | None = None) -> str:
    """The *unicity identifier*: a readable string two URLs share exactly when ``policy`` deems
    them one page (both layers of :mod:`scrapy_urlunify.core._rules`, with the scope in front).
    Raises :class:`InvalidURL`.

    >>> identify("https://www.example.com/docs/index.html?b=2&a=1#x")
    'example.com/docs?a=1&b=2'
    >>> identify("http://example.com/docs/?a=1&b=2", Policy(scope="job1"))
    'job1|example.com/docs?a=1&b=2'
    """
    # _unifier() inline
    return (
        (policy or DEFAULT_POLICY).__dict__.get(_COMPILED) or unifier_for(policy or DEFAULT_POLICY)
    ).identify(url, base)


def filter_reason(url: str, policy: Policy | None = None, base: str | None = None) -> str | None:
    """Why the link must not be followed (FO-flt), as a stable code (:mod:`scrapy_urlunify.core._filters`),
    or ``None`` to follow it. Never raises for a string: an unparsable link gives ``"invalid"``.

    >>> filter_reason("mailto:someone@example.com"), filter_reason("http://example.com/a.PDF")
    ('scheme:mailto', 'extension:pdf')
    """
    return _unifier(policy).filter_reason(url, base)
