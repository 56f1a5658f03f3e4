"""Helpers every layer shares: the host of a serialized URL, and whether a host is within a domain."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_urlunify.core._ada import ada_normalize
from scrapy_urlunify.core._domains import within
from scrapy_urlunify.core._hosts import is_canonical_host
from scrapy_urlunify.core._url import canonical_splitter, host_of


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://example.com/a", "example.com"),
        ("http://user:pw@example.com:8080/a?b#c", "example.com"),
        ("http://[::1]:8000/", "[::1]"),
        ("http://[2001:db8::1]/x", "[2001:db8::1]"),
        ("http://127.0.0.1:80/", "127.0.0.1"),
        ("mailto:someone@example.com", ""),
        ("ftp://example.com/", ""),
    ],
)
def test_host_of(url, host):
    assert host_of(url) == host


@pytest.mark.parametrize(
    ("host", "domain", "inside"),
    [
        ("example.com", "example.com", True),
        ("docs.example.com", "example.com", True),
        ("badexample.com", "example.com", False),
        ("example.com", "docs.example.com", False),
    ],
)
def test_within(host, domain, inside):
    assert within(host, domain) is inside


@settings(max_examples=3000, suppress_health_check=list(HealthCheck), deadline=None)
@given(st.from_regex(canonical_splitter({}).__self__.pattern, fullmatch=True))
def test_what_the_canonical_splitter_matches_on_a_canonical_host_parses_to_itself(url):
    host, path = canonical_splitter({})(url).group(2, 3)
    if is_canonical_host(host) and "/." not in path:
        assert ada_normalize(url) == url
