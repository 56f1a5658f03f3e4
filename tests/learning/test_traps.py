"""Learning in real crawls of a site full of traps (tests/support/trapsite.py): what was measured
going wrong before the learner's safeguards, each on its own, then the whole site with learning
on."""

from __future__ import annotations

from collections import Counter

import pytest_twisted
import trapsite
from minicrawl import crawl_site

from scrapy_urlunify.integration.rules._probation import RULE_PROBATION

LEARN = {"URLUNIFY_LEARN": True}


def _cms_fetches(site: trapsite.TrapSite) -> int:
    return sum(n for path, n in site.hits.items() if path.startswith("/cms/"))


@pytest_twisted.inlineCallbacks
def test_a_big_page_with_session_ids_in_its_links_is_not_a_counter_example(caplog):
    with caplog.at_level("INFO", logger="scrapy_urlunify.integration.rules._session"):
        site, stats, _items = yield crawl_site(trapsite.start, "/", LEARN)
    # /toc (3 MB) was fetched as ?arglink=1 and ?arglink=2: one text, so it agrees with the
    # CMS pages; hashed raw, its session ids made it a counter-example that blocked arglink
    assert site.hits["/toc?arglink=1"] == 1 and site.hits["/toc?arglink=2"] == 1
    assert stats["urlunify/learned/param/127.0.0.1/arglink"] >= 3
    unlearned = [r.getMessage() for r in caplog.records if "Unlearned" in r.getMessage()]
    assert not [m for m in unlearned if "arglink" in m]  # never unlearned (only /w/'s rule is)
    # the 24 arglink spellings on /more need no fetch but for the 4 CMS pages never seen:
    # 8 fetches taught the rule, one per other page after it, and the rule's probation
    # fetches 5 of the spellings it merged anyway (40 fetches without the rule)
    assert _cms_fetches(site) <= 8 + 4 + RULE_PROBATION, " ".join(
        sorted(p for p in site.hits if p.startswith("/cms/"))
    )


@pytest_twisted.inlineCallbacks
def test_requests_queued_before_a_rule_are_checked_again_at_dequeue():
    site, stats, _items = yield crawl_site(trapsite.start, "/", LEARN)
    # /toc, fetched first, queued /cms/N?arglink=t for every CMS page before arglink was
    # learned: those of the pages fetched meanwhile are dropped as they leave the queue
    assert all(site.hits[f"/cms/{i}?arglink=t"] == 0 for i in range(4))
    assert all(site.hits[f"/cms/{i}?arglink=t"] == 1 for i in range(4, trapsite.CMS_PAGES))
    assert stats["urlunify/dropped_at_dequeue"] >= 4


@pytest_twisted.inlineCallbacks
def test_default_values_never_teach_that_a_parameter_does_not_matter():
    site, stats, _items = yield crawl_site(trapsite.start, "/", LEARN)
    # /S/list = /S/list?page=1 and /S/x = /S/x?lang=en on four sections, met first: the
    # pages behind ?page=2, ?lang=de, ?sort=date must still be fetched
    for s in trapsite.SECTIONS:
        for path in (
            f"/{s}/list?page=2",
            f"/{s}/list?page=3",
            f"/{s}/x?lang=de",
            f"/{s}/find?sort=date",
        ):
            assert site.hits[path] == 1, path
    learned = [k for k in stats if k.startswith("urlunify/learned/param/")]
    assert not any(k.endswith(("/page", "/lang", "/sort")) for k in learned), learned


@pytest_twisted.inlineCallbacks
def test_a_wrong_declared_canonical_never_hides_pages(caplog):
    with caplog.at_level("DEBUG", logger="scrapy_urlunify.integration.pages._declared"):
        site, stats, items = yield crawl_site(trapsite.start, "/blog/post-0", {})
    # every post names /blog/ its canonical; trusted at once, /blog/ counted as seen and the
    # posts only it links to were never fetched
    assert site.hits["/blog/"] == 1
    assert {i["title"] for i in items} == {
        "blog",
        *(f"post-{i}" for i in range(trapsite.BLOG_POSTS)),
    }
    assert stats["urlunify/canonical/counter_examples"] >= 1
    assert "urlunify/canonical/recorded" not in stats
    # the warning names both URLs
    assert (
        "/blog/ of http://127.0.0.1" in caplog.text
        and "/blog/post-0 has other content" in caplog.text
    )


@pytest_twisted.inlineCallbacks
def test_declared_canonicals_are_trusted_once_verified():
    # in link order: the frontier would schedule the last print views (new pages that link
    # nothing new) after /good/last, whose links to their articles then come before the trust
    site, stats, items = yield crawl_site(trapsite.start, "/good/", {"URLUNIFY_FRONTIER": False})
    # the first five print views declare their article canonical: each article is fetched,
    # and found the same page (a signature duplicate: no second item)
    assert all(site.hits[f"/good/{i}"] == 1 for i in range(5))
    assert stats["urlunify/canonical/verified"] == 5
    # from then on the site's canonicals are trusted: the last articles need no fetch
    assert stats["urlunify/canonical/recorded"] == 3
    assert all(site.hits[f"/good/{i}"] == 0 for i in range(5, trapsite.GOOD_PAGES))
    titles = Counter(i["title"] for i in items)
    assert set(titles) == {
        "good",
        "good-more",
        "good-last",
        *(f"good-{i}" for i in range(trapsite.GOOD_PAGES)),
    }
    assert max(titles.values()) == 1


@pytest_twisted.inlineCallbacks
def test_a_new_rule_is_on_probation_and_what_it_merged_is_never_lost(caplog):
    with caplog.at_level("INFO", logger="scrapy_urlunify.integration.rules._session"):
        site, stats, items = yield crawl_site(trapsite.start, "/w/", LEARN)
    # ?v= changes nothing on /w/0..3: learned. On /w/4..7 it does, seen only after the rule:
    # the requests the rule merged are fetched anyway (samples) or kept, the first sample
    # revokes the rule, and the kept ones are scheduled again
    assert stats["urlunify/learned/param/127.0.0.1/v"] >= 3
    assert stats["urlunify/learned/revoked"] == 1
    assert "Unlearned" in caplog.text and "/w/4?v=x" in caplog.text
    titles = Counter(i["title"] for i in items)
    half, n = trapsite.W_PAGES // 2, trapsite.W_PAGES
    expected = {
        "w",
        "w-next",
        "w-last",
        *(f"w-{i}" for i in range(half)),
        *(f"w-{i}-{v}" for i in range(half, n) for v in "xyz"),
    }
    assert set(titles) == expected
    assert max(titles.values()) == 1
    assert all(site.hits[f"/w/{i}?v={v}"] == 1 for i in range(half, n) for v in "xyz")


@pytest_twisted.inlineCallbacks
def test_a_confirmed_rule_leaves_probation():
    site, stats, _items = yield crawl_site(trapsite.start, "/", LEARN)
    # arglink: five of the spellings it merged were fetched anyway, all the same pages
    assert stats["urlunify/learned/probation/samples"] >= 5
    assert stats["urlunify/learned/confirmed"] >= 1


@pytest_twisted.inlineCallbacks
def test_with_learning_on_no_page_is_missed_and_no_item_yielded_twice():
    _site, stats, items = yield crawl_site(trapsite.start, "/", LEARN)
    titles = Counter(i["title"] for i in items)
    assert set(titles) == trapsite.expected_pages()
    assert [t for t, n in titles.items() if n > 1] == []
    assert stats["finish_reason"] == "finished"
    # and learning paid: fewer requests than the same crawl without it
    _site_off, stats_off, items_off = yield crawl_site(
        trapsite.start, "/", {"URLUNIFY_LEARN": False}
    )
    assert {i["title"] for i in items_off} == trapsite.expected_pages()
    assert stats["downloader/request_count"] < stats_off["downloader/request_count"]
