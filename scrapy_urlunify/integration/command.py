"""``scrapy urlunify``: the ``urlunify`` command line with a project's settings (with ``--spider
NAME``, that spider's ``custom_settings``, scope and sites: what a crawl of it uses), and
``learn``, which crawls a sample of the spider's site with learning on and nothing stored, then
prints the learned rules as a settings snippet to review and pin (docs/cli.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, TextIO

from scrapy import signals
from scrapy.commands import ScrapyCommand
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.spiderloader import get_spider_loader

import scrapy_urlunify.integration.settings as urlunify_settings
from scrapy_urlunify.cli.main import main
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.settings import SettingsError, policy_from_settings
from scrapy_urlunify.stores.location import MEMORY

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import Settings

__all__ = ["Command"]

#: responses ``learn`` crawls by default
LEARN_PAGES = 500


class Command(ScrapyCommand):
    requires_project = False
    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "[--spider NAME] {explain,same,identify,standardize,learn,store} ..."

    def short_desc(self) -> str:
        return "Explain how scrapy-urlunify resolves, standardizes and identifies URLs"

    def long_desc(self) -> str:
        return (
            "Run the urlunify command line (explain, same, identify, standardize, store) with this "
            "project's URLUNIFY_* settings, and with --spider NAME that spider's custom_settings, "
            "scope and sites. 'scrapy urlunify same A B --spider NAME' tells why two URLs are one "
            "page in that spider's crawl; 'scrapy urlunify learn --spider NAME' what the learner "
            "finds on its site; 'scrapy urlunify store info' what the project's store "
            "(URLUNIFY_STORE, or JOBDIR) has seen."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--spider", metavar="NAME", help="use this spider's settings, scope and sites"
        )
        parser.add_argument(
            "--pages",
            metavar="N",
            type=int,
            default=LEARN_PAGES,
            help=f"learn: responses to crawl before printing the rules (default {LEARN_PAGES})",
        )

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
        if args[:1] == ["learn"]:
            if spidercls is None or len(args) > 1:
                raise UsageError("usage: scrapy urlunify learn --spider NAME [--pages N]")
            if opts.pages < 1:
                raise UsageError(f"--pages must be a positive integer, got {opts.pages}")
            self.exitcode = learn(settings, spidercls, opts.pages)
            return
        try:
            policy = policy_from_settings(settings, spidercls, spider_name=opts.spider)
            if args[:1] == ["store"]:
                args = [*args, *store_location(settings, args)]
        except SettingsError as e:
            raise UsageError(str(e)) from None
        self.exitcode = main(args, policy=policy, prog="scrapy urlunify")


def store_location(settings: Settings, args: list[str]) -> list[str]:
    """The options that point ``store`` at the project's store, unless ``args`` give one: its
    ``URLUNIFY_STORE`` when that is a Redis URL, else its ``JOBDIR``."""
    if any(a.split("=", 1)[0] in ("--store", "--jobdir") for a in args):
        return []
    location = urlunify_settings.get(settings, "URLUNIFY_STORE")
    if location != MEMORY:
        return ["--store", location]
    jobdir = settings.get("JOBDIR")
    return ["--jobdir", str(jobdir)] if jobdir else []


def plural(count: int, noun: str) -> str:
    """``1 rule``, ``2 rules``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


class Progress:
    """``learn``'s progress on stderr while it crawls (a sample of 500 pages with a download
    delay takes minutes): responses and rules so far, every :attr:`EVERY` responses or
    :attr:`SECONDS` seconds, whichever comes first."""

    EVERY = 50
    SECONDS = 5.0

    def __init__(self, crawler: Crawler, pages: int, out: TextIO | None = None) -> None:
        self.crawler = crawler
        self.pages = pages
        self.out = out
        self.responses = 0
        self._last_count = 0
        self._last_time = time.monotonic()

    def response_received(self) -> None:
        self.responses += 1
        now = time.monotonic()
        if self.responses - self._last_count < self.EVERY and now - self._last_time < self.SECONDS:
            return
        self._last_count, self._last_time = self.responses, now
        learning = UnifyCrawl.of(self.crawler).learning
        rules = len(learning.learner.rules) if learning is not None else 0
        print(
            f"# learning: {self.responses} of {plural(self.pages, 'response')}, "
            f"{plural(rules, 'rule')} so far",
            file=self.out or sys.stderr,
            flush=True,
        )


def learn(settings: Settings, spidercls: type[Spider], pages: int) -> int:
    """Crawl ``pages`` responses of the spider's site with learning on, storing nothing; print
    the learned rules as a settings snippet (stdout) and what was revoked (stderr).

    ``pages`` counts downloaded responses (``response_received``, as ``CLOSESPIDER_PAGECOUNT``
    does): the duplicate pages the add-on drops count, being received before they are dropped
    (``signatures.DuplicatePageGate``); requests dropped before a download do not."""
    settings = settings.copy()
    settings.setdict(
        {
            "URLUNIFY_LEARN": True,
            "CLOSESPIDER_PAGECOUNT": pages,
            "FEEDS": {},
            "ITEM_PIPELINES": {},
            "JOBDIR": None,
            "URLUNIFY_STORE": "memory",
            "LOG_ENABLED": True,
        },
        priority="cmdline",
    )
    if (settings.getpriority("LOG_LEVEL") or 0) < SETTINGS_PRIORITIES[
        "cmdline"
    ]:  # unless -s LOG_LEVEL=...
        settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
    addons = dict(settings.getdict("ADDONS"))
    if not any("scrapy_urlunify" in str(k) for k in addons):
        addons["scrapy_urlunify.Addon"] = 0
        settings.set("ADDONS", addons, priority="cmdline")
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(spidercls)
    progress = Progress(crawler, pages)
    crawler.signals.connect(progress.response_received, signal=signals.response_received)
    process.crawl(crawler)
    process.start()
    learning = UnifyCrawl.of(crawler).learning
    learner = learning.learner if learning is not None else None
    if learner is None:
        print(
            "# scrapy-urlunify did not learn: page signatures are off (URLUNIFY_SIGNATURES)",
            file=sys.stderr,
        )
        return 1
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    print(
        f"# {plural(stats.get('response_received_count', 0), 'response')} of spider "
        f"{spidercls.name!r} ({stats.get('finish_reason', 'not finished')}): "
        f"{plural(len(learner.rules), 'rule')}"
    )
    for rule in learner.rules:
        print(f"#   {rule}")
    for revocation in learner.revoked:
        print(f"# {revocation}", file=sys.stderr)
    print(learner.settings_snippet(), end="")
    return 0
