"""The steps' guards: each step runs only where its guard holds, and the unifier, which runs the
steps through the compiled guards (and skips the parse and the second rewrite pass where they
would change nothing), gives what running the steps one by one gives."""

from __future__ import annotations

import pytest
from url_corpus import corpus_urls
from url_corpus import urls as url_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_urlunify import Policy, Unifier
from scrapy_urlunify.core.explain import explain_with
from scrapy_urlunify.core.guards import SETTLED, compile_layer, fold_policy
from scrapy_urlunify.core.rules import REWRITE_STEPS, drop_fragment
from scrapy_urlunify.core.unify import unifier_for
from scrapy_urlunify.core.url import Parts

urls = url_strategy(
    ["www.a.test", "a.test", "k.test", "b.test", "[::1]", "print.test"],
    userinfo=["", "u:p@"],
    fragment_chars="!/a%",
)
POLICIES = [
    Policy(),
    Policy(
        remove_params={"a.test": ["x"]},
        key_params={"k.test": ["id"]},
        ignore_params={"b.test": ["q"]},
        ignore_path_prefixes={"print.test": ["print"]},
        ignore_scheme=False,
        scope="s",
    ),
    Policy(
        strip_session_ids=False, strip_tracking_params=False, route_fragments=False, index_pages=[]
    ),
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    urls,
    st.sampled_from(POLICIES),
    st.sampled_from([(), ("sort_params",), ("drop_fragment", "unify_host")]),
)
def test_short_path_and_compiled_steps_agree_with_the_steps_one_by_one(url, policy, skip):
    u = Unifier(policy, skip=skip)
    r, e = u.result(url), explain_with(u, url).result
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
    Policy(
        key_params={"example.com": ["id"]},
        remove_params=["ref*", "fb_ref"],
        ignore_params={"example.co.uk": ["x"]},
        domain_aliases=[["example.com", "example.org"]],
        sister_suffixes=["example.co.uk"],
    ),
    Policy(
        strip_session_ids=False,
        strip_tracking_params=False,
        index_pages=[],
        route_fragments=False,
        ignore_path_prefixes={"*": ["print", "en"]},
    ),
]


@pytest.mark.parametrize(
    "policy", CORPUS_POLICIES, ids=["default", "scoped", "configured", "minimal"]
)
def test_short_paths_agree_with_the_steps_on_the_corpus(policy):
    """On every URL of tests/data/urls.txt, Unifier.result (short path and compiled steps) gives
    what running every step in order gives (explain_with), filter reason included."""
    u = Unifier(policy)
    urls = corpus_urls()
    assert len(urls) > 100
    for url in urls:
        r, e = u.result(url), explain_with(u, url).result
        assert (r.fetch_url, r.identifier) == (e.fetch_url, e.identifier), url
        assert u.filter_reason(url) == e.filter_reason, url


def test_hosts_that_do_not_parse_to_themselves_are_not_canonical():
    u = Unifier(Policy())
    for host in ("b.test", "127.0.0.1", "xn--bcher-kva.example"):
        assert u.host_rules(host).canonical, host
    # (an IPv6 address is left to the parser: its ":" could be a port's)
    for host in ("B.test", "1.2.3", "0x7f.1", "[::1]"):
        assert not u.host_rules(host).canonical, host


def test_guards_are_compiled_with_what_the_policy_says():
    assert fold_policy(drop_fragment.guard, Policy(route_fragments=False)) == "fragment is not None"
    on = fold_policy(drop_fragment.guard, Policy())
    assert "policy" not in on
    assert "fragment_is_route(fragment)" in on
    assert (
        fold_policy("policy.strip_session_ids and ';' in path", Policy(strip_session_ids=False))
        == "False"
    )
    assert (
        fold_policy("query and hr.remove is not None", Policy())
        == "query and hr.remove is not None"
    )


def test_a_layer_says_when_only_settled_steps_changed_the_url():
    u = Unifier(Policy())
    rewrite = compile_layer(REWRITE_STEPS, u.policy)

    def run(url: str) -> object:
        p = Parts.split(url)
        return rewrite(p, u.host_rules(p.host), u)

    assert run("http://b.test/a") is False
    assert run("http://b.test/a#top") is SETTLED  # only the fragment dropped: no second pass
    assert run("http://b.test/a?utm_source=x#top") is True
    assert run("http://b.test/a#!/route") is False  # a route is kept
