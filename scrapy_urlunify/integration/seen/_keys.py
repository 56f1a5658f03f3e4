"""Keys: the 64-bit integers a seen store keeps, derived from the crawl's request fingerprints
(docs/architecture.md, "Names"): computed from a request's identifier directly with the add-on's
``Fingerprinter``, or another fingerprinter's fingerprint, hashed (docs/stores.md).
"""

from __future__ import annotations

import struct
from hashlib import blake2b
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import RequestFingerprinter

from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.integration.seen._identifiers import fingerprint_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scrapy.crawler import Crawler
    from scrapy.utils.request import RequestFingerprinterProtocol

    from scrapy_urlunify.integration.seen._identifiers import Identifiers

_FIRST_8 = struct.Struct(">Q").unpack_from


def seen_key(fingerprint: bytes) -> int:
    """The 64-bit key a seen store keeps for a fingerprint (its first 8 bytes, big-endian).

    At 10 million URLs the chance that two distinct pages share a key is about 3e-6."""
    return _FIRST_8(fingerprint)[0]


def foreign_key(fingerprint: bytes) -> int:
    """The seen-store key of another fingerprinter's fingerprint: hashed first, since its
    bytes may have any length or structure (a URL as bytes would collide on its first 8)."""
    return _FIRST_8(blake2b(fingerprint, digest_size=8).digest())[0]


def crawl_request_fingerprinter(
    crawler: Crawler, identifiers: Identifiers
) -> RequestFingerprinterProtocol | None:
    """The fingerprinter that keys the crawl's requests, or None when keys come straight from
    the identifiers: the crawler's (``REQUEST_FINGERPRINTER_CLASS``) when it is another than the
    add-on's ``Fingerprinter`` (or a subclass that fingerprints more than the identifier), except
    Scrapy's default left unchosen, which the add-on's replaces (``DUPEFILTER_CLASS`` alone then
    unifies).

    Before the crawl starts (Scrapy's own scheduler tests build a scheduler, and so a
    dupefilter, from a crawler that has not), the crawler has none yet: the one the crawl will
    build, from the same setting."""
    try:
        fingerprinter = crawler.request_fingerprinter
    except RuntimeError:  # Crawler.request_fingerprinter is not set yet
        fingerprinter = build_from_crawler(
            load_object(crawler.settings["REQUEST_FINGERPRINTER_CLASS"]), crawler
        )
    if (
        type(fingerprinter) is RequestFingerprinter
        and (crawler.settings.getpriority("REQUEST_FINGERPRINTER_CLASS") or 0)
        <= SETTINGS_PRIORITIES["default"]
    ):
        return None
    unified = getattr(fingerprinter, "unified_identifiers", None)
    if callable(unified) and unified() is identifiers:
        return None
    return fingerprinter


class RequestKeys:
    """The seen-store key of a request under the crawl's fingerprinter. ``request_fingerprinter``:
    the fingerprinter that keys requests (None: keys come from the identifiers), or a function
    that tells it when first asked."""

    def __init__(
        self,
        identifiers: Identifiers,
        request_fingerprinter: RequestFingerprinterProtocol
        | Callable[[], RequestFingerprinterProtocol | None]
        | None = None,
    ) -> None:
        self.identifiers = identifiers
        self._resolve = request_fingerprinter
        self._request_fingerprinter: RequestFingerprinterProtocol | None = None
        self._direct: bool | None = None
        #: ``of(request)``: the key of ``request``
        self.of: Callable[[Request], int] = self._first

    def _resolved(self) -> bool:
        if self._direct is None:
            resolve = self._resolve
            rf = resolve() if callable(resolve) and not hasattr(resolve, "fingerprint") else resolve
            self._request_fingerprinter = rf  # type: ignore[assignment]
            self._direct = rf is None
            self.of = self._of_identifier if self._direct else self._of_fingerprint
        return self._direct

    @property
    def direct(self) -> bool:
        """Whether keys are computed from identifiers (no other fingerprinter decides)."""
        return self._resolved()

    @property
    def request_fingerprinter(self) -> RequestFingerprinterProtocol | None:
        """The fingerprinter that keys requests, when it is not the identifiers."""
        self._resolved()
        return self._request_fingerprinter

    def _first(self, request: Request) -> int:
        self._resolved()
        return self.of(request)

    def _of_identifier(self, request: Request) -> int:
        return seen_key(
            fingerprint_of(request.method, self.identifiers.of_request(request), request.body)
        )

    def _of_fingerprint(self, request: Request) -> int:
        return foreign_key(
            self._request_fingerprinter.fingerprint(request),  # type: ignore[union-attr]
        )

    def of_url(self, url: str) -> int:
        """The key of a GET of ``url``; ``ValueError`` when it is not a URL a Request accepts."""
        if self.direct:
            return seen_key(fingerprint_of("GET", self.identifiers.of_url(url)))
        return self.of(Request(url))

    def of_identifier(self, identifier: str) -> int | None:
        """The key of a GET of ``identifier``; None when keys do not come from identifiers."""
        return seen_key(fingerprint_of("GET", identifier)) if self.direct else None

    def of_chain(
        self, request: Request, of: Callable[[Request], int] | None = None
    ) -> Iterator[int]:
        """The key of each URL of ``request``'s redirect chain, as ``request`` (method, body);
        ``of`` keys a request when keys do not come from identifiers (default: :attr:`of`)."""
        unifier = self.identifiers.unifier
        direct = of is None and self.direct
        of = of if of is not None else self.of
        for url in request.meta.get("redirect_urls", ()):
            try:
                if direct:
                    yield seen_key(
                        fingerprint_of(request.method, unifier.identify(url), request.body)
                    )
                else:
                    yield of(request.replace(url=url))
            except (InvalidURL, ValueError):
                continue
