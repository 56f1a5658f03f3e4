"""Every host of the demo site, on the plugin's defaults."""

from .base import ArticleSpider


class SiteSpider(ArticleSpider):
    """No ``URLUNIFY_*`` setting at all: ``www.``, ``http``/``https``, index pages, session ids,
    tracking parameters, ``..`` and ``//`` are unified out of the box. What is left needs
    knowledge of the site (see the ``configured`` spider): the news site's ``arglink`` noise and
    the sister domain, which must be listed here because nothing says it is the same site.
    """

    name = "site"
    allowed_domains = ["site.test", "news.acme.test", "termomont.rs", "termomont.co.rs"]
    start_urls = ["https://www.site.test/"]
