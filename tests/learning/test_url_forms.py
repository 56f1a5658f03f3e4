"""Form rules learned from declared canonicals found true (``learning/_url_forms.py``): the
shape of a pair, how many pairs a rule needs, which positions become holes, and what never
makes a rule."""

from __future__ import annotations

from scrapy_urlunify import Policy, identify
from scrapy_urlunify.learning._learner import Learner
from scrapy_urlunify.learning._rule_types import FORM, LearnedRule

H = "shop.test"


def _shop(learner: Learner, category: str, slug: str, same: bool = True) -> list[LearnedRule]:
    return learner.observe_canonical(
        (H, f"/shop/{category}/{slug}", None),
        (H, f"/product/{slug}", None),
        same,
        (f"http://{H}/shop/{category}/{slug}/", f"http://{H}/product/{slug}/"),
    )


def _views(learner: Learner, views: list[str]) -> list[LearnedRule]:
    """Twelve products, each fetched under one view (``/product/p<n>/<view>``, the views in
    turn) that declares the product canonical: the rules they complete."""
    found = []
    for n in range(12):
        found += learner.observe_canonical(
            (H, f"/product/p{n}/{views[n % len(views)]}", None),
            (H, f"/product/p{n}", None),
            True,
            ("", ""),
        )
    return found


def test_a_form_needs_twice_min_pairs_distinct_canonicals() -> None:
    learner = Learner(min_pairs=3)
    for n in range(5):
        assert _shop(learner, "hats", f"cap-{n}") == []
    assert _shop(learner, "hats", "cap-1") == []  # the same canonical again: not a new one
    (rule,) = _shop(learner, "hats", "cap-5")
    assert (rule.kind, rule.host, rule.name, rule.target) == (
        FORM,
        H,
        "/shop/hats/{s2}",
        "/product/{s2}",
    )
    assert rule.pairs == 6
    assert "URLs of the form /shop/hats/{s2} on shop.test are the pages of /product/{s2}" in str(
        rule
    )
    # the rule as a setting, applied
    policy = Policy(url_forms=learner.url_forms())
    assert identify("http://shop.test/shop/hats/x/", policy) == identify(
        "http://shop.test/product/x/"
    )
    assert identify("http://shop.test/shop/shoes/x/", policy) != identify(
        "http://shop.test/product/x/"
    )


def test_a_position_is_a_hole_only_where_pairs_show_as_many_texts_as_a_rule_needs() -> None:
    learner = Learner(min_pairs=3)
    for n in range(6):
        _shop(learner, "hats", f"cap-{n}")
    # a second category is a rule of its own, at its own sixth pair: two texts say nothing of
    # a third
    assert all(_shop(learner, "shoes", f"boot-{n}") == [] for n in range(5))
    (shoes,) = _shop(learner, "shoes", "boot-5")
    assert shoes.name == "/shop/shoes/{s2}"
    # the category is a classifier (before the slug the canonical writes) and each product
    # came in one category: a third category makes its hole (min_pairs texts)
    (wider,) = _shop(learner, "bags", "tote-0")
    assert wider.name == "/shop/*/{s2}"
    assert [r.name for r in learner.rules] == ["/shop/hats/{s2}", "/shop/shoes/{s2}", wider.name]
    # the narrower forms stay rules, but the settings name the wider one only: they merge
    # nothing more
    assert learner.url_forms() == {H: {"/shop/*/{s2}": "/product/{s2}"}}
    assert "/shop/hats/" not in learner.settings_snippet()


def test_a_classifier_that_a_product_came_under_twice_needs_as_many_texts_as_a_rule() -> None:
    # a product under two categories: the category is not a partition of the products, and
    # a third category says nothing of a fourth
    learner = Learner(min_pairs=3)
    for n in range(6):
        _shop(learner, "hats", f"cap-{n}")
    _shop(learner, "sale", "cap-0")
    assert all(_shop(learner, c, f"x-{c}") == [] for c in ("shoes", "bags"))
    assert [r.name for r in learner.rules] == ["/shop/hats/{s2}"]
    found = []
    for c in ("belts", "coats", "scarves"):
        found += _shop(learner, c, f"x-{c}")
    assert [r.name for r in found] == ["/shop/*/{s2}"]  # the sixth category


def test_views_after_a_slug_are_no_classifier() -> None:
    # three views, each of another product: what follows a slug may be a page of its own
    # (comment-page-2), so its position needs six texts, as before
    found = _views(Learner(min_pairs=3), ["amp", "print", "feed"])
    assert "/product/{s1}/*" not in [r.name for r in found]


def test_a_canonical_found_false_refutes_its_shape_for_good() -> None:
    learner = Learner(min_pairs=3)
    for n in range(3):
        _shop(learner, "hats", f"cap-{n}")
    _shop(learner, "hats", "cap-3", same=False)
    assert all(_shop(learner, "hats", f"cap-{n}") == [] for n in range(4, 20))
    assert learner.rules == ()


def test_a_revoked_form_is_not_learned_again_even_after_a_restart() -> None:
    learner = Learner(min_pairs=3)
    for n in range(6):
        _shop(learner, "hats", f"cap-{n}")
    (rule,) = learner.rules
    learner.contradict(rule, "http://shop.test/shop/hats/odd/", "http://shop.test/product/odd/")
    assert learner.rules == ()
    assert [r.rule for r in learner.revoked] == [rule]
    again = Learner.from_json(learner.to_json())
    for learnt in (learner, again):
        assert all(_shop(learnt, "hats", f"hat-{n}") == [] for n in range(12))
        assert all(_shop(learnt, "shoes", f"boot-{n}") == [] for n in range(2))


def test_a_canonical_that_names_its_own_text_teaches_no_form() -> None:
    # /?p=17 -> /product/red-cap: the slug is in no part of the URL, no form can say it
    learner = Learner(min_pairs=3)
    for n in range(20):
        found = learner.observe_canonical(
            (H, "/", f"p={n}&post_type=product"), (H, f"/product/item-{n}", None), True, ("", "")
        )
        assert found == []


def test_a_form_without_a_text_of_its_own_is_never_a_rule() -> None:
    # /<slug> -> /product/<slug> would take /about and /contact too
    learner = Learner(min_pairs=3)
    for n in range(20):
        found = learner.observe_canonical(
            (H, f"/item-{n}", None), (H, f"/product/item-{n}", None), True, ("", "")
        )
        assert found == []


def test_a_parameter_form_keeps_the_values_its_canonical_writes() -> None:
    learner = Learner(min_pairs=3)
    found = []
    for n in range(6):
        found += learner.observe_canonical(
            (H, f"/category/c{n}", f"orderby=price&paged={n + 2}"),
            (H, f"/category/c{n}/page/{n + 2}", "orderby=price"),
            True,
            ("", ""),
        )
    (rule,) = found
    assert rule.name == "/category/{s1}?orderby=price&paged={q1}"
    assert rule.target == "/category/{s1}/page/{q1}?orderby=price"


def test_a_respelling_is_a_rule_at_min_pairs_canonicals() -> None:
    # ?paged=N -> /page/N writes every text of the URL: it merges no two URLs, and three
    # canonicals make it (a form that leaves a text out needs six: the first test)
    learner = Learner(min_pairs=3)

    def page2(category: str) -> list[LearnedRule]:
        return learner.observe_canonical(
            (H, f"/category/{category}", "paged=2"),
            (H, f"/category/{category}/page/2", None),
            True,
            ("", ""),
        )

    assert page2("hats") == []
    assert page2("shoes") == []
    (rule,) = page2("bags")
    assert (rule.name, rule.target, rule.pairs) == (
        "/category/{s1}?paged=2",
        "/category/{s1}/page/2",
        3,
    )


def test_a_query_form_of_the_root_is_a_respelling() -> None:
    # /?product_cat=hats -> /product-category/hats: the root's empty segment is no text the
    # canonical leaves out, so three canonicals make it, as for any respelling
    learner = Learner(min_pairs=3)

    def widget(category: str) -> list[LearnedRule]:
        return learner.observe_canonical(
            (H, "/", f"product_cat={category}"),
            (H, f"/product-category/{category}", None),
            True,
            ("", ""),
        )

    assert widget("hats") == []
    assert widget("shoes") == []
    (rule,) = widget("bags")
    assert (rule.name, rule.target, rule.pairs) == (
        "/?product_cat={q0}",
        "/product-category/{q0}",
        3,
    )


def test_form_rules_survive_a_restart_and_make_a_settings_line() -> None:
    learner = Learner(min_pairs=3)
    for n in range(6):
        _shop(learner, "hats", f"cap-{n}")
    again = Learner.from_json(learner.to_json())
    assert again.rules == learner.rules
    assert again.url_forms() == {H: {"/shop/hats/{s2}": "/product/{s2}"}}
    assert (
        "URLUNIFY_URL_FORMS = {'shop.test': {'/shop/hats/{s2}': '/product/{s2}'}}"
        in again.settings_snippet()
    )


def test_a_page_that_names_itself_keeps_a_form_from_taking_its_url() -> None:
    # six views of products (/x/amp, /x/print...) declare the product, but comment-page-2 is a
    # page of its own: "/product/{s1}/*" would take it
    views = ["amp", "print", "comment-page-1", "share", "embed", "feed"]
    assert [r.name for r in _views(Learner(min_pairs=3), views)] == ["/product/{s1}/*"]
    learner = Learner(min_pairs=3)
    learner.observe_standalone((H, "/product/x/comment-page-2", None), f"http://{H}/product/x/")
    assert _views(learner, views) == []


def test_views_of_two_texts_make_a_form_each() -> None:
    found = _views(Learner(min_pairs=3), ["comment-page-1", "amp"])
    assert [r.name for r in found] == ["/product/{s1}/comment-page-1", "/product/{s1}/amp"]


def test_a_page_of_an_adopted_form_that_names_itself_revokes_the_form() -> None:
    learner = Learner(min_pairs=3)
    for n in range(6):
        _shop(learner, "hats", f"cap-{n}")
    (rule,) = learner.rules
    assert learner.observe_standalone((H, "/shop/hats/gift-card", None), "") == []  # other URL
    wrong = learner.observe_standalone(
        (H, "/product/gift-card", None), f"http://{H}/shop/hats/gift-card/"
    )
    assert wrong == [rule]
    assert learner.rules == ()


def _asks(learner: Learner, path: str, query: str | None = None) -> list[str]:
    """The form questions fetching the page at ``path`` (an identifier's) would ask."""
    url = f"http://{H}{path}" + (f"?{query}" if query else "")
    return [
        c for q, c, _ in learner.open_questions(url, H, (H, path, query)) if q.startswith("form")
    ]


def test_a_shape_under_way_asks_of_the_urls_its_pairs_may_be_of() -> None:
    learner = Learner(min_pairs=3)
    assert _asks(learner, "/shop/hats/cap-9") == []  # no pair yet: nothing to ask
    for n in range(2):
        _shop(learner, "hats", f"cap-{n}")
    (shape,) = _asks(learner, "/shop/hats/cap-9")
    assert shape == "form shop.test /shop/*/{s2} -> /product/{s2}"
    # another category is another text at the classifier: the same shape's question
    assert _asks(learner, "/shop/shoes/boot-1") == [shape]
    # a text every pair showed, which the canonical does not write, is the shape's own
    assert _asks(learner, "/blog/hats/cap-9") == []
    assert _asks(learner, "/blog/2026/cap-9") == []
    # another number of segments, or parameter names: another shape
    assert _asks(learner, "/shop/hats/cap-9/amp") == []
    assert _asks(learner, "/shop/hats/cap-9", "v=1") == []
    # a shape refuted asks nothing more
    _shop(learner, "hats", "cap-2", same=False)
    assert _asks(learner, "/shop/hats/cap-9") == []


def test_a_shape_whose_source_would_have_no_text_of_its_own_asks_nothing() -> None:
    # /<slug> -> /product/<slug>: its question would hold every page of one segment
    learner = Learner(min_pairs=3)
    learner.observe_canonical((H, "/item-1", None), (H, "/product/item-1", None), True, ("", ""))
    assert _asks(learner, "/about") == []
    # a parameter's name is a text of its own: /?p=<n> (any value) asks
    learner.observe_canonical(
        (H, "/", "product_cat=hats"), (H, "/category/hats", None), True, ("", "")
    )
    assert _asks(learner, "/", "product_cat=shoes") == [
        "form shop.test /?product_cat={q0} -> /category/{q0}"
    ]


def test_a_url_that_asks_a_parameter_its_question_asks_no_form() -> None:
    # /product/<n>?view=gallery declares /product/<n>: a shape under way, but the parameter
    # asks of the URL already (two values a page), and its form question held a page's second
    # value behind the first
    learner = Learner(min_pairs=3)
    for n in range(3):
        learner.observe(f"http://{H}/product/p{n}", H, f"text{n}".encode())
    learner.observe(f"http://{H}/product/p0?view=gallery", H, b"text0")
    learner.observe_canonical(
        (H, "/product/p0", "view=gallery"), (H, "/product/p0", None), True, ("", "")
    )
    asked = learner.open_questions(
        f"http://{H}/product/p1?view=gallery", H, (H, "/product/p1", "view=gallery")
    )
    assert [c for _, c, _ in asked] == [f"view {H}"]
    # a URL of the shape that asks no parameter (a page not observed, a rule not under way
    # elsewhere) asks the form
    assert _asks(learner, "/product/p7", "view=gallery") == [
        "form shop.test /{s0}/{s1}?view=gallery -> /{s0}/{s1}"
    ]


def test_a_wider_rule_subsumes_what_it_merges_the_same_way() -> None:
    from scrapy_urlunify.learning._rule_types import subsumes_rule

    def form(source: str, target: str, host: str = H) -> LearnedRule:
        return LearnedRule(FORM, host, source, 6, (), target=target)

    assert subsumes_rule(
        form("/{s0}/{s1}?paged={q0}", "/{s0}/{s1}/page/{q0}"),
        form("/tag/{s1}?paged=2", "/tag/{s1}/page/2"),
    )
    assert not subsumes_rule(
        form("/tag/{s1}?paged=2", "/tag/{s1}/page/2"),
        form("/{s0}/{s1}?paged={q0}", "/{s0}/{s1}/page/{q0}"),
    )
    assert not subsumes_rule(
        form("/shop/*/{s2}", "/product/{s2}"), form("/shop/hats/{s2}", "/product/{s2}", "x.test")
    )
    # a last segment dropped on every path, over a form that drops it on some
    amp = LearnedRule("suffix", H, "amp", 3, ())
    assert subsumes_rule(amp, form("/product/{s1}/amp", "/product/{s1}"))
    assert not subsumes_rule(amp, form("/product/{s1}/amp", "/item/{s1}"))
    # a parameter of the whole host, over that parameter in one context
    sort = LearnedRule("param", H, "sort", 3, ())
    assert subsumes_rule(sort, LearnedRule("param", H, "sort", 3, (), "/list"))
    assert not subsumes_rule(LearnedRule("param", H, "sort", 3, (), "/list"), sort)
    assert not subsumes_rule(sort, LearnedRule("param", H, "order", 3, (), "/list"))


def _pair(learner: Learner, url: tuple[str, str | None], canonical: tuple[str, str | None]):  # type: ignore[no-untyped-def]
    return learner.observe_canonical((H, *url), (H, *canonical), True, ("", ""))


def test_a_form_rule_learns_to_carry_the_parameters_its_pairs_carry() -> None:
    learner = Learner(min_pairs=3)
    for c in ("hats", "shoes", "bags"):
        found = _pair(learner, (f"/c/{c}", "paged=2"), (f"/c/{c}/page/2", None))
    (paged,) = found
    assert (paged.name, paged.target) == ("/c/{s1}?paged=2", "/c/{s1}/page/2")
    # the rule's pairs once the parameter both spellings carry is left out: three canonicals,
    # two parameters carried
    assert (
        _pair(learner, ("/c/tea", "orderby=date&paged=2"), ("/c/tea/page/2", "orderby=date")) == []
    )
    assert (
        _pair(learner, ("/c/cups", "orderby=date&paged=2"), ("/c/cups/page/2", "orderby=date"))
        == []
    )
    (carrying,) = _pair(learner, ("/c/tea", "color=red&paged=2"), ("/c/tea/page/2", "color=red"))
    assert (carrying.name, carrying.target, carrying.pairs) == (
        "/c/{s1}?paged=2&*",
        "/c/{s1}/page/2?*",
        3,
    )
    policy = Policy(url_forms=learner.url_forms())
    assert identify("http://shop.test/c/mugs?paged=2&size=9", policy) == identify(
        "http://shop.test/c/mugs/page/2?size=9", policy
    )


def test_a_pair_that_drops_or_changes_a_parameter_is_not_carrying() -> None:
    learner = Learner(min_pairs=3)
    for c in ("hats", "shoes", "bags"):
        _pair(learner, (f"/c/{c}", "paged=2"), (f"/c/{c}/page/2", None))
    for n, c in enumerate(("tea", "cups", "mugs", "pots")):
        # the canonical leaves the parameter out, or writes another value of it
        assert (
            _pair(
                learner,
                (f"/c/{c}", f"orderby=date&paged=2&s={n}"),
                (f"/c/{c}/page/2", "orderby=date"),
            )
            == []
        )
        assert _pair(learner, (f"/c/{c}", f"paged=2&x={n}"), (f"/c/{c}/page/2", f"x={n + 1}")) == []
    assert [r.name for r in learner.rules] == ["/c/{s1}?paged=2"]


def test_a_page_that_names_itself_keeps_a_carrying_form_from_taking_it() -> None:
    learner = Learner(min_pairs=3)
    learner.observe_standalone((H, "/c/tea", "paged=2&view=all"), f"http://{H}/c/tea?view=all")
    for c in ("hats", "shoes", "bags"):
        _pair(learner, (f"/c/{c}", "paged=2"), (f"/c/{c}/page/2", None))
    _pair(learner, ("/c/tea", "orderby=date&paged=2"), ("/c/tea/page/2", "orderby=date"))
    _pair(learner, ("/c/cups", "orderby=date&paged=2"), ("/c/cups/page/2", "orderby=date"))
    assert _pair(learner, ("/c/tea", "color=red&paged=2"), ("/c/tea/page/2", "color=red")) == []
    assert [r.name for r in learner.rules] == ["/c/{s1}?paged=2"]
