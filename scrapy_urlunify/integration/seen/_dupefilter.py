"""``DupeFilter``: Scrapy's "seen?" check on unified identities, lean and persistent.

Set ``DUPEFILTER_CLASS = "scrapy_urlunify.DupeFilter"`` (the add-on does). What it does
beyond Scrapy's ``RFPDupeFilter``:

* **Identity.** Requests are keyed through the crawler's fingerprinter
  (``REQUEST_FINGERPRINTER_CLASS``), as Scrapy's filter does. With
  :class:`~scrapy_urlunify.Fingerprinter` (the add-on's) ``http://www.a.test/x/`` and
  ``https://a.test/x`` are one request, in the crawl's scope, and the key is computed from the
  identifier directly; another fingerprinter the project chose (scrapy-zyte-api's, scrapy-poet's,
  its own) is called for each request, and its fingerprint decides. Only Scrapy's default
  fingerprinter, left unchosen, is replaced by ours (``DUPEFILTER_CLASS`` alone unifies).
* **Memory.** A seen URL costs its 8-byte key in an ordered hash table (9.5-11.9 bytes with
  the table's slack) instead of a Python set entry of ~90-100 bytes, and nothing else per URL
  (keys: :mod:`._keys`).
* **JOBDIR.** Each new key is appended to ``<JOBDIR>/urlunify-seen.log`` with an unbuffered
  write before the request is scheduled; a crawl killed at any moment resumes with exactly the
  seen set it had (a torn last record is dropped), and schedules again, each downloaded once,
  what it had scheduled but never fetched (:mod:`~scrapy_urlunify.integration.seen._resume`, which
  keeps that bookkeeping and warns that Scrapy's ``requests.seen`` cannot be read). A request
  Scrapy's disk queue lost (a full disk) closes the crawl as a JOBDIR write that fails does
  (:meth:`DupeFilter.audit_queue`).
* **Redirects.** A redirect whose target is the same page as a URL of its own redirect chain
  (``http://site.test/`` -> ``https://www.site.test/``) is let through, where Scrapy's filter
  drops it (scrapy#1225); ``REDIRECT_MAX_TIMES`` still ends a loop. The target counts as seen.
* **Start URLs.** Requests with ``dont_filter=True`` (start URLs) are never filtered, but they
  are recorded, so a later link back to a start page is not fetched again.
* **Logging.** Scrapy's lines, on Scrapy's ``scrapy.dupefilters`` logger. ``DUPEFILTER_DEBUG``
  logs every duplicate, followed by the URL it collided with when that is another URL (``- same
  page as ...``); otherwise the first duplicate only. Stats: ``dupefilter/filtered`` (Scrapy's)
  and ``urlunify/duplicates``.
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
    from scrapy_urlunify.stores import SeenStore


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
