"""A worker of a fleet crawling the tree site (tests/_treesite.py), in its own process, as
scrapy-redis users run one: scrapy-redis's scheduler (one request queue in Redis for the fleet),
``RedisDupeFilter`` (one seen set in Redis), the add-on, ``SCHEDULER_PERSIST = True``, and a
spider that reads its start URL from the Redis list ``<name>:start_urls``
(``python tree_fleet_job.py CONFIG``).

CONFIG is a JSON file::

    {"redis": "redis://127.0.0.1:PORT/0",
     "name": "fleet",                 # the spider's name: the scope and scrapy-redis's keys
     "result": "result.json",         # written at the end: finish reason and stats
     "ready": "ready",                # touched once the spider is open
     "kill_on_item": [4],             # SIGKILL itself while the item of one of these pages is in
                                      # the pipelines (its links not yet scheduled), once per page
     "marks": "dir",                  # where the once-only kills are remembered across runs
     "settings": {...}}
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from scrapy import Request, signals
from scrapy.core.engine import ExecutionEngine
from scrapy.crawler import CrawlerProcess
from scrapy_redis.spiders import RedisSpider

SETTINGS = {
    "ADDONS": {"scrapy_urlunify.Addon": 0},
    "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy_urlunify.RedisDupeFilter",
    "SCHEDULER_PERSIST": True,
    "MAX_IDLE_TIME_BEFORE_CLOSE": 2,
    "ROBOTSTXT_OBEY": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "CONCURRENT_REQUESTS": 4,
    "DOWNLOAD_DELAY": 0.02,
    "RETRY_ENABLED": False,
    "CLOSESPIDER_TIMEOUT": 60,
}

CONFIG: dict = {}


def once(name: str) -> bool:
    mark = Path(CONFIG["marks"], name)
    if mark.exists():
        return False
    mark.touch()
    return True


class TreeFleetSpider(RedisSpider):
    name = "fleet"

    async def start(self):  # type: ignore[no-untyped-def]
        # Scrapy 2.13+ calls start(), never scrapy-redis 0.9.1's start_requests()
        for request in self.next_requests():
            yield request

    def parse(self, response):  # type: ignore[no-untyped-def]
        # scrapy-redis measures MAX_IDLE_TIME_BEFORE_CLOSE from its last start URL: count from this
        # process's last response instead, so a worker never closes while the fleet has work
        self.spider_idle_start_time = int(time.time())
        yield {"page": int(response.url.rsplit("/", 1)[1])}
        for href in response.css("a::attr(href)").getall():
            yield Request(response.urljoin(href))


class KillOnItem:
    def process_item(self, item, spider=None):  # type: ignore[no-untyped-def]
        if item["page"] in CONFIG.get("kill_on_item", ()) and once(f"item-{item['page']}"):
            os.kill(os.getpid(), signal.SIGKILL)
        return item


def main() -> None:
    CONFIG.update(json.loads(Path(sys.argv[1]).read_text()))
    Path(CONFIG["marks"]).mkdir(parents=True, exist_ok=True)
    # an idle worker looks at the shared queue on each engine heartbeat (Scrapy: every 5 s)
    ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = 0.5
    TreeFleetSpider.name = CONFIG.get("name", "fleet")
    settings = {**SETTINGS, "REDIS_URL": CONFIG["redis"], "URLUNIFY_STORE": CONFIG["redis"],
                "ITEM_PIPELINES": {f"{__name__}.KillOnItem": 100}, **CONFIG.get("settings", {})}
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(TreeFleetSpider)

    def opened(spider):  # type: ignore[no-untyped-def]
        spider.spider_idle_start_time = int(time.time())
        Path(CONFIG["ready"]).touch()

    crawler.signals.connect(opened, signal=signals.spider_opened)
    process.crawl(crawler)
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    Path(CONFIG["result"]).write_text(json.dumps({"stats": stats, "bootstrap_failed": process.bootstrap_failed}))
    sys.exit(1 if process.bootstrap_failed else 0)


if __name__ == "__main__":
    main()
