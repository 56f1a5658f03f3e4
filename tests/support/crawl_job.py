"""A crawl of the demo site in its own process, for tests that kill it (``python crawl_job.py``).

Arguments: proxy URL, JOBDIR, output file. Appends ``<status> <url>`` for every response it
receives, line-buffered, so a test reading the file knows what was fetched before a kill.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from demo_crawl import ADDON, BASE_SETTINGS, ConfiguredSpider
from scrapy import signals
from scrapy.crawler import CrawlerProcess

from scrapy_urlunify.demo.proxy import demo_settings


def recording(log):  # type: ignore[no-untyped-def]
    """A spider mixin that writes ``<status> <url>`` to ``log`` for every downloaded response."""

    class Recording:
        @classmethod
        def from_crawler(cls, crawler, *args, **kwargs):  # type: ignore[no-untyped-def]
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.received, signal=signals.response_downloaded)
            return spider

        def received(self, response, request, spider=None):  # type: ignore[no-untyped-def]
            log.write(f"{response.status} {response.url}\n")

    return Recording


def main() -> None:
    proxy, jobdir, out = sys.argv[1:4]
    settings = demo_settings(
        proxy,
        **{
            **BASE_SETTINGS,
            **ADDON,
            "JOBDIR": jobdir,
            "CONCURRENT_REQUESTS": 4,
            "DOWNLOAD_DELAY": 0.02,
        },
    )
    log = open(out, "a", buffering=1)

    class JobSpider(recording(log), ConfiguredSpider):  # type: ignore[misc]
        name = "job"

    process = CrawlerProcess(settings)
    process.crawl(JobSpider, start_urls=["https://www.site.test/"])
    process.start()


if __name__ == "__main__":
    main()
