"""The URL a careful user would cite for a page, whichever spelling it was fetched under: its
declared canonical once verified, else the spelling the crawl's own rules make (docs/rules.md,
"Canonical URLs")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_urlunify.core._domains import is_ip, is_public_suffix
from scrapy_urlunify.core._hosts import HostTable
from scrapy_urlunify.core._spellings import is_variant_host_label, looks_like_variant
from scrapy_urlunify.core._unify import Unifier
from scrapy_urlunify.core._url import InvalidURL, host_of
from scrapy_urlunify.integration.rules._fetched import Recent

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy_urlunify.core._policy import Policy
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies

#: host sub-rules that make a host another site's: a host's own name is its identity host
#: without them (``www.termomont.rs`` is ``termomont.rs``, whatever group it was merged into)
ALIASING = frozenset({"domain_alias", "sister_suffix"})

#: identity steps a citation leaves out: they make a key nobody would type (no scheme, sorted
#: or dropped empty parameters, ``+`` for spaces, no directory slash). The index page is
#: removed below, keeping its directory's slash.
NOT_CITED = frozenset(
    {
        "ignore_scheme",
        "drop_trailing_slash",
        "drop_index_page",
        "escape_unsafe_chars",
        "drop_empty_params",
        "plus_for_space",
        "sort_params",
    }
)


class CanonicalURLs:
    """Each page's canonical URL: a verified declared canonical, else the identity layer's steps
    but :data:`NOT_CITED` (the rules in force: configured and learned parameters removed, the
    alias group's host, no index page) under the scheme and host spelling of the site's start
    URL (or of its first page fetched)."""

    def __init__(
        self,
        policies: CrawlPolicies,
        start_urls: Iterable[str] = (),
        allowed_domains: Iterable[str] = (),
    ) -> None:
        self.policies = policies
        self._citing: tuple[Policy, Unifier] | None = None
        #: the hosts' own names (aliases not applied); the policy's alias group heads -> the
        #: group's one host the user named, when its head is not named (made again when a
        #: learned rule changes the policy)
        self._own_names = HostTable(policies.policy, ALIASING)
        self._named_members: tuple[Policy, dict[str, str]] | None = None
        #: own names of the hosts the user named -> their rank: the start URLs' first, then
        #: ``allowed_domains``, each in its order
        self._named: dict[str, tuple[int, int]] = {}
        for i, domain in enumerate(allowed_domains):
            if isinstance(domain, str) and domain:
                own = self._own_names.get(domain.lower()).identity_host
                self._named.setdefault(own, (1, i))
        #: a host's own name -> (scheme, host) as the site spells them
        self._homes: dict[str, tuple[str, str]] = {}
        #: identity hosts of the start URLs (else of the first page fetched): the crawl's own
        self._starts: set[str] = set()
        #: the start hosts and their parent domains -> the start host: a host under one is
        #: beside that start host
        self._families: dict[str, str] = {}
        #: identifier of a page -> its verified declared canonical (the pages fetched last)
        self._declared: Recent[str] = Recent()
        for url in start_urls:
            self.home(url, start=True)

    def home(self, url: str, start: bool = False) -> None:
        """``url``'s host is spelled as ``url`` spells it, unless it was spelled before."""
        host = host_of(url)  # once: this runs for every page fetched
        identity_host = self._identity_host(host)
        if identity_host is None:
            return
        own = self._own_names.get(host).identity_host
        if start and self._named.get(own, (1,))[0]:
            self._named[own] = (0, len(self._named))
        if (start or not self._starts) and identity_host not in self._starts:
            self._starts.add(identity_host)
            self._families.setdefault(identity_host, identity_host)
            parent = identity_host.partition(".")[2]
            if "." in parent and not is_ip(identity_host) and not is_public_suffix(parent):
                self._families.setdefault(parent, identity_host)
        # keyed by the host's own name: a mirror's page spells the mirror, never its site
        if own not in self._homes:
            scheme = url.partition(":")[0].lower()
            if scheme in ("http", "https"):
                self._homes[own] = (scheme, host)

    def _named_member(self, host: str) -> str | None:
        """For the head of a learned alias group (the first of its hosts met:
        ``termomont.co.rs``), the group's host the user named first, when it is another
        (``termomont.rs``, before ``termomont.co.rs`` in ``allowed_domains``; a start URL's
        host before any): the host a careful user cites. A configured group's head is the
        user's own choice; a group whose hosts are unnamed, or named alike (a parent domain of
        two), keeps its head."""
        policy = self.policies.policy
        if self._named_members is None or self._named_members[0] is not policy:
            configured = {group[0] for group in self.policies.base_policy.domain_aliases}
            members: dict[str, str] = {}
            for group in policy.domain_aliases:
                if group[0] in configured:
                    continue
                ranked = sorted((rank, host) for host in group if (rank := self._rank(host)))
                if (
                    ranked
                    and ranked[0][1] != group[0]
                    and (len(ranked) == 1 or ranked[1][0] != ranked[0][0])
                ):
                    members[group[0]] = ranked[0][1]
            self._named_members = (policy, members)
        return self._named_members[1].get(host)

    def _rank(self, host: str) -> tuple[int, int] | None:
        """The rank of the named host that is ``host`` (an own name) or a parent domain of it;
        None for a host the user did not name."""
        named = self._named
        found = named.get(host)
        if found is not None:
            return found
        ranks = [rank for domain, rank in named.items() if host.endswith(f".{domain}")]
        return min(ranks, default=None)

    def _identity_host(self, host: str) -> str | None:
        """``host`` (of a URL) after the policy's host rules (``www.``, aliases), or None."""
        if not host:
            return None
        try:
            return self.policies.unifier.host_rules(host).identity_host
        except InvalidURL:
            return None

    def looks_like_variant(self, url: str) -> bool:
        """Whether ``url`` looks like a spelling a careful user would not cite, before its page
        is fetched: a referral or view parameter or path segment, or a copy of a start host
        (``mirror.site.test`` beside ``www.site.test``) that no rule made one with it
        (``core._spellings``). The frontier fetches such links after the others."""
        _, _, rest = url.partition("://")
        rest = rest.partition("#")[0]
        _, _, tail = rest.partition("/")
        path, _, query = tail.partition("?")
        return looks_like_variant(path, query) or self.home_slot(url) is not None

    def home_slot(self, url: str) -> str | None:
        """For a copy of a start host (``mirror.site.test``), the start host as the site spells
        it (``www.site.test``): its download slot, whose queue orders both hosts' requests
        (Scrapy's default queue orders requests by priority within a slot only); else None."""
        identity_host = self._identity_host(host_of(url))
        if identity_host is None or identity_host in self._starts or is_ip(identity_host):
            return None
        label, _, parent = identity_host.partition(".")
        start = self._families.get(parent)
        if start is None or not is_variant_host_label(label):
            return None
        return self._homes.get(start, ("", start))[1]

    def declared(self, identifier: str, canonical: str) -> None:
        """The page of ``identifier`` declares ``canonical``, verified the same page."""
        self._declared.remember(identifier, canonical)

    def spelled(self, identifier: str, canonical: str, url: str) -> None:
        """The page of ``identifier``, fetched as ``url``, declares ``canonical``, which the
        rules in force make that page: the site's spelling is cited (``/index.php?id=7``,
        where the crawl's rules would cite ``/?id=7``; a form's target as the site writes it),
        cleaned of what the crawl's rules remove (a site that echoes its URL, session id and
        all, as its canonical)."""
        cited = self._cite(canonical, keep_index=True)
        if cited is not None and cited != self._cite(url):
            self._declared.remember(identifier, cited)

    def made_one(self, url: str, canonical: str) -> str | None:
        """``canonical``, declared by the page of ``url``, as :meth:`spelled` cites it, when the
        rules in force now make it that page (a rule learned after the claim was made: the claim
        then needs no proof); else None."""
        unifier = self.policies.unifier
        try:
            identifier = unifier.identify(url)
            if unifier.identify(canonical) != identifier:
                return None
        except InvalidURL:
            return None
        self.spelled(identifier, canonical, url)
        return self.of(url)

    def of(self, url: str) -> str | None:
        """The canonical URL of the page ``url`` names; None when ``url`` is not one."""
        try:
            declared = self._declared.get(self.policies.unifier.identify(url))
        except InvalidURL:
            return None
        return declared if declared is not None else self._cite(url)

    def _cite(self, url: str, keep_index: bool = False) -> str | None:
        """``url`` as the identity steps in force but :data:`NOT_CITED` write it, under its
        site's spelling, without its index page (``keep_index``: with it)."""
        try:
            citing = self._citing_unifier()
            cited = citing.identify(url)[len(citing.prefix_text) :]
        except InvalidURL:
            return None
        scheme, _, rest = cited.partition("://")
        host, slash, path = rest.partition("/")
        path, query_sep, query = path.partition("?")
        directory, _, last = path.rpartition("/")
        if not keep_index and last.lower() in citing.index_pages and "." in last:
            path = f"{directory}/" if directory else ""
        host = self._named_member(host) or host
        home = self._homes.get(host, (scheme, host))
        return f"{home[0]}://{home[1]}{slash}{path}{query_sep}{query}"

    def _citing_unifier(self) -> Unifier:
        """A unifier of the policy in force without :data:`NOT_CITED` (made again when a
        learned rule changes the policy)."""
        policy = self.policies.policy
        if self._citing is None or self._citing[0] is not policy:
            self._citing = (policy, Unifier(policy, NOT_CITED))
        return self._citing[1]
