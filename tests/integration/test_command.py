"""``scrapy urlunify``: the CLI with a project's and a spider's settings (a real Scrapy project)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

NEWS_SPIDER = """
import scrapy

class News(scrapy.Spider):
    name = "news"
    allowed_domains = ["news.acme.test"]
    start_urls = ["http://news.acme.test/"]
    custom_settings = {
        "URLUNIFY_KEY_PARAMS": {"news.acme.test": ["cid"]},
        "URLUNIFY_REMOVE_PARAMS": ["inifile", "arglink"],
        "URLUNIFY_SCOPE": "acme",
    }

class Plain(scrapy.Spider):
    name = "plain"
"""

A = "http://news.acme.test/servlet/ContentServer?inifile=futuretense.ini&cid=11&arglink=nolink"
B = "https://www.news.acme.test/servlet/ContentServer?cid=11&arglink=other"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    pkg = tmp_path / "proj"
    (pkg / "spiders").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "spiders" / "__init__.py").write_text("")
    (pkg / "settings.py").write_text(
        'SPIDER_MODULES = ["proj.spiders"]\nADDONS = {"scrapy_urlunify.Addon": 0}\n'
    )
    (pkg / "spiders" / "news.py").write_text(NEWS_SPIDER)
    return tmp_path


def scrapy(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "urlunify", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_same_with_the_spiders_settings(project):
    r = scrapy(project, "same", A, B, "--spider", "news")
    assert r.returncode == 0, r.stderr
    assert "same page: decided by" in r.stdout and "keep_key_params" in r.stdout
    assert "acme|news.acme.test/servlet/ContentServer?cid=11" in r.stdout


def test_without_the_spider_the_urls_differ(project):
    r = scrapy(project, "same", A, B, "--spider", "plain")
    assert r.returncode == 1 and "different pages" in r.stdout
    assert "plain|" in r.stdout  # the spider's name is its default scope


def test_command_line_settings_apply(project):
    r = scrapy(project, "explain", "http://x.test/a.pdf", "-s", "URLUNIFY_DENY_EXTENSIONS=zip")
    assert r.returncode == 0 and "filter      followed" in r.stdout


def test_errors_are_usage_errors(project):
    r = scrapy(project, "explain", "http://x.test/", "--spider", "nope")
    assert r.returncode == 2 and "Spider not found: nope" in r.stderr
    r = scrapy(project, "explain", "http://x.test/", "-s", "URLUNIFY_MAX_URL_LENGTH=abc")
    assert r.returncode == 2 and "URLUNIFY_MAX_URL_LENGTH" in r.stderr


def test_store_is_listed_in_the_usage_line(project):
    r = scrapy(project, "-h")
    assert r.returncode == 0
    usage = [
        line for line in r.stdout.splitlines() if line.startswith("Usage")
    ] + r.stdout.splitlines()[:3]
    assert any("store" in line and "learn" in line for line in usage), r.stdout


def test_store_reads_the_projects_jobdir(project):
    from scrapy_urlunify.stores._jobdir import SEEN_FILENAME, JobdirSeenStore

    job = project / "job"
    job.mkdir()
    with JobdirSeenStore(job / SEEN_FILENAME) as seen:
        for fp in range(1, 4):
            seen.add(fp)
    settings = project / "proj" / "settings.py"
    settings.write_text(settings.read_text() + f"JOBDIR = {str(job)!r}\n")
    r = scrapy(project, "store", "info")
    assert r.returncode == 0, r.stderr
    assert f"JOBDIR {job}" in r.stdout and "seen requests            3" in r.stdout


def test_store_reads_the_projects_redis_store(project, redis_server):
    settings = project / "proj" / "settings.py"
    settings.write_text(settings.read_text() + f"URLUNIFY_STORE = {redis_server.url!r}\n")
    r = scrapy(project, "store", "info", "--spider", "news")
    assert r.returncode == 0, r.stderr
    assert "scope 'acme'" in r.stdout and "urlunify:acme:seen" in r.stdout
