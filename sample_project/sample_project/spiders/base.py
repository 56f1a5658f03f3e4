"""What the sample spiders share: follow every link, yield one item per article page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class ArticleSpider(CrawlSpider):
    """Follows every link and yields ``{url, title, text}`` for each page with an ``<article>``.

    ``deny_extensions=[]``: the LinkExtractor does not drop ``.pdf`` & co. itself, so the
    plugin's own filters do it, and show in the stats (``urlunify/filtered/extension:pdf``).
    Base class only: it has no ``name``, so ``scrapy list`` does not show it.
    """

    rules = (Rule(LinkExtractor(deny_extensions=[]), callback="parse_page", follow=True),)

    def parse_start_url(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        return self.parse_page(response)

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        if not isinstance(response, TextResponse):  # a PDF fetched with the plugin turned off
            return
        article = response.css("article")
        if article:
            yield {
                "url": response.url,
                "title": article.css("h1.title::text").get("").strip(),
                "text": " ".join(
                    t.strip() for t in article.css(".text ::text").getall() if t.strip()
                ),
            }
