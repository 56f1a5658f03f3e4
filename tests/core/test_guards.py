"""The steps' guards: each step runs only where its guard holds and where its policy lets it,
and the unifier, which runs the steps through its compiled layers (and skips the parse and the
second rewrite pass where they would change nothing), gives what running the steps one by one
gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from url_corpus import corpus_urls
from url_corpus import urls as url_strategy

from scrapy_urlunify import InvalidURL, Policy, Unifier, resolve
from scrapy_urlunify.core._explain import explain_with
from scrapy_urlunify.core._guards import REWRITE, SETTLED, Context, compile_layer, rule
from scrapy_urlunify.core._hosts import HostRules
from scrapy_urlunify.core._rules import IDENTITY_STEPS, REWRITE_STEPS
from scrapy_urlunify.core._unify import unifier_for
from scrapy_urlunify.core._url import Parts, canonical_splitter

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


def test_a_layer_leaves_out_the_steps_its_policy_switches_off():
    # decided once, when the layer is compiled: the policy tests are not asked per URL
    default = {s.name for s in compile_layer(REWRITE_STEPS, Policy()).steps}
    off = {s.name for s in compile_layer(REWRITE_STEPS, Policy(strip_session_ids=False)).steps}
    assert default - off == {"remove_path_session_ids", "remove_session_params"}
    identity = {s.name for s in compile_layer(IDENTITY_STEPS, Policy()).steps}
    assert "ignore_scheme" in identity
    assert "drop_amp_marker" not in identity  # opt-in
    assert "remove_policy_params" not in default  # no remove_params: no test on any URL
    url = "https://a.test/x;jsessionid=0AF3?PHPSESSID=1&id=2"
    assert Unifier(Policy()).standardize(url) == "https://a.test/x?id=2"
    assert Unifier(Policy(strip_session_ids=False)).standardize(url) == url
    assert Unifier(Policy(ignore_scheme=False)).identify(url) == "https://a.test/x?id=2"
    assert Unifier(Policy(ignore_amp=True)).identify("http://a.test/x/amp") == "a.test/x"
    assert Unifier(Policy()).identify("http://a.test/x/amp") == "a.test/x/amp"


def test_a_step_runs_only_where_its_guard_holds():
    ran: list[str] = []

    def body(p: Parts, ctx: Context) -> bool:
        ran.append(p.path)
        return False

    def has_double_slash(p: Parts, hr: HostRules, ctx: Context) -> bool:
        return "//" in p.path

    step = rule(REWRITE, guard=has_double_slash)(body)
    u = Unifier(Policy())
    layer = compile_layer([step], u.policy)
    for url in ("http://a.test/a//b", "http://a.test/a/b", "http://a.test//", "http://a.test/"):
        p = Parts.split(url)
        assert layer.run(p, u.host_rules(p.host), u) is False
    assert ran == ["/a//b", "//"]
    # and a policy test that fails leaves it out of the layer
    assert compile_layer([rule(REWRITE, when=lambda policy: False)(body)], u.policy).steps == ()


def test_guards_after_a_host_change_read_the_rules_of_the_new_host():
    # unify_host maps b.test to a.test: the steps after it read a.test's lists, so a URL of
    # b.test is identified as the same URL of a.test, whatever b.test's own lists say
    policy = Policy(
        domain_aliases=[["a.test", "b.test"]],
        key_params={"a.test": ["id"]},
        ignore_params={"b.test": ["ref"]},
    )
    u = Unifier(policy)
    for path in ("/p?id=1&x=2", "/p?ref=tw&q=1"):
        assert u.identify("http://b.test" + path) == u.identify("http://a.test" + path), path
    assert u.identify("http://b.test/p?id=1&x=2") == "a.test/p?id=1"
    assert u.identify("http://b.test/p?ref=tw&q=1") == "a.test/p?q=1&ref=tw"


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(urls, st.sampled_from(POLICIES))
def test_guards_answer_a_bool_on_every_url_as_the_steps_before_leave_it(url, policy):
    """What the unifier and ``explain`` branch on is a bool from every guard, on every state the
    steps pass a URL through, never an exception."""
    u = Unifier(policy)
    try:
        fetch = u.standardize(url)
    except InvalidURL:
        return
    for start, steps in ((url, u.rewrite_steps), (fetch, u.identity_steps)):
        p = Parts.split(resolve(start))
        for step in steps:
            answer = step.guard(p, u.host_rules(p.host), u)
            assert type(answer) is bool, (step.name, answer)
            if answer:
                step(p, u)


# what the unifier's short path takes: a URL written as the parser writes it, no "%" in it
PLAIN = canonical_splitter({part: frozenset("%") for part in ("path", "query", "fragment")})
plain_urls = st.from_regex(PLAIN.__self__.pattern, fullmatch=True)


def _plain(p: Parts) -> bool:
    return p.userinfo == "" and not any(
        c in part for part in (p.path, p.query or "", p.fragment or "") for c in '%"<>\\^`{|}[]'
    )


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.one_of(plain_urls, urls), st.sampled_from(POLICIES))
def test_a_layer_asks_no_guard_that_cannot_hold(url, policy):
    """A layer leaves out the guards of the steps ``on_query`` on a URL without a query, and of
    the steps not ``on_plain`` on a plain URL: each such guard is false there, and no step gives
    a URL a query or makes a plain URL anything else."""
    u = Unifier(policy)
    try:
        p = Parts.split(resolve(url))
    except (InvalidURL, ValueError):
        return
    for steps in (u.rewrite_steps, u.identity_steps):
        for step in steps:
            hr = u.host_rules(p.host)
            if p.query is None:
                assert not (step.on_query and step.guard(p, hr, u)), step.name
            plain = _plain(p)
            if plain:
                assert step.on_plain or not step.guard(p, hr, u), step.name
            had_query = p.query is not None
            if step.guard(p, hr, u):
                step(p, u)
            assert had_query or p.query is None, step.name
            assert not plain or _plain(p), step.name


def test_a_layer_says_when_only_settled_steps_changed_the_url():
    u = Unifier(Policy())
    rewrite = compile_layer(REWRITE_STEPS, u.policy)

    def run(url: str) -> object:
        p = Parts.split(url)
        return rewrite.run(p, u.host_rules(p.host), u)

    assert run("http://b.test/a") is False
    assert run("http://b.test/a#top") is SETTLED  # only the fragment dropped: no second pass
    assert run("http://b.test/a?utm_source=x#top") is True
    assert run("http://b.test/a#!/route") is False  # a route is kept


def test_the_package_builds_no_code_at_run_time():
    """Every guard and step is code mypy and ruff read: nothing calls ``exec``, ``eval`` or
    ``compile`` (``re.compile`` is a pattern, not code)."""
    import ast
    from pathlib import Path

    import scrapy_urlunify

    calls = [
        f"{path.name}:{node.lineno} {node.func.id}"
        for path in Path(scrapy_urlunify.__file__).parent.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("exec", "eval", "compile")
    ]
    assert calls == []
