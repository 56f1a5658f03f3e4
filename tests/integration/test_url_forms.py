"""Form rules learned from declared canonicals, in a real crawl of a small shop
(tests/support/formsite.py) with the add-on alone: a product linked under its category's path
is fetched until the form is learned, and a form that holds on some categories and not on the
next is revoked by its probation, its page fetched; sixteen at a time, the path forms of a
shape under way go one at a time, and two spellings a rule merged while they were queued do not
both go."""

from __future__ import annotations

from collections import Counter
from urllib.parse import parse_qsl, urlsplit

import formsite
import pytest_twisted
from minicrawl import PageSpider, assert_every_page_once, run
from minisite import CountingSite, declared_page, links_page, listen, not_found
from wikisite import article_text


def _page(url: str) -> str | None:
    parts = urlsplit(url)
    return formsite.page_of(parts.path, dict(parse_qsl(parts.query)))


def _all_pages() -> set[str]:
    pages = {"/"}
    for c in range(formsite.CATEGORIES):
        pages.add(f"/cat/{c}/")
        if c >= formsite.WHOLE:
            pages.add(f"/cat/{c}/red")
        for n in range(formsite.PRODUCTS):
            pages.add(f"/product/{formsite.slug(c, n)}/")
    return pages


def _whole(crawler, items):  # type: ignore[no-untyped-def]
    assert_every_page_once(crawler, items, _page, _all_pages())


@pytest_twisted.inlineCallbacks
def test_a_category_path_form_is_learned_and_a_form_that_fails_later_is_revoked():
    site, crawler, items, dropped = yield run(formsite.start, "/", {}, PageSpider)
    stats = crawler.stats.get_stats()
    learned = {k for k in stats if k.startswith("urlunify/learned/form/")}
    assert any(k.endswith("/shop/*/{s2}") for k in learned), learned
    # every product is linked in both forms: 90 path-form links. A category's form needs six
    # of its canonicals (and takes three samples); the form of every category, six categories:
    # the last three categories' path forms are fetched only as its samples
    path_form = Counter(url.split("/")[2] for url in site.hits if url.startswith("/shop/"))
    assert sum(path_form.values()) <= 5 * (6 + 3) + 1 + 3, path_form
    assert sum(path_form[str(c)] for c in range(6, formsite.CATEGORIES)) <= 3, path_form
    # the red list of the first categories is the category, declared: a form of it was learned
    # from six of them, and revoked when the red list of a mixed category showed other rows
    assert stats.get("urlunify/learned/revoked") >= 1
    assert any(k.startswith("urlunify/learned/revoked/form/") for k in stats)
    # nothing lost, nothing twice: the mixed categories' red lists are scraped
    _whole(crawler, items)


#: Scrapy's defaults, sixteen requests at a time
SIXTEEN = {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16}
DEPTH_FIRST = {
    **SIXTEEN,
    "DEPTH_PRIORITY": 0,
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.LifoMemoryQueue",
}


@pytest_twisted.inlineCallbacks
def test_path_forms_of_a_shape_under_way_go_a_page_at_a_time():
    # breadth-first, every category's twenty links leave the queue together. The first path
    # form goes alone (the first of its URL group); once its declared canonical was compared,
    # the others of its shape (of any category: the category is a classifier) go one at a
    # time; the rest wait behind, and are dropped once the form is learned. 8 path forms are
    # fetched (13 in a few runs); with the first category's burst let go, 20; paced by no
    # shape, 32-35
    site, crawler, items, _ = yield run(formsite.start, "/", SIXTEEN, PageSpider)
    path_form = [url for url in site.hits if url.startswith("/shop/")]
    assert len(path_form) <= 16, path_form
    _whole(crawler, items)


@pytest_twisted.inlineCallbacks
def test_two_spellings_a_new_rule_merged_in_the_queue_do_not_both_go():
    # depth-first, a product's two links leave the queue side by side: once the path form is
    # learned, both are one page, yet both were queued as two. The second waits for the first
    # to land, and is dropped. Without it (path forms paced alone), 149-161 responses
    _, crawler, items, _ = yield run(formsite.start, "/", DEPTH_FIRST, PageSpider)
    assert crawler.stats.get_value("downloader/response_count") <= len(_all_pages()) + 30
    _whole(crawler, items)


class _PagerSite(CountingSite):
    """Lists ``/t/<x>/`` that link pages of theirs as ``/t/<x>/page/<n>/`` and as
    ``/t/<x>/?paged=<n>`` (which declares the first canonical): ``pages`` gives each list's, in
    link order; by default nine lists, the first three their page 2, the other six their page
    3."""

    def __init__(self, pages: dict[str, tuple[int, ...]] | None = None) -> None:
        super().__init__()
        self.pages = pages or {x: (2,) if x in "abc" else (3,) for x in "abcdefghi"}

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        parts = path.strip("/").split("/")
        if path == "/":
            links = [f"/t/{x}/" for x in self.pages]
        elif len(parts) == 2 and parts[0] == "t" and not params:
            pages = self.pages.get(parts[1], ())
            links = [link for n in pages for link in (f"{path}page/{n}/", f"{path}?paged={n}")]
        elif len(parts) == 2 and parts[0] == "t" or len(parts) == 4 and parts[2] == "page":
            pretty = f"/t/{parts[1]}/page/{params.get('paged') or parts[3]}/"
            text = f"<p>The list {parts[1]}, page {pretty[-2]}.</p>"
            return declared_page(pretty, text, canonical=pretty)
        else:
            return not_found(request)
        return links_page(path, links)


@pytest_twisted.inlineCallbacks
def test_a_rule_on_probation_is_confirmed_with_a_wider_one():
    # ?paged=2 of three lists makes /t/{s1}?paged=2 (a respelling: three canonicals), which
    # then merges nothing: its probation has no sample to take. ?paged=3 of the next list makes
    # the wider /t/{s1}?paged={q0}, whose three samples confirm it, and the narrower one with
    # it; before, it stayed on probation to the end of the crawl
    site, crawler, items, _ = yield run(
        lambda: (s := _PagerSite(), *listen(s)), "/", {}, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert stats.get("urlunify/learned/form/127.0.0.1//t/{s1}?paged=2") == 3
    assert stats.get("urlunify/learned/form/127.0.0.1//t/{s1}?paged={q0}") == 4
    assert stats.get("urlunify/learned/probation/subsumed") == 1
    assert stats.get("urlunify/learned/confirmed") == 2
    assert sum(n for url, n in site.hits.items() if "?paged=" in url) <= 7  # 4 pairs, 3 samples


#: twelve lists: the first three link their page 2, the others their pages 3 and 2
_DEEP = {x: (2,) if x in "abc" else (3, 2) for x in "abcdefghijkl"}


def _list_page(url: str) -> tuple[str, str]:
    """``(list, page)`` of a list's page in either spelling: ``/t/x/page/2/``, ``/t/x/?paged=2``."""
    parts = urlsplit(url)
    segments = parts.path.strip("/").split("/")
    return segments[1], dict(parse_qsl(parts.query)).get("paged") or segments[3]


@pytest_twisted.inlineCallbacks
def test_a_rule_on_probation_takes_no_samples_of_its_own_beside_a_wider_one():
    # /t/{s1}?paged=2 is learned from the first three lists, /t/{s1}?paged={q0} at the next
    # list's page 3, while the first is on probation. The wider rule merges every URL the
    # narrower merges into the same page: its samples check both, and the narrower is
    # confirmed with it. Before, the narrower took samples of its own from the pages 2 the
    # wider would have sampled too: 4 samples, 8 URLs with ?paged= fetched (2 and 6 now)
    site, crawler, items, _ = yield run(
        lambda: (s := _PagerSite(_DEEP), *listen(s)), "/", {}, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert stats.get("urlunify/learned/form/127.0.0.1//t/{s1}?paged=2") == 3
    assert stats.get("urlunify/learned/form/127.0.0.1//t/{s1}?paged={q0}")
    assert stats.get("urlunify/learned/probation/subsumed") == 1
    assert stats.get("urlunify/learned/confirmed") == 2
    assert stats["finish_reason"] == "finished"
    # every page of every list, one item each, under whichever spelling was fetched
    pages = [_list_page(i["url"]) for i in items if "page" in i["url"]]
    assert len(pages) == len(set(pages))
    assert set(pages) == {(x, "2") for x in "abcdefghijkl"} | {(x, "3") for x in "defghijkl"}
    assert stats["urlunify/learned/probation/samples"] <= 2
    assert sum(n for url, n in site.hits.items() if "?paged=" in url) <= 6


#: the filters of the lists' second pages, one a list, in turn: four parameter names
_FILTERS = [("orderby", "date"), ("color", "red"), ("size", "m"), ("brand", "acme")]


class _FilteredPagerSite(CountingSite):
    """Twelve lists ``/t/<x>/`` link their page 2 as ``/t/<x>/page/2/`` and as
    ``/t/<x>/?paged=2``; page 2 links itself filtered (:data:`_FILTERS`, one a list) in both
    forms, ``/t/<x>/page/2/?color=red`` and ``/t/<x>/?color=red&paged=2``. Each page declares
    its pager URL, the filter kept, canonical."""

    LISTS = "abcdefghijkl"

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        parts = path.strip("/").split("/")
        if path == "/":
            return links_page(path, [f"/t/{x}/" for x in self.LISTS])
        if len(parts) == 2 and parts[0] == "t" and parts[1] in self.LISTS and not params:
            return links_page(path, [f"{path}page/2/", f"{path}?paged=2"])
        if len(parts) == 2 and parts[0] == "t" and params.get("paged") == "2":
            params = {n: v for n, v in params.items() if n != "paged"}
        elif not (len(parts) == 4 and parts[0] == "t" and parts[2:] == ["page", "2"]):
            return not_found(request)
        x = parts[1]
        name, value = _FILTERS[self.LISTS.index(x) % len(_FILTERS)]
        if params and params != {name: value}:
            return not_found(request)
        pretty = f"/t/{x}/page/2/" + (f"?{name}={value}" if params else "")
        links = (
            [] if params else [f"/t/{x}/page/2/?{name}={value}", f"/t/{x}/?{name}={value}&paged=2"]
        )
        text = f"<p>The list {x}, page 2{', ' + name + ' ' + value if params else ''}.</p>"
        text += "".join(f"<a href='{u}'>{u}</a> " for u in links)
        return declared_page(pretty, text, canonical=pretty)


@pytest_twisted.inlineCallbacks
def test_a_form_rule_learns_to_carry_the_other_parameters():
    # /t/{s1}?paged=2 is learned from the first three lists; the filtered query forms of the
    # next lists, each filter its own parameter name, are its pairs once the filter (written
    # in both spellings) is left out: three of them, of two names, make it carry the other
    # parameters. Before, each name was a shape of its own, three lists each: all twelve went
    site, crawler, items, _ = yield run(
        lambda: (s := _FilteredPagerSite(), *listen(s)), "/", {}, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert stats["finish_reason"] == "finished"
    assert stats.get("urlunify/learned/form/127.0.0.1//t/{s1}?paged=2&*") == 3
    filtered = {f"/t/{x}/page/2/?{'='.join(_FILTERS[i % 4])}" for i, x in enumerate("abcdefghijkl")}
    assert filtered <= {urlsplit(i["url"]).path + "?" + urlsplit(i["url"]).query for i in items}
    # three pairs, three probation samples and one in flight at most
    assert sum(n for url, n in site.hits.items() if "paged=2&" in url or "&paged" in url) <= 7


class _CategoryPathSite(CountingSite):
    """Three products, each linked from ``/`` under its category's path only
    (``/c/<category>/<slug>/``, which ``URLUNIFY_URL_FORMS`` makes one identifier with
    ``/p/<slug>/``), each page declaring ``/p/<slug>/`` canonical and linking that page in two
    views (``?view=a``, ``?view=b``) that show its text."""

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, _ = self.count(request)
        parts = path.strip("/").split("/")
        if path == "/":
            return links_page("Shop", [f"/c/{c}/item-{c}/" for c in "xyz"])
        slug = parts[-1] if parts[0] in ("c", "p") else ""
        if not slug.startswith("item-"):
            return not_found(request)
        pretty = f"/p/{slug}/"
        views = "".join(f"<a href='{pretty}?view={v}'>view {v}</a> " for v in "ab")
        text = f"<p>{article_text(slug)}</p>{views}"
        return declared_page(slug, text, canonical=pretty)


@pytest_twisted.inlineCallbacks
def test_a_page_whose_rules_make_it_its_canonical_still_tells_the_learner_its_spelling():
    # each product's text is on /c/<category>/<slug> (fetched first) and /p/<slug> (its views).
    # The category path names /p/<slug>/ canonical, one identifier under the settings' form:
    # told the learner as a spelling all the same, so the text on the second path is that page,
    # and its views' pairs are evidence that view does not matter. Before, the second path made
    # the text "shared" (a soft 404's), and nothing was learned
    settings = {"URLUNIFY_URL_FORMS": {"127.0.0.1": {"/c/*/{s2}": "/p/{s2}"}}}
    site, crawler, items, _ = yield run(
        lambda: (s := _CategoryPathSite(), *listen(s)), "/", settings, PageSpider
    )
    stats = crawler.stats.get_stats()
    assert stats.get("urlunify/learned/param/127.0.0.1/view") == 3
    assert stats["finish_reason"] == "finished"
    # one item a product: its views are its duplicates
    assert sorted(urlsplit(i["url"]).path for i in items if "item-" in i["url"]) == [
        f"/c/{c}/item-{c}/" for c in "xyz"
    ]
