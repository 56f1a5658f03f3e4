"""One site under two domains: termomont.rs and termomont.co.rs (with and without www)."""

from .base import ArticleSpider


class MultidomainSpider(ArticleSpider):
    """The catalogue links half of its products on the sister domain ``termomont.co.rs`` only.

    With ``URLUNIFY_SISTER_SUFFIXES`` the plugin knows ``termomont.co.rs`` is ``termomont.rs``
    under another public suffix: it is not listed in ``allowed_domains``, yet its links are
    followed (the plugin lets them past Scrapy's offsite filter), and a product is fetched once
    whichever domain links to it.
    """

    name = "multidomain"
    allowed_domains = ["termomont.rs"]  # no need to list termomont.co.rs or www.*
    start_urls = ["https://termomont.rs/"]
    custom_settings = {
        "URLUNIFY_SISTER_SUFFIXES": True,
        # The explicit alternative, for hosts that do not share a label:
        # "URLUNIFY_DOMAIN_ALIASES": [["termomont.rs", "termomont.co.rs"]],
    }
