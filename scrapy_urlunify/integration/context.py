"""What the plugin's Scrapy components of one crawler share: settings read once, the policy and
its unifier, the components others call on (typed by what they are asked), and the summary
logged when the crawl closes."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from scrapy import signals

from ..core.unify import Unifier, unifier_for
from ..stores.location import MEMORY, mask_url
from . import refusal
from . import settings as urlunify_settings
from .stats import STATS_PREFIX, UnifyStats

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from ..core.policy import Policy
    from ..learning.learner import Learner
    from ..stores import FingerprintSet, SeenStore
    from ..stores.factory import Stores

__all__ = [
    "DupeFilterView",
    "FrontierView",
    "ItemOrigin",
    "ItemOrigins",
    "LearningView",
    "ProbationView",
    "ResumeLogView",
    "UnifyContext",
    "format_summary",
    "spider_name",
]

logger = logging.getLogger("scrapy_urlunify")


def spider_name(crawler: Crawler) -> str | None:
    """The crawl's spider name: the instance's (``process.crawl(Spider, name="x")`` gives a
    name only to the instance), else the class's, else ``None`` (no spider created yet)."""
    name = getattr(getattr(crawler, "spider", None), "name", None)
    return name or getattr(crawler.spidercls, "name", None)


class ResumeLogView(Protocol):
    """What components read of the dupefilter's JOBDIR resume log (:class:`~.resume.ResumeLog`)."""

    @property
    def path(self) -> str: ...
    @property
    def resumed(self) -> bool: ...
    @property
    def crashed(self) -> bool: ...
    @property
    def done_before(self) -> FingerprintSet: ...
    @property
    def pending_fps(self) -> set[int]: ...
    def replay_done(self) -> FingerprintSet: ...


class DupeFilterView(Protocol):
    """What components call on the crawl's dupefilter (:class:`~.dupefilter.DupeFilter`)."""

    @property
    def store(self) -> SeenStore: ...
    @property
    def resume_log(self) -> ResumeLogView | None: ...
    @property
    def early_drop(self) -> bool: ...
    def record_url(self, url: str) -> bool: ...
    def holds_identifier(self, identifier: str) -> bool: ...
    def request_key(self, request: Request) -> int: ...
    def mark_done(self, request: Request) -> None: ...
    def recheck(self, request: Request) -> bool: ...
    def drop_known(
        self,
        request: Request,
        spider: Spider | None = None,
        scheduled: Callable[[], Request] | None = None,
    ) -> bool: ...


class ProbationView(Protocol):
    """What the dupefilter and the dequeue check ask of rule probation
    (:class:`~.probation.Probation`)."""

    @property
    def active(self) -> bool: ...
    def fetch_anyway(self, request: Request, *, queued: bool = False) -> bool: ...


class LearningView(Protocol):
    """What components ask of the learning session (:class:`~.learning_session.LearningSession`)."""

    @property
    def learner(self) -> Learner: ...
    @property
    def policy_token(self) -> str: ...
    def fetched(self, identifier: str, shared: bool = True) -> bool: ...
    def settings_snippet(self) -> str | None: ...


class FrontierView(Protocol):
    """What the link and signature middlewares tell the frontier (:class:`~.frontier.Frontier`)."""

    penalty: int

    def schedule(self, request: Request, response: Response | None) -> None: ...
    def fetched(self, request: Request, new: bool) -> None: ...
    def admit(self, request: Request, questions: list[tuple[str, str, int]]) -> bool: ...
    def left_downloader(self, rid: int) -> None: ...
    def landed(self, rid: int) -> None: ...


class ItemOrigin(NamedTuple):
    """The page an item came from: its identifier, the page it duplicates (or None), and the
    URL it was fetched at (near-duplicates are marked by it: a rule learned from the very page
    changes its identifier between its signature and its items)."""

    identifier: str
    duplicate_of: str | None
    url: str = ""


class ItemOrigins(OrderedDict):  # type: ignore[type-arg]
    """``id(item) -> ItemOrigin``, bounded: an item dropped before the pipelines (by another
    component) must not leak its entry forever, so the oldest entries go first."""

    LIMIT = 100_000

    def add(self, item: Any, origin: ItemOrigin) -> None:
        self[id(item)] = origin
        if len(self) > self.LIMIT:
            self.popitem(last=False)


class UnifyContext:
    """Per-crawler state of scrapy-urlunify, created by the first component that needs it.

    The middleware, the fingerprinter, the dupefilter and the pipelines all call
    :meth:`of`, so settings are read (and validated) once, and every component agrees on one
    policy. ``unifier`` may be replaced during the crawl (learned rules); components read it
    from here on every call instead of keeping their own reference.
    """

    _ATTR = "_urlunify_context"

    def __init__(self, crawler: Crawler) -> None:
        refusal.install()  # from here on, a crawl this context refuses is one ERROR line
        self.crawler = crawler
        settings = crawler.settings
        #: every integration setting, checked (a bad one stops the crawl here, named)
        self.settings: dict[str, Any] = urlunify_settings.validate(settings)
        self.enabled: bool = self.settings["URLUNIFY_ENABLED"]
        self.rewrite: bool = self.settings["URLUNIFY_REWRITE"]
        spider = getattr(crawler, "spider", None)
        self.policy: Policy = urlunify_settings.policy_from_settings(
            settings, spider, spider_name=spider_name(crawler)
        )
        #: the policy from the settings, before learned rules
        self.base_policy: Policy = self.policy
        self.unifier: Unifier = unifier_for(self.policy)
        #: the SignatureMiddleware runs: a response may be marked a duplicate page
        self.marks_duplicates = False
        #: the learning session (``URLUNIFY_LEARN``), and its rule probation
        self.learning: LearningView | None = None
        self.probation: ProbationView | None = None
        #: the crawl's stores (built on first use, see crawl_stores.crawl_stores)
        self.stores: Stores | None = None
        #: id(item) -> ItemOrigin, from LinkMiddleware to SignaturePipeline (pipelines are
        #: not given the response an item came from)
        self.item_origins: ItemOrigins = ItemOrigins()
        #: the frontier (``URLUNIFY_FRONTIER``), built with the link middleware
        self.frontier: FrontierView | None = None
        #: the crawl's DupeFilter, once the scheduler has built it
        self.dupefilter: DupeFilterView | None = None
        #: LinkMiddleware marks responses done for resumes (else the dupefilter does, earlier)
        self.marks_done = False
        self._summary_connected = False
        #: the plugin's stats (one place for every ``urlunify/...`` key)
        self.stats = UnifyStats(crawler)
        self.stats.flush()  # hooks the collector now, before anything reads it

    @classmethod
    def of(cls, crawler: Crawler) -> UnifyContext:
        ctx = getattr(crawler, cls._ATTR, None)
        if ctx is None:
            ctx = cls(crawler)
            setattr(crawler, cls._ATTR, ctx)
        else:
            ctx.stats.flush()  # hooks the collector if it did not exist yet
        return ctx

    @property
    def scope(self) -> str | None:
        return self.policy.scope

    def set_learned(
        self,
        ignore_params: dict[str, list[str]],
        aliases: list[list[str]],
        path_prefixes: dict[str, list[str]] | None = None,
    ) -> None:
        """Apply learned rules on top of the settings' policy: parameters go to ``ignore_params``
        (identity only: fetched URLs keep them), mirror hosts to ``domain_aliases``, leading
        path segments to ``ignore_path_prefixes``."""
        base = self.base_policy
        prefixes: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_path_prefixes}
        for host, names in (path_prefixes or {}).items():
            prefixes.setdefault(host, []).extend(names)
        ignore: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_params}
        for host, names in ignore_params.items():
            ignore.setdefault(host, []).extend(names)
        groups = [list(g) for g in base.domain_aliases]
        for group in aliases:
            for alias in group[1:]:
                _add_alias(groups, canonical=group[0], alias=alias)
        self.policy = base.replace(
            ignore_params=ignore, domain_aliases=groups, ignore_path_prefixes=prefixes
        )
        self.unifier = unifier_for(self.policy)

    def inc(self, key: str, count: int = 1) -> None:
        """Add ``count`` to the stat ``urlunify/<key>`` (through :attr:`stats`)."""
        self.stats.inc(key, count)

    def connect_summary(self) -> None:
        """Log the crawl's summary at close, and at open what the seen store knew already
        (once, whichever component asks first)."""
        if not self._summary_connected:
            self.crawler.signals.connect(self._log_seen_before, signal=signals.spider_opened)
            self.crawler.signals.connect(self._log_summary, signal=signals.spider_closed)
            self._summary_connected = True

    def _log_seen_before(self, spider: Any = None) -> None:
        """A run on a store that already holds the site fetches little: say so, once, at open."""
        df = self.dupefilter
        if df is None:
            return
        try:
            known = len(df.store)
        except Exception:  # a store that does not answer: its own errors say so
            return
        self.stats.set("seen_before", known)
        if known:
            stores = self.stores
            location = "Redis" if stores is not None and stores.location == MEMORY else None
            where = (
                f"{location or mask_url(stores.location)}, scope {stores.scope!r}"
                if stores is not None and stores.in_redis
                else f"JOBDIR {stores.jobdir}"
                if stores is not None and stores.jobdir is not None
                else "the seen store"
            )
            logger.info(
                "scrapy-urlunify: the store (%s) already knew %d requests from earlier runs: those "
                "are not fetched again (`scrapy urlunify store clear` forgets them)",
                where,
                known,
            )

    def summary(self) -> dict[str, Any]:
        """The numbers of the closing summary. ``duplicates``: requests dropped as duplicates,
        whichever dupefilter dropped them (``dupefilter/filtered``); of those, ``same_url``: the
        URL the spider asked for had been requested already, what Scrapy's own dupefilter drops
        too (``urlunify/duplicates/same_url``; None when the dupefilter does not count it), and
        ``unified``: other spellings of a page, dropped only thanks to the unification.
        ``saved``: requests the add-on saved beyond plain Scrapy (filtered links plain Scrapy
        would have requested, and other spellings; exact repeats included when the dupefilter
        does not tell them apart)."""
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        filtered = {
            k[len(STATS_PREFIX + "filtered/") :]: v
            for k, v in stats.items()
            if k.startswith(STATS_PREFIX + "filtered/")
        }
        duplicates = max(
            stats.get("dupefilter/filtered", 0), stats.get(STATS_PREFIX + "duplicates", 0)
        )
        same_url = stats.get(STATS_PREFIX + "duplicates/same_url")
        unified = max(duplicates - same_url, 0) if same_url is not None else None
        fetched = stats.get("downloader/request_count", 0)
        # plain Scrapy never requests an on-page anchor (the page's own fingerprint) nor a
        # mailto: link (it refuses them): not saved by the add-on. The links of a nofollow page
        # are dropped before the seen check, so most are repeats plain Scrapy drops too: not
        # counted as saved either (the filtered line shows them)
        avoided = sum(
            n
            for reason, n in filtered.items()
            if reason not in ("anchor", "nofollow") and not reason.startswith("scheme:")
        )
        saved = avoided + (unified if unified is not None else duplicates)
        return {
            "links": stats.get(STATS_PREFIX + "links", 0),
            "filtered": filtered,
            "rewritten": stats.get(STATS_PREFIX + "rewritten", 0),
            "duplicates": duplicates,
            "same_url": same_url,
            "unified": unified,
            "signature_duplicates": stats.get(STATS_PREFIX + "signature/duplicates", 0),
            "seen_before": stats.get(STATS_PREFIX + "seen_before", 0),
            "fetched": fetched,
            "saved": saved,
            "saved_share": saved / (saved + fetched) if saved + fetched else 0.0,
        }

    def _log_summary(self, spider: Any = None, reason: str = "") -> None:
        snippet = self.learning.settings_snippet() if self.learning is not None else None
        if snippet:
            logger.info(
                "scrapy-urlunify learned these rules; to keep them, add to the spider's settings:\n%s",
                snippet,
            )
        logger.info(
            "scrapy-urlunify summary (scope %r):\n%s", self.scope, format_summary(self.summary())
        )


def format_summary(s: dict[str, Any]) -> str:
    """The closing summary's lines, from :meth:`UnifyContext.summary`."""
    per_reason = ", ".join(f"{k} {v}" for k, v in sorted(s["filtered"].items())) or "none"
    if s["unified"] is not None:
        duplicates = (
            f"{s['duplicates']}: {s['same_url']} the same URL again (plain Scrapy drops these too), "
            f"{s['unified']} other spellings of a page"
        )
        saved = (
            f"{s['saved']} ({100 * s['saved_share']:.1f}% of the requests plain Scrapy would make): "
            "filtered links and other spellings of a page"
        )
    else:
        duplicates = f"{s['duplicates']} (exact repeats and other spellings: the dupefilter does not count them apart)"
        saved = (
            f"{s['saved']} ({100 * s['saved_share']:.1f}% of all requests), counting the exact repeats "
            "plain Scrapy drops too"
        )
    lines = [
        f"  links seen          {s['links']}",
        f"  filtered            {sum(s['filtered'].values())} ({per_reason})",
        f"  rewritten           {s['rewritten']}",
        f"  duplicates filtered {duplicates}",
        f"  duplicate pages     {s['signature_duplicates']} (fetched, the page signature of another page)",
        f"  requests fetched    {s['fetched']}",
        f"  requests saved      {saved}",
    ]
    if s["seen_before"]:
        lines.append(
            f"  seen before this run {s['seen_before']} (in the store when the crawl started: not fetched again)"
        )
    return "\n".join(lines)


def _add_alias(groups: list[list[str]], canonical: str, alias: str) -> None:
    for group in groups:
        if alias in group:
            return  # already unified, one way or the other
    for group in groups:
        if canonical in group:
            group.append(alias)
            return
    groups.append([canonical, alias])
