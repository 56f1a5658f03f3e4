"""A crawl of the demo site with a Redis store, in its own process (``python redis_crawl_job.py CONFIG``).

CONFIG is a JSON file::

    {"proxy": "http://127.0.0.1:PORT",   # the demo server (python -m scrapy_urlunify.demo.server)
     "out": "fetched.txt",               # one line "<status> <url>" per response, line-buffered
     "result": "result.json",            # written at the end: finish reason, stats, bootstrap failure
     "spider": "plain" | "redis",        # plain: the configured demo CrawlSpider with start_urls;
                                         # redis: the same spider as a scrapy-redis RedisCrawlSpider,
                                         # reading its start URLs from the Redis list "<name>:start_urls"
     "name": "job",                      # the spider's name (also the default URLUNIFY_SCOPE)
     "start_urls": ["https://www.site.test/"],
     "heartbeat": 0.5,                   # optional: seconds between engine heartbeats (Scrapy: 5)
     "settings": {...}}                  # on top of tests/support/demo_crawl.py's BASE_SETTINGS and ADDON

A test reading ``out`` knows what was fetched so far (to stop Redis mid-crawl), and counts pages
with ``DemoSite.page_id``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from crawl_job import recording
from demo_crawl import ADDON, BASE_SETTINGS, ConfiguredSpider
from scrapy.crawler import CrawlerProcess

from scrapy_urlunify.demo.proxy import demo_settings


def spider_class(kind: str, name: str, log) -> type:  # type: ignore[no-untyped-def]
    class Recording(recording(log)):  # type: ignore[misc]
        """Writes every downloaded response to ``out``."""

        def received(self, response, request, spider=None):  # type: ignore[no-untyped-def]
            super().received(response, request, spider)
            # scrapy-redis measures MAX_IDLE_TIME_BEFORE_CLOSE from a class attribute set at
            # import, reset only when the start-URL list is non-empty: count it from this
            # process's last download instead, so a worker never closes while it has work
            self.spider_idle_start_time = int(time.time())
            self.downloaded = True

    if kind == "plain":
        return type("JobSpider", (Recording, ConfiguredSpider), {"name": name})
    if kind == "redis":
        from scrapy.exceptions import DontCloseSpider
        from scrapy_redis.spiders import RedisMixin

        class RedisJobSpider(Recording, RedisMixin, ConfiguredSpider):
            """``RedisCrawlSpider`` with the configured demo spider's rules and settings: no start
            URLs of its own, it reads them from the Redis list ``<name>:start_urls``."""

            def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
                super().__init__(*args, **kwargs)
                self.start_urls = []

            async def start(self):  # type: ignore[no-untyped-def]
                # Scrapy 2.13+ calls start(), never scrapy-redis 0.9.1's start_requests()
                for request in self.next_requests():
                    yield request

            @classmethod
            def from_crawler(cls, crawler, *args, **kwargs):  # type: ignore[no-untyped-def]
                spider = super().from_crawler(crawler, *args, **kwargs)
                spider.setup_redis(crawler)
                spider.downloaded = False
                return spider

            def spider_idle(self):  # type: ignore[no-untyped-def]
                # The idle clock starts at this worker's first download, not at its start: a
                # worker waiting for the fleet's first URL (the other worker still starting up,
                # or fetching the start page on a loaded machine) is not idle, it has not begun
                if not self.downloaded:
                    self.schedule_next_requests()
                    raise DontCloseSpider
                super().spider_idle()

        RedisJobSpider.name = name
        return RedisJobSpider
    raise ValueError(kind)


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    if config.get("heartbeat"):
        # An idle worker looks at the shared queue again on each engine heartbeat (Scrapy: every
        # 5 s); a shorter one only makes the test faster
        from scrapy.core.engine import ExecutionEngine

        ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = float(config["heartbeat"])
    settings = demo_settings(
        config["proxy"], **{**BASE_SETTINGS, **ADDON, **config.get("settings", {})}
    )
    log = open(config["out"], "a", buffering=1)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(
        spider_class(config.get("spider", "plain"), config.get("name", "job"), log)
    )
    kwargs = {"start_urls": config["start_urls"]} if config.get("start_urls") else {}
    if config.get("ready"):
        # The test gives the workers work only once both are up: on a loaded machine a worker
        # that starts late would find the whole crawl done by the other one
        from scrapy import signals

        def opened(spider):  # type: ignore[no-untyped-def]
            Path(config["ready"]).touch()

        crawler.signals.connect(opened, signal=signals.spider_opened)
    process.crawl(crawler, **kwargs)
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    Path(config["result"]).write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "bootstrap_failed": bool(process.bootstrap_failed),
                "stats": stats,
            }
        )
    )
    sys.exit(1 if process.bootstrap_failed else 0)


if __name__ == "__main__":
    main()
