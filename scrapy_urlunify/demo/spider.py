"""A follow-every-link spider for the demo site."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy.http import Response
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class DemoSpider(CrawlSpider):
    """Follows all links (Scrapy's default LinkExtractor: no PDFs, no mailto)
    and yields one item per page that has an ``<article>``.

    ``start_urls`` is a spider argument (list or comma-separated string);
    default: the demo site's start URL.
    """

    name = "urlunify-demo"
    rules = (Rule(LinkExtractor(), callback="parse_page", follow=True),)

    def __init__(
        self, *args: Any, start_urls: list[str] | str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(start_urls, str):
            start_urls = [u for u in start_urls.split(",") if u]
        self.start_urls = list(start_urls or ["https://www.site.test/"])

    def parse_start_url(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        return self.parse_page(response)

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        article = response.css("article")
        if article:
            yield {
                "url": response.url,
                "title": article.css("h1.title::text").get("").strip(),
                "text": " ".join(
                    t.strip() for t in article.css(".text ::text").getall() if t.strip()
                ),
            }
