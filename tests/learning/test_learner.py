"""The DUST learner: parameter and host-alias rules from page signatures (pure Python)."""

from __future__ import annotations

import ast
import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_urlunify import Policy, Unifier, identify
from scrapy_urlunify.learning._learner import Learner
from scrapy_urlunify.learning._page_index import CATCH_ALL_PATHS
from scrapy_urlunify.learning._rule_types import CounterExample, LearnedRule, Revocation


def sig(content: str) -> bytes:
    return hashlib.md5(content.encode()).digest()


def feed(learner: Learner, pages, host: str | None = None) -> list[LearnedRule]:
    """Observe ``(url, content)`` pairs; the identity host is the URL's host minus ``www.``."""
    adopted = []
    for url, content in pages:
        h = host or url.split("/")[2].split(":")[0].removeprefix("www.")
        adopted += learner.observe(url, h, sig(content))
    return adopted


def ref_pairs(paths, host="www.site.com", param="ref"):
    """Two URLs per path differing only in ``param``, same content per path."""
    for path in paths:
        yield f"https://{host}{path}?{param}=home", f"content of {path}"
        yield f"https://{host}{path}?{param}=footer", f"content of {path}"


def param_rules(learner):
    return [(r.host, r.name) for r in learner.rules if r.kind == "param"]


def alias_rules(learner):
    return [(r.host, r.name) for r in learner.rules if r.kind == "alias"]


# -- parameter rules ---------------------------------------------------------------------------


def test_ref_learned_after_three_independent_pairs():
    learner = Learner(min_pairs=3)
    assert feed(learner, ref_pairs(["/a", "/b"])) == []
    adopted = feed(learner, ref_pairs(["/c"]))
    assert [(r.kind, r.host, r.name, r.pairs) for r in adopted] == [("param", "site.com", "ref", 3)]
    rule = adopted[0]
    assert learner.rules == (rule,)
    assert len(rule.examples) == 3
    assert rule.examples[0] == (
        "https://www.site.com/a?ref=home",
        "https://www.site.com/a?ref=footer",
    )
    assert "ref" in str(rule) and "site.com" in str(rule)
    assert learner.version == 1


def test_not_learned_after_two_pairs():
    learner = Learner(min_pairs=3)
    assert feed(learner, ref_pairs(["/a", "/b"])) == []
    assert learner.rules == ()
    # more of the same pages (repeats) add nothing
    assert feed(learner, ref_pairs(["/a", "/b"])) == []
    assert learner.rules == ()
    assert learner.stats["repeats"] == 4


def test_min_pairs_is_configurable_but_never_one():
    learner = Learner(min_pairs=2)
    assert param_rules(learner) == []
    feed(learner, ref_pairs(["/a", "/b"]))
    assert param_rules(learner) == [("site.com", "ref")]
    with pytest.raises(ValueError):
        Learner(min_pairs=1)
    with pytest.raises(ValueError):
        Learner(max_entries=-1)


def test_presence_and_absence_alone_is_not_evidence():
    # /x?ref=x = /x on three pages: the value may be a default (?page=1 = /list), so this
    # alone never teaches that the parameter does not matter ...
    learner = Learner()
    pages = []
    for path in ["/a", "/b", "/c"]:
        pages += [
            (f"http://site.com{path}?id=7", path),
            (f"http://site.com{path}?id=7&ref=x", path),
        ]
    feed(learner, pages)
    assert param_rules(learner) == []
    assert learner.stats["presence_pairs"] == 3
    # ... two values with one content do, whichever comes first
    pages = []
    for path in ["/a", "/b", "/c"]:
        pages += [(f"http://site.com{path}?id=7&ref=y", path)]
    feed(learner, pages)
    assert param_rules(learner) == [("site.com", "ref")]


def test_the_default_value_trap():
    # /list?page=1 = /list and /x?lang=en = /x on several sections: never learned, so
    # ?page=2 and ?lang=de stay new pages (the default-value trap, docs/learning.md)
    learner = Learner(min_pairs=3)
    pages = []
    for section in ["news", "docs", "blog", "shop"]:
        pages += [
            (f"http://site.com/{section}/list", f"{section} 1"),
            (f"http://site.com/{section}/list?page=1", f"{section} 1"),
            (f"http://site.com/{section}/x", f"{section} x"),
            (f"http://site.com/{section}/x?lang=en", f"{section} x"),
        ]
    assert feed(learner, pages) == []
    assert learner.rules == ()
    # a second value with other content is a counter-example, as before
    feed(learner, [("http://site.com/news/list?page=2", "news 2")])
    assert learner.is_blocked("param", "site.com", "page")


def test_an_unstable_page_is_neither_evidence_nor_counter_example():
    # /a?ref=1 shows a clock: two views, two signatures. Its counter-example against ref is
    # withdrawn, and its pairs no longer count
    learner = Learner(min_pairs=3)
    feed(
        learner,
        [("http://site.com/a?ref=1", "a at 10:00"), ("http://site.com/a?ref=2", "a at 10:01")],
    )
    assert learner.is_blocked("param", "site.com", "ref")
    feed(learner, [("http://site.com/a?ref=1", "a at 10:02")])  # the same URL, another signature
    assert learner.unstable == ("http://site.com/a?ref=1",)
    assert not learner.is_blocked("param", "site.com", "ref")
    assert learner.stats["unstable"] == 1
    feed(learner, [("http://site.com/a?ref=1", "a at 10:03")])  # logged once
    assert learner.unstable == ("http://site.com/a?ref=1",)
    feed(learner, [("http://site.com/a?ref=3", "a at 10:01")])  # equal to ?ref=2: one piece
    feed(learner, ref_pairs(["/b", "/c"], host="site.com"))
    assert param_rules(learner) == [("site.com", "ref")]


def test_a_clock_page_seen_again_under_another_spelling_is_unstable_under_both():
    # /clock?ref=a shows the time, so ?ref=a and ?ref=b differ: a counter-example against ref.
    # The page comes back spelled otherwise (https, parameters in another order: the same
    # page to the learner) at another time: it is unstable, and so is its first spelling,
    # whose counter-example is withdrawn. (Marking only the new spelling kept the clock's
    # counter-example in force for the rest of the crawl.)
    learner = Learner(min_pairs=3)
    feed(
        learner,
        [
            ("http://site.com/clock?ref=a&x=1", "10:00"),
            ("http://site.com/clock?ref=b&x=1", "10:01"),
        ],
    )
    assert learner.is_blocked("param", "site.com", "ref")
    feed(learner, [("https://site.com/clock?x=1&ref=a", "10:02")])
    assert learner.unstable == ("https://site.com/clock?x=1&ref=a",)
    assert not learner.is_blocked("param", "site.com", "ref")
    feed(learner, [("http://site.com/clock?ref=a&x=1", "10:03")])  # either spelling: ignored
    assert learner.stats["unstable"] == 1 and learner.stats["repeats"] == 2
    feed(learner, ref_pairs(["/b", "/c", "/d"], host="site.com"))
    assert param_rules(learner) == [("site.com", "ref")]


def test_a_soft_404_is_no_evidence_for_a_parameter():
    # Missing pages are answered 200 with one "not found" text. Once that text was seen on
    # two paths it is no page of its own: /docs/page-99.html?lang=de = ?lang=fr says nothing
    # about lang, and with two untranslated chapters (English for any lang) it taught
    # "lang does not matter", merging every real ?lang=de page
    not_found = "Sorry, we could not find that page"
    learner = Learner(min_pairs=3)
    feed(
        learner,
        [
            ("https://site.com/blog/post-99.html", not_found),
            ("https://site.com/docs/page-99.html?lang=de", not_found),
            ("https://site.com/docs/page-99.html?lang=fr", not_found),
        ],
    )
    for ch in (1, 2):  # untranslated: the English text for every language
        feed(
            learner,
            [
                (f"https://site.com/guide/ch-{ch}.html?lang={lang}", f"chapter {ch}")
                for lang in ("de", "fr")
            ],
        )
    assert learner.rules == ()
    assert learner.stats["shared"] == 1
    # three real pages are real evidence, as without soft 404s
    feed(
        learner,
        [(f"https://site.com/guide/ch-3.html?lang={lang}", "chapter 3") for lang in ("de", "fr")],
    )
    assert param_rules(learner) == [("site.com", "lang")]
    # the saved learner keeps knowing the soft 404's text
    again = Learner.from_json(learner.to_json())
    assert again.stats["shared"] == 1


def test_a_page_the_site_declares_under_two_paths_is_evidence():
    # A shop's CMS route (/index.php?route=product/view&id=N) declares the product's pretty URL
    # canonical. Its text is on two paths, as a soft 404's is, but the site says why: the
    # view=gallery / view=details pairs of the pretty URLs are evidence, in either order.
    def products(spelled: bool, order: str):
        for n in (1, 2, 3):
            route = f"https://shop.test/index.php?route=product/view&id={n}"
            pretty = f"https://shop.test/product/{n}-name"
            text = f"product {n}"
            views = [(f"{pretty}?view={v}", text, (pretty,) if spelled else ()) for v in VIEWS]
            first = [(route, text, (pretty,) if spelled else ())]
            yield from (first + views if order == "route first" else views + first)

    VIEWS = ("gallery", "details")
    for order in ("route first", "pretty first"):
        learner = Learner(min_pairs=3)
        for url, text, spelling in products(spelled=False, order=order):
            learner.observe(url, "shop.test", sig(text), spelling)
        assert learner.rules == ()  # one text on two paths, no reason known: no evidence
        learner = Learner(min_pairs=3)
        for url, text, spelling in products(spelled=True, order=order):
            learner.observe(url, "shop.test", sig(text), spelling)
        assert param_rules(learner) == [("shop.test", "view")], order
    # a third path declaring the same page (its AMP copy, one segment below the pretty URL) is
    # one more spelling the site declared: the pairs are evidence still (on a store, a mobile
    # host's copy of a product fetched under its category path and AMP copy taught no alias)
    learner = Learner(min_pairs=3)
    for n in (1, 2, 3):
        route = f"https://shop.test/index.php?route=product/view&id={n}"
        pretty = f"https://shop.test/product/{n}-name"
        for url in (route, f"{pretty}/amp", *(f"{pretty}?view={v}" for v in VIEWS)):
            learner.observe(url, "shop.test", sig(f"product {n}"), (pretty,))
    assert learner.stats["shared"] == 0
    assert param_rules(learner) == [("shop.test", "view")]
    # a text on a third unrelated path is no page's spellings, whatever it declares: a
    # catch-all, no evidence at all
    learner = Learner(min_pairs=3)
    not_found = "Page not found"
    learner.observe(
        "https://shop.test/gone-1", "shop.test", sig(not_found), ("https://shop.test/404",)
    )
    assert learner.stats["shared"] == learner.stats["catch_all"] == 0
    learner.observe(
        "https://shop.test/gone-2", "shop.test", sig(not_found), ("https://shop.test/404",)
    )
    assert learner.stats["catch_all"] == 1


def test_a_soft_404_is_no_evidence_for_an_alias():
    # the mirror and the site answer every missing URL with the same "not found" page
    not_found = "Page not found"
    learner = Learner(min_pairs=3, sites=["site.test"])
    feed(
        learner,
        [
            ("https://site.test/gone-1", not_found),
            ("https://site.test/gone-2", not_found),
            ("https://mirror.site.test/gone-2", not_found),
        ],
    )
    feed(
        learner,
        [
            (f"https://{h}/docs/{n}", f"doc {n}")
            for n in (1, 2)
            for h in ("site.test", "mirror.site.test")
        ],
    )
    assert learner.rules == ()
    feed(learner, [(f"https://{h}/docs/3", "doc 3") for h in ("site.test", "mirror.site.test")])
    assert [r.kind for r in learner.rules] == ["alias"]


def test_one_context_is_one_piece_of_evidence():
    # x?ref=a, x?ref=b, x?ref=c... are many pairs but all about one page: never enough
    learner = Learner(min_pairs=3)
    feed(learner, [(f"https://site.com/x?ref={v}", "home page") for v in "abcdefgh"])
    assert learner.rules == ()
    # several contexts on one path are not enough either: two paths at least
    learner = Learner(min_pairs=3)
    pages = []
    for lang in ["en", "fr", "de", "it"]:
        pages += [
            (f"https://site.com/?lang={lang}&ref=a", lang),
            (f"https://site.com/?lang={lang}&ref=b", lang),
        ]
    feed(learner, pages)
    assert learner.rules == ()
    # ... until another page agrees
    feed(learner, ref_pairs(["/news"], host="site.com"))
    assert param_rules(learner) == [("site.com", "ref")]


def test_one_content_is_one_piece_of_evidence():
    # a "not found" page served with 200 for any id, on three paths: one page, not three
    learner = Learner(min_pairs=3)
    pages = []
    for path in ["/item", "/product", "/article"]:
        pages += [
            (f"https://site.com{path}?id=1", "Not found"),
            (f"https://site.com{path}?id=2", "Not found"),
        ]
    feed(learner, pages)
    assert learner.rules == ()
    assert learner.stats["catch_all"] == 1  # seen on three paths: a catch-all signature


def test_catch_all_signature_never_counts():
    # per-section error pages (three distinct contents), each also served on many paths
    learner = Learner(min_pairs=3)
    pages = []
    for section in ["news", "shop", "blog"]:
        error = f"{section} error page"
        pages += [(f"https://site.com/{section}/other{i}", error) for i in range(CATCH_ALL_PATHS)]
        pages += [
            (f"https://site.com/{section}/item?id=1", error),
            (f"https://site.com/{section}/item?id=2", error),
        ]
    feed(learner, pages)
    assert learner.rules == ()


def test_counter_example_blocks():
    learner = Learner(min_pairs=3)
    feed(learner, ref_pairs(["/a", "/b"]))
    # ref changes this page: a counter-example
    feed(
        learner, [("https://www.site.com/c?ref=1", "one"), ("https://www.site.com/c?ref=2", "two")]
    )
    assert learner.is_blocked("param", "site.com", "ref")
    feed(learner, ref_pairs(["/d", "/e", "/f", "/g"]))
    assert learner.rules == ()
    (ce,) = learner.counter_examples()
    assert ce == CounterExample(
        "param", "site.com", "ref", "https://www.site.com/c?ref=1", "https://www.site.com/c?ref=2"
    )


def test_counter_example_after_adoption_revokes():
    learner = Learner(min_pairs=3)
    feed(learner, ref_pairs(["/a", "/b", "/c"]))
    assert param_rules(learner) == [("site.com", "ref")]
    v = learner.version
    adopted = feed(
        learner, [("https://www.site.com/d?ref=1", "one"), ("https://www.site.com/d?ref=2", "two")]
    )
    assert adopted == []  # observe returns adoptions only
    assert learner.rules == ()
    assert learner.version > v
    (rev,) = learner.revoked
    assert isinstance(rev, Revocation)
    assert (rev.rule.host, rev.rule.name) == ("site.com", "ref")
    assert rev.counter_example == ("https://www.site.com/d?ref=1", "https://www.site.com/d?ref=2")
    assert "revoked" in str(rev)
    # and it stays blocked
    feed(learner, ref_pairs(["/e", "/f", "/g"]))
    assert learner.rules == ()
    assert "URLUNIFY_IGNORE_PARAMS" not in learner.settings_snippet()


def test_page_parameter_is_never_learned():
    learner = Learner(min_pairs=3)
    pages = []
    for i in range(20):
        path = f"/list{i}"
        pages += [(f"https://site.com{path}?ref=a", path), (f"https://site.com{path}?ref=b", path)]
        pages += [
            (f"https://site.com{path}?page=1", f"{path} page 1"),
            (f"https://site.com{path}?page=2", f"{path} page 2"),
        ]
        pages += [
            (f"https://site.com{path}?id=1", f"{path} item 1"),
            (f"https://site.com{path}?id=2", f"{path} item 2"),
        ]
    feed(learner, pages)
    # lists that have a single page answer ?page=2 with page 1: equal pairs, but page is blocked
    feed(
        learner,
        [(f"https://site.com/short{i}?page={n}", f"short {i}") for i in range(10) for n in (1, 2)],
    )
    assert param_rules(learner) == [("site.com", "ref")]
    assert learner.is_blocked("param", "site.com", "page")
    assert learner.is_blocked("param", "site.com", "id")


def test_equal_signature_before_the_counter_example_still_never_adopts_page():
    # the equal pairs for page come first, the counter-example after: it is never adopted
    # as long as the counter-example arrives before min_pairs independent pairs, and revoked if after
    learner = Learner(min_pairs=3)
    feed(
        learner,
        [(f"https://site.com/short{i}?page={n}", f"short {i}") for i in range(3) for n in (1, 2)],
    )
    assert param_rules(learner) == [("site.com", "page")]
    feed(
        learner,
        [("https://site.com/news?page=1", "news 1"), ("https://site.com/news?page=2", "news 2")],
    )
    assert param_rules(learner) == []
    assert [r.rule.name for r in learner.revoked] == ["page"]


def test_counter_example_on_a_subdomain_blocks_and_revokes_the_parent_rule():
    learner = Learner(min_pairs=3)
    feed(learner, ref_pairs(["/a", "/b", "/c"], host="site.com"))
    assert param_rules(learner) == [("site.com", "ref")]
    feed(
        learner,
        [("https://shop.site.com/x?ref=1", "one"), ("https://shop.site.com/x?ref=2", "two")],
    )
    assert learner.rules == ()
    assert len(learner.revoked) == 1
    # the parent cannot learn it again (a rule on it would cover shop.site.com)
    feed(learner, ref_pairs(["/d", "/e", "/f"], host="site.com"))
    assert learner.rules == ()
    # a sibling subdomain still can
    feed(learner, ref_pairs(["/d", "/e", "/f"], host="blog.site.com"))
    assert param_rules(learner) == [("blog.site.com", "ref")]


def test_rule_on_a_parent_covers_subdomains():
    learner = Learner(min_pairs=3)
    feed(learner, ref_pairs(["/a", "/b", "/c"], host="site.com"))
    feed(learner, ref_pairs(["/a", "/b", "/c"], host="blog.site.com"))
    assert param_rules(learner) == [("site.com", "ref")]  # no redundant rule for blog.site.com


def test_hosts_are_separate():
    learner = Learner(min_pairs=3)
    feed(learner, ref_pairs(["/a"], host="one.com"))
    feed(learner, ref_pairs(["/b"], host="two.com"))
    feed(learner, ref_pairs(["/c"], host="three.com"))
    assert learner.rules == ()


def test_same_identity_pairs_are_ignored():
    learner = Learner(min_pairs=2)
    pages = [
        # one page each time, differing only in what the identity layer ignores
        ("http://site.com/a?b=2&a=1", "v1"),
        ("https://site.com/a?a=1&b=2", "v2"),
        ("http://site.com/a?a=1&b=2&c=", "v3"),
        ("http://site.com/q?s=a%20b", "w1"),
        ("http://site.com/q?s=a+b", "w2"),
    ]
    feed(learner, pages)
    assert learner.counter_examples() == []
    assert learner.stats["repeats"] == 3
    assert learner.stats["equal_pairs"] == learner.stats["counter_pairs"] == 0


def test_two_differences_are_not_a_pair():
    learner = Learner(min_pairs=2)
    feed(
        learner,
        [
            ("http://site.com/a?x=1&y=1", "p"),
            ("http://site.com/a?x=2&y=2", "p"),
            ("http://site.com/b?x=1&y=1", "q"),
            ("http://site.com/b?x=2&y=2", "q"),
        ],
    )
    assert learner.stats["equal_pairs"] == 0
    assert learner.rules == ()


def test_ports_are_separate_contexts():
    learner = Learner(min_pairs=2)
    feed(learner, [("http://site.com:8080/a?ref=1", "A"), ("http://site.com/a?ref=2", "B")])
    assert learner.counter_examples() == []


def test_invalid_input_is_ignored():
    learner = Learner()
    assert learner.observe("not a url", "x", sig("a")) == []
    assert learner.observe("mailto:someone@example.com", "x", sig("a")) == []
    assert learner.observe("http://site.com/a", "", sig("a")) == []
    assert learner.stats["skipped"] == 3
    with pytest.raises(TypeError):
        learner.observe("http://site.com/a", "site.com", 12)  # type: ignore[arg-type]


def test_many_parameters_are_capped():
    learner = Learner(min_pairs=2, max_entries=10_000)
    query = "&".join(f"p{i}=1" for i in range(150))
    learner.observe(f"http://site.com/a?{query}", "site.com", sig("a"))
    assert learner.index_size == 3  # too many items: only the page itself, alias and signature
    query = "&".join(f"p{i:02}=1" for i in range(60))
    learner.observe(f"http://site.com/b?{query}", "site.com", sig("b"))
    assert learner.index_size == 3 + 3 + 20  # twenty parameters considered


# -- host aliases ------------------------------------------------------------------------------


def mirror_pages(hosts, paths):
    for path in paths:
        for host in hosts:
            yield f"https://{host}{path}", f"page {path}"


def test_mirror_learned_after_three_distinct_paths():
    learner = Learner(min_pairs=3)
    feed(learner, mirror_pages(["site.com", "m.site.com"], ["/a", "/b"]))
    assert learner.rules == ()
    # the same paths with other queries are not new evidence
    feed(learner, [(f"https://{h}/a?x=1", "page /a?x=1") for h in ("site.com", "m.site.com")])
    assert learner.rules == ()
    (rule,) = feed(learner, mirror_pages(["site.com", "m.site.com"], ["/c"]))
    assert (rule.kind, rule.host, rule.name, rule.pairs) == ("alias", "m.site.com", "site.com", 3)
    assert rule.examples[0] == ("https://site.com/a", "https://m.site.com/a")
    assert learner.domain_aliases() == [["site.com", "m.site.com"]]


def test_alias_direction():
    # a parent domain is canonical for its subdomain, even when seen second
    learner = Learner()
    feed(learner, mirror_pages(["m.site.com", "site.com"], ["/a", "/b", "/c"]))
    assert alias_rules(learner) == [("m.site.com", "site.com")]
    # otherwise the host seen first
    learner = Learner(sites=["site.com", "site.net"])
    feed(learner, mirror_pages(["site.net", "www.site.com"], ["/a", "/b", "/c"]))
    assert alias_rules(learner) == [("site.com", "site.net")]
    # unless only one of them is a site of the crawl
    learner = Learner(sites=["shop.site.com"])
    feed(learner, mirror_pages(["blog.site.com", "shop.site.com"], ["/a", "/b", "/c"]))
    assert alias_rules(learner) == [("blog.site.com", "shop.site.com")]
    # "first" is the first page of the host in the crawl, not of the pair
    learner = Learner(sites=["site.com", "site.net"])
    feed(learner, [("https://site.net/", "home")])
    feed(learner, mirror_pages(["site.com", "site.net"], ["/a", "/b", "/c"]))
    assert alias_rules(learner) == [("site.com", "site.net")]
    learner = Learner(sites=["shop.site.com"])
    feed(learner, mirror_pages(["shop.site.com", "blog.site.com"], ["/a", "/b", "/c"]))
    assert alias_rules(learner) == [("blog.site.com", "shop.site.com")]


def test_hosts_without_public_suffix_use_their_last_two_labels():
    learner = Learner()
    feed(learner, mirror_pages(["site.test", "mirror.site.test"], ["/a", "/b", "/c"]))
    assert alias_rules(learner) == [("mirror.site.test", "site.test")]
    learner = Learner()
    feed(learner, mirror_pages(["one.test", "two.test"], ["/a", "/b", "/c"]))
    assert learner.rules == ()


def test_unrelated_hosts_are_never_aliased():
    learner = Learner(min_pairs=2, sites=["site.com"])
    paths = [f"/p{i}" for i in range(20)]
    feed(learner, mirror_pages(["site.com", "other.com"], paths))
    feed(learner, mirror_pages(["site.com", "site.co.uk"], paths))
    feed(learner, mirror_pages(["127.0.0.1", "localhost"], paths))
    assert learner.rules == ()
    assert learner.stats["equal_pairs"] == 0


def test_sites_relate_hosts():
    learner = Learner(sites=["www.termomont.rs", "termomont.co.rs"])
    feed(learner, mirror_pages(["termomont.rs", "termomont.co.rs"], ["/a", "/b", "/c"]))
    assert alias_rules(learner) == [("termomont.co.rs", "termomont.rs")]


def test_alias_counter_example_blocks_and_revokes():
    learner = Learner()
    feed(learner, mirror_pages(["site.com", "m.site.com"], ["/a", "/b"]))
    feed(learner, [("https://site.com/c", "desktop"), ("https://m.site.com/c", "mobile")])
    feed(learner, mirror_pages(["site.com", "m.site.com"], ["/d", "/e", "/f"]))
    assert learner.rules == ()
    assert learner.is_blocked("alias", "m.site.com", "site.com")
    learner = Learner()
    feed(learner, mirror_pages(["site.com", "m.site.com"], ["/a", "/b", "/c"]))
    assert len(learner.rules) == 1
    feed(learner, [("https://site.com/d", "desktop"), ("https://m.site.com/d", "mobile")])
    assert learner.rules == ()
    assert [r.rule.kind for r in learner.revoked] == ["alias"]


def test_alias_chains_form_one_group():
    learner = Learner(sites=["a.com", "b.com", "c.com"])
    feed(learner, mirror_pages(["a.com", "b.com"], ["/1", "/2", "/3"]))
    feed(learner, mirror_pages(["c.com", "a.com"], ["/4", "/5", "/6"]))  # a.com names a group
    assert alias_rules(learner) == [("b.com", "a.com"), ("c.com", "a.com")]
    assert learner.domain_aliases() == [["a.com", "b.com", "c.com"]]
    Policy(domain_aliases=learner.domain_aliases())  # a valid setting


# -- persistence and output --------------------------------------------------------------------


def test_json_round_trip_keeps_rules_blocks_and_evidence():
    learner = Learner(min_pairs=3, sites=["site.com"], max_entries=1000)
    feed(learner, ref_pairs(["/a", "/b", "/c"]))
    feed(learner, mirror_pages(["site.com", "m.site.com"], ["/m1", "/m2", "/m3"]))
    feed(
        learner,
        [("https://www.site.com/d?page=1", "one"), ("https://www.site.com/d?page=2", "two")],
    )
    feed(learner, ref_pairs(["/x", "/y"], param="src"))  # two pairs toward src
    feed(learner, [("https://www.site.com/n?utm=1", "n1"), ("https://www.site.com/n?utm=2", "n2")])
    feed(learner, ref_pairs(["/r1", "/r2", "/r3"], param="utm"))  # blocked then: nothing
    text = learner.to_json()
    again = Learner.from_json(text)
    assert again.rules == learner.rules
    assert again.to_json() == text
    assert again.counter_examples() == learner.counter_examples()
    assert again.is_blocked("param", "site.com", "page")
    assert again.settings_snippet() == learner.settings_snippet()
    assert (again.min_pairs, again.sites, again.max_entries) == (3, ("site.com",), 1000)
    assert again.index_size == 0  # the per-page index is not kept
    # the evidence toward src is kept: one more pair after the restart adopts it
    (rule,) = feed(again, ref_pairs(["/z"], param="src"))
    assert (rule.name, rule.pairs) == ("src", 3)
    # settings can be replaced on load
    other = Learner.from_json(text, min_pairs=5, sites=[], max_entries=10)
    assert (other.min_pairs, other.sites, other.max_entries) == (5, (), 10)
    assert other.rules == learner.rules


def test_revocations_survive_a_restart():
    learner = Learner()
    feed(learner, ref_pairs(["/a", "/b", "/c"]))
    feed(learner, [("https://site.com/d?ref=1", "one"), ("https://site.com/d?ref=2", "two")])
    again = Learner.from_json(learner.to_json())
    assert again.revoked == learner.revoked
    assert again.version == learner.version
    feed(again, ref_pairs(["/e", "/f", "/g"]))
    assert again.rules == ()


@pytest.mark.parametrize(
    "text", ["", "[]", "{}", '{"format": "other"}', '{"format": "scrapy_urlunify.learning/1"}']
)
def test_from_json_rejects_other_text(text):
    with pytest.raises(ValueError):
        Learner.from_json(text)


def _settings(snippet: str) -> dict[str, object]:
    """The settings a snippet assigns, each right-hand side read with ``ast.literal_eval``."""
    tree = ast.parse(snippet)
    out = {}
    for node in tree.body:
        assert isinstance(node, ast.Assign)
        (target,) = node.targets
        out[target.id] = ast.literal_eval(ast.get_source_segment(snippet, node.value))
    return out


def test_snippet_is_valid_python():
    learner = Learner()
    assert _settings(learner.settings_snippet()) == {}
    feed(learner, ref_pairs(["/a", "/b", "/c"]))
    feed(learner, ref_pairs(["/a", "/b", "/c"], param="tags[]"))
    feed(learner, ref_pairs(["/a", "/b", "/c"], host="shop.other.com", param="from"))
    feed(learner, mirror_pages(["site.com", "m.site.com"], ["/m1", "/m2", "/m3"]))
    snippet = learner.settings_snippet()
    assert _settings(snippet) == {
        # identity only, the layer the crawl applied them in: the fetched URLs keep them
        "URLUNIFY_IGNORE_PARAMS": {"site.com": ["ref", "tags[[]]"], "shop.other.com": ["from"]},
        "URLUNIFY_DOMAIN_ALIASES": [["site.com", "m.site.com"]],
    }
    assert [r.name for r in learner.rules if r.kind == "param"] == ["ref", "tags[]", "from"]
    # and the settings do what the rules say
    s = _settings(snippet)
    policy = Policy(
        ignore_params=s["URLUNIFY_IGNORE_PARAMS"], domain_aliases=s["URLUNIFY_DOMAIN_ALIASES"]
    )
    assert identify("https://www.site.com/a?id=1&ref=x&tags[]=2", policy) == identify(
        "https://site.com/a?id=1", policy
    )
    assert identify("https://m.site.com/a", policy) == identify("https://site.com/a", policy)
    assert identify("https://site.com/a?tagsX=1", policy) != identify("https://site.com/a", policy)


# -- memory and determinism --------------------------------------------------------------------


def test_memory_cap_is_respected():
    learner = Learner(min_pairs=2, max_entries=50)
    for i in range(2000):
        learner.observe(
            f"https://site.com/p{i % 97}?a={i % 5}&b={i % 3}&c={i}", "site.com", sig(str(i % 11))
        )
        assert learner.index_size <= 50
    assert learner.stats["evicted"] > 0
    # a cap of zero keeps nothing and learns nothing
    learner = Learner(min_pairs=2, max_entries=0)
    feed(learner, ref_pairs(["/a", "/b", "/c"]))
    assert learner.index_size == 0
    assert learner.rules == ()


def test_eviction_only_loses_evidence():
    # with room for one page, pairs are never seen: no rule, no counter-example
    learner = Learner(min_pairs=2, max_entries=2)
    feed(learner, ref_pairs([f"/p{i}" for i in range(10)]))
    assert learner.rules == () and learner.counter_examples() == []


def test_deterministic():
    def run():
        learner = Learner(min_pairs=2, max_entries=300)
        for i in range(500):
            learner.observe(
                f"https://s{i % 3}.site.com/p{i % 13}?a={i % 4}&r={i % 7}",
                f"s{i % 3}.site.com",
                sig(f"{i % 13}-{i % 4}"),
            )
        return learner.to_json()

    assert run() == run()


# -- properties --------------------------------------------------------------------------------

_hosts = st.sampled_from(
    ["site.com", "m.site.com", "other.com", "site.test", "mirror.site.test", "127.0.0.1"]
)
_paths = st.sampled_from(["/", "/a", "/b", "/c/d", "/e/"])
_params = st.lists(
    st.tuples(
        st.sampled_from(["ref", "page", "id", "Ref", "utm", "tags[]", "x"]),
        st.sampled_from(["", "1", "2", "a b", "%20"]),
    ),
    max_size=4,
)
_observation = st.tuples(
    _hosts,
    st.sampled_from(["", ":8080"]),
    _paths,
    _params,
    st.sampled_from([b"s1", b"s2", b"s3", b"s4", b"s5"]),
)


def _url(host, port, path, params):
    query = "&".join(f"{k}={v}" if v else k for k, v in params)
    return f"https://{host}{port}{path}" + (f"?{query}" if params else "")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_observation, max_size=60), st.integers(2, 4), st.integers(0, 40))
def test_random_observations(observations, min_pairs, max_entries):
    learner = Learner(min_pairs=min_pairs, sites=["site.com"], max_entries=max_entries)
    for host, port, path, params, signature in observations:
        for rule in learner.observe(_url(host, port, path, params), host, signature):
            assert rule.pairs >= min_pairs
            assert 1 <= len(rule.examples) <= 3
        assert learner.index_size <= max_entries
    for rule in learner.rules:
        assert rule.pairs >= min_pairs
        assert rule.kind in ("param", "alias")
        assert (rule.kind, rule.host, rule.name) not in {
            (c.kind, c.host, c.name) for c in learner.counter_examples()
        }
    again = Learner.from_json(learner.to_json())
    assert again.rules == learner.rules
    _settings(learner.settings_snippet())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            _paths,
            st.dictionaries(
                st.sampled_from(["ref", "page", "id", "src"]),
                st.sampled_from(["1", "2", "3"]),
                max_size=3,
            ),
        ),
        max_size=80,
    )
)
def test_parameters_that_change_the_page_are_never_learned(pages):
    # a site where page and id name content, and ref and src do not
    learner = Learner(min_pairs=2)
    for path, params in pages:
        content = f"{path}|page={params.get('page')}|id={params.get('id')}"
        learner.observe(_url("site.com", "", path, list(params.items())), "site.com", sig(content))
    assert {r.name for r in learner.rules} <= {"ref", "src"}


def test_a_single_script_site_needs_twice_the_evidence():
    # the seed's news site: one path, articles told apart by cid, arglink changes nothing
    learner = Learner(min_pairs=3)
    pages = []
    for cid in range(1, 6):
        pages += [
            (f"https://news.test/servlet/ContentServer?cid={cid}&arglink=a", f"article {cid}"),
            (f"https://news.test/servlet/ContentServer?cid={cid}&arglink=b", f"article {cid}"),
        ]
    feed(learner, pages)
    assert learner.rules == ()  # five pages of one script: not yet
    feed(
        learner,
        [
            ("https://news.test/servlet/ContentServer?cid=6&arglink=a", "article 6"),
            ("https://news.test/servlet/ContentServer?cid=6&arglink=b", "article 6"),
        ],
    )
    assert param_rules(learner) == [("news.test", "arglink")]
    # and cid, which changes the article, is never learned
    assert not learner.is_blocked("param", "news.test", "arglink")


def test_a_leading_path_segment_is_learned_and_a_language_prefix_is_not():
    learner = Learner(min_pairs=3)
    for x in "abc":
        learner.observe(f"https://s.test/docs/{x}.html", "s.test", f"doc {x}".encode())
        assert learner.rules == () or x == "c"
        learner.observe(f"https://s.test/print/docs/{x}.html", "s.test", f"doc {x}".encode())
    assert [(r.kind, r.host, r.name) for r in learner.rules] == [("path", "s.test", "print")]
    assert learner.path_prefixes() == {"s.test": ["print"]}
    assert "URLUNIFY_IGNORE_PATH_PREFIXES = {'s.test': ['print']}" in learner.settings_snippet()
    again = Learner.from_json(learner.to_json())
    assert again.path_prefixes() == {"s.test": ["print"]}
    # /en/x differs from /x: a counter-example, never learned
    other = Learner(min_pairs=3)
    for x in "abcdef":
        other.observe(f"https://s.test/{x}", "s.test", f"{x} in some language".encode())
        other.observe(f"https://s.test/en/{x}", "s.test", f"{x} in English".encode())
    assert other.rules == () and other.is_blocked("path", "s.test", "en")


def test_a_last_path_segment_is_learned_and_a_child_page_is_not():
    """``/doc/N/print.html`` and ``/doc/N/amp/`` are ``/doc/N/`` (a suffix rule), learned in
    either order of the two spellings; the children of a listing (``/news/<story>``, each
    under one directory) never make a candidate, nor a counter-example kept."""
    learner = Learner(min_pairs=3)
    for n in range(4):
        first, then = (f"https://s.test/doc/{n}/", f"https://s.test/doc/{n}/print.html")
        if n % 2:
            first, then = then, first
        learner.observe(first, "s.test", f"doc {n}".encode())
        learner.observe(then, "s.test", f"doc {n}".encode())
        learner.observe(f"https://s.test/doc/{n}/amp/", "s.test", f"doc {n}".encode())
    assert sorted((r.kind, r.host, r.name) for r in learner.rules) == [
        ("suffix", "s.test", "amp"),
        ("suffix", "s.test", "print.html"),
    ]
    assert learner.path_suffixes() == {"s.test": ["print.html", "amp"]}
    assert "URLUNIFY_IGNORE_PATH_SUFFIXES = {'s.test': ['print.html', 'amp']}" in (
        learner.settings_snippet()
    )
    again = Learner.from_json(learner.to_json())
    assert again.path_suffixes() == learner.path_suffixes()
    policy = Policy(ignore_path_suffixes=learner.path_suffixes())
    assert Unifier(policy).identify("https://s.test/doc/9/amp/") == "s.test/doc/9"
    # a listing and its stories: different texts under one directory each, no candidate kept
    other = Learner(min_pairs=3)
    other.observe("https://s.test/news/", "s.test", b"the news")
    for story in range(50):
        other.observe(f"https://s.test/news/story-{story}", "s.test", f"story {story}".encode())
    assert other.rules == ()
    assert not any(other.is_blocked("suffix", "s.test", f"story-{n}") for n in range(50))
    # a view segment that changes the page is a counter-example, and then never learned
    third = Learner(min_pairs=3)
    for n in range(6):
        third.observe(f"https://s.test/t/{n}/", "s.test", f"topic {n}".encode())
        third.observe(f"https://s.test/t/{n}/all", "s.test", f"topic {n} all posts".encode())
    assert third.rules == () and third.is_blocked("suffix", "s.test", "all")


def test_a_parameter_that_looked_irrelevant_but_was_not_learned_is_a_hint():
    """``?source=sidebar`` on some links only: pages with and without it have one text, but one
    value could be a default (``?page=1`` = the list), so it is not learned from so little;
    the user is told what it cost, to decide (a link tag, ``?ref=``, is learned from
    as much: tests/integration/test_frontier_hold.py). A counter-example, or a rule, ends the hint."""
    learner = Learner(presence=True)
    pages = []
    for path in ["/a", "/b", "/c", "/d"]:
        pages += [(f"http://site.com{path}", path), (f"http://site.com{path}?source=sidebar", path)]
    feed(learner, pages)
    assert param_rules(learner) == []
    assert learner.hints(3) == [("site.com", "source", 4)]  # four fetches of a page fetched before
    assert learner.hints(5) == []
    feed(learner, [("http://site.com/e", "/e"), ("http://site.com/e?source=sidebar", "/f")])
    assert learner.hints(3) == []  # it changed a page: no longer advice
