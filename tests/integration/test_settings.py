"""The ``URLUNIFY_*`` settings: a bad value stops the crawl at start-up, naming the setting."""


from __future__ import annotations

import pytest
import pytest_twisted
from _crawl import ADDON, crawl

from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite

SIZE = 50


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE)


@pytest.mark.parametrize(
    "setting, value, expected",
    [
        ("URLUNIFY_KEY_PARAMS", 5, "URLUNIFY_KEY_PARAMS: expected a list of parameter names"),
        ("URLUNIFY_MAX_URL_LENGTH", "long", "URLUNIFY_MAX_URL_LENGTH"),
        ("URLUNIFY_DOMAIN_ALIASES", [["one.test"]], "URLUNIFY_DOMAIN_ALIASES: group 0 needs two or more hosts"),
        ("URLUNIFY_IGNORE_SCHEME", "perhaps", "URLUNIFY_IGNORE_SCHEME: cannot read 'perhaps'"),
        ("URLUNIFY_REWRITE", "perhaps", "URLUNIFY_REWRITE: expected a boolean"),
    ],
)
@pytest_twisted.inlineCallbacks
def test_bad_settings_stop_the_crawl_at_startup(site, setting, value, expected):
    from scrapy_urlunify.integration.settings import SettingsError

    server = DemoServer(site).start()
    try:
        with pytest.raises(SettingsError) as info:
            yield crawl(server, site, {**ADDON, setting: value})
    finally:
        yield server.stop()
    assert expected in str(info.value)
    assert server.log == []  # nothing was fetched
