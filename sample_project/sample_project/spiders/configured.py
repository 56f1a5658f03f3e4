"""Every host of the demo site, with what the plugin needs to know about each one."""

from .base import ArticleSpider


class ConfiguredSpider(ArticleSpider):
    """The whole demo site with per-host configuration: each distinct page is fetched once.

    ``python -m scrapy_urlunify.demo`` runs this configuration against plain Scrapy.
    """

    name = "configured"
    allowed_domains = ["site.test", "news.acme.test", "termomont.rs"]  # termomont.co.rs: sister
    start_urls = ["https://www.site.test/"]
    custom_settings = {
        "URLUNIFY_SISTER_SUFFIXES": True,
        "URLUNIFY_KEY_PARAMS": {"news.acme.test": ["cid"]},
        "URLUNIFY_REMOVE_PARAMS": {"news.acme.test": ["inifile", "arglink"]},
    }
