"""``Addon``: one line in ``settings.py`` turns the whole plugin on.

.. code-block:: python

    ADDONS = {"scrapy_urlunify.Addon": 0}

What it sets (at Scrapy's ``addon`` priority, so ``settings.py``, ``custom_settings`` and ``-s``
still win):

==================================  ==========================================================
``SPIDER_MIDDLEWARES``              ``LinkMiddleware`` at 600 (after Scrapy's depth, length
                                    and referer middlewares have seen the spider's output, so it
                                    sees each request as the spider made it)
``REQUEST_FINGERPRINTER_CLASS``     ``Fingerprinter``
``DUPEFILTER_CLASS``                ``DupeFilter``
``DOWNLOADER_MIDDLEWARES``          ``SignatureMiddleware`` at 20 (engine side of redirects
                                    and retries: it sees each final response once), and
                                    ``ResumeMiddleware`` at 10 (first on the engine side; with
                                    JOBDIR only: one download per request after a crash)
``ITEM_PIPELINES``                  ``SignaturePipeline`` at 200 and ``UnicityPipeline`` at 210,
                                    when those components are installed
==================================  ==========================================================

**Never clobbers.** When the project already set its own ``REQUEST_FINGERPRINTER_CLASS`` or
``DUPEFILTER_CLASS`` (any priority above Scrapy's defaults), the add-on keeps the project's value
and logs a WARNING naming the setting. The plugin still works: ``DupeFilter`` computes
unified fingerprints itself when the crawler's fingerprinter is another one, and a project that
keeps its own dupefilter keeps its own deduplication (the middleware still filters and
standardizes links). ``URLUNIFY_ENABLED = False`` turns everything off.
"""

from __future__ import annotations

import logging
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import load_object

from . import settings as urlunify_settings

if TYPE_CHECKING:
    from scrapy.settings import Settings

__all__ = ["PIPELINE_PRIORITIES", "SPIDER_MIDDLEWARE_PRIORITY", "Addon"]

logger = logging.getLogger(__name__)

SPIDER_MIDDLEWARE_PRIORITY = 600
RESUME_MIDDLEWARE_PRIORITY = 10
SIGNATURE_MIDDLEWARE_PRIORITY = 20
PIPELINE_PRIORITIES = {
    "scrapy_urlunify.integration.pipelines.SignaturePipeline": 200,
    "scrapy_urlunify.integration.pipelines.UnicityPipeline": 210,
}

_OURS = {
    "REQUEST_FINGERPRINTER_CLASS": "scrapy_urlunify.integration.fingerprinter.Fingerprinter",
    "DUPEFILTER_CLASS": "scrapy_urlunify.integration.dupefilter.DupeFilter",
}


class Addon:
    """Scrapy add-on enabling scrapy-urlunify's middleware, fingerprinter, dupefilter and pipelines."""

    def update_settings(self, settings: Settings) -> None:
        # Scrapy hints set_in_component_priority_dict's component as a class; an import path
        # works too and keeps the components unimported until Scrapy loads them.
        if not urlunify_settings.get(settings, "URLUNIFY_ENABLED"):
            return
        settings.set_in_component_priority_dict(
            "SPIDER_MIDDLEWARES", "scrapy_urlunify.integration.links.LinkMiddleware", SPIDER_MIDDLEWARE_PRIORITY  # type: ignore[arg-type]
        )
        settings.set_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", "scrapy_urlunify.integration.signatures.SignatureMiddleware", SIGNATURE_MIDDLEWARE_PRIORITY  # type: ignore[arg-type]
        )
        if settings.get("JOBDIR") or urlunify_settings.get(settings, "URLUNIFY_STORE") != "memory":
            settings.set_in_component_priority_dict(
                "DOWNLOADER_MIDDLEWARES", "scrapy_urlunify.integration.resume.ResumeMiddleware", RESUME_MIDDLEWARE_PRIORITY  # type: ignore[arg-type]
            )
        for name, ours in _OURS.items():
            self._set_unless_user_chose(settings, name, ours)
        if find_spec("scrapy_urlunify.integration.pipelines") is not None:
            for path, priority in PIPELINE_PRIORITIES.items():
                settings.set_in_component_priority_dict("ITEM_PIPELINES", path, priority)  # type: ignore[arg-type]

    @staticmethod
    def _set_unless_user_chose(settings: Settings, name: str, ours: str) -> None:
        priority = settings.getpriority(name) or 0
        if priority <= SETTINGS_PRIORITIES["default"]:
            settings.set(name, ours, priority="addon")
            return
        current: Any = settings.get(name)
        if _same_class(current, ours):
            return
        logger.warning(
            "scrapy_urlunify.Addon: keeping the project's %s = %r instead of %s. "
            "Remove it from the settings to let the add-on set it.",
            name, current, ours,
        )


def _same_class(value: Any, path: str) -> bool:
    """The project's class is ours or a subclass of it (``RedisDupeFilter``): no warning."""
    try:
        current, ours = load_object(value), load_object(path)
    except (ImportError, ValueError, NameError, AttributeError):
        return False
    return isinstance(current, type) and issubclass(current, ours)
