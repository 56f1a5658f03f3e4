"""The demo a newcomer runs (``python -m scrapy_urlunify.demo``) and the copyable ``sample_project/``.

Everything runs in subprocesses: the comparison runs its own reactor, and ``scrapy`` commands run
as a user would type them, so nothing here shares the reactor with the pytest-twisted tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import escape
from pathlib import Path

import pytest

from scrapy_urlunify.demo.report_text import learned_rules
from scrapy_urlunify.demo.site import DemoSite

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_project"
SIZE = 50
SPIDERS = {"configured", "multidomain", "news", "site"}


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT")
    }
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def _scrapy(*args: str, timeout: float = 90, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=SAMPLE,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, str]:
    out = tmp_path_factory.mktemp("demo")
    html, data = out / "report.html", out / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy_urlunify.demo",
            "--size",
            str(SIZE),
            "--out",
            str(html),
            "--json",
            str(data),
        ],
        cwd=out,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(data.read_text()), html, proc.stdout


def test_the_addon_fetches_each_page_once_and_misses_none(comparison):
    report, _, _ = comparison
    site, plain, addon = report["site"], report["plain"], report["addon"]
    demo = DemoSite(size=SIZE)
    assert site["pages"] == len(demo.pages)
    assert addon["pages_missed"] == 0 and addon["missed"] == []
    assert addon["false_merges"] == 0
    assert addon["distinct_pages"] == site["pages"]
    # once each, but for the pages a link reaches with a default value spelled out
    # (/blog/?page=1, ?lang=en, ?sort=relevance): no URL rule can know those
    assert addon["redundant_fetches"] > 0 and set(addon["redundant_pages"]) <= demo.default_spelled
    assert addon["duplicate_items"] == 0 and addon["duplicate_items_same_text"] == 0
    # a print view or mirror copy is fetched, recognized by its body text, and yields no items;
    # so is a default value's spelling (but on pages with a clock) and every soft 404 but one
    copies = [c for c in demo.content_duplicates if c in demo.items]
    assert addon["items"] == site["items"] - len(copies)
    assert (
        addon["saved_by"]["signature_duplicates"]
        >= len(demo.content_duplicates) + addon["soft_404s"] - 1
    )
    assert addon["finish_reason"] == plain["finish_reason"] == "finished"
    # plain Scrapy reaches every page too, but many of them again and again
    assert plain["pages_missed"] == 0
    assert plain["redundant_fetches"] > 0
    assert plain["requests"] > 2 * addon["requests"]
    assert report["requests_saved"] == plain["requests"] - addon["requests"] > 0
    # what each rule saved comes from the crawl's stats
    assert addon["saved_by"]["duplicates"] > 0
    assert addon["saved_by"]["filtered"].get("extension:pdf", 0) > 0
    assert isinstance(addon["saved_by"]["signature_duplicates"], int)


def test_the_addon_with_nothing_configured_learns_and_loses_nothing(comparison):
    # the add-on line alone, as a new user starts (learning on by default): every page once
    # at least, no page missed, no item twice; the few extra requests against the configured
    # crawl are what the learner needs to see before it adopts a rule, and its rules' probation
    # (at the demo's default size it is within 10% of the configured crawl: see the report)
    report, _, _ = comparison
    site, plain, addon, bare = (
        report["site"],
        report["plain"],
        report["addon"],
        report["unconfigured"],
    )
    assert bare["pages_missed"] == 0 and bare["false_merges"] == 0
    assert bare["distinct_pages"] == site["pages"]
    assert bare["duplicate_items"] == 0 and bare["duplicate_items_same_text"] == 0
    assert bare["finish_reason"] == "finished"
    assert addon["requests"] <= bare["requests"] < plain["requests"] / 4
    # the mirror of the sister domain is learned, not configured
    assert "alias/termomont.rs/termomont.co.rs" in bare["saved_by"]["learned"]
    assert report["unconfigured_extra_share"] == round(bare["requests"] / addon["requests"] - 1, 4)


def test_the_report_is_printed_and_written_as_html(comparison):
    report, html, stdout = comparison
    assert html.is_file()
    assert str(html) in stdout
    assert "plain Scrapy" in stdout and "redundant fetches" in stdout
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert (
        "add-on, nothing configured" in stdout and "add-on, nothing configured" in html.read_text()
    )
    for crawl in ("plain", "addon", "unconfigured"):
        for key in ("requests", "redundant_fetches", "items", "pages_missed"):
            assert f"{report[crawl][key]:,}" in page, (crawl, key)
    assert f"{report['site']['pages']}</b> distinct pages" in page
    # the near-duplicate pages each add-on crawl found, with how alike (none on the demo site,
    # whose print views and mirror copies are exact copies: the exact signature's)
    section = page.split("<h2>Near-duplicate pages</h2>", 1)[1].split("<h2>", 1)[0]
    for crawl in ("addon", "unconfigured"):
        found = report[crawl]["near_duplicates"]
        assert len(found) == report[crawl]["stats_near_duplicates"]
        for near in found[:10]:
            assert f"<code>{escape(near['url'])}</code>: {near['resemblance']:.1%} alike" in section
    assert section.count("No near-duplicate page.") == sum(
        not report[c]["near_duplicates"] for c in ("addon", "unconfigured")
    )
    # self-contained: no script, no stylesheet or image fetched from anywhere
    assert not re.search(r"<script|<link|<img|\bsrc=|@import|url\(", page, re.I)


def test_the_report_shows_every_crawl_and_what_they_learned_and_reads_on_a_phone(comparison):
    report, html, stdout = comparison
    page = html.read_text(encoding="utf-8")
    assert "crawled three ways" in page
    charts = dict(re.findall(r'<svg[^>]*aria-label="([^"]+)" viewBox="0 0 (\d+) \d+"', page))
    svgs = re.findall(r'<svg[^>]*aria-label="([^"]+)" viewBox="0 0 (\d+) \d+".*?</svg>', page, re.S)
    bodies = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(bodies) == len(svgs) >= 6 and charts
    for (title, width), body in zip(svgs, bodies):
        crawls = ("plain Scrapy", "with the add-on", "add-on, nothing configured")
        if "skipped" in title:
            crawls = crawls[1:]  # plain Scrapy skipped nothing
        assert all(f">{name}<" in body for name in crawls), (title, width)
    # each chart twice: for a wide screen and for a phone, whose text stays >= 12 px at 340 px
    widths = sorted({int(w) for _, w in svgs})
    assert widths[0] <= 360 and len(widths) == 2, widths
    assert "@media (max-width: 640px)" in page
    narrow = [body for (_, w), body in zip(svgs, bodies) if int(w) <= 360]
    assert len(narrow) == len(bodies) / 2
    assert (
        min(int(size) for body in narrow for size in re.findall(r'font-size="(\d+)"', body)) >= 12
    )
    # the rules the crawl with nothing configured learned, with their evidence, in both reports
    learned = "termomont.co.rs serves the pages of termomont.rs"
    pairs = report["unconfigured"]["saved_by"]["learned"]["alias/termomont.rs/termomont.co.rs"]
    assert f"{learned}: <b>{pairs}</b> page pair" in page
    assert f"{learned} ({pairs} page pair" in stdout
    # a rule revoked during the crawl is listed as revoked, not among the rules in force
    revoked = [
        k
        for c in ("addon", "unconfigured")
        for k, flag in report[c]["saved_by"]["learned"].items()
        if k.startswith("revoked/") and flag
    ]
    assert stdout.count("  revoked: ") == len(revoked)
    assert page.count(": revoked, a counter-example showed it matters") == len(revoked)


def test_the_rules_in_force_at_the_end_leave_out_those_revoked():
    crawl = {
        "saved_by": {
            "learned": {
                "alias/mirror.site.test/site.test": 3,
                "revoked/alias/mirror.site.test/site.test": 1,
                "param/site.test/print": 3,
                "revoked": 1,
                "confirmed": 2,
            }
        }
    }
    assert learned_rules(crawl) == [("the parameter print does not matter on site.test", 3)]
    assert learned_rules(crawl, revoked=True) == [
        ("site.test serves the pages of mirror.site.test", 3)
    ]


def test_the_sample_project_configured_spider_is_the_one_the_demo_runs():
    sys.path.insert(0, str(SAMPLE))
    try:
        from sample_project.spiders.configured import ConfiguredSpider
    finally:
        sys.path.remove(str(SAMPLE))
    from scrapy_urlunify.demo.crawl import ALLOWED_DOMAINS, CONFIGURED_SETTINGS

    assert ConfiguredSpider.custom_settings == CONFIGURED_SETTINGS
    assert tuple(ConfiguredSpider.allowed_domains) == ALLOWED_DOMAINS


def test_scrapy_list_in_the_sample_project():
    proc = _scrapy("list", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert set(proc.stdout.split()) == SPIDERS


def test_scrapy_crawl_news_fetches_each_article_once(tmp_path):
    site = DemoSite(size=SIZE)
    news_pages = {p for p in site.pages if p.startswith("news:")}
    news_items = {p for p in site.items if p.startswith("news:")}
    server = subprocess.Popen(
        [sys.executable, "-m", "scrapy_urlunify.demo.server", "--size", str(SIZE)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
        assert line, "the demo server did not start"
        proxy = json.loads(line)["proxy_url"]
        items_file = tmp_path / "items.json"
        proc = _scrapy(
            "crawl",
            "news",
            "-O",
            str(items_file),
            "-s",
            "CLOSESPIDER_TIMEOUT=60",
            "-s",
            "LOG_LEVEL=INFO",
            URLUNIFY_DEMO_PROXY=proxy,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stderr

    def stat(name: str) -> int:
        found = re.search(rf"'{re.escape(name)}': (\d+)", log)
        return int(found.group(1)) if found else 0

    assert re.search(r"'finish_reason': 'finished'", log)
    # every news page (the index and each article) requested exactly once
    assert stat("downloader/request_count") == len(news_pages)
    assert stat("downloader/response_status_count/200") == len(news_pages)
    assert stat("urlunify/duplicates") > 0  # the arglink/inifile spellings were recognized
    assert "scope 'acme'" in log  # the spider's URLUNIFY_SCOPE
    items = json.loads(items_file.read_text())
    ids = [site.page_id(item["url"]) for item in items]
    assert sorted(ids) == sorted(news_items)  # every article, none twice
    assert all(item["title"] and item["text"] for item in items)
    assert all("arglink" not in item["url"] and "inifile" not in item["url"] for item in items)


def test_scrapy_urlunify_learn_prints_the_rules_of_a_sample_crawl():
    # the news spider with its configuration taken away: what a user would see on day one (a
    # site of 120 pages has a dozen news pages: enough independent pairs)
    server = subprocess.Popen(
        [sys.executable, "-m", "scrapy_urlunify.demo.server", "--size", "120"],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = server.stdout.readline() if server.stdout else ""
        assert line, "the demo server did not start"
        proxy = json.loads(line)["proxy_url"]
        proc = _scrapy(
            "urlunify",
            "learn",
            "--spider",
            "news",
            "--pages",
            "200",
            "-s",
            "URLUNIFY_REMOVE_PARAMS={}",
            "-s",
            "URLUNIFY_KEY_PARAMS={}",
            "-s",
            "CLOSESPIDER_TIMEOUT=60",
            URLUNIFY_DEMO_PROXY=proxy,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert proc.returncode == 0, proc.stderr[-3000:]
    snippet = "\n".join(line for line in proc.stdout.splitlines() if not line.startswith("#"))
    # a settings snippet to pin: the identity-only layer the crawl applied it in
    assert snippet == "URLUNIFY_IGNORE_PARAMS = {'news.acme.test': ['arglink']}", proc.stdout
    assert "parameter 'arglink' does not matter on news.acme.test" in proc.stdout
    # and it needs a spider
    assert _scrapy("urlunify", "learn", timeout=60).returncode != 0


def test_a_rule_learned_again_after_its_revocation_is_in_force():
    crawl = {
        "saved_by": {"learned": {"param/site.test/print": 3, "revoked/param/site.test/print": 0}}
    }
    assert learned_rules(crawl) == [("the parameter print does not matter on site.test", 3)]
    assert learned_rules(crawl, revoked=True) == []
