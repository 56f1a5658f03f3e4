"""``UnifyCrawl``: the one place that builds the add-on's objects of a crawl (docs/architecture.md,
"The integration layer, one folder per feature").

Each object is built once per crawler, when first needed, after the objects it is given; which
of them a crawl has is decided by its settings alone, never by which Scrapy component was built
first. The Scrapy components are thin adapters over these objects: each takes what it needs in
its ``from_crawler``, the only place that calls :meth:`UnifyCrawl.of`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

import scrapy_urlunify.integration.crawl._refusal as refusal
from scrapy_urlunify.integration import settings as urlunify_settings
from scrapy_urlunify.integration.crawl._distinct import DistinctCount
from scrapy_urlunify.integration.crawl._faults import StoreFaults
from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
from scrapy_urlunify.integration.crawl._stats import UnifyStats
from scrapy_urlunify.integration.crawl._stores import crawl_stores
from scrapy_urlunify.integration.crawl._summary import Summary
from scrapy_urlunify.integration.links._hosts import allowed_domains
from scrapy_urlunify.integration.pages._canonical_urls import CanonicalURLs
from scrapy_urlunify.integration.pages._checks import PageChecks
from scrapy_urlunify.integration.pages._items import ItemOrigins
from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages
from scrapy_urlunify.integration.queue._frontier import Frontier
from scrapy_urlunify.integration.queue._tracker import QueueTracker
from scrapy_urlunify.integration.rules._session import LearningSession
from scrapy_urlunify.integration.seen._identifiers import Identifiers
from scrapy_urlunify.integration.seen._keys import RequestKeys, crawl_request_fingerprinter
from scrapy_urlunify.integration.seen._link_batch import LinkBatch
from scrapy_urlunify.integration.seen._resume import open_resume_log, warn_scrapy_jobdir
from scrapy_urlunify.integration.seen._seen import PreRecorded, SeenCheck, SeenKeys
from scrapy_urlunify.integration.seen._stores import seen_store
from scrapy_urlunify.integration.settings import crawl_sites, policy_from_settings
from scrapy_urlunify.stores._base import StoreError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from scrapy_urlunify.integration.rules._probation import Probation
    from scrapy_urlunify.integration.seen._resume import ResumeLog
    from scrapy_urlunify.stores._base import SeenStore
    from scrapy_urlunify.stores._factory import Stores

#: the class attribute by which a component of the add-on is recognised in the settings
ROLE = "urlunify_role"


class UnifyCrawl:
    """The add-on's objects of one crawl. ``None`` for an object the settings turn off."""

    _ATTR = "_urlunify_crawl"

    @classmethod
    def of(cls, crawler: Crawler) -> UnifyCrawl:
        """The crawl's objects (made on the first call, with the settings checked)."""
        crawl: UnifyCrawl | None = crawler.__dict__.get(cls._ATTR)
        if crawl is None:
            crawl = cls(crawler)
            setattr(crawler, cls._ATTR, crawl)
        else:
            crawl.stats.flush()  # hooks the stats collector if it did not exist yet
        return crawl

    def __init__(self, crawler: Crawler) -> None:
        refusal.install()  # from here on, a crawl this refuses is one ERROR line
        self.crawler = crawler
        #: every ``URLUNIFY_*`` setting, checked (a bad one stops the crawl here, named)
        self.settings: dict[str, Any] = urlunify_settings.validate(crawler.settings)
        self.enabled: bool = self.settings["URLUNIFY_ENABLED"]
        self.stats = UnifyStats(crawler)
        self.stats.flush()  # hooks the collector now, before anything reads it
        spider = getattr(crawler, "spider", None)
        name = spider_name(crawler)
        self.policies = CrawlPolicies(
            policy_from_settings(crawler.settings, spider, spider_name=name)
        )
        self.faults = StoreFaults(crawler, self.stats)
        self.identifiers = Identifiers(self.policies)
        #: id(item) -> the page it came from, from the link middleware to the item pipelines
        #: (pipelines are not given the response an item came from)
        self.item_origins = ItemOrigins()
        #: the distinct requests plain Scrapy would have made for the links met (estimated)
        self.plain_requests = DistinctCount()
        self._sites = self.policies.policy.sites or (crawl_sites(spider) if spider else [])
        self._scope = self.policies.scope or name
        #: the closing summary (logged when a component of the add-on handles links, requests or
        #: pages)
        self.summary: Summary | None = None
        if self.enabled and any(
            self.configured(setting, role)
            for setting, role in (
                ("SPIDER_MIDDLEWARES", "links"),
                ("DUPEFILTER_CLASS", "dupefilter"),
                ("DUPEFILTER_CLASS", "redis_dupefilter"),
                ("DOWNLOADER_MIDDLEWARES", "signatures"),
            )
        ):
            self.summary = Summary(
                crawler,
                self.stats,
                self.policies.scope,
                self.plain_requests,
                lambda: self.stores,
                seen_store=lambda: self.seen.store if self.seen is not None else None,
                learning=lambda: self.learning,
            )

    # -- what the settings enable ------------------------------------------------------------

    def configured(self, setting: str, *roles: str) -> bool:
        """Whether a component of one of ``roles`` is enabled in ``setting`` (a component dict
        such as ``DOWNLOADER_MIDDLEWARES``, or a class setting such as ``DUPEFILTER_CLASS``)."""
        value = self.crawler.settings.get(setting)
        if isinstance(value, (str, type)):
            return _role(value) in roles
        components = self.crawler.settings.getwithbase(setting)
        return any(p is not None and _role(c) in roles for c, p in components.items())

    @cached_property
    def dedups(self) -> bool:
        """Whether the crawl's dupefilter is ours: the links it drops early and the pages it
        records are the ones the scheduler would drop."""
        return self.enabled and self.configured(
            "DUPEFILTER_CLASS", "dupefilter", "redis_dupefilter"
        )

    @cached_property
    def checks_pages(self) -> bool:
        """Whether the page checks run (``SignatureMiddleware``)."""
        return (
            self.enabled
            and self.settings["URLUNIFY_SIGNATURES"]
            and self.configured("DOWNLOADER_MIDDLEWARES", "signatures")
        )

    # -- the objects, in the order they are built --------------------------------------------

    @cached_property
    def stores(self) -> Stores:
        """The crawl's stores (one Redis client for all of them)."""
        return crawl_stores(self.crawler.settings, self._scope)

    @cached_property
    def keys(self) -> RequestKeys:
        """The seen-store key of a request, under the crawl's request fingerprinter (asked of the
        crawler when first used: the add-on's objects may be built while Scrapy builds it)."""
        crawler = self.crawler
        return RequestKeys(
            self.identifiers, lambda: crawl_request_fingerprinter(crawler, self.identifiers)
        )

    @cached_property
    def seen_store(self) -> SeenStore:
        """The seen store: memory, a JOBDIR log, or a Redis set shared by the scope."""
        warn_scrapy_jobdir(self.crawler)
        return seen_store(self.crawler.settings, self.stores, self.crawler)

    @cached_property
    def resume_log(self) -> ResumeLog | None:
        """The JOBDIR's resume log (None without JOBDIR), opened with the seen store."""
        store = self.seen_store
        try:
            return open_resume_log(self.crawler.settings, store)
        except StoreError as e:
            store.close()
            refusal.report(e, "scrapy-urlunify cannot use this JOBDIR")
            raise
        except BaseException:
            store.close()
            raise

    @cached_property
    def seen(self) -> SeenKeys | None:
        """What the crawl records as seen, and how (None when the crawl's dupefilter is not
        ours: nothing of ours records anything then)."""
        if not self.dedups:
            return None
        return self.seen_keys()

    def seen_keys(self) -> SeenKeys:
        """The seen keys of the crawl's dupefilter, built for it even when the settings do not
        name it (a dupefilter built by hand, or by a scheduler built before the crawl starts)."""
        if "_seen_keys" not in self.__dict__:
            try:
                store = self.seen_store
            except StoreError as e:
                refusal.report(e, "scrapy-urlunify cannot use its seen store")
                raise
            self.__dict__["_seen_keys"] = SeenKeys(
                store,
                self.keys,
                self.faults,
                self.stats,
                resume_log=self.resume_log,
                debug=self.crawler.settings.getbool("DUPEFILTER_DEBUG"),
            )
        seen: SeenKeys = self.__dict__["_seen_keys"]
        return seen

    @cached_property
    def learning(self) -> LearningSession | None:
        """The learning session (``URLUNIFY_LEARN``, with the page checks that feed it)."""
        if not (self.checks_pages and self.settings["URLUNIFY_LEARN"]):
            return None
        return LearningSession(
            self.crawler,
            self.settings,
            self.stats,
            self.faults,
            self.policies,
            self.stores,
            self.seen,
            sites=self._sites,
        )

    @property
    def probation(self) -> Probation | None:
        """The probation of learned rules (with learning)."""
        learning = self.learning
        return learning.probation if learning is not None else None

    @cached_property
    def pre_recorded(self) -> PreRecorded | None:
        """Keys a link batch recorded in a shared store, waiting for their requests at the
        scheduler (a store that checks a batch of keys in one round trip: Redis)."""
        seen = self.seen_keys()
        if not callable(getattr(seen.store, "add_batch", None)):
            return None
        return PreRecorded(seen, self.faults, self.stats)

    def seen_check(self) -> SeenCheck:
        """The "seen?" check of the crawl's dupefilter."""
        if "_seen_check" not in self.__dict__:
            self.__dict__["_seen_check"] = SeenCheck(
                self.seen_keys(),
                self.policies,
                self.faults,
                self.stats,
                self.crawler,
                probation=self.probation,
                pre_recorded=self.pre_recorded,
                # the resume log's "done" is written by ResumeDoneMiddleware when it runs
                done_on_response=not self.configured("SPIDER_MIDDLEWARES", "resume_done"),
                redirected=self._redirected,
            )
        check: SeenCheck = self.__dict__["_seen_check"]
        return check

    def _redirected(self, source: str, target: str) -> None:
        """A redirect the dupefilter saw: the check of a declared shortlink, if it is one."""
        pages = self.pages
        if pages is not None and pages.shortlinks is not None:
            pages.shortlinks.redirected(source, target)

    @cached_property
    def link_batch(self) -> LinkBatch | None:
        """A response's links checked in one round trip (a shared store that can: Redis)."""
        pre_recorded = self.pre_recorded if self.dedups else None
        if pre_recorded is None:
            return None
        return LinkBatch(
            self.seen_keys(),
            self.seen_check(),
            pre_recorded,
            self.faults,
            self.crawler,
            probation=self.probation,
        )

    @cached_property
    def frontier(self) -> Frontier | None:
        """The frontier (``URLUNIFY_FRONTIER``): the priority of each scheduled request."""
        if not (self.enabled and self.settings["URLUNIFY_FRONTIER"]):
            return None
        return Frontier(
            self.stats,
            self.settings["URLUNIFY_FRONTIER_PENALTY"],
            spellings=self.canonical_urls,
        )

    @cached_property
    def queue_tracker(self) -> QueueTracker:
        """Which requests of scrapy-redis's shared queue are done (``RedisQueue``)."""
        return QueueTracker()

    @cached_property
    def near(self) -> NearDuplicatePages | None:
        """The near-duplicate pages of the crawl (``URLUNIFY_NEAR_DUPLICATES``)."""
        s = self.settings
        if not (self.enabled and s["URLUNIFY_SIGNATURES"] and s["URLUNIFY_NEAR_DUPLICATES"]):
            return None
        return NearDuplicatePages.from_settings(s)

    @cached_property
    def allowed_domains(self) -> tuple[str, ...]:
        """The spider's ``allowed_domains``, as Scrapy's offsite filter reads them."""
        return allowed_domains(getattr(self.crawler, "spider", None))

    @cached_property
    def canonical_urls(self) -> CanonicalURLs:
        """Each page's canonical URL, spelled as the crawl's start URLs spell their sites."""
        starts = getattr(getattr(self.crawler, "spider", None), "start_urls", None) or ()
        return CanonicalURLs(
            self.policies, [u for u in starts if isinstance(u, str)], self.allowed_domains
        )

    @cached_property
    def pages(self) -> PageChecks | None:
        """The checks of each downloaded page (``SignatureMiddleware``)."""
        if not (self.enabled and self.settings["URLUNIFY_SIGNATURES"]):
            return None
        return PageChecks(
            self.crawler,
            self.settings,
            self.stats,
            self.faults,
            self.policies,
            self.stores,
            self.stores.signatures(),
            seen=self.seen,
            near=self.near,
            learning=self.learning,
            frontier=self.frontier,
            canonical_urls=self.canonical_urls,
            allowed_domains=self.allowed_domains,
            # a duplicate page given to the spider for its links: its items must be dropped
            follow_duplicates=self.configured("ITEM_PIPELINES", "signature_pipeline"),
        )


def spider_name(crawler: Crawler) -> str | None:
    """The crawl's spider name: the instance's (``process.crawl(Spider, name="x")`` gives a
    name only to the instance), else the class's, else ``None`` (no spider created yet)."""
    name = getattr(getattr(crawler, "spider", None), "name", None)
    return name or getattr(crawler.spidercls, "name", None)


def _role(component: Any) -> str | None:
    try:
        cls = load_object(component) if isinstance(component, str) else component
    except (ImportError, ValueError, NameError, AttributeError, TypeError):
        return None
    return getattr(cls, ROLE, None)
