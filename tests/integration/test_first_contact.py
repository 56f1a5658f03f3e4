"""A newcomer's first crawls: a mistake is a message that says what to do. ``scrapy
crawl`` and ``scrapy urlunify`` in a real project, each in its own process, against the tree site
(tests/support/treesite.py), as tests/integration/test_refusals.py does."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tree_project import TREE_SPIDER, write_project
from treesite import TreeSite, tree_links

INSTALL_REDIS = "pip install 'scrapy-urlunify[redis]'"

#: the misspelled setting the warning test looks for, in the project's settings
EXTRA_SETTINGS = "URLUNIFY_SIGNATURE = False\n"

SPIDER = (
    TREE_SPIDER.replace(
        '    name = "tree"\n',
        '    name = "tree"\n    custom_settings = {"URLUNIFY_KEY_PARAM": ["id"]}\n',
    )
    + """

class SettingsStartSpider(TreeSpider):
    # its start URL from the setting TREE_START: scrapy urlunify learn passes no -a

    name = "tree-from-settings"
    custom_settings = {}

    async def start(self):
        yield Request(self.settings["TREE_START"])

    def start_requests(self):
        yield Request(self.settings["TREE_START"])
"""
)

MAILTO_SPIDERS = """from scrapy import Spider

from scrapy_urlunify import follow_all


class Naive(Spider):
    name = "naive"

    def __init__(self, start=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]

    def parse(self, response):
        yield from response.follow_all(css="a")


class Helped(Naive):
    name = "helped"

    def parse(self, response):
        yield from follow_all(response, css="a", spider=self)
"""

#: run Scrapy in a Python without the ``redis`` package (an import of it fails, as uninstalled)
WITHOUT_REDIS = "import sys; sys.modules['redis'] = None; from scrapy.cmdline import execute; execute(['scrapy', *sys.argv[1:]])"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(
        tmp_path_factory.mktemp("project"),
        EXTRA_SETTINGS,
        {"tree": SPIDER, "mailto": MAILTO_SPIDERS},
    )


@pytest.fixture(scope="module")
def site() -> TreeSite:
    with TreeSite() as site:
        yield site


def scrapy(project: Path, *args: str, redis: bool = True) -> subprocess.CompletedProcess[str]:
    head = [sys.executable, "-m", "scrapy"] if redis else [sys.executable, "-c", WITHOUT_REDIS]
    return subprocess.run([*head, *args], cwd=project, capture_output=True, text=True, timeout=120)


def test_a_redis_store_without_the_redis_package_is_a_refusal_naming_the_extra(project, site):
    run = scrapy(
        project,
        "crawl",
        "tree",
        "-a",
        f"start={site.url(0)}",
        "-s",
        "URLUNIFY_STORE=redis://127.0.0.1:1/0",
        redis=False,
    )
    errors = [line for line in run.stderr.splitlines() if "ERROR" in line or "CRITICAL" in line]
    assert run.returncode == 1, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "ModuleNotFoundError" not in run.stderr, run.stderr[
        -5000:
    ]
    assert len(errors) == 1 and INSTALL_REDIS in errors[0] and "URLUNIFY_STORE" in errors[0], (
        run.stderr[-3000:]
    )
    assert not site.hits


def test_store_info_without_the_redis_package_names_the_extra(project):
    run = scrapy(
        project,
        "urlunify",
        "store",
        "info",
        "--store",
        "redis://127.0.0.1:1/0",
        "--scope",
        "x",
        redis=False,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert INSTALL_REDIS in run.stderr, run.stderr


def test_an_unknown_setting_is_one_warning_naming_the_closest_known_one(project, site):
    # one misspelling from each source: the project's settings.py, the spider's custom_settings, -s
    run = scrapy(
        project,
        "crawl",
        "tree",
        "-a",
        f"start={site.url(0)}",
        "-s",
        'URLUNIFY_REMOVE_PARAM=["from"]',
    )
    assert run.returncode == 0, run.stderr[-3000:]
    warnings = [
        line for line in run.stderr.splitlines() if "WARNING" in line and "Unknown setting" in line
    ]
    expected = {
        "URLUNIFY_REMOVE_PARAM": "URLUNIFY_REMOVE_PARAMS",
        "URLUNIFY_KEY_PARAM": "URLUNIFY_KEY_PARAMS",
        "URLUNIFY_SIGNATURE": "URLUNIFY_SIGNATURES",
    }
    assert len(warnings) == len(expected), "\n".join(warnings)
    for wrong, right in expected.items():
        assert [w for w in warnings if f" {wrong} " in w and f"did you mean {right}?" in w], (
            "\n".join(warnings)
        )


def test_learn_tells_its_progress_and_counts_in_words(project, site):
    run = scrapy(
        project,
        "urlunify",
        "learn",
        "--spider",
        "tree-from-settings",
        "--pages",
        "60",
        "-s",
        f"TREE_START={site.url(0)}",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stderr.splitlines()
    assert lines[0] == (
        "# learning from the first 60 responses of spider 'tree-from-settings' (no download delay)"
    ), run.stderr
    progress = [line for line in lines if line.startswith("# learning: ")]
    assert progress[0] == "# learning: 1 of 60 responses, 0 rules so far", run.stderr
    summary = run.stdout.splitlines()[0]
    assert summary.startswith("# 6") and "responses of spider 'tree-from-settings'" in summary, (
        run.stdout
    )
    assert summary.endswith(": 0 rules"), summary
    received = int(summary.split()[1])
    done = progress[-1]
    assert done.startswith(f"# learning: {received} responses"), progress
    if received > 60:  # the count says why it is above the budget
        assert f"({received - 60} more were under way when it stopped)" in done
    for text in (run.stdout, run.stderr):
        assert " 1 rules" not in text and " 1 responses" not in text


def test_learn_takes_spider_arguments_and_says_what_paces_it(project, site):
    """``-a`` as ``scrapy crawl`` takes it; a project's download delay named, with the way to
    go faster; and the other commands refuse learn's options."""
    run = scrapy(
        project,
        "urlunify",
        "learn",
        "--spider",
        "naive",
        "-a",
        f"start={site.url(0)}",
        "--pages",
        "5",
        "-s",
        "DOWNLOAD_DELAY=0.05",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "DOWNLOAD_DELAY = 0.05 s" in run.stderr and "-s DOWNLOAD_DELAY=0" in run.stderr
    assert "responses of spider 'naive' (closespider_pagecount)" in run.stdout, run.stdout
    wrong = scrapy(project, "urlunify", "same", "http://a.test/", "http://b.test/", "--pages", "3")
    assert wrong.returncode == 2 and "--pages and -a are options of learn" in wrong.stderr


def test_each_command_has_its_help(project):
    run = scrapy(project, "urlunify", "same", "-h")
    assert run.returncode == 0
    assert run.stdout.startswith("usage: scrapy urlunify same"), run.stdout[:300]
    run = scrapy(project, "urlunify", "learn", "--help")
    assert run.returncode == 0 and run.stdout.startswith("usage: scrapy urlunify learn --spider")


def test_plural():
    from scrapy_urlunify.integration.command import plural

    assert [plural(n, "rule") for n in (0, 1, 2)] == ["0 rules", "1 rule", "2 rules"]


def mailto_first(i: int, size: int) -> list[str]:
    return ["mailto:someone@example.com", "tel:+3811234567", *tree_links(i, size)]


def final_stats(stderr: str) -> dict[str, object]:
    dump = re.search(r"Dumping Scrapy stats:\n(\{.*?\})\n", stderr, re.S)
    assert dump, stderr[-3000:]
    return ast.literal_eval(re.sub(r"datetime\.datetime\([^)]*\)", "None", dump.group(1)))


@pytest.mark.parametrize("spider", ["naive", "helped"])
def test_a_pages_mailto_link_costs_its_other_links_unless_followed_with_the_helper(project, spider):
    with TreeSite(size=40, links=mailto_first) as site:
        run = scrapy(project, "crawl", spider, "-a", f"start={site.url(0)}")
        assert run.returncode == 0, run.stderr[-3000:]
        stats = final_stats(run.stderr)
        if (
            spider == "naive"
        ):  # Scrapy refuses the mailto: Request in the callback: the page's links are lost
            assert "Missing scheme" in run.stderr
            assert set(site.hits) == {"/p/0"}
            assert "urlunify/filtered/scheme:mailto" not in stats
        else:
            assert "Traceback" not in run.stderr and "Missing scheme" not in run.stderr, run.stderr[
                -3000:
            ]
            assert not site.lost()
            assert stats["urlunify/filtered/scheme:mailto"] == site.size
            assert stats["urlunify/filtered/scheme:tel"] == site.size


def summary_lines(stderr: str) -> list[str]:
    start = stderr.index("scrapy-urlunify summary")
    lines = stderr[start:].splitlines()[1:]
    return lines[: next((i for i, line in enumerate(lines) if not line.startswith("  ")), None)]


def back_home(i: int, size: int) -> list[str]:
    return [*tree_links(i, size), "/p/0", "/p/0?utm_source=footer"]


def test_with_the_projects_own_dupefilter_the_summary_counts_its_duplicates(project):
    with TreeSite(size=40, links=back_home) as site:
        run = scrapy(
            project,
            "crawl",
            "naive",
            "-a",
            f"start={site.url(0)}",
            "-s",
            "DUPEFILTER_CLASS=scrapy.dupefilters.RFPDupeFilter",
        )
    assert run.returncode == 0, run.stderr[-3000:]
    stats = final_stats(run.stderr)
    assert stats["dupefilter/filtered"] >= 40  # every page links back home, twice
    lines = summary_lines(run.stderr)
    duplicates = next(line for line in lines if "duplicates filtered" in line)
    filtered = stats["dupefilter/filtered"] + stats.get("urlunify/dropped_at_dequeue", 0)
    assert f"duplicates filtered {filtered} " in duplicates, lines


def noisy_links(i: int, size: int) -> list[str]:
    return [*tree_links(i, size), "/p/0", f"/p/0?utm_source=p{i}", f"/p/{i}#top", f"/p/{i}?ref=x"]


def test_the_summary_says_what_the_add_on_saved_beyond_plain_scrapy(project):
    """The closing summary's "requests saved" is what a plain Scrapy crawl of the same site
    fetches more (counted by the server), near enough: it is estimated from the links the
    crawl met, with no table of them."""
    with TreeSite(size=60, links=noisy_links) as plain_site:
        plain = scrapy(
            project,
            "crawl",
            "naive",
            "-a",
            f"start={plain_site.url(0)}",
            "-s",
            "URLUNIFY_ENABLED=False",
        )
        assert plain.returncode == 0, plain.stderr[-3000:]
    with TreeSite(size=60, links=noisy_links) as site:
        run = scrapy(project, "crawl", "naive", "-a", f"start={site.url(0)}")
        assert run.returncode == 0, run.stderr[-3000:]
    assert not site.lost()
    beyond = sum(plain_site.hits.values()) - sum(site.hits.values())
    assert beyond >= 60  # a utm_source spelling of the home page on every page, at least
    line = next(line for line in summary_lines(run.stderr) if "requests saved" in line)
    found = re.search(r"at least about (\d+) beyond plain Scrapy", line)
    assert found, line
    assert abs(int(found.group(1)) - beyond) <= 0.05 * beyond, (line, beyond)


def test_a_rerun_on_a_store_that_knows_the_site_says_why_it_fetches_little(project, redis_server):
    with TreeSite(size=20) as site:
        store = ("-s", f"URLUNIFY_STORE={redis_server.url}")
        first = scrapy(project, "crawl", "naive", "-a", f"start={site.url(0)}", *store)
        assert first.returncode == 0, first.stderr[-3000:]
        assert "already knew" not in first.stderr
        again = scrapy(project, "crawl", "naive", "-a", f"start={site.url(0)}", *store)
        assert again.returncode == 0, again.stderr[-3000:]
    knew = [
        line
        for line in again.stderr.splitlines()
        if "already knew" in line and "[scrapy_urlunify]" in line
    ]
    assert len(knew) == 1, again.stderr[-3000:]
    assert (
        "INFO" in knew[0] and "already knew 20 requests" in knew[0] and "scope 'naive'" in knew[0]
    ), knew
    assert final_stats(again.stderr)["urlunify/seen_before"] == 20
