"""``Addon``: one line in ``settings.py``, ``ADDONS = {"scrapy_urlunify.Addon": 0}``, turns the
whole plugin on.

What it sets and at which priorities (Scrapy's ``addon`` priority: the project's settings still
win), how it keeps a project's own fingerprinter or dupefilter, and how it composes with
scrapy-zyte-api's and scrapy-poet's fingerprinters: docs/getting-started.md, "What the add-on sets".
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

__all__ = ["Addon"]

logger = logging.getLogger(__name__)

SPIDER_MIDDLEWARE_PRIORITY = 950
RESUME_MIDDLEWARE_PRIORITY = 10
DEQUEUE_MIDDLEWARE_PRIORITY = 15
#: above DownloaderStats (850) and HttpCacheMiddleware (900), whose process_exception would see a
#: drop
DROP_GATE_PRIORITY = 990
DONE_MIDDLEWARE_PRIORITY = 5
SIGNATURE_MIDDLEWARE_PRIORITY = 20
#: first in the spider's input chain: no other spider middleware sees a duplicate page
DUPLICATE_GATE_PRIORITY = 1
#: RedisQueue's components (queue/_queue_done.py), where each must sit to see when a
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
    """Scrapy add-on enabling scrapy-urlunify's middlewares, fingerprinter, dupefilter and
    pipelines."""

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
            settings.set_in_component_priority_dict(
                "DOWNLOADER_MIDDLEWARES",
                path,  # type: ignore[arg-type]
                priority,
            )
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
                settings.set_in_component_priority_dict(
                    name,
                    path,  # type: ignore[arg-type]
                    priority,
                )
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
            settings.set_in_component_priority_dict(
                "ITEM_PIPELINES",
                path,  # type: ignore[arg-type]
                priority,
            )

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
