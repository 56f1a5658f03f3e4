"""A crawl of the demo site in its own process with the add-on alone (learning on, no per-site
configuration): the learner, not the settings, decides which URLs are one page.

Arguments: proxy URL, JOBDIR, output file (``<status> <url>`` appended for every response, as
``crawl_job.py`` does).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from crawl_job import recording
from demo_crawl import ADDON, BASE_SETTINGS
from scrapy.crawler import CrawlerProcess

from scrapy_urlunify.demo.proxy import demo_settings
from scrapy_urlunify.demo.spider import DemoSpider


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
    with open(out, "a", buffering=1) as log:

        class JobSpider(recording(log), DemoSpider):  # type: ignore[misc]
            name = "job"
            allowed_domains = ["site.test", "news.acme.test", "termomont.rs", "termomont.co.rs"]

        process = CrawlerProcess(settings)
        process.crawl(JobSpider, start_urls=["https://www.site.test/"])
        process.start()


if __name__ == "__main__":
    main()
