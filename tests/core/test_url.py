"""Helpers every layer shares: the host of a serialized URL, and whether a host is within a domain."""

from __future__ import annotations

import pytest

from scrapy_urlunify.core.domains import within
from scrapy_urlunify.core.url import host_of


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
