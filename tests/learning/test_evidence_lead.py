"""The lead of a rule's evidence: what a decisive probation sample must not start with."""

from __future__ import annotations

from scrapy_urlunify.learning._rule_types import LearnedRule, evidence_lead, param_value


def _rule(name: str, *pairs: tuple[str, str], kind: str = "param") -> LearnedRule:
    return LearnedRule(kind, "wiki.test", name, 12, pairs, "/w/index.php?action=edit&redlink=1")


def test_values_of_one_namespace_share_their_namespace():
    edit = "http://wiki.test/w/index.php?title={}&action=edit&redlink=1"
    rule = _rule(
        "title",
        (edit.format("Talk:Iron_Fort"), edit.format("Talk%3AMain_Page")),
        (edit.format("Talk:Windy_Orchard"), edit.format("Talk:Deep_Ford_(district)")),
    )
    assert evidence_lead(rule) == "Talk:"


def test_the_lead_ends_at_the_last_separator_the_values_share():
    day = "http://shop.test/events/calendar?date={}"
    assert (
        evidence_lead(_rule("date", (day.format("2026-12-19"), day.format("2026-12-03"))))
        == "2026-12-"
    )
    # a shared letter is no lead: p451 and p129 are two referrers, not one kind of value
    ref = "http://shop.test/product/4?ref={}"
    assert evidence_lead(_rule("ref", (ref.format("p451"), ref.format("p129")))) == ""
    sort = "http://shop.test/index.php?route=product%2Fview&id=4&sort={}"
    assert evidence_lead(_rule("sort", (sort.format("name"), sort.format("price")))) == ""


def test_one_value_or_none_names_no_lead():
    # print=1 against the page without it: a single value says nothing of other values
    assert (
        evidence_lead(
            _rule(
                "print",
                ("http://s.test/a", "http://s.test/a?print=1"),
                ("http://s.test/b", "http://s.test/b?print=1"),
            )
        )
        == ""
    )
    assert evidence_lead(_rule("print", ("http://s.test/a?x=1", "http://s.test/a?x=2"))) == ""
    assert (
        evidence_lead(_rule("shop.test", ("http://a.s.test/x", "http://s.test/x"), kind="alias"))
        == ""
    )


def test_param_value_reads_the_first_item_of_that_name_decoded():
    assert param_value("http://w.test/i?Title=Talk%3AA+B&title=x#top", "title") == "Talk:A B"
    assert param_value("http://w.test/i?titles=x", "title") is None
    assert param_value("http://w.test/i?title", "title") is None
    assert param_value("http://w.test/i?title=", "title") == ""
