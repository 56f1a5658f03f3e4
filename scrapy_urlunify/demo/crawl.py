"""The crawls of the demo: plain Scrapy, Scrapy with the add-on configured for the site, and the
add-on with nothing configured, on the same demo site.

* **plain Scrapy**: a follow-every-link ``CrawlSpider`` with Scrapy's own defaults (its
  LinkExtractor already skips ``.pdf`` & co.) and every host of the site in ``allowed_domains``;
* **with the add-on**: ``ADDONS = {"scrapy_urlunify.Addon": 0}`` and the per-host settings of
  ``sample_project``'s ``configured`` spider (:data:`CONFIGURED_SETTINGS`); its LinkExtractor
  does not pre-filter extensions (the plugin does) and the sister domain is not listed;
* **with the add-on, nothing configured**: the add-on line alone (learning on, the add-on's
  default) and every host in ``allowed_domains``, as a new user would start.

:func:`compare` (inside a running reactor, a Deferred) and :func:`run_comparison` (starts the
reactor, or a subprocess when it cannot) serve the site, crawl it three times and return the
report of :mod:`.measure`. This is the demo's only module that drives Scrapy.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import Rule

from scrapy_urlunify.cli._progress import ProgressLine
from scrapy_urlunify.demo.measure import build_report, measure
from scrapy_urlunify.demo.site import DemoSite
from scrapy_urlunify.demo.spider import DemoSpider

__all__ = [
    "ADDON_SETTINGS",
    "ALLOWED_DOMAINS",
    "CONFIGURATION",
    "CONFIGURED_SETTINGS",
    "CRAWL_SETTINGS",
    "DEFAULT_SEED",
    "DEFAULT_SIZE",
    "PLAIN_ALLOWED_DOMAINS",
    "ConfiguredSpider",
    "PlainSpider",
    "UnconfiguredSpider",
    "compare",
    "crawl_once",
    "run_comparison",
]

DEFAULT_SIZE = 300
DEFAULT_SEED = 20240601

#: What the add-on crawl is told about the demo site (``sample_project``'s ``configured`` spider).
CONFIGURED_SETTINGS: dict[str, Any] = {
    "URLUNIFY_SISTER_SUFFIXES": True,
    "URLUNIFY_KEY_PARAMS": {"news.acme.test": ["cid"]},
    "URLUNIFY_REMOVE_PARAMS": {"news.acme.test": ["inifile", "arglink"]},
}
#: The add-on crawl's ``allowed_domains``: ``termomont.co.rs`` is found as a sister domain.
ALLOWED_DOMAINS: tuple[str, ...] = ("site.test", "news.acme.test", "termomont.rs")
#: Plain Scrapy must list every host it may follow.
PLAIN_ALLOWED_DOMAINS: tuple[str, ...] = (*ALLOWED_DOMAINS, "termomont.co.rs")

#: Settings of both crawls (plus the demo proxy). No retries: every request is counted once.
CRAWL_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": False,
    "RETRY_ENABLED": False,
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
    "DOWNLOAD_DELAY": 0,
    "DOWNLOAD_TIMEOUT": 10,
    "CLOSESPIDER_TIMEOUT": 120,  # a runaway crawl still ends
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "WARNING",
}
ADDON_SETTINGS: dict[str, Any] = {"ADDONS": {"scrapy_urlunify.Addon": 0}}

#: How each crawl was configured, as the report shows it.
CONFIGURATION: dict[str, Any] = {
    "plain": {"allowed_domains": list(PLAIN_ALLOWED_DOMAINS), "link_extractor": "LinkExtractor()"},
    "addon": {
        "ADDONS": ADDON_SETTINGS["ADDONS"],
        **CONFIGURED_SETTINGS,
        "allowed_domains": list(ALLOWED_DOMAINS),
        "link_extractor": "LinkExtractor(deny_extensions=[])",
    },
    "unconfigured": {
        "ADDONS": ADDON_SETTINGS["ADDONS"],
        "allowed_domains": list(PLAIN_ALLOWED_DOMAINS),
        "link_extractor": "LinkExtractor(deny_extensions=[])",
    },
}


# -- the three spiders ---------------------------------------------------------------------------
class _ArticleSpider(DemoSpider):
    """Follows every link; one ``{url, title, text}`` item per page with an ``<article>``."""

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        if isinstance(response, TextResponse):
            yield from super().parse_page(response)


class PlainSpider(_ArticleSpider):
    name = "plain"
    allowed_domains = list(PLAIN_ALLOWED_DOMAINS)
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)


class ConfiguredSpider(_ArticleSpider):
    name = "configured"
    allowed_domains = list(ALLOWED_DOMAINS)
    rules = (Rule(LinkExtractor(deny_extensions=[]), callback="parse_page", follow=True),)
    custom_settings = CONFIGURED_SETTINGS


class UnconfiguredSpider(_ArticleSpider):
    name = "unconfigured"
    allowed_domains = list(PLAIN_ALLOWED_DOMAINS)
    rules = (Rule(LinkExtractor(deny_extensions=[]), callback="parse_page", follow=True),)


# -- crawling --------------------------------------------------------------------------------------
def crawl_once(
    server: Any,
    site: DemoSite,
    spidercls: type,
    settings: dict[str, Any],
    progress: Callable[[int], None] | None = None,
) -> Any:
    """One crawl of the demo site; a Deferred firing with the raw observations. ``progress``
    hears the number of responses so far."""
    from scrapy import signals
    from scrapy.crawler import CrawlerRunner
    from twisted.internet import defer

    from scrapy_urlunify.demo.proxy import demo_settings
    from scrapy_urlunify.integration.crawl._meta import NEAR_DUPLICATE_OF_META, RESEMBLANCE_META

    @defer.inlineCallbacks
    def run():  # type: ignore[no-untyped-def]
        start = len(server.log)
        runner = CrawlerRunner(demo_settings(server.proxy_url, **{**CRAWL_SETTINGS, **settings}))
        crawler = runner.create_crawler(spidercls)
        items: list[dict[str, Any]] = []
        dropped: list[str] = []
        near: list[dict[str, Any]] = []
        responses: list[int] = []

        def on_response(response: Any, **kwargs: Any) -> None:
            responses.append(1)
            if progress is not None:
                progress(len(responses))
            resemblance = response.meta.get(RESEMBLANCE_META)
            if resemblance is not None:
                near.append(
                    {
                        "url": response.url,
                        "of": response.meta.get(NEAR_DUPLICATE_OF_META),
                        "resemblance": resemblance,
                    }
                )

        def on_item(item: dict[str, Any], **kwargs: Any) -> None:
            items.append(dict(item))

        def on_dropped(request: Any, **kwargs: Any) -> None:
            dropped.append(request.url)

        # signal handlers are held weakly: the closures live as long as this generator
        crawler.signals.connect(on_item, signal=signals.item_scraped)
        crawler.signals.connect(on_dropped, signal=signals.request_dropped)
        crawler.signals.connect(on_response, signal=signals.response_received)
        began = time.perf_counter()
        yield runner.crawl(crawler, start_urls=list(site.start_urls))
        seconds = time.perf_counter() - began
        return {
            "records": list(server.log[start:]),
            "stats": dict(crawler.stats.get_stats()),
            "items": items,
            "dropped": dropped,
            "near_duplicates": near,
            "seconds": seconds,
        }

    return run()


def compare(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED, out: TextIO | None = None) -> Any:
    """Serve a demo site of ``size`` pages and crawl it three times; a Deferred firing with the
    report. Needs Scrapy's (asyncio) reactor installed; use it from code that already runs the
    reactor. ``out``: where each crawl's progress goes, on one line."""
    from twisted.internet import defer

    from scrapy_urlunify.demo.server import DemoServer

    @defer.inlineCallbacks
    def run():  # type: ignore[no-untyped-def]
        site = DemoSite(size=size, seed=seed)
        server = DemoServer(site).start()
        crawls = []
        try:
            for name, spidercls, settings in (
                ("plain Scrapy", PlainSpider, {}),
                ("the add-on configured", ConfiguredSpider, ADDON_SETTINGS),
                ("the add-on alone", UnconfiguredSpider, ADDON_SETTINGS),
            ):
                line = ProgressLine(out) if out is not None else None
                began = time.monotonic()

                def tell(n: int, name: str = name, line: Any = line, began: float = began) -> None:
                    if line is not None:
                        took = time.monotonic() - began
                        noun = "response" if n == 1 else "responses"
                        line.update(f"  {name}: {n} {noun}, {took:.0f} s", force=n == 1)

                crawls.append((yield crawl_once(server, site, spidercls, settings, tell)))
                if line is not None:
                    line.done(
                        f"  {name}: {crawls[-1]['stats'].get('downloader/request_count', 0)} "
                        "requests, "
                        f"{crawls[-1]['seconds']:.1f} s"
                    )
            plain, addon, unconfigured = crawls
        finally:
            yield server.stop()
        return build_report(
            site,
            measure(site, plain),
            measure(site, addon),
            CONFIGURATION,
            unconfigured=measure(site, unconfigured),
        )

    return run()


def _reactor_reusable() -> bool:
    """Whether this process can still start Scrapy's reactor itself."""
    if "twisted.internet.reactor" not in sys.modules:
        return True
    from scrapy.utils.reactor import is_asyncio_reactor_installed
    from twisted.internet import reactor

    started = getattr(reactor, "_startedBefore", False) or getattr(reactor, "running", False)
    return is_asyncio_reactor_installed() and not started


def run_comparison(
    size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED, out: TextIO | None = None
) -> dict[str, Any]:
    """Run the comparison and return the report (a JSON-able dict).

    Runs the Twisted reactor in this process when it can (once per process: a reactor does not
    restart); otherwise (it already ran, runs, or is not Scrapy's asyncio reactor) runs
    ``python -m scrapy_urlunify.demo`` in a subprocess and reads its ``--json`` output.
    """
    if not _reactor_reusable():
        return _run_in_subprocess(size, seed, progress=out is not None)
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import reactor as installed

    reactor: Any = installed  # Twisted's interface typing misleads mypy (see demo/server.py)

    outcome: dict[str, Any] = {}

    def done(result: Any) -> None:
        outcome["result"] = result
        reactor.stop()

    reactor.callWhenRunning(lambda: compare(size, seed, out).addBoth(done))
    reactor.run()
    result: Any = outcome.get("result")
    if hasattr(result, "raiseException"):  # a twisted Failure
        result.raiseException()
    if result is None:
        raise RuntimeError("the demo crawl was interrupted")
    return result


def _run_in_subprocess(size: int, seed: int, progress: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="urlunify-demo-") as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "scrapy_urlunify.demo",
            "--size",
            str(size),
            "--seed",
            str(seed),
            "--json",
            str(out),
            "--out",
            str(Path(tmp) / "report.html"),
            *([] if progress else ["--quiet"]),
        ]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())
