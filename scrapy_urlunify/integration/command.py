"""``scrapy urlunify``: the ``urlunify`` command line with a project's settings.

"Why are these two URLs one page in my crawl?"::

    scrapy urlunify same URL1 URL2 --spider news
    scrapy urlunify explain URL --spider news
    scrapy urlunify identify --spider news < urls.txt

The policy is built from the project's settings (``settings.py``, ``-s NAME=VALUE``) and, with
``--spider NAME``, that spider's ``custom_settings``, scope (its name unless ``URLUNIFY_SCOPE``
says otherwise) and sites (``allowed_domains`` and ``start_urls``) -- exactly what a crawl of
that spider uses. Further policy options on the command line refine it.
"""

from __future__ import annotations

import argparse

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader

from ..cli.main import main
from .settings import SettingsError, policy_from_settings

__all__ = ["Command"]


class Command(ScrapyCommand):
    requires_project = False
    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "[--spider NAME] {explain,same,identify,standardize} ..."

    def short_desc(self) -> str:
        return "Explain how scrapy-urlunify resolves, standardizes and identifies URLs"

    def long_desc(self) -> str:
        return (
            "Run the urlunify command line (explain, same, identify, standardize) with this "
            "project's URLUNIFY_* settings, and with --spider NAME that spider's custom_settings, "
            "scope and sites. 'scrapy urlunify same A B --spider NAME' tells why two URLs are one "
            "page in that spider's crawl."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--spider", metavar="NAME", help="use this spider's settings, scope and sites")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        settings = self.settings.copy()
        spidercls = None
        if opts.spider:
            try:
                spidercls = get_spider_loader(settings).load(opts.spider)
            except KeyError:
                raise UsageError(f"Spider not found: {opts.spider}") from None
            spidercls.update_settings(settings)
        try:
            policy = policy_from_settings(settings, spidercls, spider_name=opts.spider)
        except SettingsError as e:
            raise UsageError(str(e)) from None
        self.exitcode = main(args, policy=policy, prog="scrapy urlunify")

