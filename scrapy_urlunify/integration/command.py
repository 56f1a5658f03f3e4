"""``scrapy urlunify``: the ``urlunify`` command line with a project's settings (with ``--spider
NAME``, that spider's ``custom_settings``, scope and sites: what a crawl of it uses), and
``learn``, which crawls a sample of the spider's site with learning on and nothing stored or
shared, showing its progress on one line, then prints the learned rules as a settings snippet to
review and pin (docs/cli.md).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, TextIO

from scrapy import signals
from scrapy.commands import ScrapyCommand
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.conf import arglist_to_dict
from scrapy.utils.misc import load_object

import scrapy_urlunify.integration.settings as urlunify_settings
from scrapy_urlunify.cli._main import build_parser, main
from scrapy_urlunify.cli._progress import ProgressLine
from scrapy_urlunify.integration.crawl._build import UnifyCrawl
from scrapy_urlunify.integration.rules._session import hints_text
from scrapy_urlunify.integration.settings import SettingsError, policy_from_settings
from scrapy_urlunify.stores._location import MEMORY

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
            "(URLUNIFY_STORE, or JOBDIR) has seen. 'scrapy urlunify COMMAND -h': a command's help."
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
            default=None,
            help=f"learn: responses to crawl before printing the rules (default {LEARN_PAGES})",
        )
        parser.add_argument(
            "-a",
            dest="spargs",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="learn: set a spider argument (may be repeated)",
        )
        # -h after a subcommand is the subcommand's (Scrapy's parser would answer it first)
        parser.conflict_handler = "resolve"
        parser.add_argument("-h", "--help", action="store_true", dest="command_help")
        self._parser = parser

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        assert self.settings is not None
        if opts.command_help:
            if not args:
                self._parser.print_help()
            elif args[0] == "learn":
                print(LEARN_USAGE)
            else:
                build_parser("scrapy urlunify").parse_args([args[0], "--help"])
            return
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
                raise UsageError(LEARN_USAGE)
            pages = LEARN_PAGES if opts.pages is None else opts.pages
            if pages < 1:
                raise UsageError(f"--pages must be a positive integer, got {pages}")
            try:
                spargs = arglist_to_dict(opts.spargs)
            except ValueError:
                raise UsageError("-a: give spider arguments as NAME=VALUE") from None
            self.exitcode = learn(settings, spidercls, pages, spargs)
            return
        if opts.pages is not None or opts.spargs:
            raise UsageError("--pages and -a are options of learn")
        try:
            policy = policy_from_settings(settings, spidercls, spider_name=opts.spider)
            if args[:1] in (["store"], ["same"], ["explain"], ["identify"]):
                args = [*args, *store_location(settings, args)]
        except SettingsError as e:
            raise UsageError(str(e)) from None
        self.exitcode = main(args, policy=policy, prog="scrapy urlunify")


LEARN_USAGE = (
    "usage: scrapy urlunify learn --spider NAME [--pages N] [-a NAME=VALUE] [-s NAME=VALUE]"
)


def store_location(settings: Settings, args: list[str]) -> list[str]:
    """The options that point a command at the project's store (its learned rules, for
    ``same``, ``explain`` and ``identify``), unless ``args`` give one: its ``URLUNIFY_STORE``
    when that is a Redis URL (or scrapy-redis's ``REDIS_URL`` for a ``RedisDupeFilter``), with
    its ``URLUNIFY_REDIS_KEY``, else its ``JOBDIR``."""
    if any(a.split("=", 1)[0] in ("--store", "--jobdir") for a in args):
        return []
    location = urlunify_settings.get(settings, "URLUNIFY_STORE")
    if location == MEMORY and settings.get("REDIS_URL") and _redis_dupefilter(settings):
        location = settings.get("REDIS_URL")
    if location != MEMORY:
        key = urlunify_settings.get(settings, "URLUNIFY_REDIS_KEY")
        given_key = any(a.split("=", 1)[0] == "--key" for a in args)
        return ["--store", location, *([] if given_key else ["--key", key])]
    jobdir = settings.get("JOBDIR")
    return ["--jobdir", str(jobdir)] if jobdir else []


def _redis_dupefilter(settings: Settings) -> bool:
    try:
        cls = load_object(settings.get("DUPEFILTER_CLASS"))
    except (ImportError, ValueError, NameError, AttributeError, TypeError):
        return False
    return getattr(cls, "urlunify_role", None) == "redis_dupefilter"


def plural(count: int, noun: str) -> str:
    """``1 rule``, ``2 rules``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


class Progress:
    """``learn``'s progress while it crawls: responses and rules so far, on one line."""

    def __init__(self, crawler: Crawler, pages: int, out: TextIO | None = None) -> None:
        self.crawler = crawler
        self.pages = pages
        self.line = ProgressLine(out)
        self.responses = 0

    def response_received(self) -> None:
        self.responses += 1
        learning = UnifyCrawl.of(self.crawler).learning
        rules = len(learning.learner.rules) if learning is not None else 0
        self.line.update(
            f"# learning: {min(self.responses, self.pages)} of {plural(self.pages, 'response')}, "
            f"{plural(rules, 'rule')} so far",
            force=self.responses == 1,
        )


def pace(settings: Settings, pages: int) -> str:
    """What paces the sample, and how long it takes at least: the project's download delay."""
    delay = settings.getfloat("DOWNLOAD_DELAY")
    throttle = settings.getbool("AUTOTHROTTLE_ENABLED")
    if not delay and not throttle:
        return "no download delay"
    said = [f"DOWNLOAD_DELAY = {delay:g} s"] if delay else []
    if throttle:
        said.append("AutoThrottle on")
    minimum = f", at least {_duration(pages * delay)} for one site" if delay else ""
    return (
        f"the project's {' and '.join(said)}{minimum}; on a site you may crawl fast, "
        "-s DOWNLOAD_DELAY=0 -s AUTOTHROTTLE_ENABLED=False goes faster"
    )


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def learn(
    settings: Settings,
    spidercls: type[Spider],
    pages: int,
    spargs: dict[str, Any] | None = None,
    out: TextIO | None = None,
) -> int:
    """Crawl ``pages`` responses of the spider's site with learning on, storing nothing; print
    the learned rules as a settings snippet (stdout) and what was revoked (stderr).

    ``pages`` counts downloaded responses (``response_received``, as ``CLOSESPIDER_PAGECOUNT``
    does): the duplicate pages the add-on drops count, being received before they are dropped
    (``DuplicatePageGate``); requests dropped before a download do not."""
    err = out if out is not None else sys.stderr
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
            # a sample of the site, not the crawl: nothing read from or written to the
            # project's shared queue and seen set (a scrapy-redis fleet's)
            "SCHEDULER": "scrapy.core.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy_urlunify.DupeFilter",
            "SCHEDULER_QUEUE_CLASS": None,
        },
        priority="cmdline",
    )
    for name in ("SPIDER_MIDDLEWARES", "DOWNLOADER_MIDDLEWARES"):
        components = dict(settings.getdict(name))
        for path in list(components):
            if getattr(_loaded(path), "urlunify_role", "").startswith("queue_"):
                components[path] = None
        settings.set(name, components, priority="cmdline")
    if (settings.getpriority("LOG_LEVEL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
        settings.set("LOG_LEVEL", "ERROR", priority="cmdline")  # the progress line is the output
    addons = dict(settings.getdict("ADDONS"))
    if not any("scrapy_urlunify" in str(k) for k in addons):
        addons["scrapy_urlunify.Addon"] = 0
        settings.set("ADDONS", addons, priority="cmdline")
    print(
        f"# learning from the first {plural(pages, 'response')} of spider {spidercls.name!r} "
        f"({pace(settings, pages)})",
        file=err,
        flush=True,
    )
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(spidercls)
    progress = Progress(crawler, pages, err)
    crawler.signals.connect(progress.response_received, signal=signals.response_received)
    process.crawl(crawler, **(spargs or {}))
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    received = stats.get("response_received_count", 0)
    more = f" ({received - pages} more were under way when it stopped)" if received > pages else ""
    progress.line.done(f"# learning: {plural(received, 'response')}{more}")
    learning = UnifyCrawl.of(crawler).learning
    learner = learning.learner if learning is not None else None
    if learner is None:
        print(
            "# scrapy-urlunify did not learn: page signatures are off (URLUNIFY_SIGNATURES)",
            file=err,
        )
        return 1
    if not received:
        print("# scrapy-urlunify did not learn: no response arrived (the start URLs?)", file=err)
        return 1
    print(
        f"# {plural(received, 'response')} of spider {spidercls.name!r} "
        f"({stats.get('finish_reason', 'not finished')}): {plural(len(learner.rules), 'rule')}"
    )
    for rule in learner.rules:
        print(f"#   {rule}")
    for revocation in learner.revoked:
        print(f"# {revocation}", file=err)
    hints = hints_text(learner.hints(learner.min_pairs), limit=20)
    if hints:
        print("\n".join("# " + line for line in hints.splitlines()))
    print(learner.settings_snippet(), end="")
    return 0


def _loaded(path: Any) -> Any:
    try:
        return load_object(path) if isinstance(path, str) else path
    except (ImportError, ValueError, NameError, AttributeError, TypeError):
        return None
