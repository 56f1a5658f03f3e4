"""``Frontier``: requests of URL patterns whose pages are new content are scheduled before the
others, and those whose pages bring nothing new after them (``URLUNIFY_FRONTIER``, on with the
add-on: the seeds' frontier optimisation), and, with learning on, a request that would test a
candidate rule with nothing to add is held back once, and waits for the requests testing it
when it comes back too soon. Nothing is dropped. What a URL pattern yields, its levels and the
penalty: docs/frontier.md.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Protocol

from scrapy_urlunify.integration.crawl._meta import ASKED_META, LEVEL_META, meta_of
from scrapy_urlunify.integration.queue._novelty import SeenText
from scrapy_urlunify.learning._url_patterns import URLPatterns, any_query, coarser

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request
    from scrapy.http import Response
    from twisted.internet.defer import Deferred

    # typing.Self requires Python 3.11
    from scrapy_urlunify.integration.crawl._stats import UnifyStats
    from scrapy_urlunify.learning._open_questions import Questions
    from scrapy_urlunify.learning._url_forms import Parts


logger = logging.getLogger(__name__)

#: responses of a pattern before it is judged
FLOOR = 5
#: responses a pattern's counts span: when full, every count is halved (recent ones weigh more)
WINDOW = 32
#: URL patterns whose counts are kept (the least recently used go first)
MAX_PATTERNS = 20_000
#: values of a parameter with one text on one page: that page's piece of evidence
EVIDENCE_VALUES = 2
#: seconds after which a request testing a candidate counts as landed, whatever became of it (a
#: downloader middleware that gives a request back to the scheduler sends no signal)
TESTING_SECONDS = 60.0
#: seconds a request testing a candidate still counts as in flight after it left the downloader,
#: unless its response is judged first: the learner observes a page in the downloader
#: middlewares' ``process_response``, after ``request_left_downloader`` (released there, the
#: next page of a candidate went before the page completing its evidence was observed); a
#: response that a middleware turns into a request (a redirect) or an error lands this way
LANDING_SECONDS = 2.0
#: seconds a request held once already waits, at most, for the requests testing its candidates
#: to land when it comes back while they are in flight (the queue ran dry at its priority)
WAIT_SECONDS = 10.0
#: what the candidate of a URL group's first request is named (:meth:`Frontier.first_of`)
GROUP = "group "
#: what the question of a request whose page may be in flight under another spelling is named
#: (``LearningSession.questions``)
PAGE = "page "
#: the level of a penalised pattern's link from one of its own pages: a step of its own walk
CHAIN = 3
#: the level of a pattern of new content: its requests go ahead of the others, one penalty up
CONTENT = -1


def scheduled_url(request: Request) -> str:
    """The URL ``request`` was scheduled with: before its redirects, if any."""
    meta = meta_of(request)
    redirects = meta.get("redirect_urls") if meta else None
    return str(redirects[0]) if redirects else request.url


def spelling_of(identifier: str, of: str) -> bool:
    """Whether the page ``identifier``, a duplicate or near-duplicate of the page ``of``, is
    another spelling of it (``shop.test/product/5?view=print`` of ``shop.test/product/5``, a
    route form of another path): ``of`` is of another path, or its path without a query. Not
    the page itself, nor a repeat among a path's queries (two months of an empty calendar)."""
    if of == identifier:
        return False
    path, sep, _ = of.partition("?")
    return not sep or path != identifier.partition("?")[0]


class Spellings(Protocol):
    """What the frontier asks of a link before its page is fetched (``CanonicalURLs``)."""

    def looks_like_variant(self, url: str) -> bool: ...

    def home_slot(self, url: str) -> str | None: ...


class _Yield:
    """One URL pattern's recent responses, and its penalty level."""

    __slots__ = ("announced", "led", "level", "new", "pattern", "responses", "spellings")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.responses = 0
        #: its responses that were new pages (new content: not a page fetched before)
        self.new = 0
        #: new pages its responses' links led to (a listing is worth its articles)
        self.led = 0
        #: its responses that were another spelling of a page (:func:`spelling_of`)
        self.spellings = 0
        self.level = 0
        #: penalised once already (logged and counted once)
        self.announced = False

    def judge(self) -> int:
        """The pattern's level from its counts: :data:`CONTENT` when three quarters of its
        responses or more were new pages (articles, posts, issues: what a crawl is for); 2
        when fewer than a quarter were and their links led to fewer new pages than that; else
        0. A pattern whose pages are new content, or lead to it, is never pushed back."""
        if self.responses < FLOOR:
            return 0
        if 4 * self.new >= 3 * self.responses:
            return CONTENT
        return 2 if 4 * self.new < self.responses and 4 * self.led < self.responses else 0


class Frontier:
    """A crawl's URL patterns and their yields; the priority penalty of each scheduled request."""

    def __init__(
        self,
        stats: UnifyStats,
        penalty: int,
        patterns: URLPatterns | None = None,
        spellings: Spellings | None = None,
    ) -> None:
        self.stats = stats
        self.penalty = penalty
        self.spellings = spellings
        self.patterns = patterns if patterns is not None else URLPatterns()
        self._yields: OrderedDict[str, _Yield] = OrderedDict()
        #: open question -> {id(request): when it left the scheduler}: the requests asking it
        self._testing: dict[str, dict[int, float]] = {}
        #: id(request) -> the questions it asks
        self._tests: dict[int, list[str]] = {}
        #: id(request) -> the URL of a request asking whether its page is in flight (PAGE)
        self._pages: dict[int, str] = {}
        #: the learned rules in force when the last request left the queue
        self._token = ""
        #: id(request) -> when it left the downloader, its response not judged yet
        self._downloaded: dict[int, float] = {}
        #: what requests waiting for a landing wait on, and the pages (PAGE names) they wait for
        self._waiting: list[tuple[Deferred[None], frozenset[str]]] = []
        #: the URL groups whose first request has landed (:meth:`first_of`)
        self._answered: OrderedDict[str, None] = OrderedDict()
        #: the text blocks the crawl's pages have shown
        self.seen_text = SeenText()
        #: the last response whose links were scheduled, and its URL pattern and coarser one
        self._linking: tuple[Response | None, str, str | None] = (None, "", None)

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

    def _entries(
        self, url: str, pattern: str | None = None
    ) -> tuple[_Yield, _Yield | None, _Yield | None]:
        """The counts of the URL pattern of ``url`` (``pattern``, when known), of its coarser
        pattern and of its path's every query (:func:`any_query`), if any."""
        if pattern is None:
            pattern = self.patterns.pattern(url)
        coarse, family = coarser(pattern), any_query(pattern)
        return (
            self._yield(pattern),
            self._yield(coarse) if coarse is not None else None,
            self._yield(family) if family is not None else None,
        )

    def schedule(
        self,
        request: Request,
        response: Response | None,
        nofollow: bool = False,
        from_duplicate: bool = False,
    ) -> None:
        """``request`` goes to the scheduler: its priority drops by its pattern's level
        (:meth:`level`; a pattern of new content's, :data:`CONTENT`, raises it); a link that
        looks like another spelling of a page goes one level down, so that the page's plain
        spelling, if linked too, is fetched first and cited, as does a link its page marks
        ``nofollow``, and a link of a duplicate page followed for its rows
        (``from_duplicate``: its text was no news; docs/frontier.md). A penalised
        pattern's link from a page of its own goes one level further (:data:`CHAIN`): a
        calendar's next month, after every other penalised request."""
        pattern = self.patterns.pattern(request.url)
        level = self.level(request.url, pattern)
        if level == 2 and response is not None and self._chained(pattern, response):
            level = CHAIN
            self.stats.inc("frontier/chain_links")
        spellings = self.spellings
        # a spelling, a nofollow link or a duplicate's link of a pattern of content is no news
        if level <= 0 and spellings is not None and spellings.looks_like_variant(request.url):
            level = 1
            self.stats.inc("frontier/variant_spellings")
            slot = spellings.home_slot(request.url)
            if slot is not None and "download_slot" not in request.meta:
                request.meta["download_slot"] = slot
        elif level <= 0 and nofollow:
            level = 1
            self.stats.inc("frontier/nofollow_links")
        elif level <= 0 and from_duplicate:
            level = 1
            self.stats.inc("frontier/duplicate_links")
        if level:
            request.priority -= level * self.penalty
            request.meta[LEVEL_META] = level
            self.stats.inc("frontier/deprioritised" if level > 0 else "frontier/content_first")

    def _chained(self, pattern: str, response: Response) -> bool:
        """Whether ``pattern``, a link's, is the URL pattern (or the coarser pattern) of the page
        ``response`` that links it: the next step of a walk through one template (a calendar's
        next month at every zoom, Redmine's Gantt charts), which in Scrapy's default order
        (last in, first out) would always be the newest penalised request and keep the others
        waiting while its walk goes on."""
        linking = self._linking
        if linking[0] is not response:
            own = self.patterns.pattern(scheduled_url(response.request)) if response.request else ""
            linking = self._linking = (response, own, coarser(own) if own else None)
        return pattern == linking[1] or (linking[2] is not None and coarser(pattern) == linking[2])

    def level(self, url: str, pattern: str | None = None) -> int:
        """The level of the URL pattern of ``url`` now: its own once it has :data:`FLOOR`
        responses; before, its coarser pattern's if that has them, else its path's every
        query's if that has them (a chart's eleventh set of options is judged by the ten
        before it), unless one of the responses of its parameter names was a new page, or a
        quarter of the path's queries were other spellings of a page (:func:`spelling_of`:
        the learner's evidence, which the hold paces)."""
        entry, coarse, family = self._entries(url, pattern)
        if entry.responses >= FLOOR:
            return entry.level
        if coarse is not None and coarse.responses >= FLOOR:
            return coarse.level
        if (
            family is not None
            and family.responses >= FLOOR
            and 4 * family.spellings < family.responses
            and not (coarse or entry).new
        ):
            return family.level
        return 0

    def penalised_since(self, request: Request) -> int:
        """The level of the URL pattern of ``request``, leaving the scheduler, when it was
        penalised since ``request`` was scheduled at a lower level (a breadth-first crawl
        schedules a level's links before their pattern is judged); else 0."""
        level = self.level(scheduled_url(request))
        return level if level >= 2 and level > request.meta.get(LEVEL_META, 0) else 0

    def admit(self, request: Request, questions: Questions) -> bool:
        """``request`` leaves the scheduler and would ask ``questions`` of open candidate rules
        on its page (``(question, candidate, values observed)``: see
        ``Learner.open_questions``): whether it may go now. Not when two values of a question's
        parameter are on its page already, observed or in flight (a third adds no evidence), nor
        when it would start a page of a candidate another request is starting a page of."""
        if not questions:
            return True
        testing, now = self._testing, time.monotonic()
        asked: list[str] = []
        for question, candidate, observed in questions:
            on_page = self._flying(question, now)
            if observed + on_page >= EVIDENCE_VALUES:
                return False
            if not observed and not on_page:  # a new page for this candidate
                if self._flying(candidate, now):
                    return False
                asked.append(candidate)
            asked.append(question)
        rid = id(request)
        self.landed(rid)
        self._tests[rid] = asked
        request.meta[ASKED_META] = rid
        for name in asked:
            testing.setdefault(name, {})[rid] = now
            if name.startswith(PAGE):
                self._pages[rid] = request.url
        return True

    def rules_in_force(self, token: str, identify: Callable[[str], str | None]) -> None:
        """The learned rules in force (``token``) as a request leaves the queue. When they
        changed, the pages in flight are named by their identifiers under the new ones
        (``identify``; None: leave it), or a link met after the change, another spelling of a
        page already under way, would not find it."""
        if token == self._token:
            return
        self._token = token
        testing, tests = self._testing, self._tests
        for rid, url in self._pages.items():
            identifier = identify(url)
            names = tests.get(rid)
            if identifier is None or names is None:
                continue
            new = PAGE + identifier
            for i, name in enumerate(names):
                if name.startswith(PAGE) and name != new:
                    names[i] = new
                    flying = testing.get(name)
                    since = flying.pop(rid, None) if flying is not None else None
                    if flying is not None and not flying:
                        del testing[name]
                    if since is not None:
                        testing.setdefault(new, {})[rid] = since

    def behind_first(self, questions: Questions, other_rules: bool) -> bool:
        """Whether a request refused with ``questions`` is one behind its URL group's first
        request, which waits in its place; not one queued under ``other_rules`` than those in
        force: held, it comes back after the others, when a rule learned meanwhile may drop it
        (one whose page is in flight under another spelling: the same)."""
        asked = [c for _, c, _ in questions if other_rules or not c.startswith(PAGE)]
        return bool(asked) and all(candidate.startswith(GROUP) for candidate in asked)

    def first_of(self, parts: Parts) -> Questions:
        """The question of a request whose identifier has the parts ``parts`` and asks nothing
        else, while no request of its *URL group* (host, number of path segments, first
        segment, parameter names) has landed: the first of a group goes alone, the others
        wait for it (docs/frontier.md, "A URL group's first request"). What comes back may
        start a form rule's evidence (``/shop/<category>/<slug>`` declaring
        ``/product/<slug>``), which then paces the rest; sixteen let go together were sixteen
        pages fetched twice."""
        host, path, query = parts
        segments = path.split("/")
        first = segments[1] if len(segments) > 1 else ""
        names = sorted({item.partition("=")[0] for item in query.split("&")}) if query else []
        group = f"{host} {len(segments)} {first} ?{'&'.join(names)}"
        if group in self._answered:
            self._answered.move_to_end(group)
            return []
        url = host + path + ("?" + query if query else "")
        return [(f"first {url}", GROUP + group, 0)]

    def waited_out(self, questions: Questions) -> None:
        """A request asking ``questions`` waited :data:`WAIT_SECONDS` in vain: a URL group whose
        first request has not landed yet (a slow page) counts as answered, else each request of
        it would wait as long."""
        for _, candidate, _ in questions:
            if candidate.startswith(GROUP):
                self._answer(candidate[len(GROUP) :])

    def _answer(self, group: str) -> None:
        answered = self._answered
        answered[group] = None
        if len(answered) > MAX_PATTERNS:
            answered.popitem(last=False)

    def worth_waiting(self, questions: Questions) -> bool:
        """Whether a request asking ``questions``, refused by :meth:`admit`, may be admitted
        once requests in flight land: not when two values of a question's parameter were
        observed on its page already (only a decided rule changes that)."""
        return all(observed < EVIDENCE_VALUES for _, _, observed in questions)

    def _flying(self, name: str, now: float) -> int:
        """Requests asking ``name`` that have not landed."""
        flying = self._testing.get(name)
        if not flying:
            return 0
        downloaded = self._downloaded
        for rid, since in list(flying.items()):
            if now - since > TESTING_SECONDS or now - downloaded.get(rid, now) > LANDING_SECONDS:
                self.landed(rid)
        return len(flying)

    def left_downloader(self, rid: int) -> None:
        """The request ``id(request) == rid`` left the downloader: it lands once its response is
        judged (:meth:`landed`), or :data:`LANDING_SECONDS` from now."""
        if rid in self._tests:
            self._downloaded[rid] = time.monotonic()

    def landing(self, timeout: float, pages: frozenset[str] = frozenset()) -> Deferred[None]:
        """A Deferred that fires once a request testing a candidate has landed, or one whose page
        is among ``pages`` (PAGE names), or in ``timeout`` seconds, whichever comes first."""
        from twisted.internet import defer, reactor

        waiter: defer.Deferred[None] = defer.Deferred()
        waiter.addTimeout(timeout, reactor, onTimeoutCancel=lambda result, timeout: None)
        self._waiting = [w for w in self._waiting if not w[0].called]
        self._waiting.append((waiter, pages))
        return waiter

    def _wake(self, waking: list[tuple[Deferred[None], frozenset[str]]]) -> None:
        for waiter, _ in waking:
            if not waiter.called:
                waiter.callback(None)

    def _waking(self, names: list[str]) -> list[tuple[Deferred[None], frozenset[str]]]:
        """The requests to wake when a request that asked ``names`` lands (taken off the
        waiting list): all of them if it tested a candidate, else those waiting for its page."""
        waiting = self._waiting
        if any(not name.startswith(PAGE) for name in names):
            self._waiting = []
            return waiting
        self._waiting = [w for w in waiting if w[1].isdisjoint(names)]
        return [w for w in waiting if not w[1].isdisjoint(names)]

    def landed(self, rid: int) -> None:
        """The response of the request ``id(request) == rid`` was judged (or it failed, or never
        reached the downloader, or a redirect or retry of it leaves the queue): it no longer
        tests anything."""
        self._downloaded.pop(rid, None)
        self._pages.pop(rid, None)
        names = self._tests.pop(rid, None)
        if names is None:
            return
        waking = self._waking(names) if self._waiting else []
        if waking:
            from twisted.internet import reactor
            from twisted.internet.task import deferLater

            # from the reactor: a waiter resumed here would admit itself while the caller (an
            # admission's _flying) walks the same tables. Not every landing: waking the waiters
            # on each (every request asks its page) let a URL group's burst go before its
            # candidate paced it (tests/integration/test_url_forms.py)
            deferLater(reactor, 0, self._wake, waking)
        testing = self._testing
        for name in names:
            if name.startswith(GROUP):
                self._answer(name[len(GROUP) :])
            flying = testing.get(name)
            if flying is not None:
                flying.pop(rid, None)
                if not flying:
                    del testing[name]

    def new_text(self, blocks: list[str] | None, passes_through: bool = False) -> bool:
        """Whether a new page of text ``blocks`` (None: not text) is new content: not old text
        only (``SeenText.new_text``), nor a page its site asks robots to pass through
        (``passes_through``: ``noindex`` but not ``nofollow``, an old version of a wiki page),
        whose text is seen all the same."""
        new = True if blocks is None else self.seen_text.new_text(blocks)
        if new is False:
            self.stats.inc("frontier/old_text")
        elif passes_through:
            self.stats.inc("frontier/pass_through")
            return False
        return new is not False

    def fetched(self, request: Request, new: bool, spelling: bool = False) -> None:
        """A 2xx response of ``request`` was judged: a new page, or not (a duplicate or
        near-duplicate page, ``spelling`` when it is another spelling of a page; or its own
        page again; or old text). A new page also counts for the patterns of the page that
        linked to it (its ``Referer``)."""
        for entry in self._entries(scheduled_url(request)):
            if entry is None:
                continue
            if entry.responses >= WINDOW:
                entry.responses //= 2
                entry.new //= 2
                entry.led //= 2
                entry.spellings //= 2
            entry.responses += 1
            entry.new += new
            entry.spellings += spelling
            self._judge(entry)
        referer = request.headers.get(b"Referer") if new else None
        if referer:
            for origin in self._entries(referer.decode("latin-1")):
                if origin is not None:
                    origin.led = min(origin.led + 1, origin.responses)
                    self._judge(origin)

    def _judge(self, entry: _Yield) -> None:
        level = entry.judge()
        if level == entry.level:
            return
        entry.level = level
        pattern = entry.pattern
        if level > 0 and not entry.announced:
            entry.announced = True
            self.stats.inc("frontier/penalised")
            logger.info(
                "URL pattern %s brings little new (%d new pages in its last %d responses, whose "
                "links led to %d new pages): its requests go after the others from now on "
                "(priority -%d)",
                pattern,
                entry.new,
                entry.responses,
                entry.led,
                level * self.penalty,
            )
        else:
            logger.debug(
                "URL pattern %s: level %d (%d new pages, %d led to, %d responses)",
                pattern,
                level,
                entry.new,
                entry.led,
                entry.responses,
            )
