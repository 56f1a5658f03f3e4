"""What a crawl's stats and closing summary say: real crawls of the trap site and the
spelling site (tests/support/trapsite.py, tests/support/spellingsite.py) with the add-on."""

from __future__ import annotations

import pytest
import pytest_twisted
import spellingsite
import trapsite
from minicrawl import crawl_site, run
from scrapy import Spider

from scrapy_urlunify.integration.crawl._summary import summarize

LEARN = {"URLUNIFY_LEARN": True}


@pytest_twisted.inlineCallbacks
def test_a_request_dropped_at_dequeue_is_not_a_download_error():
    _site, stats, _items = yield crawl_site(trapsite.start, "/", LEARN)
    assert stats["urlunify/dropped_at_dequeue"] >= 4
    assert not [k for k in stats if k.startswith("downloader/exception")], stats
    # the summary counts them among the duplicates filtered
    s = summarize(stats)
    assert s["duplicates"] == stats["dupefilter/filtered"] + stats["urlunify/dropped_at_dequeue"]


class ManualSpider(Spider):
    name = "manual"

    def parse(self, response):  # type: ignore[no-untyped-def]
        yield {"url": response.url}
        yield from response.follow_all(css="nav a")


@pytest.mark.parametrize("start", [spellingsite.start, spellingsite.start_held_out])
@pytest_twisted.inlineCallbacks
def test_the_requests_saved_are_what_plain_scrapy_would_have_sent_more(start):
    """The summary's estimate of plain Scrapy's requests (a HyperLogLog of the links' raw
    fingerprints) against a real plain crawl of the same site: each page linked in eight
    spellings, as absolute links (a duplicate page links to nothing its original does not); the
    held-out spellings too."""
    site, crawler, _items, _ = yield run(start, "/", spellingsite.settings, ManualSpider)
    fetched = sum(site.hits.values())
    estimate = crawler.stats.get_value("urlunify/plain_requests")

    def plain(port):  # type: ignore[no-untyped-def]
        return spellingsite.settings(port, ADDONS={}, URLUNIFY_ENABLED=False)

    site, crawler, _items, _ = yield run(start, "/", plain, ManualSpider)
    assert crawler.stats.get_value("urlunify/plain_requests") is None
    saved = sum(site.hits.values()) - fetched
    assert saved > 500
    assert abs((estimate - fetched) - saved) <= 0.05 * saved
