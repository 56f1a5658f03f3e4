"""``FrontierGate``: what the frontier makes of a request as it leaves the scheduler (the dequeue
middleware asks it, with learning on; docs/frontier.md):

* sent back behind the others, when its URL pattern was penalised after it was scheduled
  ("Judged late");
* held back once, or made to wait, when it would ask a candidate rule what requests in flight
  are asking ("Evidence a page at a time");
* made to wait, when it asks nothing and five requests of its pattern are in flight while the
  pattern is not judged yet, or brings nothing new ("A pattern's first five");
* else let go. Nothing is dropped here: a request that waited is checked again by the
  middleware (``recheck``), which drops it if a rule learned meanwhile covers it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.utils.defer import maybe_deferred_to_future

from scrapy_urlunify.integration.crawl._meta import HELD_FOR_QUESTIONS_META, HELD_META, LEVEL_META
from scrapy_urlunify.integration.queue._frontier import WAIT_SECONDS

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.integration.queue._frontier import Frontier

logger = logging.getLogger(__name__)

#: the questions a request would ask of open candidate rules: ``(question, candidate, values
#: observed)`` (``Learner.open_questions``)
Questions = list[tuple[str, str, int]]


class FrontierGate:
    """The frontier's say on each request leaving the scheduler (see the module's doc)."""

    def __init__(
        self,
        frontier: Frontier,
        stats: UnifyStats,
        questions: Callable[[Request], Questions],
        recheck: Callable[[Request], None],
    ) -> None:
        self.frontier = frontier
        self.stats = stats
        self.questions = questions
        #: raises the middleware's drop when a rule learned while ``request`` waited covers it
        self.recheck = recheck

    def leave(
        self, request: Request, waited: bool = False
    ) -> Request | Coroutine[Any, Any, Request | None] | None:
        """``request`` leaves the scheduler (``waited``: again, after it was paced): None (it
        goes), a request to schedule again, or a coroutine that waits and then says which."""
        frontier, meta = self.frontier, request.meta
        level = frontier.penalised_since(request) if HELD_META not in meta else 0
        if level:
            # back to the scheduler behind the others, as if scheduled now; the dupefilter
            # lets its own URL through again (HELD_META), as for a held request
            self.stats.inc("frontier/requeued")
            return request.replace(
                priority=request.priority - (level - meta.get(LEVEL_META, 0)) * frontier.penalty,
                meta={**meta, LEVEL_META: level, HELD_META: request.url},
            )
        questions = self.questions(request)
        if not questions:
            # the hold paces the requests that ask questions; these, their URL pattern
            if waited or frontier.may_go(request):
                frontier.going(request)
                return None
            self.stats.inc("frontier/paced")
            return self._paced(request)
        if frontier.admit(request, questions):
            frontier.going(request)
            return None
        if HELD_FOR_QUESTIONS_META in meta:
            if not frontier.worth_waiting(questions):
                frontier.going(request)
                return None
            # held once at most: back while the requests testing its candidates are in flight
            # (nothing else was left at its priority), it waits for them to land, here
            self.stats.inc("frontier/waited")
            return self._wait(request)  # a coroutine: Scrapy awaits it
        self.stats.inc("frontier/held")
        logger.debug(
            "Held back: %s (it would test a candidate rule other requests are testing)", request.url
        )
        # scheduled again, and let through by the dupefilter for its own URL only (a rule
        # learned meanwhile may change its key): a redirect of it, which copies its meta, is
        # checked as any request is
        return request.replace(
            priority=request.priority - frontier.penalty,
            meta={**meta, HELD_META: request.url, HELD_FOR_QUESTIONS_META: True},
        )

    async def _paced(self, request: Request) -> Request | None:
        """Wait until ``request`` may go (its URL pattern's first requests landed), at most
        :data:`WAIT_SECONDS`; then leave as any request does."""
        frontier = self.frontier
        deadline = time.monotonic() + WAIT_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            await maybe_deferred_to_future(frontier.landing(left))
            if frontier.may_go(request):
                break
        self.recheck(request)
        then = self.leave(request, waited=True)
        if then is None or isinstance(then, Request):
            return then
        return await then

    async def _wait(self, request: Request) -> None:
        """Wait until ``request`` may go, at most :data:`WAIT_SECONDS`: each time a request
        testing a candidate lands, its page may have decided a rule that drops ``request``
        (``recheck``), or freed the candidate; once it asks nothing, its pattern paces it."""
        frontier = self.frontier
        deadline = time.monotonic() + WAIT_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            await maybe_deferred_to_future(frontier.landing(left))
            self.recheck(request)
            questions = self.questions(request)
            if not questions:
                if frontier.may_go(request):
                    break
                continue
            if frontier.admit(request, questions) or not frontier.worth_waiting(questions):
                break
        frontier.going(request)
