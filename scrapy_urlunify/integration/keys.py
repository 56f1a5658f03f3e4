"""Keys: the 64-bit integers a seen store keeps, derived from the crawl's request fingerprints.

A seen store keeps 8 bytes per request, not a fingerprint object. With
:class:`~scrapy_urlunify.Fingerprinter` (and no subclass of it that fingerprints more than the
identifier) the key is computed from the request's identifier directly, without a fingerprint
object per request; another fingerprinter a project chose (scrapy-zyte-api's, scrapy-poet's, its
own) is called for each request, and its fingerprint, hashed, is the key.
"""

from __future__ import annotations

import struct
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy.utils.request import RequestFingerprinter

from ..core.url import InvalidURL
from .fingerprinter import Fingerprinter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scrapy.crawler import Crawler
    from scrapy.utils.request import RequestFingerprinterProtocol

    from .context import UnifyContext

__all__ = [
    "RequestKeys",
    "crawl_fingerprinters",
    "foreign_key",
    "keys_from_identifiers",
    "seen_key",
]

_FIRST_8 = struct.Struct(">Q").unpack_from


def seen_key(fingerprint: bytes) -> int:
    """The 64-bit key a seen store keeps for a fingerprint (its first 8 bytes, big-endian).

    At 10 million URLs the chance that two distinct pages share a key is about 3e-6."""
    return _FIRST_8(fingerprint)[0]


def foreign_key(fingerprint: bytes) -> int:
    """The seen-store key of another fingerprinter's fingerprint: hashed first, since its
    bytes may have any length or structure (a URL as bytes would collide on its first 8)."""
    return _FIRST_8(blake2b(fingerprint, digest_size=8).digest())[0]


def keys_from_identifiers(fingerprinter: Any) -> bool:
    """Whether ``fingerprinter`` is our Fingerprinter with its own ``fingerprint()`` and
    ``identifier()``: its keys may then be computed from identifiers directly."""
    cls = type(fingerprinter)
    return (
        isinstance(fingerprinter, Fingerprinter)
        and cls.fingerprint is Fingerprinter.fingerprint
        and cls.identifier is Fingerprinter.identifier
    )


def crawl_fingerprinters(
    crawler: Crawler, context: UnifyContext
) -> tuple[Fingerprinter, RequestFingerprinterProtocol]:
    """The crawl's :class:`Fingerprinter` (identifiers) and the fingerprinter that keys its
    requests: the crawler's (``REQUEST_FINGERPRINTER_CLASS``), except Scrapy's default left
    unchosen, replaced by ours (``DUPEFILTER_CLASS`` alone then unifies).

    Before the crawl starts (Scrapy's own scheduler tests build a scheduler, and so a
    dupefilter, from a crawler that has not), the crawler has none yet: the one the crawl will
    build, from the same setting."""
    try:
        request_fingerprinter = crawler.request_fingerprinter
    except RuntimeError:  # Crawler.request_fingerprinter is not set yet
        request_fingerprinter = build_from_crawler(
            load_object(crawler.settings["REQUEST_FINGERPRINTER_CLASS"]), crawler
        )
    fingerprinter = (
        request_fingerprinter
        if isinstance(request_fingerprinter, Fingerprinter)
        else Fingerprinter(crawler, context)
    )
    if (
        type(request_fingerprinter) is RequestFingerprinter
        and (crawler.settings.getpriority("REQUEST_FINGERPRINTER_CLASS") or 0)
        <= SETTINGS_PRIORITIES["default"]
    ):
        return fingerprinter, fingerprinter
    return fingerprinter, request_fingerprinter


class RequestKeys:
    """The seen-store key of a request under the crawl's fingerprinter."""

    def __init__(
        self,
        fingerprinter: Fingerprinter,
        request_fingerprinter: RequestFingerprinterProtocol | None = None,
    ) -> None:
        #: identifiers (redirect chains, declared canonicals)
        self.fingerprinter = fingerprinter
        #: keys requests: the crawler's fingerprinter (``fingerprinter`` unless another was chosen)
        self.request_fingerprinter = (
            request_fingerprinter if request_fingerprinter is not None else fingerprinter
        )
        #: keys are computed from identifiers (see :func:`keys_from_identifiers`)
        self.direct = self.request_fingerprinter is fingerprinter and keys_from_identifiers(
            fingerprinter
        )
        #: ``of(request)``: the key of ``request``
        self.of = self._direct if self.direct else self._foreign

    def _direct(self, request: Request) -> int:
        # without the fingerprinter's per-request cache: a dupefilter sees each Request object
        # once, and the cache's weak references cost a fifth of the whole call
        fp = self.fingerprinter
        return seen_key(fp.compute(request.method, fp.identifier(request), request.body))

    def _foreign(self, request: Request) -> int:
        return foreign_key(self.request_fingerprinter.fingerprint(request))  # type: ignore[arg-type]

    def of_url(self, url: str) -> int:
        """The key of a GET of ``url``; ``ValueError`` when it is not a URL a Request accepts."""
        if self.direct:
            return seen_key(
                self.fingerprinter.compute("GET", self.fingerprinter.identifier_of(url))
            )
        return self.of(Request(url))

    def of_identifier(self, identifier: str) -> int | None:
        """The key of a GET of ``identifier``; None when keys do not come from identifiers."""
        return seen_key(self.fingerprinter.compute("GET", identifier)) if self.direct else None

    def of_chain(
        self, request: Request, of: Callable[[Request], int] | None = None
    ) -> Iterator[int]:
        """The key of each URL of ``request``'s redirect chain, as ``request`` (method, body);
        ``of`` keys a request when keys do not come from identifiers (default: :attr:`of`)."""
        context = self.fingerprinter.context
        unifier = context.unifier if context is not None else None
        direct = of is None and self.direct
        of = of if of is not None else self.of
        for url in request.meta.get("redirect_urls", ()):
            try:
                if direct:
                    yield seen_key(
                        self.fingerprinter.compute(
                            request.method, unifier.identify(url) if unifier else url, request.body
                        )
                    )
                else:
                    yield of(request.replace(url=url))
            except (InvalidURL, ValueError):
                continue
