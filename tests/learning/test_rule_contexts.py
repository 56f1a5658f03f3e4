"""Rules with a context, and evidence counted in distinct pages (pure Python)."""

from __future__ import annotations

import hashlib

import pytest

from scrapy_urlunify import Policy, identify
from scrapy_urlunify.core._policy import PolicyValueError
from scrapy_urlunify.learning._learner import (
    CONTEXT_VALUES,
    PER_PATH_FACTOR,
    PRESENCE_FACTOR,
    Learner,
)

W = "http://wiki.test/w/index.php"


def sig(content: str) -> bytes:
    return hashlib.md5(content.encode()).digest()


def see(learner: Learner, url: str, content: str, host: str = "wiki.test") -> list[str]:
    return [r.context_key + " " + r.name for r in learner.observe(url, host, sig(content))]


def articles(learner: Learner, n: int = 40) -> None:
    """A wiki's article views on /w/index.php: ``title`` names the page, ``action`` the view."""
    for i in range(n):
        see(learner, f"{W}?title=A{i}&action=history", f"history of A{i}")
        see(learner, f"{W}?title=A{i}&action=edit", f"editing A{i}")


def rules(learner: Learner) -> list[tuple[str, str, str]]:
    return [(r.host, r.context, r.name) for r in learner.rules]


def test_returnto_is_learned_in_its_context_from_many_values_of_one_text():
    learner = Learner()
    articles(learner)
    # every page links the login page with its own name: one text, one path, two contexts
    for i in range(CONTEXT_VALUES - 1):
        assert see(learner, f"{W}?title=Special:UserLogin&returnto=A{i}", "log in") == []
        see(learner, f"{W}?title=Special:CreateAccount&returnto=A{i}", "create an account")
    assert learner.rules == ()  # eleven values: not yet
    i = CONTEXT_VALUES - 1
    assert see(learner, f"{W}?title=Special:UserLogin&returnto=A{i}", "log in") == [
        "wiki.test/w/index.php?title=Special:UserLogin returnto"
    ]
    see(learner, f"{W}?title=Special:CreateAccount&returnto=A{i}", "create an account")
    assert rules(learner) == [
        ("wiki.test", "/w/index.php?title=Special:UserLogin", "returnto"),
        ("wiki.test", "/w/index.php?title=Special:CreateAccount", "returnto"),
    ]
    rule = learner.rules[0]
    assert rule.pairs == CONTEXT_VALUES
    assert "wiki.test/w/index.php?title=Special:UserLogin" in str(rule)
    assert "one text" in str(rule)
    # the host-wide rule is not learned: two texts on one path are two pieces, not enough
    assert not any(r.context == "" for r in learner.rules)
    # what the user is told to paste, and what it does: only in that context
    params = learner.ignore_params()
    assert params == {
        "wiki.test/w/index.php?title=Special:UserLogin": ["returnto"],
        "wiki.test/w/index.php?title=Special:CreateAccount": ["returnto"],
    }
    assert (
        "'wiki.test/w/index.php?title=Special:UserLogin': ['returnto']"
        in learner.settings_snippet()
    )
    policy = Policy(ignore_params=params)
    assert identify(f"{W}?returnto=Zed&title=Special:UserLogin", policy) == identify(
        f"{W}?title=Special:UserLogin", policy
    )
    assert identify(f"{W}?title=Main&returnto=Zed", policy) != identify(f"{W}?title=Main", policy)
    # kept across a restart, context and all
    again = Learner.from_json(learner.to_json())
    assert again.ignore_params() == params


def test_a_counter_example_in_the_context_blocks_and_revokes_it_there_only():
    learner = Learner()
    articles(learner)
    for i in range(CONTEXT_VALUES):
        see(learner, f"{W}?title=Special:UserLogin&returnto=A{i}", "log in")
        see(learner, f"{W}?title=Special:Search&returnto=A{i}", "search")
    assert len(learner.rules) == 2
    # on the search page, returnto=A99 shows another text: that context's rule goes, the login one stays
    see(learner, f"{W}?title=Special:Search&returnto=A99", "search, returned to A99")
    assert rules(learner) == [("wiki.test", "/w/index.php?title=Special:UserLogin", "returnto")]
    (rev,) = learner.revoked
    assert rev.rule.context == "/w/index.php?title=Special:Search"
    for i in range(100, 100 + CONTEXT_VALUES):  # and it is not learned there again
        see(learner, f"{W}?title=Special:Search&returnto=A{i}", "search")
    assert len(learner.rules) == 1
    # the probation's counter-example (a sample with other content) revokes the login rule
    learner.contradict(
        learner.rules[0],
        f"{W}?title=Special:UserLogin&returnto=A1",
        f"{W}?title=Special:UserLogin&returnto=A77",
    )
    assert learner.rules == ()
    assert Learner.from_json(learner.to_json()).rules == ()


def test_option_variants_of_one_page_are_one_piece_of_evidence():
    # limit learned from six variants of one empty RecentChanges page (days shows in its text):
    # all of one page, one piece; never a rule of the host
    learner = Learner()
    articles(learner)
    for days in (1, 3, 7, 14, 30, 90):
        for limit in (50, 500):
            see(
                learner,
                f"{W}?title=Special:RecentChanges&days={days}&limit={limit}",
                f"no changes in {days} days",
            )
    assert learner.rules == ()
    assert learner.stats["equal_pairs"] >= 6


def test_a_parameter_of_many_values_that_changes_nothing_does_not_name_the_page():
    # from=<timestamp> takes as many values on /w/index.php as title (both past the count), but
    # two titles are two texts and two timestamps one: title names the page, the six variants
    # (one timestamp each) are still one page
    learner = Learner()
    articles(learner)
    for t in range(40):
        see(
            learner, f"{W}?title=Special:RecentChanges&from=2026{t:04d}", "changes since then: none"
        )
    for days in (1, 3, 7, 14, 30, 90):
        for limit in (50, 500):
            see(
                learner,
                f"{W}?title=Special:RecentChanges&days={days}&from=2026{days:04d}&limit={limit}",
                f"no changes in {days} days",
            )
    # (from is learned where its values gave one text: on that page)
    assert rules(learner) == [("wiki.test", "/w/index.php?title=Special:RecentChanges", "from")]


def test_limit_learned_across_pages_is_revoked_by_a_differing_pair_elsewhere():
    learner = Learner()
    articles(learner)
    # three special pages, each with a short list: limit changes nothing on any of them
    for page in ("Special:RecentChanges", "Special:NewPages", "Special:Log"):
        for days in (1, 3):
            for limit in (50, 500):
                see(
                    learner,
                    f"{W}?title={page}&days={days}&limit={limit}",
                    f"{page} over {days} days",
                )
    see(learner, "http://wiki.test/wiki/Special:AllPages?limit=50", "all pages")
    see(learner, "http://wiki.test/wiki/Special:AllPages?limit=500", "all pages")
    assert rules(learner) == [("wiki.test", "", "limit")]
    # on WhatLinksHere, 50 and 500 links differ: revoked, for the whole host
    see(learner, f"{W}?title=Special:WhatLinksHere&target=A1&limit=50", "50 links")
    see(learner, f"{W}?title=Special:WhatLinksHere&target=A1&limit=500", "365 links")
    assert learner.rules == ()
    assert [r.rule.name for r in learner.revoked] == ["limit"]
    assert learner.is_blocked("param", "wiki.test", "limit")


@pytest.mark.parametrize(("name", "needed"), [("mobile", 9), ("print", 3)])
def test_one_value_is_learned_from_presence_across_distinct_pages_and_revoked_by_a_value_that_matters(
    name, needed
):
    # a parameter of one value might be a default that chooses content (?page=1): three times
    # the pages two values need; a link tag (print: core._spellings.LINK_TAG_PARAMS) only tags
    # the view, and needs what two values need
    pages = [f"/docs/d{i}" for i in range(5)] + [f"/news/n{i}" for i in range(4)]
    learner = Learner(presence=True)
    for path in pages[: needed - 1]:
        see(learner, f"http://s.test{path}", f"text of {path}", "s.test")
        see(learner, f"http://s.test{path}?{name}=1", f"text of {path}", "s.test")
    assert learner.rules == ()
    last = pages[needed - 1]
    see(learner, f"http://s.test{last}", "text 8", "s.test")
    assert see(learner, f"http://s.test{last}?{name}=1", "text 8", "s.test") == [f"s.test {name}"]
    # off by default: a print view may be an item of its own
    default = Learner()
    for path in pages:
        see(default, f"http://s.test{path}", f"text of {path}", "s.test")
        see(default, f"http://s.test{path}?{name}=1", f"text of {path}", "s.test")
    assert default.rules == ()
    # =2 (another value) with other text: a counter-example, the rule revoked
    see(learner, f"http://s.test/docs/d0?{name}=2", "text of /docs/d0, two columns", "s.test")
    assert learner.rules == ()
    assert learner.is_blocked("param", "s.test", name)


def test_a_page_seen_only_with_a_parameter_a_rule_removes_is_the_page_without_it():
    # the shop links its products with ?ref=<the linking product>; once ref is a rule, the
    # ?ref= view of a product is the product itself, so its ?print=1 view makes a pair
    learner = Learner(presence=True)
    for path in ("/a/x", "/b/y", "/c/z"):
        see(learner, f"http://s.test{path}?ref=p1", f"text of {path}", "s.test")
        see(learner, f"http://s.test{path}?ref=p2", f"text of {path}", "s.test")
    assert rules(learner) == [("s.test", "", "ref")]
    pages = [f"/docs/d{i}" for i in range(5)] + [f"/news/n{i}" for i in range(4)]
    for i, path in enumerate(pages):
        see(learner, f"http://s.test{path}?ref=p{i}", f"text of {path}", "s.test")
        see(learner, f"http://s.test{path}?print=1", f"text of {path}", "s.test")
    assert rules(learner) == [("s.test", "", "ref"), ("s.test", "", "print")]
    # and a print view with other text than such a page is a counter-example
    see(learner, "http://s.test/docs/d9?ref=p9", "text of d9", "s.test")
    see(learner, "http://s.test/docs/d9?print=1", "text of d9, two columns", "s.test")
    assert rules(learner) == [("s.test", "", "ref")]


def test_a_parameter_of_several_values_is_never_learned_from_presence():
    # page=1 is the list itself on nine lists, page=2 another page: page has two values
    learner = Learner(presence=True)
    see(learner, "http://s.test/list0?page=2", "list 0, page 2", "s.test")
    for i in range(9):
        see(learner, f"http://s.test/list{i}", f"list {i}", "s.test")
        see(learner, f"http://s.test/list{i}?page=1", f"list {i}", "s.test")
    assert learner.rules == ()


def wishlist(learner: Learner, n: int) -> list[list[str]]:
    """A shop whose product pages each link their own ``?add_to_wishlist=<id>`` (the same page):
    the rules adopted at each pair."""
    adopted = []
    for i in range(n):
        see(learner, f"http://s.test/product/p{i}/", f"product {i}", "s.test")
        adopted.append(
            see(
                learner,
                f"http://s.test/product/p{i}/?add_to_wishlist={i}",
                f"product {i}",
                "s.test",
            )
        )
    return adopted


def test_a_parameter_of_one_value_on_each_path_is_learned_from_presence_with_more_pages():
    # an action on the page itself: no page ever shows two of its values, so no pair of two
    # values teaches it; a page's own default (color=red on a red product) looks the same, so
    # it needs twice the pages a parameter of one value on the whole host needs
    needed = PER_PATH_FACTOR * PRESENCE_FACTOR * 3  # min_pairs 3
    adopted = wishlist(Learner(presence=True), needed)
    assert adopted[:-1] == [[]] * (needed - 1)
    assert adopted[-1] == ["s.test add_to_wishlist"]
    # a path that showed two of its values (here in two views that make no pair): not an
    # action on its page, never learned from presence
    learner = Learner(presence=True)
    see(
        learner, "http://s.test/product/px/?add_to_wishlist=7&size=m", "product x, size m", "s.test"
    )
    see(learner, "http://s.test/product/px/?add_to_wishlist=8", "product x", "s.test")
    assert wishlist(learner, 2 * needed) == [[]] * (2 * needed)
    # and without presence learning, never
    assert wishlist(Learner(), 2 * needed) == [[]] * (2 * needed)


def test_a_rule_generalises_to_the_host_only_across_many_contexts():
    learner = Learner()
    # ref=a and ref=b on two pages of one path: two contexts, not many
    for i in range(2):
        see(learner, f"http://s.test/item?id={i}&ref=a", f"item {i}", "s.test")
        see(learner, f"http://s.test/item?id={i}&ref=b", f"item {i}", "s.test")
    assert learner.rules == ()
    # a third page on another path: three contexts on two paths, the host's rule
    see(learner, "http://s.test/about?ref=a", "about", "s.test")
    see(learner, "http://s.test/about?ref=b", "about", "s.test")
    assert rules(learner) == [("s.test", "", "ref")]
    # many values in one context add no context rule for a parameter the host ignores already
    for i in range(CONTEXT_VALUES):
        see(learner, f"http://s.test/login?ref={i}", "log in", "s.test")
    assert rules(learner) == [("s.test", "", "ref")]


def test_a_context_without_items_needs_a_page_no_other_path_serves():
    # a "not found" text served on many paths is a catch-all: its values name no context
    learner = Learner()
    for p in ("a", "b", "c"):
        see(learner, f"http://s.test/{p}", "Not found", "s.test")
    for i in range(CONTEXT_VALUES + 5):
        see(learner, f"http://s.test/search?q={i}", "Not found", "s.test")
    assert learner.rules == ()
    # a login page of its own is one: /login?returnto=<page> names the context /login
    for i in range(CONTEXT_VALUES):
        see(learner, f"http://s.test/login?returnto=/p{i}", "log in", "s.test")
    assert rules(learner) == [("s.test", "/login", "returnto")]


def test_the_settings_form_of_a_rule_context():
    # URLUNIFY_IGNORE_PARAMS keyed by host, path and items: normalized like any host, items sorted
    policy = Policy(
        ignore_params={"Wiki.test/w/index.php?title=Special:UserLogin&uselang=en": ["returnto"]}
    )
    assert policy.ignore_params == (
        ("wiki.test/w/index.php?title=Special:UserLogin&uselang=en", ("returnto",)),
    )
    # every item of the context must be there, in any order, the path exactly
    assert identify(f"{W}?uselang=en&returnto=X&title=Special:UserLogin", policy) == identify(
        f"{W}?title=Special:UserLogin&uselang=en", policy
    )
    assert identify(f"{W}?returnto=X&title=Special:UserLogin", policy) != identify(
        f"{W}?title=Special:UserLogin", policy
    )
    assert identify(
        "http://wiki.test/w/index.php/x?uselang=en&returnto=X&title=Special:UserLogin", policy
    ) != (identify("http://wiki.test/w/index.php/x?uselang=en&title=Special:UserLogin", policy))
    # a broken key fails naming the field; other parameter lists take hosts only
    with pytest.raises(PolicyValueError, match="ignore_params"):
        Policy(ignore_params={"wiki.test/x#top": ["a"]})
    with pytest.raises(PolicyValueError, match="remove_params"):
        Policy(remove_params={"wiki.test/x": ["a"]})


def test_a_parameter_that_matters_on_listings_is_learned_on_product_pages_from_distinct_pages():
    """``sort`` orders a listing (a counter-example on the host) and changes nothing on a
    product page of the CMS route: each product is its own text, two values each."""
    shop = "http://shop.test/index.php?route=product%2Fview"
    learner = Learner()
    see(learner, "http://shop.test/category/1?sort=price", "cheap first", "shop.test")
    see(learner, "http://shop.test/category/1?sort=name", "a to z", "shop.test")
    see(learner, f"{shop}&id=1", "product 1", "shop.test")
    see(learner, f"{shop}&id=2", "product 2", "shop.test")  # id names the page
    assert learner.is_blocked("param", "shop.test", "sort")
    needed = 2 * learner.min_pairs
    for i in range(1, needed + 1):
        for order in ("price", "name"):
            learned = see(learner, f"{shop}&id={i}&sort={order}", f"product {i}", "shop.test")
        assert (learned == ["shop.test/index.php?route=product%2Fview sort"]) == (i == needed)
    assert rules(learner) == [("shop.test", "/index.php?route=product%2Fview", "sort")]
    assert "pages whose values show one text" in str(learner.rules[0])
    policy = Policy(ignore_params=learner.ignore_params())
    assert identify(f"{shop}&id=9&sort=name", policy) == identify(f"{shop}&id=9", policy)
    assert identify("http://shop.test/category/1?sort=name", policy) != identify(
        "http://shop.test/category/1", policy
    )
    # a product whose sort order shows another text revokes it in that context
    see(learner, f"{shop}&id=40&sort=price", "product forty", "shop.test")
    see(learner, f"{shop}&id=40&sort=name", "product forty, reviews by name", "shop.test")
    assert learner.rules == ()
    assert [r.rule.context for r in learner.revoked] == ["/index.php?route=product%2Fview"]


def test_option_variants_of_one_product_do_not_make_a_context_rule():
    shop = "http://shop.test/index.php?route=product%2Fview"
    learner = Learner()
    see(learner, f"{shop}&id=1", "product one", "shop.test")
    see(learner, f"{shop}&id=2", "product two", "shop.test")
    see(learner, f"{shop}&id=2&sort=a", "product two", "shop.test")
    see(learner, f"{shop}&id=1&sort=a", "product one", "shop.test")
    for order in "bcdefghijk":  # ten values on one product: one page, one piece of evidence
        see(learner, f"{shop}&id=1&sort={order}", "product one", "shop.test")
    assert not any(r.context for r in learner.rules)


def test_pages_with_and_without_a_parameter_count_in_a_context_once_two_values_have():
    shop = "http://shop.test/index.php?route=product%2Fview"
    cat = "http://shop.test/index.php?route=product%2Fcategory"
    learner = Learner()
    see(learner, "http://shop.test/category/1?sort=price", "cheap first", "shop.test")
    see(learner, "http://shop.test/category/1?sort=name", "a to z", "shop.test")
    # a default value alone: page=1 is each category's listing, on twelve categories
    for c in range(12):
        see(learner, f"{cat}&path={c}", f"category {c}", "shop.test")
        see(learner, f"{cat}&path={c}&page=1", f"category {c}", "shop.test")
    assert learner.rules == ()
    see(learner, f"{shop}&id=1", "product 1", "shop.test")
    see(learner, f"{shop}&id=2", "product 2", "shop.test")  # id names the page
    # sort: present or absent on six products, two values on three of them
    for i in range(1, 4):
        see(learner, f"{shop}&id={i}&sort=price", f"product {i}", "shop.test")
        see(learner, f"{shop}&id={i}&sort=name", f"product {i}", "shop.test")
    for i in range(4, 6):
        see(learner, f"{shop}&id={i}", f"product {i}", "shop.test")
        see(learner, f"{shop}&id={i}&sort=price", f"product {i}", "shop.test")
    assert learner.rules == ()  # five pages
    see(learner, f"{shop}&id=6", "product 6", "shop.test")
    assert see(learner, f"{shop}&id=6&sort=name", "product 6", "shop.test") == [
        "shop.test/index.php?route=product%2Fview sort"
    ]


@pytest.mark.parametrize("everything", ["*", "%2A", "all"])
def test_a_value_that_selects_everything_is_no_evidence_for_its_filter(everything):  # type: ignore[no-untyped-def]
    """Redmine links an issue's related issues as ``status_id=o`` (open) and ``status_id=*``
    (all): one list while they are all open, on every issue; learned from those, the rule merged
    ``status_id=c`` (closed) with ``*`` where they were not."""
    tracker = "http://t.test/issues?set_filter=1&issue_id="
    learner = Learner()
    for i in range(1, 4 * learner.min_pairs + 1):
        related = f"related issues of {i}, all open"
        assert see(learner, f"{tracker}{i}&status_id=o", related, "t.test") == []
        assert see(learner, f"{tracker}{i}&status_id={everything}", related, "t.test") == []
    assert learner.rules == ()


def test_two_values_that_name_a_status_are_evidence():
    """The control of the test above: ``o`` and ``c`` with one text on every issue do make a rule."""
    tracker = "http://t.test/issues?set_filter=1&issue_id="
    learner = Learner()
    learned = []
    for i in range(1, 4 * learner.min_pairs + 1):
        related = f"related issues of {i}"
        learned += see(learner, f"{tracker}{i}&status_id=o", related, "t.test")
        learned += see(learner, f"{tracker}{i}&status_id=c", related, "t.test")
    assert [r.name for r in learner.rules] == ["status_id"], learned
