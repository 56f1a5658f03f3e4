"""What a host of a link is to the crawl: inside ``allowed_domains``, an alias of a host inside
(a domain alias, a sister suffix, ``www``: let past Scrapy's offsite filter), or offsite
(docs/rules.md, "In a crawl: the link middleware")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_urlunify.core._domains import within

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.links._downstream import Downstream

#: hosts whose verdict is remembered (a broad crawl meets millions): the oldest go first, and
#: are judged again when met again
MAX_HOSTS = 100_000

#: the verdicts of :meth:`CrawlHosts.verdict`
ALIAS = object()
OFFSITE = object()
INSIDE = object()


def allowed_domains(spider: Any) -> tuple[str, ...]:
    """The spider's ``allowed_domains``, lower-cased, as Scrapy's offsite filter reads them
    (empty: every host is let through)."""
    allowed = getattr(spider, "allowed_domains", None) or ()
    if isinstance(allowed, str):
        allowed = (allowed,)
    return tuple(d.lower().lstrip(".") for d in allowed if isinstance(d, str) and d)


def requested(host: str, identity_host: str, allowed: tuple[str, ...]) -> bool:
    """Whether a crawl whose spider allows ``allowed`` requests pages of ``host``: any host when
    it names none; else one within them, or an alias of one (``identity_host`` within them:
    let past Scrapy's offsite filter, :data:`ALIAS`)."""
    return not allowed or any(within(host, d) or within(identity_host, d) for d in allowed)


class CrawlHosts:
    """The hosts of the crawl's spider (``allowed_domains``), and a verdict per host met."""

    def __init__(self, crawler: Crawler, policies: CrawlPolicies) -> None:
        self.crawler = crawler
        self.policies = policies
        self.allowed = allowed_domains(getattr(crawler, "spider", None))
        #: host of a URL to fetch -> its verdict, computed once (the last :data:`MAX_HOSTS`)
        self.known: dict[str, Any] = {}

    def verdict(self, host: str, scheduled: Request, after: Downstream) -> Any:
        """What ``host`` (of a URL to fetch, ``scheduled`` is a request to it) is to the crawl:
        :data:`ALIAS` if it is outside ``allowed_domains`` while the host it is unified with is
        inside; :data:`OFFSITE` if it is outside and Scrapy's offsite filter would drop it
        (unless a request says otherwise); else :data:`INSIDE`."""
        verdict = INSIDE
        if not host.startswith("["):
            identity_host = self.policies.unifier.host_rules(host).identity_host
            if not any(within(host, d) for d in self.allowed) and any(
                within(identity_host, d) for d in self.allowed
            ):
                verdict = ALIAS
        if (
            verdict is INSIDE
            and after.offsite is not None
            and not after.offsite.should_follow(scheduled, self.crawler.spider)
        ):
            verdict = OFFSITE
        known = self.known
        if len(known) >= MAX_HOSTS:
            del known[next(iter(known))]
        known[host] = verdict
        return verdict
