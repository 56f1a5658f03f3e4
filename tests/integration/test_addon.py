"""The add-on: what it enables, and what it leaves to the project."""

from __future__ import annotations

import logging


def test_addon_keeps_a_project_fingerprinter_and_warns(caplog):
    from scrapy.settings import Settings

    from scrapy_urlunify.integration.addon import Addon

    settings = Settings(
        {"REQUEST_FINGERPRINTER_CLASS": "scrapy.utils.request.RequestFingerprinter"},
        priority="project",
    )
    with caplog.at_level(logging.WARNING):
        Addon().update_settings(settings)
    assert settings["REQUEST_FINGERPRINTER_CLASS"] == "scrapy.utils.request.RequestFingerprinter"
    assert "keeping the project's REQUEST_FINGERPRINTER_CLASS" in caplog.text
    assert settings["DUPEFILTER_CLASS"] == "scrapy_urlunify.DupeFilter"
    assert settings.getwithbase("SPIDER_MIDDLEWARES")["scrapy_urlunify.LinkMiddleware"] == 950


def test_addon_turns_learning_on_and_a_spider_can_turn_it_off():
    from scrapy.settings import Settings

    from scrapy_urlunify import Addon

    settings = Settings()
    Addon().update_settings(settings)
    assert settings.getbool("URLUNIFY_LEARN") is True
    assert "scrapy_urlunify.DequeueMiddleware" in settings.getdict("DOWNLOADER_MIDDLEWARES")
    settings = Settings({"URLUNIFY_LEARN": False}, priority="project")
    Addon().update_settings(settings)
    assert settings.getbool("URLUNIFY_LEARN") is False
