"""The page each item came from: recorded by the link middleware as the spider yields it, read by
the item pipelines (Scrapy gives a pipeline the item, not the response; docs/rules.md)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple

from scrapy_urlunify.integration.crawl._meta import (
    CANONICAL_URL_META,
    DUPLICATE_OF_META,
    NOINDEX_META,
)

if TYPE_CHECKING:
    from scrapy.http import Response


class ItemOrigin(NamedTuple):
    """The page an item came from: its identifier, the page it duplicates (or None), and the
    URL it was fetched at (near-duplicates are marked by it: a rule learned from the very page
    changes its identifier between its signature and its items), its canonical URL, and
    whether it declares ``noindex`` (when its items naming it are to be dropped)."""

    identifier: str
    duplicate_of: str | None
    url: str = ""
    canonical_url: str | None = None
    noindex: bool = False

    @classmethod
    def of(cls, identifier: str, response: Response) -> ItemOrigin:
        """The origin of the items of ``response``, whose page is ``identifier``."""
        meta = response.meta
        return cls(
            identifier,
            meta.get(DUPLICATE_OF_META),
            response.url,
            meta.get(CANONICAL_URL_META),
            bool(meta.get(NOINDEX_META)),
        )


class ItemOrigins(OrderedDict):  # type: ignore[type-arg]
    """``id(item) -> ItemOrigin``, bounded: an item dropped before the pipelines (by another
    component) must not leak its entry forever, so the oldest entries go first."""

    LIMIT = 100_000

    def add(self, item: Any, origin: ItemOrigin) -> None:
        self[id(item)] = origin
        if len(self) > self.LIMIT:
            self.popitem(last=False)
