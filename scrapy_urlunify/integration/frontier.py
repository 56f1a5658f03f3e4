"""``Frontier``: requests of URL patterns that bring nothing new are scheduled after the others
(the seeds' frontier optimisation; ``URLUNIFY_FRONTIER``, on with the add-on).

Each request the link middleware lets through, and each page the signature middleware judges,
belongs to a **URL pattern** (:mod:`scrapy_urlunify.learning.url_patterns`: host, path shape,
parameter names, the values of the parameters that take few values). Per URL pattern the
frontier counts, over its recent responses (a window of :data:`WINDOW`, halved when full so a
pattern recovers):

* responses: the 2xx responses of its requests the signature middleware judged;
* new pages: those neither a duplicate page (exact) nor a near-duplicate one, nor the page of
  their identifier fetched again;
* linking responses: those that yielded at least one new link (a link the link middleware let
  through to the scheduler) of an unpenalised pattern: a wiki links a new log-in URL from every
  page, which says nothing of the page.

A response brought something new if it was a new page or yielded new links; the pattern's yield
is the larger of its new pages and linking responses, per response. Once a pattern has
:data:`FLOOR` responses, a yield below a quarter puts it at level 1, a yield of nothing at level
2; each request of it scheduled from then on gets ``level * URLUNIFY_FRONTIER_PENALTY``
subtracted from its priority (stat ``urlunify/frontier/deprioritised``). Nothing is dropped: a
penalised request waits until the requests above it are done. The penalty (10,000 by default)
is larger than any depth, so with ``DEPTH_PRIORITY = 1`` (breadth-first: priority ``-depth``)
too the penalised requests go after every other; in Scrapy's default order (priority 0,
last in first out) they go after every unpenalised one. Two levels only: Scrapy's priority
queue keeps one queue per priority value (a directory on disk under ``JOBDIR``).

A pattern penalised for the first time is logged at INFO with its yield (stat
``urlunify/frontier/penalised``). Start requests are never penalised, nor requests already
queued when their pattern is. Nothing is persisted: a resumed ``JOBDIR`` crawl starts with no
patterns known (its queued requests keep their priorities).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING

from ..learning.url_patterns import URLPatterns, coarser
from .context import UnifyContext
from .meta import meta_of

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    # typing.Self requires Python 3.11
    from typing_extensions import Self

    from .stats import UnifyStats

__all__ = ["FLOOR", "WINDOW", "Frontier", "scheduled_url"]

logger = logging.getLogger(__name__)

#: responses of a pattern before it is judged
FLOOR = 5
#: responses a pattern's counts span: when full, every count is halved (recent ones weigh more)
WINDOW = 32
#: URL patterns whose counts are kept (the least recently used go first)
MAX_PATTERNS = 20_000


def scheduled_url(request: Request) -> str:
    """The URL ``request`` was scheduled with: before its redirects, if any."""
    meta = meta_of(request)
    redirects = meta.get("redirect_urls") if meta else None
    return str(redirects[0]) if redirects else request.url


class _Yield:
    """One URL pattern's recent responses, and its penalty level."""

    __slots__ = ("announced", "level", "linked", "new", "pattern", "responses")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.responses = 0
        self.new = 0
        self.linked = 0
        self.level = 0
        #: penalised once already (logged and counted once)
        self.announced = False

    def judge(self) -> int:
        """The pattern's level from its counts: 2 when fewer than a quarter of its responses
        were new pages, else 1 when fewer than a quarter yielded new links, else 0."""
        if self.responses < FLOOR:
            return 0
        if 4 * self.new < self.responses:
            return 2  # mostly duplicate pages, exact or near
        return 1 if 4 * self.linked < self.responses else 0  # new pages that lead nowhere new


class Frontier:
    """A crawl's URL patterns and their yields; the priority penalty of each scheduled request."""

    def __init__(self, stats: UnifyStats, penalty: int, patterns: URLPatterns | None = None) -> None:
        self.stats = stats
        self.penalty = penalty
        self.patterns = patterns if patterns is not None else URLPatterns()
        self._yields: OrderedDict[str, _Yield] = OrderedDict()
        #: (response, the counts of its pattern and coarser pattern, whether it yielded a new
        #: link yet): the page whose links are being scheduled (its links come in a row)
        self._page: tuple[object, tuple[_Yield, _Yield | None] | None, bool] = (None, None, False)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        context = UnifyContext.of(crawler)
        return cls(context.stats, context.settings["URLUNIFY_FRONTIER_PENALTY"])

    def _yield(self, pattern: str) -> _Yield:
        yields = self._yields
        entry = yields.get(pattern)
        if entry is None:
            entry = yields[pattern] = _Yield(pattern)
            if len(yields) > MAX_PATTERNS:
                yields.popitem(last=False)
        else:
            yields.move_to_end(pattern)
        return entry

    def _entries(self, url: str) -> tuple[_Yield, _Yield | None]:
        """The counts of the URL pattern of ``url``, and of its coarser pattern (if any)."""
        pattern = self.patterns.pattern(url)
        coarse = coarser(pattern)
        return self._yield(pattern), self._yield(coarse) if coarse is not None else None

    def schedule(self, request: Request, response: Response | None) -> None:
        """``request``, a link of ``response`` (None: a start request), goes to the scheduler:
        the link counts for ``response``'s patterns unless its own is penalised, and the
        request's priority drops by its own pattern's penalty (its coarser pattern's while it
        has fewer than :data:`FLOOR` responses)."""
        entry, coarse = self._entries(request.url)
        level = entry.level if entry.responses >= FLOOR or coarse is None else coarse.level
        if response is None:
            return
        page = self._page
        if page[0] is not response:
            page = self._page = (response, self._entries(scheduled_url(response.request) if response.request
                                                         is not None else response.url), False)
        if not page[2] and not level and page[1] is not None:
            for origin in page[1]:
                if origin is not None:
                    origin.linked = min(origin.linked + 1, origin.responses)
                    self._judge(origin)
            self._page = (response, page[1], True)
        if level:
            request.priority -= level * self.penalty
            self.stats.inc("frontier/deprioritised")

    def fetched(self, request: Request, new: bool) -> None:
        """A 2xx response of ``request`` was judged: a new page, or not (a duplicate or
        near-duplicate page, or its own page again)."""
        for entry in self._entries(scheduled_url(request)):
            if entry is None:
                continue
            if entry.responses >= WINDOW:
                entry.responses //= 2
                entry.new //= 2
                entry.linked //= 2
            entry.responses += 1
            entry.new += new
            self._judge(entry)

    def _judge(self, entry: _Yield) -> None:
        level = entry.judge()
        if level == entry.level:
            return
        entry.level = level
        pattern = entry.pattern
        if level and not entry.announced:
            entry.announced = True
            self.stats.inc("frontier/penalised")
            logger.info("URL pattern %s brings little new (%d new pages and %d responses with new links "
                        "in its last %d responses): its requests go after the others from now on "
                        "(priority -%d)", pattern, entry.new, entry.linked, entry.responses,
                        level * self.penalty)
        else:
            logger.debug("URL pattern %s: level %d (%d new pages, %d linking, %d responses)", pattern,
                         level, entry.new, entry.linked, entry.responses)
