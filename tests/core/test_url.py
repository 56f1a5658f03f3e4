"""Helpers every layer shares: the host of a serialized URL, and whether a host is within a domain."""

from __future__ import annotations

import ada_url
import pytest
from _urls import corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_urlunify.core.domains import within
from scrapy_urlunify.core.url import ada_join, ada_normalize, canonical_splitter, host_of


@pytest.mark.parametrize(("url", "host"), [
    ("https://example.com/a", "example.com"),
    ("http://user:pw@example.com:8080/a?b#c", "example.com"),
    ("http://[::1]:8000/", "[::1]"),
    ("http://[2001:db8::1]/x", "[2001:db8::1]"),
    ("http://127.0.0.1:80/", "127.0.0.1"),
    ("mailto:someone@example.com", ""),
    ("ftp://example.com/", ""),
])
def test_host_of(url, host):
    assert host_of(url) == host


@pytest.mark.parametrize(("host", "domain", "inside"), [
    ("example.com", "example.com", True),
    ("docs.example.com", "example.com", True),
    ("badexample.com", "example.com", False),
    ("example.com", "docs.example.com", False),
])
def test_within(host, domain, inside):
    assert within(host, domain) is inside


def _outcome(fn, *args):
    try:
        return fn(*args)
    except ValueError:
        return None


def _same_as_ada_url(href: str, base: str | None) -> None:
    if base is None:
        assert _outcome(ada_normalize, href) == _outcome(ada_url.normalize_url, href), href
    else:
        assert _outcome(ada_join, base, href) == _outcome(ada_url.join_url, base, href), (href, base)


def test_direct_ada_binding_matches_the_public_functions_on_the_corpus():
    cases = corpus()
    assert sum(base is not None for _, base in cases) >= 10
    for href, base in cases:
        _same_as_ada_url(href, base)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.sampled_from([None, "http://example.com/a/b?c#d", "https://[::1]:8080/x/"]))
def test_direct_ada_binding_matches_the_public_functions_on_any_text(text, base):
    _same_as_ada_url(text, base)
    _same_as_ada_url("http://example.com/" + text, base)


@settings(max_examples=3000, suppress_health_check=list(HealthCheck), deadline=None)
@given(st.from_regex(canonical_splitter({}).__self__.pattern, fullmatch=True))
def test_what_the_canonical_splitter_matches_on_a_canonical_host_parses_to_itself(url):
    from scrapy_urlunify.core.unify import _is_canonical_host

    host, path = canonical_splitter({})(url).group(2, 3)
    if _is_canonical_host(host) and "/." not in path:
        assert ada_normalize(url) == url
