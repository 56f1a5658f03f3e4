"""``Fingerprinter``: request fingerprints built on the unicity identifier.

Set ``REQUEST_FINGERPRINTER_CLASS = "scrapy_urlunify.Fingerprinter"`` (the add-on does,
unless the project set its own) and every fingerprint user of Scrapy -- the dupefilter, the
HTTP cache, scrapy-deltafetch, scrapy-crawl-once -- agrees that two URLs of one page are one
request. It is also a base fingerprinter for the fingerprinters of other plugins: the add-on
makes it scrapy-zyte-api's ``ZYTE_API_FALLBACK_REQUEST_FINGERPRINTER_CLASS`` and scrapy-poet's
``SCRAPY_POET_REQUEST_FINGERPRINTER_BASE_CLASS``, so they keep their own distinctions and gain
the URL unification.

The fingerprint is the 16-byte BLAKE2b digest of the method, the request's identifier and its
body (for every method: a GET search with a JSON body is another request, as in Scrapy). The
identifier is ``identify(url)`` in the crawl's scope (so two scopes never share fingerprints);
a request with ``meta["verbatim_url"]`` (Scrapy 2.17+: the URL is sent as written) is
identified by its URL as written, in the scope. A URL the WHATWG parser rejects falls back to
its own text, so it still gets a stable fingerprint.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from ..core.url import InvalidURL
from .context import UnifyContext
from .meta import VERBATIM_META, meta_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    # typing.Self requires Python 3.11
    from typing_extensions import Self

__all__ = ["FINGERPRINT_SIZE", "Fingerprinter"]

FINGERPRINT_SIZE = 16


class Fingerprinter:
    """Scrapy request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``) on unified URLs."""

    def __init__(self, crawler: Crawler | None = None, context: UnifyContext | None = None) -> None:
        if context is None and crawler is not None:
            context = UnifyContext.of(crawler)
        self.context = context
        if context is None:  # used outside a crawl: the default policy
            from ..core.unify import DEFAULT_POLICY, unifier_for

            self._unifier = unifier_for(DEFAULT_POLICY)
        scope = context.scope if context is not None else None
        self._verbatim_prefix = f"{scope}|" if scope else ""
        self._cache: WeakKeyDictionary[Request, bytes] = WeakKeyDictionary()
        # identifier() calls identifier_of() only where a subclass changed it: the dupefilter
        # asks for every scheduled request, and the call is a tenth of a new URL's cost
        self._own_identifier_of = type(self).identifier_of is Fingerprinter.identifier_of

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def identifier(self, request: Request) -> str:
        """The unicity identifier of ``request.url`` in the crawl's scope (its URL as written
        when ``meta["verbatim_url"]`` is set)."""
        meta = meta_of(request)
        if meta and meta.get(VERBATIM_META):
            return self._verbatim_prefix + request.url
        if not self._own_identifier_of:
            return self.identifier_of(request.url)
        url = request.url
        try:  # identifier_of, inline
            return (self.context.unifier if self.context is not None else self._unifier).identify(
                url
            )
        except InvalidURL:
            return url

    def identifier_of(self, url: str) -> str:
        unifier = self.context.unifier if self.context is not None else self._unifier
        try:
            return unifier.identify(url)
        except InvalidURL:
            return url

    def fingerprint(self, request: Request) -> bytes:
        fp = self._cache.get(request)
        if fp is None:
            fp = self._cache[request] = self.compute(
                request.method, self.identifier(request), request.body
            )
        return fp

    @staticmethod
    def compute(method: str, identifier: str, body: bytes = b"") -> bytes:
        """The fingerprint of a request given its identifier (also used by the pipelines)."""
        if method != "GET":  # Scrapy's requests are upper-case already; be lenient anyway
            method = method.upper()
        data = (method + " " + identifier).encode("utf-8", "surrogatepass")
        if body:  # GET and HEAD too, as Scrapy and scrapy-redis do
            data = b"%s\n%s" % (data, body)
        return blake2b(data, digest_size=FINGERPRINT_SIZE).digest()
