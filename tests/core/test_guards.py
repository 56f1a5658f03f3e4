"""The steps' guards: each step runs only where its guard holds, and the short paths of the
unifier, derived from the guards, give what running the steps one by one gives."""

from __future__ import annotations

import pytest
from _urls import corpus_urls
from _urls import urls as url_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_urlunify import Policy, Unifier
from scrapy_urlunify.core.guards import TAKE_STEPS, HostTests
from scrapy_urlunify.core.rules import IDENTITY_STEPS, REWRITE_STEPS, drop_fragment
from scrapy_urlunify.core.unify import PLAIN_STEPS, unifier_for

STEPS = REWRITE_STEPS + IDENTITY_STEPS


def test_a_host_test_is_compiled_once_per_kind_of_host():
    policy = Policy(remove_params={"a.test": ["x"]}, key_params={"k.test": ["id"]})
    u = Unifier(policy)
    for host in ("a.test", "b.test", "c.test", "k.test", "sub.a.test", "d.test"):
        u.host_rules(host)
    # hosts without parameter rules share one test; a.test (and its subdomain) another, k.test a third
    assert len(u._plain_tests._tests) == 3
    assert u.host_rules("b.test").plain_test is u.host_rules("d.test").plain_test
    assert u.host_rules("a.test").plain_test is u.host_rules("sub.a.test").plain_test


def test_the_host_test_knows_what_the_host_rules_say():
    policy = Policy(remove_params={"a.test": ["x"]})
    u = Unifier(policy)
    on_a, on_b = u.host_rules("a.test").plain_test, u.host_rules("b.test").plain_test
    # a query naming a parameter to remove takes the steps on that host; elsewhere, and a query
    # without it, does not
    assert on_a("/p", "y=1&X=2", None, "", "a.test") == TAKE_STEPS
    assert on_a("/p", "y=1&xx=2&ax=3", None, "", "a.test") != TAKE_STEPS
    assert on_b("/p", "y=1&x=2", None, "", "b.test") != TAKE_STEPS
    # escapes, session ids and trackers take the steps on any host
    for path, query in (("/a%7e", None), ("/a;jsessionid=1", None), ("/p", "utm_source=x"), ("/a//b", None)):
        assert on_b(path, query, None, "", "b.test") == TAKE_STEPS, (path, query)
    # the value of drop_fragment's guard otherwise: a route is kept, an anchor dropped
    assert on_b("/p", None, "!/inbox", "", "b.test") is False
    assert on_b("/p", None, "top", "", "b.test") is True


def test_switched_off_rules_leave_their_tests_out():
    tests = HostTests(Policy(strip_session_ids=False), tuple(s for s in STEPS if s not in PLAIN_STEPS),
                      drop_fragment)
    hr = Unifier(Policy(strip_session_ids=False)).host_rules("b.test")
    assert tests.for_host(hr)("/a;jsessionid=1", None, None, "", "b.test") is False  # no step applies


urls = url_strategy(["www.a.test", "a.test", "k.test", "b.test", "[::1]", "print.test"], userinfo=["", "u:p@"],
                   fragment_chars="!/a%")
POLICIES = [
    Policy(),
    Policy(remove_params={"a.test": ["x"]}, key_params={"k.test": ["id"]}, ignore_params={"b.test": ["q"]},
           ignore_path_prefixes={"print.test": ["print"]}, ignore_scheme=False, scope="s"),
    Policy(strip_session_ids=False, strip_tracking_params=False, route_fragments=False, index_pages=[]),
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(urls, st.sampled_from(POLICIES), st.sampled_from([(), ("sort_params",), ("drop_fragment", "unify_host")]))
def test_short_path_and_compiled_steps_agree_with_the_steps_one_by_one(url, policy, skip):
    # with a plain step skipped every URL takes the compiled steps; otherwise most take the short path
    u = Unifier(policy, skip=skip)
    r, e = u.result(url), u.explain(url).result
    assert (r.fetch_url, r.identifier) == (e.fetch_url, e.identifier)


def test_unifier_for_builds_once_per_policy_and_forgets_it_with_the_policy():
    import gc
    import weakref

    policy = Policy(scope="once")
    u = unifier_for(policy)
    assert unifier_for(policy) is u
    assert unifier_for(Policy(scope="once")) is not u  # equal, but another object
    assert policy.replace(scope="once") == policy  # still plain data: the unifier is no field
    gone = weakref.ref(u)
    del policy, u
    gc.collect()
    assert gone() is None


CORPUS_POLICIES = [
    Policy(),
    Policy(scope="job", ignore_scheme=False, strip_host_prefixes=["www", "m", "wwwN"]),
    Policy(key_params={"example.com": ["id"]}, remove_params=["ref*", "fb_ref"], ignore_params={"example.co.uk": ["x"]},
           domain_aliases=[["example.com", "example.org"]], sister_suffixes=["example.co.uk"]),
    Policy(strip_session_ids=False, strip_tracking_params=False, index_pages=[], route_fragments=False,
           ignore_path_prefixes={"*": ["print", "en"]}),
]


@pytest.mark.parametrize("policy", CORPUS_POLICIES, ids=["default", "scoped", "configured", "minimal"])
def test_short_paths_agree_with_the_steps_on_the_corpus(policy):
    """On every URL of tests/data/urls.txt, Unifier.result (short path and compiled steps) gives
    what running every step in order gives (Unifier.explain), filter reason included."""
    u = Unifier(policy)
    urls = corpus_urls()
    assert len(urls) > 100
    for url in urls:
        r, e = u.result(url), u.explain(url).result
        assert (r.fetch_url, r.identifier) == (e.fetch_url, e.identifier), url
        assert u.filter_reason(url) == e.filter_reason, url


def test_char_tests_name_the_characters_their_functions_test():
    from scrapy_urlunify.core import rules

    for name, chars in rules.CHAR_TESTS.items():
        fn = getattr(rules, name)
        assert {c for c in map(chr, range(256)) if fn(c)} == chars


def test_a_url_without_the_triggering_characters_skips_their_tests():
    # the fast test of a host: escapes, ";", "(" and unsafe characters are not tested for, a
    # double slash and the query's rules still are
    u = Unifier(Policy())
    hr = u.host_rules("b.test")
    assert hr.canonical
    assert hr.fast_test("/a%7e", None, None, "", "b.test") is False  # "%" is never given to it
    assert hr.plain_test("/a%7e", None, None, "", "b.test") == TAKE_STEPS
    assert hr.fast_test("/a//b", None, None, "", "b.test") == TAKE_STEPS
    assert hr.fast_test("/p", "utm_source=x", None, "", "b.test") == TAKE_STEPS
    assert hr.fast_test("/p", None, "top", "", "b.test") is True
    assert not hr.fast_test("/p", None, "!/inbox", "", "b.test")


def test_the_fast_splitter_leaves_out_what_the_guards_test_for():
    u = Unifier(Policy())
    for url in ("http://b.test/a%7e", "http://b.test/a;jsessionid=1", "http://b.test/(S(x))/a",
                "http://b.test/a?q=%20", "http://b.test/a#%41", "http://b.test/a|b", "http://u@b.test/",
                "http://b.test:8080/", "HTTP://b.test/", "http://B.test/", " http://b.test/"):
        assert u._fast_split(url) is None, url
    assert u._fast_split("https://b.test/a/b.html?x=1&y=2#top").groups() == (
        "https", "b.test", "/a/b.html", "x=1&y=2", "top")


def test_hosts_that_do_not_parse_to_themselves_are_not_canonical():
    u = Unifier(Policy())
    for host in ("b.test", "127.0.0.1", "xn--bcher-kva.example"):
        assert u.host_rules(host).canonical, host
    # (an IPv6 address is left to the parser: its ":" could be a port's)
    for host in ("B.test", "1.2.3", "0x7f.1", "[::1]"):
        assert not u.host_rules(host).canonical, host
