"""Real Scrapy crawls of the demo site (a real server on loopback) with the plugin on.

The demo site knows its ground truth (``DemoSite.page_id(url)``), so "every distinct page
fetched once, none missed" is counted, not guessed.
"""

from __future__ import annotations

import logging

import pytest
import pytest_twisted

from _crawl import ADDON, ConfiguredSpider, crawl
from scrapy_urlunify.demo.spider import DemoSpider
from scrapy_urlunify import Policy, standardize
from scrapy_urlunify.demo.server import DemoServer
from scrapy_urlunify.demo.site import DemoSite
from scrapy_urlunify.params import is_tracking_param

SIZE = 50


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(size=SIZE)


@pytest_twisted.inlineCallbacks
def test_configured_spider_fetches_every_page_exactly_once(site):
    server = DemoServer(site).start()
    try:
        plain = yield crawl(server, site, {}, ConfiguredSpider)
        result = yield crawl(server, site, ADDON, ConfiguredSpider)
    finally:
        yield server.stop()
    fetches = result.page_fetches()
    assert set(fetches) == set(site.pages), "pages missed or unknown pages fetched"
    assert {p: n for p, n in fetches.items() if n > 1} == {}, "a page was fetched twice"
    assert result.stats["finish_reason"] == "finished"
    # plain Scrapy on the same spider fetches many pages again
    assert sum(plain.page_fetches().values()) > 3 * len(site.pages)
    # every URL we asked for is a standardized one: no session id, tracker, fragment, default port
    for url in result.fetched_urls:
        assert standardize(url, policy=Policy(route_fragments=False)) == url, url
        assert ";jsessionid" not in url.lower() and "phpsessid" not in url.lower()
        assert not any(is_tracking_param(p.split("=")[0].lower()) for p in url.partition("?")[2].split("&") if p)
    # exactly one URL per distinct page, plus the redirects the site answers with
    redirects = [r for r in result.records if r.method == "GET" and r.status in (301, 302)]
    assert len(result.fetched_urls) == len(site.pages) + len(redirects)
    # items: one per item page, none twice; of a page and its copy (a print view, a mirror:
    # equal body text), only the one fetched first yields items (the other is a duplicate page)
    item_pages = [site.page_id(i["url"]) for i in result.items]
    assert len(item_pages) == len(set(item_pages))
    copies = site.content_duplicates
    assert set(site.items) - set(copies) - set(copies.values()) <= set(item_pages) <= set(site.items)
    groups: dict[str, set[str]] = {}
    for copy, original in copies.items():
        groups.setdefault(original, {original}).add(copy)
    for group in groups.values():
        if group & set(site.items):
            assert len(group & set(item_pages)) == 1, group
    assert result.stats["urlunify/signature/duplicates"] == len(copies)
    stats = result.stats
    assert stats["urlunify/duplicates"] == stats["dupefilter/filtered"] > 0
    assert stats["urlunify/rewritten"] > 0
    # the sister domain is crawlable although only termomont.rs is an allowed domain
    assert stats["urlunify/allowed_offsite"] > 0
    assert any(r.url.split("/")[2].endswith("termomont.co.rs") for r in result.records if r.method == "GET")


@pytest_twisted.inlineCallbacks
def test_addon_line_alone_removes_most_redundant_fetches(site):
    server = DemoServer(site).start()
    try:
        plain = yield crawl(server, site, {})
        result = yield crawl(server, site, ADDON)
    finally:
        yield server.stop()
    fetches, plain_fetches = result.page_fetches(), plain.page_fetches()
    assert set(fetches) == set(site.pages)  # nothing missed on defaults
    redundant = sum(fetches.values()) - len(fetches)
    plain_redundant = sum(plain_fetches.values()) - len(plain_fetches)
    assert plain_redundant > 5 * len(site.pages)
    # what remains needs configuration: the sister domain and the news site's parameters
    assert redundant < plain_redundant / 20
    assert {p.split(":")[0] for p, n in fetches.items() if n > 1} <= {"termomont", "news"}


class FilteredStartSpider(DemoSpider):
    """Start requests that go through the dupefilter (Scrapy's are ``dont_filter=True``, and a
    redirect inherits that flag), as links found on a page do."""

    name = "filtered-start"

    async def start(self):  # type: ignore[override]
        from scrapy import Request

        for url in self.start_urls:
            yield Request(url, dont_filter=False)


@pytest_twisted.inlineCallbacks
def test_redirect_to_the_same_page_is_followed_not_filtered(site):
    """scrapy#1225: http://www.site.test/secure/... answers 301 to https://; unified, the target
    has the identifier of its source, and Scrapy's own filter would drop it."""
    secure = [p for p in site.pages if "/secure/" in p]
    assert secure
    path = secure[0].split(":", 1)[1]
    server = DemoServer(site).start()
    try:
        result = yield crawl(server, site, {**ADDON, "DEPTH_LIMIT": 1}, FilteredStartSpider,
                             start_urls=[f"http://www.site.test{path}"])
    finally:
        yield server.stop()
    statuses = [(r.url, r.status) for r in result.records if r.method == "GET"]
    assert statuses[0] == (f"http://www.site.test{path}", 301)
    assert (f"https://www.site.test{path}", 200) in statuses
    assert result.page_fetches()[secure[0]] == 1
    assert result.stats["urlunify/redirects/same_page"] == 1


@pytest_twisted.inlineCallbacks
def test_redirect_loop_still_ends(site):
    # a redirect chain that returns to its own page is allowed through, so REDIRECT_MAX_TIMES must end it
    server = DemoServer(site).start()
    try:
        result = yield crawl(server, site, {**ADDON, "REDIRECT_MAX_TIMES": 3}, FilteredStartSpider,
                             start_urls=["http://site.test/loop"])
    finally:
        yield server.stop()
    assert result.stats["finish_reason"] == "finished"
    loop = [r for r in result.records if r.method == "GET" and r.url.endswith("/loop")]
    assert [r.status for r in loop] == [301] * 4  # the first request and 3 redirects, then Scrapy gives up
    assert result.stats["urlunify/redirects/same_page"] == 3


@pytest_twisted.inlineCallbacks
def test_start_url_is_recorded_so_links_back_to_it_are_not_fetched(site):
    server = DemoServer(site).start()
    try:
        result = yield crawl(server, site, ADDON, ConfiguredSpider)
    finally:
        yield server.stop()
    assert result.page_fetches()["site:/"] == 1
    assert result.stats["urlunify/recorded_unfiltered"] >= 1


@pytest_twisted.inlineCallbacks
def test_scopes_never_filter_each_other_and_a_scope_resumes(site, tmp_path):
    jobdir = str(tmp_path / "job")
    server = DemoServer(site).start()
    try:
        first = yield crawl(server, site, {**ADDON, "JOBDIR": jobdir, "URLUNIFY_SCOPE": "a"}, ConfiguredSpider)
        other = yield crawl(server, site, {**ADDON, "JOBDIR": jobdir, "URLUNIFY_SCOPE": "b"}, ConfiguredSpider)
        again = yield crawl(server, site, {**ADDON, "JOBDIR": jobdir, "URLUNIFY_SCOPE": "a"}, ConfiguredSpider)
    finally:
        yield server.stop()
    assert set(first.page_fetches()) == set(site.pages)
    # another scope in the same store: every page again
    assert set(other.page_fetches()) == set(site.pages)
    # the same scope again: the job resumes, finds everything crawled, fetches nothing (even
    # the start URL, which Scrapy schedules again on every run, bypassing the dupefilter)
    assert sum(again.page_fetches().values()) == 0
    assert again.stats["urlunify/resume/start_skipped"] == 1


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
    from scrapy_urlunify.settings import SettingsError

    server = DemoServer(site).start()
    try:
        with pytest.raises(SettingsError) as info:
            yield crawl(server, site, {**ADDON, setting: value})
    finally:
        yield server.stop()
    assert expected in str(info.value)
    assert server.log == []  # nothing was fetched


@pytest_twisted.inlineCallbacks
def test_opt_out_and_rewrite_off(site):
    server = DemoServer(site).start()
    try:
        result = yield crawl(server, site, {**ADDON, "URLUNIFY_REWRITE": False}, ConfiguredSpider)
    finally:
        yield server.stop()
    assert result.stats.get("urlunify/rewritten", 0) == 0
    # URLs are fetched as the spider extracted them (not standardized), yet each page once
    assert any(standardize(u) != u for u in result.fetched_urls)
    fetches = result.page_fetches()
    assert set(fetches) == set(site.pages) and max(fetches.values()) == 1


def test_addon_keeps_a_project_fingerprinter_and_warns(caplog):
    from scrapy.settings import Settings

    from scrapy_urlunify.addon import Addon

    settings = Settings({"REQUEST_FINGERPRINTER_CLASS": "scrapy.utils.request.RequestFingerprinter"}, priority="project")
    with caplog.at_level(logging.WARNING):
        Addon().update_settings(settings)
    assert settings["REQUEST_FINGERPRINTER_CLASS"] == "scrapy.utils.request.RequestFingerprinter"
    assert "keeping the project's REQUEST_FINGERPRINTER_CLASS" in caplog.text
    assert settings["DUPEFILTER_CLASS"] == "scrapy_urlunify.dupefilter.UnifyDupeFilter"
    assert settings.getwithbase("SPIDER_MIDDLEWARES")["scrapy_urlunify.middleware.UrlUnifyMiddleware"] == 600


@pytest_twisted.inlineCallbacks
def test_dupefilter_debug_names_the_earlier_url(site, caplog):
    server = DemoServer(site).start()
    try:
        with caplog.at_level(logging.DEBUG, logger="scrapy_urlunify.dupefilter"):
            result = yield crawl(server, site, {**ADDON, "DUPEFILTER_DEBUG": True, "LOG_LEVEL": "DEBUG"},
                                 ConfiguredSpider)
    finally:
        yield server.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "scrapy_urlunify.dupefilter"]
    assert len(lines) == result.stats["urlunify/duplicates"] > 0  # every duplicate, not only the first
    assert all("same page as https://" in line or "same page as http://" in line for line in lines)
