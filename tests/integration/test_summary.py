"""What a crawl's stats and closing summary say: real crawls of the trap site and the
mini site (tests/support/trapsite.py, tests/support/minisite.py) with the add-on."""

from __future__ import annotations

import pytest_twisted
import trapsite
from minicrawl import crawl_site

LEARN = {"URLUNIFY_LEARN": True}


@pytest_twisted.inlineCallbacks
def test_a_request_dropped_at_dequeue_is_not_a_download_error():
    _site, stats, _items = yield crawl_site(trapsite.start, "/", LEARN)
    assert stats["urlunify/dropped_at_dequeue"] >= 4
    assert not [k for k in stats if k.startswith("downloader/exception")], stats
