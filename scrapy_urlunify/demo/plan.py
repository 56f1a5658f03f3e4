"""How many pages of each kind a demo site of a given size gets."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scrapy_urlunify.demo.search import SEARCH_SORTS, SEARCH_TERMS


@dataclass(frozen=True)
class Plan:
    """How many pages of each kind a site of a given size gets."""

    docs: int
    chapters: int
    articles: int
    per_listing: int
    prints: int
    area_pages: tuple[int, int, int]
    news: int
    products: int
    mirrors: int
    pdfs: int
    terms: int
    search_pages: int

    @property
    def listings(self) -> int:
        return math.ceil(self.articles / self.per_listing)

    @classmethod
    def for_size(cls, size: int, traps: bool = True) -> Plan:
        """Split roughly ``size`` distinct pages over the sections (minimums keep
        every variant present even for tiny sites)."""
        terms, search_pages = (
            ((2, 2) if size < 150 else (len(SEARCH_TERMS), 2)) if traps else (0, 0)
        )
        # the fixed pages: home, contact, indexes, areas' entries ... the search and the index
        rest = max(size - 16 - (1 if traps else 0) - terms * search_pages * len(SEARCH_SORTS), 24)

        def share(frac: float, minimum: int) -> int:
            return max(minimum, round(rest * frac))

        articles = share(0.21, 5)
        chapters = share(0.05, 2) if traps else share(0.08, 2)  # with traps, each also in German
        return cls(
            docs=share(0.15 if traps else 0.17, 4),
            chapters=chapters,
            articles=articles,
            per_listing=4,
            prints=max(1, articles // 3),
            area_pages=(share(0.06, 2), share(0.05, 2), share(0.03, 1)),
            news=share(0.11, 3),
            products=share(0.08, 3),
            mirrors=share(0.05, 2),
            pdfs=max(1, round(rest * 0.04)),
            terms=terms,
            search_pages=search_pages,
        )
