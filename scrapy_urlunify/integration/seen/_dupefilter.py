"""``DupeFilter``: Scrapy's "seen?" check on unified identities, lean and persistent
(``DUPEFILTER_CLASS = "scrapy_urlunify.DupeFilter"``; the add-on sets it).

What it does beyond Scrapy's ``RFPDupeFilter`` (identities through the crawl's fingerprinter, 8
bytes a URL, JOBDIR, redirects, start URLs, Scrapy's log lines): docs/stores.md, "In a crawl: the
fingerprinter and the dupefilters". It is a thin adapter over the crawl's
:class:`~scrapy_urlunify.integration.seen._seen.SeenCheck`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from warnings import warn

from scrapy.dupefilters import BaseDupeFilter
from scrapy.exceptions import ScrapyDeprecationWarning
from scrapy.utils.deprecate import method_is_overridden

from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.seen._keys import foreign_key

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

    # typing.Self requires Python 3.11
    from typing_extensions import Self

    from scrapy_urlunify.integration.seen._resume import ResumeLog
    from scrapy_urlunify.integration.seen._seen import SeenCheck
    from scrapy_urlunify.stores._base import SeenStore


class DupeFilter(BaseDupeFilter):
    """Duplicate request filter (``DUPEFILTER_CLASS``) on unified URL identities."""

    urlunify_role = "dupefilter"

    def __init__(self, check: SeenCheck) -> None:
        #: the "seen?" check this filter answers the scheduler with
        self.check = check
        self.logger = check.logger
        if method_is_overridden(type(self), DupeFilter, "request_fingerprint"):
            # Scrapy's words (a drop-in for RFPDupeFilter), and which class overrides it
            warn(
                "Overriding RFPDupeFilter.request_fingerprint() is deprecated, "
                "set the REQUEST_FINGERPRINTER_CLASS setting instead "
                f"({type(self).__name__} overrides scrapy_urlunify's DupeFilter's).",
                ScrapyDeprecationWarning,
                stacklevel=2,
            )
            check.seen.use_fingerprints(self._legacy_key)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(UnifyCrawl.of(crawler).seen_check())

    @property
    def store(self) -> SeenStore:
        """The seen store (memory, a JOBDIR log, a Redis set)."""
        return self.check.store

    @property
    def resume_log(self) -> ResumeLog | None:
        return self.check.seen.resume_log

    @property
    def debug(self) -> bool:
        return self.check.debug

    @property
    def logdupes(self) -> bool:
        return self.check.logdupes

    def _legacy_key(self, request: Request) -> int:
        return foreign_key(bytes.fromhex(self.request_fingerprint(request)))

    def request_key(self, request: Request) -> int:
        """The seen-store key of ``request``."""
        return self.check.seen.key_of(request)

    def request_fingerprint(self, request: Request) -> str:
        """The key ``request`` is filtered on, as 16 hex digits (``RFPDupeFilter``'s API; its
        fingerprints are 40: the seen store keeps 64 bits, docs/compatibility.md)."""
        return f"{self.check.seen.keys.of(request):016x}"

    @property
    def fingerprints(self) -> frozenset[str]:
        """Deprecated (as in Scrapy): every seen key, as :meth:`request_fingerprint` gives them."""
        warn(
            "RFPDupeFilter.fingerprints is deprecated. "
            "(DupeFilter.fingerprints: the keys of its seen store.)",
            ScrapyDeprecationWarning,
            stacklevel=2,
        )
        return frozenset(f"{k:016x}" for k in self.store)  # type: ignore[attr-defined]

    def request_seen(self, request: Request) -> bool:
        return self.check.request_seen(request)

    def close(self, reason: str) -> None:
        self.check.close(reason)

    def log(self, request: Request, spider: Spider) -> None:
        self.check.log(request, spider)
