"""A request's identifier: ``identify(url)`` under the crawl's current policy, in its scope, and
the fingerprint computed from it (docs/architecture.md, "Names")."""

from __future__ import annotations

from hashlib import blake2b
from typing import TYPE_CHECKING

from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.integration.crawl._meta import VERBATIM_META, meta_of

if TYPE_CHECKING:
    from scrapy import Request

    from scrapy_urlunify.core._unify import Unifier
    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies

FINGERPRINT_SIZE = 16


class Identifiers:
    """The identifiers of a crawl's requests (outside a crawl: under the default policy)."""

    def __init__(self, policies: CrawlPolicies | None = None) -> None:
        self.policies = policies
        if policies is None:
            from scrapy_urlunify.core._unify import DEFAULT_POLICY, unifier_for

            self._unifier: Unifier = unifier_for(DEFAULT_POLICY)
        scope = policies.scope if policies is not None else None
        self._verbatim_prefix = f"{scope}|" if scope else ""

    @property
    def unifier(self) -> Unifier:
        """The unifier of the policy in force (it changes with every learned rule)."""
        return self.policies.unifier if self.policies is not None else self._unifier

    def of_request(self, request: Request) -> str:
        """The identifier of ``request.url`` in the crawl's scope (its URL as written when
        ``meta["verbatim_url"]`` is set)."""
        meta = meta_of(request)
        if meta and meta.get(VERBATIM_META):
            return self._verbatim_prefix + request.url
        url = request.url
        try:
            return self.unifier.identify(url)
        except InvalidURL:
            return url

    def of_url(self, url: str) -> str:
        """The identifier of ``url``; a URL the WHATWG parser rejects is its own identifier."""
        try:
            return self.unifier.identify(url)
        except InvalidURL:
            return url


def fingerprint_of(method: str, identifier: str, body: bytes = b"") -> bytes:
    """The fingerprint of a request given its identifier: the 16-byte BLAKE2b digest of its
    method, identifier and body (for every method, as Scrapy and scrapy-redis do)."""
    if method != "GET":  # Scrapy's requests are upper-case already; be lenient anyway
        method = method.upper()
    data = (method + " " + identifier).encode("utf-8", "surrogatepass")
    if body:
        data = b"%s\n%s" % (data, body)
    return blake2b(data, digest_size=FINGERPRINT_SIZE).digest()
