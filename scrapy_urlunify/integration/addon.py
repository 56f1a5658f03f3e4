"""``Addon``: one line in ``settings.py`` turns the whole plugin on.

.. code-block:: python

    ADDONS = {"scrapy_urlunify.Addon": 0}

What it sets (at Scrapy's ``addon`` priority, so ``settings.py``, ``custom_settings`` and ``-s``
still win):

==================================  ==========================================================
``SPIDER_MIDDLEWARES``              ``LinkMiddleware`` at 950: first in the spider's output
                                    chain after Scrapy's ``MetaCopyDetectionMiddleware`` (1000),
                                    so a link it drops (filtered, anchor, known duplicate) costs
                                    no other middleware's work, and the depth, URL length and
                                    referer middlewares (900-700) see the URL to fetch; with JOBDIR,
                                    ``ResumeDoneMiddleware`` at 5 (closest to the engine: a page is
                                    "done" for a resume once its output is handled);
                                    ``DuplicatePageGate`` at 1 (first in the input chain: drops
                                    a duplicate page once the engine counted it as received)
``REQUEST_FINGERPRINTER_CLASS``     ``Fingerprinter``
``DUPEFILTER_CLASS``                ``DupeFilter``
``DOWNLOADER_MIDDLEWARES``          ``SignatureMiddleware`` at 20 (engine side of redirects
                                    and retries: it sees each final response once), and
                                    ``ResumeMiddleware`` at 10 (first on the engine side; with
                                    JOBDIR only: one download per request after a crash), and
                                    ``DequeueMiddleware`` at 15 (with ``URLUNIFY_LEARN``: drops
                                    a queued request whose page a learned rule says was fetched),
                                    and ``DequeueDropGate`` at 990 (such a drop is not counted as
                                    a download exception)
``SCHEDULER_QUEUE_CLASS``           not set; when the project sets it to ``RedisQueue`` (the
                                    reliable scrapy-redis queue, ``docs/redis_queue.md``), its
                                    components: ``QueueDoneMiddleware`` at 2 and
                                    ``QueueGivenBackMiddleware`` at 960 (spider middlewares),
                                    ``QueueFailureMiddleware`` at 1 (downloader middleware)
``ITEM_PIPELINES``                  ``SignaturePipeline`` at 200 and ``UnicityPipeline`` at 210
``URLUNIFY_LEARN``                  ``True``: learn the site's own URL noise from duplicate
                                    pages (new rules on probation, declared canonicals verified
                                    first, see ``docs/learning.md``); ``False`` in a spider's
                                    ``custom_settings`` turns it off
``URLUNIFY_LEARN_PRESENCE``         ``True``: a parameter with one value on its host
                                    (``print=1``) is learned from pages with and without it
``URLUNIFY_FRONTIER``               ``True``: requests of URL patterns whose pages bring
                                    nothing new go after the others, and a request that
                                    would test a candidate rule with nothing to add is held
                                    back once (``docs/frontier.md``); ``False`` turns it off
``URLUNIFY_ROBOTS_NOFOLLOW``        ``True``: the links of a page that declares ``nofollow``
                                    (``<meta name="robots">``, ``X-Robots-Tag``) are not
                                    followed; a start page's always are (``docs/rules.md``);
                                    ``False`` follows them all
==================================  ==========================================================

**Never clobbers.** When the project already set its own ``REQUEST_FINGERPRINTER_CLASS`` or
``DUPEFILTER_CLASS`` (any priority above Scrapy's defaults), the add-on keeps the project's value
and logs a WARNING naming the setting. ``DupeFilter`` then keys requests through the project's
fingerprinter, as Scrapy's filter does (so it decides what a duplicate is), and a project that
keeps its own dupefilter keeps its own deduplication (the middleware still filters and
standardizes links). ``URLUNIFY_ENABLED = False`` turns everything off.

**Composes with plugin fingerprinters.** scrapy-zyte-api's and scrapy-poet's fingerprinters
hash what they add (Zyte API parameters, page-object dependencies) on top of a base fingerprint
of the request. When either plugin is configured (its add-on in ``ADDONS``, its fingerprinter in
``REQUEST_FINGERPRINTER_CLASS``, scrapy-poet's ``InjectionMiddleware``), the add-on makes
``Fingerprinter`` that base -- ``SCRAPY_POET_REQUEST_FINGERPRINTER_BASE_CLASS``, or
``ZYTE_API_FALLBACK_REQUEST_FINGERPRINTER_CLASS`` when scrapy-poet is not there (scrapy-zyte-api
then falls back to scrapy-poet's, whose base is ours) -- unless the project set it, and does not
warn about their ``REQUEST_FINGERPRINTER_CLASS``: both keep their distinctions and gain the URL
unification.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import load_object

import scrapy_urlunify.integration.crawl._refusal as refusal
import scrapy_urlunify.integration.settings as urlunify_settings

if TYPE_CHECKING:
    from scrapy.settings import Settings

__all__ = ["PIPELINE_PRIORITIES", "SPIDER_MIDDLEWARE_PRIORITY", "Addon"]

logger = logging.getLogger(__name__)

SPIDER_MIDDLEWARE_PRIORITY = 950
RESUME_MIDDLEWARE_PRIORITY = 10
DEQUEUE_MIDDLEWARE_PRIORITY = 15
#: above DownloaderStats (850) and HttpCacheMiddleware (900), whose process_exception would see a drop
DROP_GATE_PRIORITY = 990
DONE_MIDDLEWARE_PRIORITY = 5
SIGNATURE_MIDDLEWARE_PRIORITY = 20
#: first in the spider's input chain: no other spider middleware sees a duplicate page
DUPLICATE_GATE_PRIORITY = 1
#: RedisQueue's components (integration/redis_queue_done.py), where each must sit to see when a
#: request is done: closest to the engine on both sides, and the link rescue after LinkMiddleware
_QUEUE_COMPONENTS = (
    ("SPIDER_MIDDLEWARES", "scrapy_urlunify.QueueDoneMiddleware", 2),
    ("SPIDER_MIDDLEWARES", "scrapy_urlunify.QueueGivenBackMiddleware", 960),
    ("DOWNLOADER_MIDDLEWARES", "scrapy_urlunify.QueueFailureMiddleware", 1),
)
_REDIS_QUEUE = "scrapy_urlunify.RedisQueue"
_DOWNLOADER_MIDDLEWARES = {
    "scrapy_urlunify.SignatureMiddleware": SIGNATURE_MIDDLEWARE_PRIORITY,
    "scrapy_urlunify.DequeueMiddleware": DEQUEUE_MIDDLEWARE_PRIORITY,
    "scrapy_urlunify.DequeueDropGate": DROP_GATE_PRIORITY,
}
PIPELINE_PRIORITIES = {
    "scrapy_urlunify.SignaturePipeline": 200,
    "scrapy_urlunify.UnicityPipeline": 210,
}

_ZYTE_FALLBACK = "ZYTE_API_FALLBACK_REQUEST_FINGERPRINTER_CLASS"
_POET_BASE = "SCRAPY_POET_REQUEST_FINGERPRINTER_BASE_CLASS"

_OURS = {
    "REQUEST_FINGERPRINTER_CLASS": "scrapy_urlunify.Fingerprinter",
    "DUPEFILTER_CLASS": "scrapy_urlunify.DupeFilter",
}


class Addon:
    """Scrapy add-on enabling scrapy-urlunify's middleware, fingerprinter, dupefilter and pipelines."""

    def update_settings(self, settings: Settings) -> None:
        refusal.install()  # a bad setting, from here on, is one ERROR line
        # Scrapy hints set_in_component_priority_dict's component as a class; an import path
        # works too and keeps the components unimported until Scrapy loads them.
        if not urlunify_settings.get(settings, "URLUNIFY_ENABLED"):
            return
        settings.set_in_component_priority_dict(
            "SPIDER_MIDDLEWARES",
            "scrapy_urlunify.LinkMiddleware",  # type: ignore[arg-type]
            SPIDER_MIDDLEWARE_PRIORITY,
        )
        settings.set_in_component_priority_dict(
            "SPIDER_MIDDLEWARES",
            "scrapy_urlunify.DuplicatePageGate",  # type: ignore[arg-type]
            DUPLICATE_GATE_PRIORITY,
        )
        for path, priority in _DOWNLOADER_MIDDLEWARES.items():
            settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", path, priority)  # type: ignore[arg-type]
        if settings.get("JOBDIR"):
            settings.set_in_component_priority_dict(
                "SPIDER_MIDDLEWARES",
                "scrapy_urlunify.ResumeDoneMiddleware",  # type: ignore[arg-type]
                DONE_MIDDLEWARE_PRIORITY,
            )
        if settings.get("JOBDIR") or urlunify_settings.get(settings, "URLUNIFY_STORE") != "memory":
            settings.set_in_component_priority_dict(
                "DOWNLOADER_MIDDLEWARES",
                "scrapy_urlunify.ResumeMiddleware",  # type: ignore[arg-type]
                RESUME_MIDDLEWARE_PRIORITY,
            )
        queue = settings.get("SCHEDULER_QUEUE_CLASS")
        if queue is not None and _same_class(queue, _REDIS_QUEUE):
            for name, path, priority in _QUEUE_COMPONENTS:
                settings.set_in_component_priority_dict(name, path, priority)  # type: ignore[arg-type]
        plugins = _fingerprinting_plugins(settings)
        for name, ours in _OURS.items():
            self._set_unless_user_chose(settings, name, ours, plugins)
        ours = _OURS["REQUEST_FINGERPRINTER_CLASS"]
        if "scrapy_poet" in plugins:
            _set_default(settings, _POET_BASE, ours)
        elif "scrapy_zyte_api" in plugins:
            _set_default(settings, _ZYTE_FALLBACK, ours)
        # on with the add-on (a test site full of learning traps and the demo site are crawled
        # with it, no page missed, no item twice); the components alone keep the table's False
        settings.set("URLUNIFY_LEARN", True, priority="addon")
        # on with the add-on: a print view's one value (print=1) is learned from pages with and
        # without it; near-duplicate items are dropped anyway (docs/learning.md)
        settings.set("URLUNIFY_LEARN_PRESENCE", True, priority="addon")
        # on with the add-on: the real MediaWiki in Scrapy's default order (docs/frontier.md)
        settings.set("URLUNIFY_FRONTIER", True, priority="addon")
        # on with the add-on: a wiki's history, old revisions, diffs and log-in pages say so
        # (docs/rules.md), and every well-behaved crawler honours it
        settings.set("URLUNIFY_ROBOTS_NOFOLLOW", True, priority="addon")
        for path, priority in PIPELINE_PRIORITIES.items():
            settings.set_in_component_priority_dict("ITEM_PIPELINES", path, priority)  # type: ignore[arg-type]

    @staticmethod
    def _set_unless_user_chose(settings: Settings, name: str, ours: str, plugins: set[str]) -> None:
        priority = settings.getpriority(name) or 0
        if priority <= SETTINGS_PRIORITIES["default"]:
            settings.set(name, ours, priority="addon")
            return
        current: Any = settings.get(name)
        if _same_class(current, ours):
            return
        if name == "REQUEST_FINGERPRINTER_CLASS" and _package(current) in plugins:
            return  # ours becomes its base fingerprinter
        logger.warning(
            "scrapy_urlunify.Addon: keeping the project's %s = %r instead of %s. "
            "Remove it from the settings to let the add-on set it.",
            name,
            current,
            ours,
        )


def _same_class(value: Any, path: str) -> bool:
    """The project's class is ours or a subclass of it (``RedisDupeFilter``): no warning."""
    try:
        current, ours = load_object(value), load_object(path)
    except (ImportError, ValueError, NameError, AttributeError, TypeError):
        return False
    return isinstance(current, type) and issubclass(current, ours)


def _package(value: Any) -> str:
    """The top-level package of a class or of its import path."""
    path = value if isinstance(value, str) else f"{getattr(value, '__module__', '')}.x"
    return path.split(".", 1)[0]


def _fingerprinting_plugins(settings: Settings) -> set[str]:
    """Which of scrapy_zyte_api and scrapy_poet the crawl configures: an add-on of theirs, their
    fingerprinter, or scrapy-poet's injection middleware (by package name, nothing imported)."""
    found = {_package(settings.get("REQUEST_FINGERPRINTER_CLASS"))}
    for name in ("ADDONS", "DOWNLOADER_MIDDLEWARES"):
        found.update(_package(k) for k, v in settings.getdict(name).items() if v is not None)
    return found & {"scrapy_zyte_api", "scrapy_poet"}


def _set_default(settings: Settings, name: str, value: str) -> None:
    """Set ``name`` at the add-on's priority unless the project set it."""
    if (settings.getpriority(name) or 0) <= SETTINGS_PRIORITIES["addon"] and not settings.get(name):
        settings.set(name, value, priority="addon")
