"""A crawl of the tree site (tests/support/treesite.py) in its own process, for tests that kill it at
chosen points (``python tree_job.py CONFIG``).

CONFIG is a JSON file::

    {"start": "http://127.0.0.1:PORT/p/0",
     "jobdir": "...",
     "fleet": "redis://127.0.0.1:PORT/0",  # instead of start and jobdir: a worker of a fleet (below)
     "name": "tree",                 # the spider's name: the default scope (and scrapy-redis's keys)
     "result": "result.json",        # written at the end: finish reason and the plugin's stats
     "ready": "ready",               # touched once the spider is open (optional)
     "kill_on_item": [4, 17],        # SIGKILL itself while the item of one of these pages is in
                                     # the pipelines (its links not yet scheduled), once per page
     "kill_on_queue_write": false,   # SIGKILL itself while Scrapy writes requests.queue/active.json
                                     # at close (the file created, still empty), once
     "marks": "dir",                 # where the once-only kills are remembered across runs
     "fsize": 0,                     # RLIMIT_FSIZE in bytes (a disk that fills up), 0: none
     "settings": {...}}

The spider yields, for each page, an item ``{"page": i}`` first and then a request per link.

A fleet worker runs as scrapy-redis users run one: scrapy-redis's scheduler (one request queue in
Redis for the fleet), ``RedisDupeFilter`` (one seen set in Redis), ``SCHEDULER_PERSIST = True``,
and a spider that reads its start URL from the Redis list ``<name>:start_urls``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from pathlib import Path

from scrapy import Request, Spider, signals
from scrapy.core.scheduler import Scheduler
from scrapy.crawler import CrawlerProcess

SETTINGS = {
    "ADDONS": {"scrapy_urlunify.Addon": 0},
    "ROBOTSTXT_OBEY": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "INFO",
    "CONCURRENT_REQUESTS": 4,
    "RETRY_ENABLED": False,
    "CLOSESPIDER_TIMEOUT": 60,
}

FLEET_SETTINGS = {
    "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy_urlunify.RedisDupeFilter",
    "SCHEDULER_PERSIST": True,
    "MAX_IDLE_TIME_BEFORE_CLOSE": 2,
    "DOWNLOAD_DELAY": 0.02,
}

CONFIG: dict = {}


def once(name: str) -> bool:
    """True the first time ``name`` is asked for, in any run of the job."""
    mark = Path(CONFIG["marks"], name)
    if mark.exists():
        return False
    mark.touch()
    return True


class TreeSpider(Spider):
    name = "tree"

    def parse(self, response):  # type: ignore[no-untyped-def]
        yield {"page": int(response.url.rsplit("/", 1)[1])}
        for href in response.css("a::attr(href)").getall():
            yield Request(response.urljoin(href))


def fleet_spider() -> type[Spider]:
    from scrapy_redis.spiders import RedisSpider

    class TreeFleetSpider(TreeSpider, RedisSpider):
        async def start(self):  # type: ignore[no-untyped-def]
            # Scrapy 2.13+ calls start(), never scrapy-redis 0.9.1's start_requests()
            for request in self.next_requests():
                yield request

        def parse(self, response):  # type: ignore[no-untyped-def]
            # scrapy-redis measures MAX_IDLE_TIME_BEFORE_CLOSE from its last start URL: count from
            # this process's last response instead, so a worker never closes while the fleet has work
            self.spider_idle_start_time = int(time.time())
            return super().parse(response)

    return TreeFleetSpider


class KillOnItem:
    """An item pipeline that kills the crawl while a chosen page's item is in it."""

    def process_item(self, item, spider=None):  # type: ignore[no-untyped-def]
        if item["page"] in CONFIG.get("kill_on_item", ()) and once(f"item-{item['page']}"):
            os.kill(os.getpid(), signal.SIGKILL)
        return item


class KillOnQueueWrite(Scheduler):
    """Scrapy's scheduler, killed while it saves its queue state at close."""

    def _write_dqs_state(self, dqdir, state):  # type: ignore[no-untyped-def]
        if CONFIG.get("kill_on_queue_write") and once("queue-write"):
            Path(dqdir, "active.json").open("w").close()  # what open("w") leaves before json.dump
            os.kill(os.getpid(), signal.SIGKILL)
        super()._write_dqs_state(dqdir, state)


def main() -> None:
    CONFIG.update(json.loads(Path(sys.argv[1]).read_text()))
    Path(CONFIG["marks"]).mkdir(parents=True, exist_ok=True)
    if CONFIG.get("fsize"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (CONFIG["fsize"], CONFIG["fsize"]))
    settings = {**SETTINGS, "ITEM_PIPELINES": {f"{__name__}.KillOnItem": 100}}
    if CONFIG.get("fleet"):
        from scrapy.core.engine import ExecutionEngine

        # an idle worker looks at the shared queue on each engine heartbeat (Scrapy: every 5 s)
        ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = 0.5
        spidercls = fleet_spider()
        settings.update(FLEET_SETTINGS, REDIS_URL=CONFIG["fleet"], URLUNIFY_STORE=CONFIG["fleet"])
        kwargs = {}
    else:
        spidercls = TreeSpider
        settings.update(JOBDIR=CONFIG["jobdir"], SCHEDULER=f"{__name__}.KillOnQueueWrite")
        kwargs = {"start_urls": [CONFIG["start"]]}
    spidercls.name = CONFIG.get("name", spidercls.name)
    process = CrawlerProcess({**settings, **CONFIG.get("settings", {})})
    crawler = process.create_crawler(spidercls)

    def opened(spider):  # type: ignore[no-untyped-def]
        if CONFIG.get("fleet"):
            spider.spider_idle_start_time = int(time.time())
        if CONFIG.get("ready"):
            Path(CONFIG["ready"]).touch()

    crawler.signals.connect(opened, signal=signals.spider_opened)
    process.crawl(crawler, **kwargs)
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    Path(CONFIG["result"]).write_text(
        json.dumps({"stats": stats, "bootstrap_failed": process.bootstrap_failed})
    )
    sys.exit(1 if process.bootstrap_failed else 0)


if __name__ == "__main__":
    main()
