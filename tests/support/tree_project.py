"""A Scrapy project on disk that crawls the tree site (treesite.py), for the tests that run the
``scrapy`` command line in a subprocess: ``write_project(root, extra_settings, spiders)``."""

from __future__ import annotations

import textwrap
from pathlib import Path

#: the project's settings.py: the add-on line and a crawl that is quick and deterministic enough
SETTINGS = """\
BOT_NAME = "tree"
SPIDER_MODULES = ["tree.spiders"]
ADDONS = {"scrapy_urlunify.Addon": 0}
ROBOTSTXT_OBEY = False
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
CONCURRENT_REQUESTS = 8
RETRY_ENABLED = False
"""

#: the spider "tree": from ``-a start=URL``, an item per page, every link followed
TREE_SPIDER = """\
from scrapy import Request, Spider


class TreeSpider(Spider):
    name = "tree"

    def __init__(self, start=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]

    def parse(self, response):
        yield {"page": int(response.url.rsplit("/", 1)[1])}
        for href in response.css("a::attr(href)").getall():
            yield Request(response.urljoin(href))
"""


def write_project(
    root: Path, extra_settings: str = "", spiders: dict[str, str] | None = None
) -> Path:
    """Write the project ``tree`` in ``root``: ``SETTINGS`` plus ``extra_settings``, and the
    spider modules ``spiders`` (module name -> source; default: ``tree``, :data:`TREE_SPIDER`)."""
    (root / "scrapy.cfg").write_text("[settings]\ndefault = tree.settings\n")
    (root / "tree" / "spiders").mkdir(parents=True)
    (root / "tree" / "__init__.py").write_text("")
    (root / "tree" / "spiders" / "__init__.py").write_text("")
    (root / "tree" / "settings.py").write_text(SETTINGS + extra_settings)
    for module, source in (spiders or {"tree": TREE_SPIDER}).items():
        (root / "tree" / "spiders" / f"{module}.py").write_text(textwrap.dedent(source))
    return root
