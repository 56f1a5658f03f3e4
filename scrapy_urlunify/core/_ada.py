"""The WHATWG URL parser (ada), bound for speed: the package's one reach into ada-url's internals.

``ada_url.normalize_url`` builds a dict of attributes through ``getattr`` and a garbage-collected
handle, which costs as much again as the parse itself (2.0 against 1.1 µs per URL here); calling
the same C functions of ada's private ``ada_url.ada_adapter`` module directly halves the cost of
every link. Should a future ``ada-url`` move that module, the public functions take over
(``tests/core/test_ada.py`` checks that both give the same results on the WHATWG test suite).
"""

from __future__ import annotations

from collections.abc import Callable

import ada_url


def bind_public() -> tuple[Callable[[str], str], Callable[[str, str], str]]:
    """``(normalize, join)`` over ada-url's public API."""
    return ada_url.normalize_url, ada_url.join_url


def bind_private() -> tuple[Callable[[str], str], Callable[[str, str], str]]:
    """``(normalize, join)`` over ada's C API; ImportError or AttributeError where the installed
    ada-url no longer has it."""
    from ada_url.ada_adapter import ffi, lib

    parse, parse_with_base = lib.ada_parse, lib.ada_parse_with_base
    get_href, free, unpack = lib.ada_get_href, lib.ada_free, ffi.unpack

    def href(obj) -> str:  # type: ignore[no-untyped-def]
        # ada's getters give an empty string for a failed parse (ada_c.h), and a URL the
        # parser accepts never serializes empty: one C call less than asking ada_is_valid
        h = get_href(obj)
        n = h.length
        if not n:
            free(obj)
            raise ValueError("Invalid URL")
        s: str = unpack(h.data, n).decode()
        free(obj)
        return s

    def normalize(s: str) -> str:
        b = s.encode()  # UnicodeEncodeError (a ValueError) on lone surrogates
        return href(parse(b, len(b)))

    def join(base: str, s: str) -> str:
        b, bb = s.encode(), base.encode()
        return href(parse_with_base(b, len(b), bb, len(bb)))

    return normalize, join


def _bind() -> tuple[Callable[[str], str], Callable[[str, str], str]]:
    try:
        return bind_private()
    except (ImportError, AttributeError):  # pragma: no cover - depends on the installed ada-url
        return bind_public()


#: ``ada_normalize(url)`` and ``ada_join(base, href)``: WHATWG parse and serialize; ValueError
#: on failure.
ada_normalize, ada_join = _bind()
