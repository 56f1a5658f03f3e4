"""Item pipelines: ``SignaturePipeline`` drops the items of duplicate (and near-duplicate) pages,
and ``UnicityPipeline`` is the crawler manual's URL unicity filter for items (docs/rules.md, "In a
crawl: page signatures and duplicate items").
"""

from __future__ import annotations

import logging
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_urlunify.core._url import InvalidURL, host_of
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.pages._near_duplicates import distance_for
from scrapy_urlunify.integration.seen._identifiers import fingerprint_of
from scrapy_urlunify.learning._page_signature import text_signature
from scrapy_urlunify.stores._base import SignatureStore
from scrapy_urlunify.stores._memory import MemorySignatureStore

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from twisted.internet.defer import Deferred

    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs
    from scrapy_urlunify.integration.pages._citation_hold import CitationHold
    from scrapy_urlunify.integration.pages._items import ItemOrigin, ItemOrigins
    from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages


logger = logging.getLogger(__name__)

#: the log level of the drops the pipelines are there for: a duplicate is an expected outcome,
#: counted by kind in the stats and the closing summary, not a warning to act on
EXPECTED = "DEBUG"


class SignaturePipeline:
    """Drop items of pages (or with texts) already seen on another page, and the items of a
    page that declares ``noindex`` which name that page."""

    urlunify_role = "signature_pipeline"

    def __init__(
        self,
        settings: dict[str, Any],
        stats: UnifyStats,
        origins: ItemOrigins,
        near: NearDuplicatePages | None = None,
        policies: CrawlPolicies | None = None,
    ) -> None:
        self.stats = stats
        self.origins = origins
        self.policies = policies
        self.field: str | None = settings["URLUNIFY_SIGNATURE_FIELD"]
        #: the field naming an item's page (the unicity filter's input)
        self.url_field: str = settings["URLUNIFY_UNICITY_INPUT_FIELD"]
        #: hosts whose first item dropped for noindex was logged
        self._noindex_hosts: set[str] = set()
        self._texts: SignatureStore = MemorySignatureStore()
        #: the near-duplicate pages of the crawl, when their items are dropped
        self.near = near if settings["URLUNIFY_DROP_NEAR_DUPLICATE_ITEMS"] else None
        self.near_distance = distance_for(settings["URLUNIFY_NEAR_DUPLICATE_ITEM_RESEMBLANCE"])

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SignaturePipeline:
        crawl = UnifyCrawl.of(crawler)
        if not crawl.enabled:
            raise NotConfigured
        return cls(crawl.settings, crawl.stats, crawl.item_origins, crawl.near, crawl.policies)

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not ItemAdapter.is_item(item):
            return item
        origin = self.origins.get(id(item))
        adapter = ItemAdapter(item)
        if origin is not None and origin.noindex and self._names(adapter, origin):
            self.stats.inc("signature/dropped_noindex_items")
            host = host_of(origin.url)
            if host not in self._noindex_hosts:  # the first of a host: a choice made for the user
                self._noindex_hosts.add(host)
                logger.info(
                    "Items naming a page that declares noindex are dropped (first: %s); "
                    "URLUNIFY_DROP_NOINDEX_ITEMS = False keeps them",
                    origin.url,
                )
            raise DropItem(
                f"its page {origin.url} declares noindex (URLUNIFY_DROP_NOINDEX_ITEMS)",
                log_level=EXPECTED,
            )
        value = adapter.get(self.field) if self.field else None
        if isinstance(value, str) and value.strip():
            page = origin.identifier if origin else _item_page(adapter)
            earlier = self._texts.get_or_set(text_signature(value), page)
            if earlier is not None and earlier != page:
                self.stats.inc("signature/dropped_items")
                raise DropItem(
                    f"its {self.field!r} text was already seen on {earlier}", log_level=EXPECTED
                )
            return item
        if origin is not None and origin.duplicate_of is not None:
            self.stats.inc("signature/dropped_items")
            raise DropItem(
                f"its page has the body text of {origin.duplicate_of}", log_level=EXPECTED
            )
        near = self.near
        if origin is not None and near is not None:
            found = near.marked.get(origin.url)
            # a near-duplicate that links to other pages is another list of rows (at 0 bits:
            # equal texts, equal up to numbers or a pager, which are trusted)
            if found is not None and found.distance <= self.near_distance and not found.other_links:
                self.stats.inc("signature/dropped_near_duplicate_items")
                raise DropItem(
                    f"its page is a near-duplicate ({found.resemblance:.1%} alike) of "
                    f"{found.of or 'a page fetched long before'}",
                    log_level=EXPECTED,
                )
        return item

    def _names(self, adapter: ItemAdapter, origin: ItemOrigin) -> bool:
        """Whether the item names the page it came from (its URL field is that page's URL, in
        any spelling of the crawl's rules): an item of a listing that names another page, or
        names none, is not the page's."""
        url = adapter.get(self.url_field)
        if not isinstance(url, str) or not url:
            return False
        if url == origin.url:
            return True
        if self.policies is None:
            return False
        try:
            return self.policies.unifier.identify(url) == origin.identifier
        except InvalidURL:
            return False


class UnicityPipeline:
    """The seed's URL standardization and unicity filters, for items."""

    urlunify_role = "unicity_pipeline"

    def __init__(
        self,
        settings: dict[str, Any],
        stats: UnifyStats,
        policies: CrawlPolicies,
        origins: ItemOrigins,
        store: SignatureStore,
        canonical_urls: CanonicalURLs | None = None,
        hold: CitationHold | None = None,
    ) -> None:
        s = settings
        self.stats = stats
        self.policies = policies
        self.origins = origins
        self.store = store
        self.canonical_urls = canonical_urls
        #: the items of pages whose declared canonical is on probation wait for its check
        self.hold = hold
        self.canonical_field: str | None = s["URLUNIFY_CANONICAL_URL_FIELD"]
        self.input: str = s["URLUNIFY_UNICITY_INPUT_FIELD"]
        self.standardized: str = s["URLUNIFY_STANDARDIZE_OUTPUT_FIELD"]
        self.output: str | None = s["URLUNIFY_UNICITY_OUTPUT_FIELD"]
        self.discard_missing: bool = s["URLUNIFY_UNICITY_DISCARD_MISSING"]
        self._warned: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> UnicityPipeline:
        crawl = UnifyCrawl.of(crawler)
        if not crawl.enabled:
            raise NotConfigured
        # item identifier fingerprint -> the page it first came from
        store = crawl.stores.items()
        return cls(
            crawl.settings,
            crawl.stats,
            crawl.policies,
            crawl.item_origins,
            store,
            crawl.canonical_urls,
            crawl.pages.hold if crawl.pages is not None else None,
        )

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not ItemAdapter.is_item(item):
            return item
        adapter = ItemAdapter(item)
        url = adapter.get(self.input)
        origin = self.origins.pop(id(item), None)
        waiting = None
        if self.canonical_field:
            waiting = self._set_canonical(adapter, None if url is None else str(url), origin)
        if url is None:
            if self.discard_missing:
                self.stats.inc("unicity/missing")
                raise DropItem(
                    f"no {self.input!r} field (URLUNIFY_UNICITY_DISCARD_MISSING is on)",
                    log_level=EXPECTED,
                )
            return self._cited(item, waiting)
        unifier = self.policies.unifier
        try:
            fetch = unifier.standardize(str(url))
            identifier = unifier.identify(str(url))
        except InvalidURL as e:
            self.stats.inc("unicity/invalid")
            self._warn(
                "invalid",
                f"Item field {self.input!r} holds no valid URL ({e}); the item passes unchanged",
            )
            return self._cited(item, waiting)
        self._set(adapter, self.standardized, fetch)
        if self.output:
            self._set(adapter, self.output, identifier)
        # an item whose page is unknown (not yielded through LinkMiddleware) is its own
        # "page": any repeat of its identifier is dropped, as the seed's unicity filter does
        page = origin.identifier if origin is not None else f"item {id(item)}"
        earlier = self.store.get_or_set(fingerprint_of("GET", identifier), page)
        if earlier is not None and earlier != page:
            self.stats.inc("unicity/duplicates")
            raise DropItem(
                f"an item with identifier {identifier} was already seen (from {earlier})",
                log_level=EXPECTED,
            )
        return self._cited(item, waiting)

    def _set_canonical(
        self, adapter: ItemAdapter, url: str | None, origin: ItemOrigin | None
    ) -> Deferred[str] | None:
        """The canonical URL of the item's page: its page's, when the item names that page or
        no page at all (a Deferred of it while the page's declared canonical is on probation);
        else the canonical URL of the page it names."""
        assert self.canonical_field is not None
        canonical = None
        if origin is not None and (url is None or url == origin.url):
            if self.hold is not None:
                waiting = self.hold.wait(origin.url)
                if waiting is not None:
                    return waiting
            canonical = origin.canonical_url
        elif url is not None and self.canonical_urls is not None:
            canonical = self.canonical_urls.of(url)
        if canonical is not None:
            self._set_field(adapter, canonical)
        return None

    def _set_field(self, adapter: ItemAdapter, canonical: str) -> None:
        assert self.canonical_field is not None
        with suppress(KeyError):  # a typed item without the field did not ask for it
            adapter[self.canonical_field] = canonical

    def _cited(self, item: Any, waiting: Deferred[str] | None) -> Any:
        """``item``, or an awaitable of it cited once its page's claim is settled."""
        if waiting is None:
            return item
        return self._cited_when_settled(item, waiting)

    async def _cited_when_settled(self, item: Any, waiting: Deferred[str]) -> Any:
        self._set_field(ItemAdapter(item), await maybe_deferred_to_future(waiting))
        return item

    def _set(self, adapter: ItemAdapter, field: str, value: str) -> None:
        try:
            adapter[field] = value
        except KeyError:  # an Item class without that field: say so once, do not fail the item
            self._warn(
                field,
                f"Cannot set field {field!r} on {adapter.item.__class__.__name__} items; "
                "declare it or change the URLUNIFY_*_OUTPUT_FIELD setting",
            )

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(message)

    def close_spider(self, spider: Spider | None = None) -> None:
        self.store.close()


def _item_page(adapter: ItemAdapter) -> str:
    url = adapter.get("url")
    return str(url) if url else "an item without a page"
