"""URL patterns (scrapy_urlunify/learning/_url_patterns.py): the groups of URLs one template serves,
learned from the URLs seen, in bounded memory."""

from __future__ import annotations

import random

import pytest

from scrapy_urlunify.learning._url_patterns import (
    MAX_DEPTH,
    URLPatterns,
    any_query,
    coarser,
    looks_like_id,
)

WIKI = "http://wiki.test"
TITLES = [
    f"Article_{n}"
    for n in (
        "Alpha",
        "Bravo",
        "Charlie",
        "Delta",
        "Echo",
        "Foxtrot",
        "Golf",
        "Hotel",
        "India",
        "Juliet",
        "Kilo",
    )
]


def learned(urls: list[str], **kwargs: int) -> URLPatterns:
    patterns = URLPatterns(**kwargs)
    for url in urls:
        patterns.pattern(url)
    return patterns


def test_many_values_are_generalised_few_are_kept():
    patterns = learned(
        max_segments=8,
        urls=[f"{WIKI}/wiki/{t}" for t in TITLES]
        + [f"{WIKI}/w/index.php?title={t}&action={a}" for t in TITLES for a in ("edit", "history")]
        + [f"{WIKI}/w/index.php?title=Special:UserLogin&returnto={t}" for t in TITLES],
    )
    assert patterns.pattern(f"{WIKI}/wiki/Another_one") == "wiki.test/wiki/*"
    # the values of a parameter that take few values name the kind of page
    assert (
        patterns.pattern(f"{WIKI}/w/index.php?title=New&action=history")
        == "wiki.test/w/index.php?action=history&title=*"
    )
    assert (
        patterns.pattern(f"{WIKI}/w/index.php?action=edit&title=New")
        == "wiki.test/w/index.php?action=edit&title=*"
    )
    assert (
        patterns.pattern(f"{WIKI}/w/index.php?title=Special:UserLogin&returnto=New")
        == "wiki.test/w/index.php?returnto=*&title=Special:UserLogin"
    )
    # another set of parameter names is another group, whose values are counted apart
    assert patterns.pattern(f"{WIKI}/w/index.php?title=Main") == "wiki.test/w/index.php?title=Main"
    # a few path values are kept
    assert patterns.pattern(f"{WIKI}/w/load.php") == "wiki.test/w/load.php"


def test_a_place_is_generalised_after_max_segments():
    patterns = URLPatterns(max_segments=3)
    assert [patterns.pattern(f"{WIKI}/a/{t}/x") for t in TITLES[:5]] == [
        f"wiki.test/a/{t}/x" for t in TITLES[:3]
    ] + ["wiki.test/a/*/x"] * 2
    # once generalised, the values kept before go to the same pattern
    assert patterns.pattern(f"{WIKI}/a/{TITLES[0]}/x") == "wiki.test/a/*/x"


@pytest.mark.parametrize(
    "value",
    [
        "12345",
        "2024-05-01",
        "1.2.3",
        "9f86d081884c7d65",
        "0b6e1b3a-52f4-4e5a-9a1e-2c3d4e5f6a7b",
        "x" * 65,
    ],
)
def test_ids_are_generalised_at_once(value):
    assert looks_like_id(value)
    patterns = URLPatterns()
    assert patterns.pattern(f"{WIKI}/item/{value}") == "wiki.test/item/*"
    assert (
        patterns.pattern(f"{WIKI}/w/index.php?title=A&oldid={value}")
        == "wiki.test/w/index.php?oldid=*&title=A"
    )


@pytest.mark.parametrize(
    "value", ["Main_Page", "edit", "Special:UserLogin", "cafe", "deadbeef-x", "v2"]
)
def test_words_are_not_ids(value):
    assert not looks_like_id(value)


def test_ids_do_not_use_up_the_values_of_their_place():
    patterns = URLPatterns(max_segments=2)
    for n in range(100):
        patterns.pattern(f"{WIKI}/item/{n}")
    assert patterns.pattern(f"{WIKI}/about") == "wiki.test/about"
    assert patterns.pattern(f"{WIKI}/item/about") == "wiki.test/item/about"


def test_scheme_user_fragment_and_host_case_are_not_part_of_a_pattern():
    patterns = URLPatterns()
    assert (
        patterns.pattern("https://user:pw@Wiki.TEST:8080/a/b?x=1#top") == "wiki.test:8080/a/b?x=*"
    )
    assert patterns.pattern("http://wiki.test:8080/a/b?x=2") == "wiki.test:8080/a/b?x=*"
    assert (
        patterns.pattern("http://wiki.test")
        == patterns.pattern("http://wiki.test/")
        == "wiki.test/"
    )
    assert patterns.pattern("http://wiki.test/dir/") == "wiki.test/dir/"
    assert patterns.pattern("http://wiki.test/p?empty=&flag") == "wiki.test/p?empty=&flag="


def test_parameter_order_does_not_matter():
    patterns = URLPatterns()
    assert (
        patterns.pattern(f"{WIKI}/p?b=2&a=x")
        == patterns.pattern(f"{WIKI}/p?a=x&b=3")
        == "wiki.test/p?a=x&b=*"
    )


def test_hosts_are_apart():
    patterns = learned([f"http://a.test/wiki/{t}" for t in TITLES], max_segments=8)
    assert patterns.pattern("http://a.test/wiki/New") == "a.test/wiki/*"
    assert patterns.pattern("http://b.test/wiki/New") == "b.test/wiki/New"


def test_deep_paths_end_in_a_double_wildcard():
    path = "/".join(f"s{i}" for i in range(MAX_DEPTH + 5))
    assert URLPatterns().pattern(f"{WIKI}/{path}").endswith(f"/s{MAX_DEPTH - 1}/**")


def test_memory_is_bounded():
    draw = random.Random(7)
    patterns = URLPatterns(max_values=4, max_segments=4, max_hosts=5, max_nodes=50)

    def word() -> str:
        return "".join(draw.choice("abcdefghij") for _ in range(6))

    for _ in range(20_000):
        host = f"h{draw.randrange(20)}.test"
        path = "/".join(word() for _ in range(draw.randrange(1, 8)))
        query = "&".join(f"{word()}={word()}" for _ in range(draw.randrange(0, 3)))
        assert patterns.pattern(f"http://{host}/{path}?{query}").startswith(host)
    assert len(patterns) <= 5 * 50


def test_past_its_node_bound_a_host_generalises_without_learning():
    patterns = URLPatterns(max_values=8, max_nodes=4)
    assert patterns.pattern(f"{WIKI}/a/b/c") == "wiki.test/a/b/c"
    assert patterns.pattern(f"{WIKI}/a/b/d/e") == "wiki.test/a/b/*/*"
    assert patterns.pattern(f"{WIKI}/x?k=v") == "wiki.test/*?*"
    assert len(patterns) == 4


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        URLPatterns(max_values=0)
    with pytest.raises(ValueError, match="at least 1"):
        URLPatterns(max_segments=0)


def test_the_coarser_pattern_generalises_every_kept_value():
    assert (
        coarser("w.test/w/index.php?action=history&title=*")
        == "w.test/w/index.php?action=*&title=*"
    )
    assert coarser("w.test/x?a=&b=1") == "w.test/x?a=*&b=*"
    assert coarser("w.test/w/index.php?oldid=*&title=*") is None
    assert coarser("w.test/wiki/Main_Page") is None
    assert coarser("w.test/*?*") is None


def test_a_generalised_segment_keeps_its_extension():
    # a wiki's pages and their exports share a place in the tree, not a template: the frontier
    # judged the pages by the exports' old text when both were "*"
    patterns = URLPatterns(max_segments=3)
    for t in TITLES[:5]:
        patterns.pattern(f"{WIKI}/wiki/{t}")
        patterns.pattern(f"{WIKI}/wiki/{t}.txt")
    assert patterns.pattern(f"{WIKI}/wiki/{TITLES[0]}") == "wiki.test/wiki/*"
    assert patterns.pattern(f"{WIKI}/wiki/{TITLES[0]}.txt") == "wiki.test/wiki/*.txt"
    assert patterns.pattern(f"{WIKI}/wiki/{TITLES[1]}.html") == "wiki.test/wiki/*.html"
    # an id with an extension is generalised at once, and keeps it
    assert patterns.pattern(f"{WIKI}/issues/12.atom") == "wiki.test/issues/*.atom"
    assert patterns.pattern(f"{WIKI}/issues/12") == "wiki.test/issues/*"
    # a dot inside a segment is no extension
    assert patterns.pattern(f"{WIKI}/v/1.2.3") == "wiki.test/v/*"
    # a literal segment keeps its extension too, and is one value with its stem
    assert patterns.pattern(f"{WIKI}/issues.csv") == "wiki.test/issues.csv"
    assert patterns.pattern(f"{WIKI}/issues") == "wiki.test/issues"


def test_an_applications_sections_are_not_one_template():
    # Redmine: 12 sections at its root, 10 in a project; at 8 values a position, a wiki page,
    # a gantt chart and an issue report were all /*/*/*/*
    patterns = URLPatterns()
    roots = "projects issues activity boards news versions users login time_entries account"
    for root in [*roots.split(), "search", "my"]:
        patterns.pattern(f"{WIKI}/{root}")
    sections = "issues activity wiki time_entries files boards documents search roadmap news"
    for section in sections.split():
        patterns.pattern(f"{WIKI}/projects/harbor/{section}")
    assert (
        patterns.pattern(f"{WIKI}/projects/harbor/wiki/FAQ") == "wiki.test/projects/harbor/wiki/FAQ"
    )
    assert (
        patterns.pattern(f"{WIKI}/projects/harbor/issues/gantt")
        == "wiki.test/projects/harbor/issues/gantt"
    )


def test_children_alike_are_one_template():
    # three projects with two sections in common: the projects' position is generalised, and
    # the sections below it are kept; the application's own sections, whose children differ,
    # are not generalised
    patterns = URLPatterns()
    for root, children in [("issues", "gantt calendar"), ("news", "new"), ("users", "me")]:
        for child in children.split():
            patterns.pattern(f"{WIKI}/{root}/{child}")
    for project in ("harbor", "lantern", "orchard"):
        for section in ("issues", "wiki", "activity"):
            patterns.pattern(f"{WIKI}/projects/{project}/{section}")
    assert patterns.pattern(f"{WIKI}/projects/compass/wiki") == "wiki.test/projects/*/wiki"
    assert patterns.pattern(f"{WIKI}/projects/compass/wiki/FAQ") == "wiki.test/projects/*/wiki/FAQ"
    assert patterns.pattern(f"{WIKI}/issues/gantt") == "wiki.test/issues/gantt"
    assert patterns.pattern(f"{WIKI}/news/new") == "wiki.test/news/new"
    # two alike are not enough
    two = URLPatterns()
    for project in ("harbor", "lantern"):
        for section in ("issues", "wiki"):
            two.pattern(f"{WIKI}/projects/{project}/{section}")
    assert two.pattern(f"{WIKI}/projects/harbor/wiki") == "wiki.test/projects/harbor/wiki"


def test_any_query_is_the_pattern_of_every_query_of_its_path():
    assert any_query("w.test/w/index.php?action=history&title=*") == "w.test/w/index.php?*"
    assert any_query("w.test/x?a=*") == "w.test/x?*"
    assert any_query("w.test/wiki/Main_Page") is None
    assert any_query("w.test/*?*") is None
