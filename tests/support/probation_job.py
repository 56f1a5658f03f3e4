"""A crawl of the probation site (tests/support/probation_site.py) with learning on, in its own process,
for tests that kill it (``python probation_job.py CONFIG``).

CONFIG is a JSON file: ``{"start": URL, "result": PATH, "settings": {...}}``; the settings go on
top of tests/support/minicrawl.py's (one request at a time, breadth first, in link order). ``result``
gets the crawl's stats when it ends (not when it is killed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from scrapy.utils.reactor import install_reactor

# before _minicrawl, whose site module imports (and so installs) Twisted's default reactor
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

from minicrawl import SETTINGS, MiniSpider  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    settings = {
        **SETTINGS,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "URLUNIFY_LEARN": True,
        "LOG_LEVEL": "DEBUG",
        **config.get("settings", {}),
    }
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(MiniSpider)
    process.crawl(crawler, start_urls=[config["start"]])
    process.start()
    stats = {k: v for k, v in crawler.stats.get_stats().items() if isinstance(v, (int, float, str))}
    Path(config["result"]).write_text(json.dumps(stats))


if __name__ == "__main__":
    main()
