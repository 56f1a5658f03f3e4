"""A news site whose article URLs carry noise parameters (the seed document's example)."""

from .base import ArticleSpider


class NewsSpider(ArticleSpider):
    """``http://news.acme.test/servlet/ContentServer?inifile=futuretense.ini&cid=…&arglink=…``:
    ``cid`` names the article, ``inifile`` and ``arglink`` change from link to link and do not
    matter. Without configuration every spelling is a new URL; with it each article is fetched
    once.
    """

    name = "news"
    allowed_domains = ["news.acme.test"]
    start_urls = ["http://news.acme.test/"]
    custom_settings = {
        # identity: on this host, when a URL has `cid`, only `cid` tells pages apart
        "URLUNIFY_KEY_PARAMS": {"news.acme.test": ["cid"]},
        # rewrite: never even send these (the server ignores them)
        "URLUNIFY_REMOVE_PARAMS": {"news.acme.test": ["inifile", "arglink"]},
        # the seen-URLs store of this spider (JOBDIR) is shared by every spider of scope "acme"
        "URLUNIFY_SCOPE": "acme",
    }
