"""The WHATWG parser as the package binds it (scrapy_urlunify/core/_ada.py): ada's C functions
called directly, which must give what ada-url's public functions give."""

from __future__ import annotations

import ada_url
from hypothesis import given, settings
from hypothesis import strategies as st
from url_corpus import corpus

import scrapy_urlunify.core._ada as ada
from scrapy_urlunify.core._ada import ada_join, ada_normalize


def test_the_direct_binding_is_the_one_in_use():
    # pins the reach into ada-url's private module: should a new ada-url move it, this fails
    # (the package still works, on the public functions, at twice the cost of a parse)
    normalize, join = ada.bind_private()
    assert ada_normalize.__qualname__ == normalize.__qualname__ == "bind_private.<locals>.normalize"
    assert ada_join.__qualname__ == join.__qualname__ == "bind_private.<locals>.join"
    assert ada.bind_public() == (ada_url.normalize_url, ada_url.join_url)


def _outcome(fn, *args):
    try:
        return fn(*args)
    except ValueError:
        return None


def _same_as_ada_url(href: str, base: str | None) -> None:
    if base is None:
        assert _outcome(ada_normalize, href) == _outcome(ada_url.normalize_url, href), href
    else:
        assert _outcome(ada_join, base, href) == _outcome(ada_url.join_url, base, href), (
            href,
            base,
        )


def test_direct_ada_binding_matches_the_public_functions_on_the_corpus():
    cases = corpus()
    assert sum(base is not None for _, base in cases) >= 10
    for href, base in cases:
        _same_as_ada_url(href, base)


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=60),
    st.sampled_from([None, "http://example.com/a/b?c#d", "https://[::1]:8080/x/"]),
)
def test_direct_ada_binding_matches_the_public_functions_on_any_text(text, base):
    _same_as_ada_url(text, base)
    _same_as_ada_url("http://example.com/" + text, base)
