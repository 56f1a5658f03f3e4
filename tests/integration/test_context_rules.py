"""A rule with a context in a real crawl: every page links the login page with its own name
(``/login?returnto=/pN``), one text whatever ``returnto`` says. The learner learns that
``returnto`` does not matter on ``/login`` (and nowhere else), its samples confirm it, and the
crawl fetches few login variants from then on, missing no page."""

from __future__ import annotations

import pytest_twisted
from minicrawl import crawl_site
from minisite import CountingSite, listen

from scrapy_urlunify.learning._learner import CONTEXT_VALUES

PAGES = 40


def _html(title: str, links: list[str], article: bool = True) -> bytes:
    anchors = "".join(f"<a href='{h}'>{h}</a>" for h in links)
    body = (
        f"<article><h1>{title}</h1><p class='text'>The text of {title}.</p></article>"
        if article
        else "<form><p>Log in to the site.</p></form>"
    )
    return f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}{anchors}</body></html>".encode()


class LoginSite(CountingSite):
    """``/pN`` links ``/p(N+1)`` and the login page returning to itself; ``/pN?returnto=x``
    is another page (``returnto`` matters there, were it ever linked)."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _params = self.count(request)
        if base == "/":
            return _html("home", [f"/p{i}" for i in range(PAGES)])
        if base == "/login":
            return _html("log in", ["/"], article=False)
        if base.startswith("/p") and base[2:].isdigit():
            n = int(base[2:])
            links = [f"/login?returnto=/p{n}"] + ([f"/p{n + 1}"] if n + 1 < PAGES else [])
            return _html(f"page {n}", links)
        request.setResponseCode(404)
        return b"not found"


def _start() -> tuple[LoginSite, object, str]:
    site = LoginSite()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def test_a_login_page_linked_from_every_page_is_learned_in_its_context():
    site, stats, items = yield crawl_site(_start, "/", {"URLUNIFY_LEARN": True})
    # learned on /login only, as the settings snippet will say
    assert stats["urlunify/learned/param/127.0.0.1/login/returnto"] >= CONTEXT_VALUES
    assert not any(
        k.startswith("urlunify/learned/param/127.0.0.1/")
        and not k.startswith("urlunify/learned/param/127.0.0.1/login/")
        for k in stats
    )
    # confirmed by its samples (other values of returnto, fetched anyway), never revoked
    assert stats["urlunify/learned/confirmed"] == 1
    assert "urlunify/learned/revoked" not in stats
    # few login variants fetched: the values that taught it and its samples, not one per page
    logins = sum(n for url, n in site.hits.items() if url.startswith("/login"))
    assert CONTEXT_VALUES <= logins <= CONTEXT_VALUES + 8, logins
    # and no page missed: every page fetched once, its item yielded once
    assert all(site.hits[f"/p{i}"] == 1 for i in range(PAGES))
    titles = sorted(i["title"] for i in items)
    assert titles == sorted(["home", *(f"page {i}" for i in range(PAGES))])


def test_the_samples_of_a_context_rule_differ_by_page_and_value():
    """A rule of two or three values (``sort`` on a shop's product route) gets its samples
    from five products as they come, not only from its values (then at the crawl's end)."""
    from scrapy_urlunify.integration.rules._samples import RuleOnProbation
    from scrapy_urlunify.learning._rule_types import LearnedRule

    rule = LearnedRule("param", "shop.test", "sort", 6, (), "/index.php?route=product%2Fview")
    p = RuleOnProbation(rule)
    url = "http://shop.test/index.php?route=product%2Fview&id={}&sort={}"
    keys = {p.sample_key(url.format(i, s)) for i in range(1, 6) for s in ("price", "name")}
    assert len(keys) == 10
    assert p.sample_key(url.format(1, "price")) == "http://shop.test/index.php?id=1&sort=price"
    assert p.covers(url.format(1, "price"), "shop.test")


TALK_PAGES = 40
#: from this page on, pages link the discussion of a category too (another text per category)
CATEGORIES_FROM = 30


class TalkSite(CountingSite):
    """A chain of pages ``/pN``, each linking the edit view of its talk page nobody wrote
    (``/edit?title=Talk:pN``: one text, whatever the title) and, from page 30 on, the
    discussion of a category (``/edit?title=Category_talk:cN``: a page of its own): what
    MediaWiki serves at ``action=edit&redlink=1``."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            return _html("home", ["/p0"])
        if base == "/edit":
            title = params.get("title", "")
            if title.startswith("Category_talk:"):
                return _html(f"discussion of {title[14:]}", [])
            return _html("edit", [], article=False)
        if base.startswith("/p") and base[2:].isdigit():
            n = int(base[2:])
            links = [f"/edit?title=Talk:p{n}"] + (
                [f"/edit?title=Category_talk:c{n}"] if n >= CATEGORIES_FROM else []
            )
            return _html(f"page {n}", links + ([f"/p{n + 1}"] if n + 1 < TALK_PAGES else []))
        request.setResponseCode(404)
        return b"not found"


def _start_talk() -> tuple[TalkSite, object, str]:
    site = TalkSite()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def test_a_rule_whose_evidence_shares_a_lead_is_checked_on_a_value_without_it(caplog):
    """``title`` does not matter on /edit for the first dozen ``Talk:…`` titles, nor for the
    samples after them (more ``Talk:…``): a rule confirmed by them would merge every category
    discussion into the empty talk page. The evidence's values all start with ``Talk:``, so one
    sample must not: the first ``Category_talk:…`` request is fetched, differs, and revokes it."""
    from scrapy_urlunify.integration.rules._probation import RULE_PROBATION

    with caplog.at_level("INFO", logger="scrapy_urlunify.integration.rules._session"):
        site, stats, items = yield crawl_site(_start_talk, "/", {"URLUNIFY_LEARN": True})
    assert stats["urlunify/learned/param/127.0.0.1/edit/title"] >= CONTEXT_VALUES
    assert stats["urlunify/learned/revoked"] == 1
    assert "urlunify/learned/confirmed" not in stats
    # the samples like the evidence agreed; the one without its lead did not
    assert (
        f"on probation, {RULE_PROBATION - 1} of {RULE_PROBATION} samples had agreed" in caplog.text
    )
    # no discussion lost: each fetched once, its item yielded once
    categories = range(CATEGORIES_FROM, TALK_PAGES)
    assert all(site.hits[f"/edit?title=Category_talk:c{n}"] == 1 for n in categories)
    titles = sorted(i["title"] for i in items)
    assert titles == sorted(
        [
            "home",
            *(f"page {n}" for n in range(TALK_PAGES)),
            *(f"discussion of c{n}" for n in categories),
        ]
    )


#: the form of an edit view: long enough for a near-duplicate signature, the same for every title
FORM = " ".join(
    f"Paragraph {w} of the editing help explains how a {w} page is written, reviewed and kept."
    for w in (
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh",
        "twelfth",
    )
)


class EditSite(CountingSite):
    """A chain of pages ``/pN``, each linking the edit view of its talk page nobody wrote:
    ``/edit?title=Talk:pN`` is a long form under "Creating Talk:pN", a near-duplicate of every
    other one, and each names its own page."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            return _html("home", ["/p0"])
        if base == "/edit":
            title = params.get("title", "").replace("_", " ")
            return (
                f"<!DOCTYPE html><html><head><title>Creating {title}</title></head><body><main>"
                f"<h1>Creating {title}</h1><form><p>{FORM}</p></form></main></body></html>"
            ).encode()
        if base.startswith("/p") and base[2:].isdigit():
            n = int(base[2:])
            links = [f"/edit?title=Talk:p{n}"] + ([f"/p{n + 1}"] if n + 1 < TALK_PAGES else [])
            return _html(f"page {n}", links)
        request.setResponseCode(404)
        return b"not found"


def _start_edit() -> tuple[EditSite, object, str]:
    site = EditSite()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def test_near_duplicates_that_show_the_value_their_urls_differ_by_teach_nothing():
    """The edit views are near-duplicates of each other, yet each shows the title its URL names:
    ``title`` identifies them, and is never learned as a parameter that does not matter."""
    site, stats, _items = yield crawl_site(_start_edit, "/", {"URLUNIFY_LEARN": True})
    assert stats["urlunify/signature/near_duplicates"] >= CONTEXT_VALUES
    assert stats["urlunify/learned/value_shown"] >= CONTEXT_VALUES
    assert not any(k.startswith("urlunify/learned/param/") for k in stats), sorted(stats)
    assert all(site.hits[f"/edit?title=Talk:p{n}"] == 1 for n in range(TALK_PAGES))


class BusterSite(EditSite):
    """The edit views of :class:`EditSite`, each linked first with a cache buster ``v=7`` (as
    WooCommerce's geolocation appends to every link of a page) and then without; the pages
    ``/pN`` too. ``v`` does not matter anywhere."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path = request.uri.decode().partition("?")[0]
        if not (path.startswith("/p") and path[2:].isdigit()):
            return super().render_GET(request)
        self.count(request)
        n = int(path[2:])
        links = [f"/edit?title=Talk:p{n}&v=7", f"/edit?title=Talk:p{n}", f"/p{n}?v=7"]
        links += [f"/p{n + 1}"] if n + 1 < TALK_PAGES else []
        return _html(f"page {n}", links)


def _start_buster() -> tuple[BusterSite, object, str]:
    site = BusterSite()
    return (site, *listen(site))


@pytest_twisted.inlineCallbacks
def test_a_page_kept_apart_for_the_value_it_shows_keeps_its_exact_duplicates():
    """``/edit?title=Talk:p1&v=7`` is a near-duplicate of the first edit view that shows its own
    title: the learner sees its own signature. ``/edit?title=Talk:p1``, fetched next, is its
    exact duplicate and must be seen with that signature too (before: with the first view's,
    "other content", so ``v`` was a counter-example and never learned)."""
    site, stats, _items = yield crawl_site(_start_buster, "/", {"URLUNIFY_LEARN": True})
    assert stats["urlunify/learned/value_shown"] >= 1
    assert any(k.startswith("urlunify/learned/param/") and k.endswith("/v") for k in stats), sorted(
        stats
    )
    assert not any(k.startswith("urlunify/learned/revoked") for k in stats), sorted(stats)
    # title matters: each talk page's edit view is fetched
    assert all(
        site.hits[f"/edit?title=Talk:p{n}&v=7"] + site.hits[f"/edit?title=Talk:p{n}"] >= 1
        for n in range(TALK_PAGES)
    )
