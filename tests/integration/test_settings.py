"""The ``URLUNIFY_*`` settings: a bad value stops the crawl at start-up, naming the setting."""

from __future__ import annotations

import pytest
import pytest_twisted
from demo_crawl import ADDON, crawl

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
        (
            "URLUNIFY_DOMAIN_ALIASES",
            [["one.test"]],
            "URLUNIFY_DOMAIN_ALIASES: group 0 needs two or more hosts",
        ),
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


# --- every URLUNIFY_* setting, with wrong types and values: a start-up error naming it ----------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

from scrapy import Spider  # noqa: E402
from scrapy.crawler import CrawlerRunner  # noqa: E402

from scrapy_urlunify.core._policy import Policy
from scrapy_urlunify.integration.settings import SETTINGS

#: wrong values by kind of setting (see Setting.kind)
WRONG: dict[str, list[object]] = {
    "bool": [[1], {"on": True}, "maybe", 2],
    "number": ["fast", "nan", float("nan"), "1e999", float("inf"), -1, [1], True],
    "int": ["many", "nan", "1e999", float("inf"), -1, 2.5, [1], True],
    "choice": ["everywhere", ["site"], 5],
    "field": ["", " ", ["url"], 5, "\ud800"],
    "optional_field": [["text"], 5, "\ud800"],
    "store": ["redsi://127.0.0.1:6379/0", "/var/lib/jobdir", 5, ["redis://127.0.0.1"]],
    "key_template": [5, "urlunify:all", "urlunify:%(scope)s:%(spider)s", ["urlunify:%(scope)s"]],
    "policy:str": [5, "\ud800", "two words", ["a"]],
    "policy:params": [5, "[broken json", {"host.test": 5}, [5]],
    "policy:groups": [5, [["one.test"]], "[broken json"],
    "policy:forms": [5, "[broken json", ["/p"], {"h.test": {"/p/{a}": "/q/{b}"}}, {"h.test": 5}],
    "policy:bool_or_list": ["two words", 5, {"a": 1}],
    "policy:list": [5, [5], [""]],
    "policy:bool": ["maybe", [True], {"on": 1}, 2],
    "policy:int": ["long", "2.5", 2.5, -1, True, [3]],
}
EXTRA: dict[str, list[object]] = {
    "URLUNIFY_TRAP_REPETITIONS": [1],  # every path would be a trap: nothing fetched
    "URLUNIFY_LEARN_MIN_PAIRS": [1],
    "URLUNIFY_LEARN_PROBATION_SAMPLES": [0],  # a rule trusted on its evidence alone
    "URLUNIFY_REDIS_TIMEOUT": [0],
}
CASES = [
    (name, value) for name, s in SETTINGS.items() for value in WRONG[s.kind] + EXTRA.get(name, [])
]


class _Nowhere(Spider):
    name = "nowhere"
    start_urls = ["http://127.0.0.1:9/"]  # never reached: the crawl must fail before

    def parse(self, response):  # type: ignore[no-untyped-def]
        yield from ()


def test_the_table_holds_every_setting_the_package_reads():
    package = Path(__file__).parents[2] / "scrapy_urlunify"
    used = {
        m
        for path in package.rglob("*.py")
        for m in re.findall(r"URLUNIFY_[A-Z_]+[A-Z]", path.read_text())
    }
    used -= {"URLUNIFY_DEMO_PROXY", "URLUNIFY_DEMO_HOSTS"}  # the demo's own, not the plugin's
    assert used <= set(SETTINGS), used - set(SETTINGS)
    # the policy settings are named after the Policy fields they set, all of them
    assert {s.field for s in SETTINGS.values() if s.field} == set(Policy.field_names()) - {"sites"}
    assert {n for n, s in SETTINGS.items() if not s.field} <= used
    for setting in SETTINGS.values():
        assert setting.doc.strip(), setting.name


def test_no_setting_is_read_outside_the_table():
    """A setting read inline with its own default would escape the start-up check."""
    package = Path(__file__).parents[2] / "scrapy_urlunify"
    inline = re.compile(r"""\.get(?:bool|int|float|list|dict)?\(\s*["']URLUNIFY_""")
    offenders = [
        f"{path.relative_to(package)}:{i}"
        for path in package.rglob("*.py")
        if path.name != "settings.py" and path.parent.name != "demo"
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if inline.search(line)
    ]
    assert offenders == []


@pytest.mark.parametrize("name, value", CASES, ids=[f"{n}={v!r}" for n, v in CASES])
@pytest_twisted.inlineCallbacks
def test_every_wrong_setting_stops_the_crawl_at_startup_naming_it(name, value):
    from scrapy_urlunify.integration.settings import SettingsError

    runner = CrawlerRunner(
        {
            **ADDON,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "ERROR",
            "ROBOTSTXT_OBEY": False,
            "DOWNLOAD_TIMEOUT": 2,
            name: value,
        }
    )
    crawler = runner.create_crawler(_Nowhere)
    with pytest.raises(SettingsError) as info:
        yield runner.crawl(crawler)
    assert str(info.value).startswith(name)
    assert info.value.setting.startswith(name)  # URLUNIFY_KEY_PARAMS['HOST.TEST'] names a key too
