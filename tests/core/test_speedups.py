"""The compiled short path (scrapy_urlunify/_speedups.c) against its Python twin.

The extension is optional: a machine without a C compiler installs the package without it, and
runs the Python code. In CI it must be built (.ci/run builds it through `make test`), so these
tests skip only on a user's machine that could not build it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _urls import corpus_urls
from _urls import urls as url_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_urlunify import Policy
from scrapy_urlunify.compiled import speedups
from scrapy_urlunify.core.unify import Unifier
from scrapy_urlunify.stores import fingerprints
from scrapy_urlunify.stores.fingerprints import FingerprintSet

if speedups is None and not os.environ.get("CI"):
    pytest.skip("the C extension was not built here (no compiler?): the Python code runs instead",
                allow_module_level=True)

POLICIES = [
    Policy(),
    Policy(scope="job", ignore_scheme=False),
    Policy(key_params={"k.test": ["id"]}, remove_params=["drop*", "x?"], ignore_params={"b.test": ["sort"]},
           domain_aliases=[["a.test", "b.test"]], ignore_path_prefixes={"b.test": ["print"]}),
    Policy(index_pages=["INDEX.HTML", "home.php"], strip_session_ids=False, strip_tracking_params=False),
    # an identity host outside ASCII: handed back to the Python code
    Policy(domain_aliases=[["bücher.test", "b.test"]]),
]

# written as the parser writes them, so the compiled path takes them whole once the host is known
EDGE_URLS = [
    "https://b.test/",
    "https://b.test/a/",
    "https://b.test/a///",
    "http://b.test/a/index.html",
    "http://b.test/a/INDEX.HTML/index.html",
    "http://b.test/index.html",
    "http://b.test/a/index.html?",
    "http://b.test/a?",
    "http://b.test/a?b=2&a=1&&c=&a=0",
    "http://b.test/a?=&&=",
    "http://b.test/a?a=1&" + "&".join(f"p{i}={i}" for i in range(80, 0, -1)),
    "http://b.test/a?x=1&xy=2&drop_me=3#frag",
    "http://b.test/a?sort=new&k=1",
    "http://k.test/item?id=7&view=full",
    "http://b.test/a#",
    "http://b.test/a#!/route",
    "http://b.test/a#top",
    "http://b.test/a/./b",
    "http://b.test/a/.hidden",
    "http://b.test/a/b.c.d/",
    "https://www.a.test/A/B?utm_source=x&q=1",
    "https://a.test/p?PHPSESSID=0123456789abcdef&q=1",
    "https://a.test/print/x",
]


def _pair(policy: Policy) -> tuple[Unifier, Unifier]:
    compiled, python = Unifier(policy), Unifier(policy, compiled=False)
    assert type(compiled.plain_path).__name__ == "PlainPath"
    return compiled, python


def _agree(compiled: Unifier, python: Unifier, url: str, again: bool = True) -> None:
    # twice: the first call meets the host, the second takes the short path
    for _ in range(2):
        for u in (compiled, python):
            u._cache.clear()
            u._old.clear()
        c, p = compiled.result(url), python.result(url)
        assert c == p, url
        assert type(c) is type(p)
    # and the URL to fetch, written as the parser writes it
    if again and c.fetch_url is not None and c.fetch_url != url:
        _agree(compiled, python, c.fetch_url, again=False)


def test_the_extension_is_built_in_ci() -> None:
    assert speedups is not None, "scrapy_urlunify/_speedups.c was not built"


@pytest.mark.parametrize("policy", POLICIES)
def test_compiled_and_python_agree_on_the_corpus_and_the_edge_cases(policy: Policy) -> None:
    compiled, python = _pair(policy)
    for url in [*corpus_urls(), *EDGE_URLS]:
        _agree(compiled, python, url)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(url_strategy(["www.a.test", "b.test", "k.test", "x.co.uk"], segment_chars="abcXYZ019-._~;=()!$'*+,:@/",
                    fragment_chars="!/abc#?"),
       st.sampled_from(POLICIES))
def test_compiled_and_python_agree_on_generated_urls(url: str, policy: Policy) -> None:
    _agree(*_pair(policy), url)


def test_the_compiled_path_takes_what_its_twin_takes() -> None:
    compiled, python = _pair(Policy())
    for u in (compiled, python):
        u.identify("https://b.test/")  # meets the host
    results = [u.plain_path("https://b.test/a/index.html?b=2&a=1#top") for u in (compiled, python)]
    assert results[0] == results[1] == ("https://b.test/a/index.html?b=2&a=1", "b.test/a?a=1&b=2", None)
    # a host not met yet, a dot segment, a character the splitter leaves out: parse it
    for url in ("https://new.test/a", "https://b.test/a/../b", "https://b.test/a%7e", "https://b.test/é"):
        assert compiled.plain_path(url) is None is python.plain_path(url), url
    # a session id: the steps
    assert compiled.plain_path("https://b.test/a?sid=0123456789abcdef0123") == "steps"


def test_pure_python_when_asked() -> None:
    script = ("from scrapy_urlunify.compiled import speedups; from scrapy_urlunify import identify; "
              "print(speedups, identify('https://www.b.test/a/index.html?b=2&a=1#top'))")
    env = {**os.environ, "URLUNIFY_PURE_PYTHON": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "b.test/a?a=1&b=2"]


# -- the seen set's probes ---------------------------------------------------------------------

_KEYS = st.integers(0, 2**64 - 1) | st.integers(0, 5000) | st.integers(2**64 - 5000, 2**64 - 1)


def _pure_set(monkeypatch: pytest.MonkeyPatch, adds: list[int]) -> FingerprintSet:
    with monkeypatch.context() as m:
        for name in ("_c_add", "_c_contains", "_c_rehash"):
            m.setattr(fingerprints, name, None)
        s = FingerprintSet()
        for fp in adds:
            s.add(fp)
        return s


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None)
@given(st.lists(_KEYS, max_size=3000), st.lists(_KEYS, max_size=50))
def test_compiled_and_python_seen_sets_hold_the_same_table(monkeypatch: pytest.MonkeyPatch, adds: list[int],
                                                           probes: list[int]) -> None:
    assert fingerprints._c_add is not None
    compiled = FingerprintSet()
    answers = [compiled.add(fp) for fp in adds]
    pure = _pure_set(monkeypatch, adds)
    assert compiled._table == pure._table  # the same slots, grown and resized alike
    assert len(compiled) == len(pure) == len(set(adds))
    assert answers == [fp not in adds[:i] for i, fp in enumerate(adds)]
    for fp in probes + adds:
        assert (fp in compiled) == (fp in set(adds))


def test_compiled_seen_set_refuses_what_the_python_one_refuses() -> None:
    s = FingerprintSet()
    for bad in (-1, 2**64, 2**70):
        with pytest.raises(ValueError, match="outside"):
            s.add(bad)
        assert bad not in s
    with pytest.raises(TypeError):
        s.add("1")  # type: ignore[arg-type]
    assert len(s) == 0


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.text(max_size=60), st.sampled_from(["https://b.test/", "http://b.test", "https://www.a.test/x?", ""]))
def test_compiled_and_python_agree_on_any_text_after_a_known_host(text: str, head: str) -> None:
    compiled, python = _pair(POLICIES[2])
    for u in (compiled, python):
        u.identify("https://b.test/")
        u.identify("https://www.a.test/")
    url = head + text
    assert compiled.plain_path(url) == python.plain_path(url), url
    _agree(compiled, python, url)
