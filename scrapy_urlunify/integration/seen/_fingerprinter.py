"""``Fingerprinter``: request fingerprints built on the unicity identifier
(``REQUEST_FINGERPRINTER_CLASS = "scrapy_urlunify.Fingerprinter"``; the add-on sets it unless the
project set its own): the 16-byte BLAKE2b digest of the method, the identifier and the body. It
is also the base of scrapy-zyte-api's and scrapy-poet's fingerprinters (docs/stores.md, "In a
crawl: the fingerprinter and the dupefilters").
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.crawl._meta import VERBATIM_META, meta_of
from scrapy_urlunify.integration.seen._identifiers import Identifiers, fingerprint_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    # typing.Self requires Python 3.11
    from typing_extensions import Self


class Fingerprinter:
    """Scrapy request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``) on unified URLs; outside
    a crawl (no ``identifiers``), under the default policy."""

    urlunify_role = "fingerprinter"

    def __init__(self, identifiers: Identifiers | None = None) -> None:
        self.identifiers = identifiers if identifiers is not None else Identifiers()
        self._cache: WeakKeyDictionary[Request, bytes] = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(UnifyCrawl.of(crawler).identifiers)

    def identifier(self, request: Request) -> str:
        """The unicity identifier of ``request.url`` in the crawl's scope (its URL as written
        when ``meta["verbatim_url"]`` is set)."""
        if type(self).identifier_of is not Fingerprinter.identifier_of:
            meta = meta_of(request)
            if not (meta and meta.get(VERBATIM_META)):
                return self.identifier_of(request.url)
        return self.identifiers.of_request(request)

    def identifier_of(self, url: str) -> str:
        return self.identifiers.of_url(url)

    def fingerprint(self, request: Request) -> bytes:
        fp = self._cache.get(request)
        if fp is None:
            fp = self._cache[request] = fingerprint_of(
                request.method, self.identifier(request), request.body
            )
        return fp

    #: the fingerprint of a request given its identifier (also used by the pipelines)
    compute = staticmethod(fingerprint_of)

    def unified_identifiers(self) -> Identifiers | None:
        """The identifiers this fingerprinter's fingerprints come from alone (a seen store's
        keys are then computed from them, without a fingerprint object per request); None for a
        subclass that fingerprints more."""
        cls = type(self)
        if (
            cls.fingerprint is Fingerprinter.fingerprint
            and cls.identifier is Fingerprinter.identifier
            and cls.identifier_of is Fingerprinter.identifier_of
        ):
            return self.identifiers
        return None
