"""The page each item came from: recorded by the link middleware as the spider yields it, read by
the item pipelines (Scrapy gives a pipeline the item, not the response; docs/rules.md)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple


class ItemOrigin(NamedTuple):
    """The page an item came from: its identifier, the page it duplicates (or None), and the
    URL it was fetched at (near-duplicates are marked by it: a rule learned from the very page
    changes its identifier between its signature and its items), and its canonical URL."""

    identifier: str
    duplicate_of: str | None
    url: str = ""
    canonical_url: str | None = None


class ItemOrigins(OrderedDict):  # type: ignore[type-arg]
    """``id(item) -> ItemOrigin``, bounded: an item dropped before the pipelines (by another
    component) must not leak its entry forever, so the oldest entries go first."""

    LIMIT = 100_000

    def add(self, item: Any, origin: ItemOrigin) -> None:
        self[id(item)] = origin
        if len(self) > self.LIMIT:
            self.popitem(last=False)
