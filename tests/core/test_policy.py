"""Policy validation: bad values fail at once with the field's name; good ones are normalized."""

from __future__ import annotations

import pytest

from scrapy_urlunify import Policy, PolicyTypeError, PolicyValueError
from scrapy_urlunify.core._policy import DEFAULT_DENY_EXTENSIONS


def test_defaults_match_scrapy():
    from scrapy.linkextractors import IGNORED_EXTENSIONS
    from scrapy.settings.default_settings import URLLENGTH_LIMIT

    assert list(DEFAULT_DENY_EXTENSIONS) == list(IGNORED_EXTENSIONS)
    assert Policy().max_url_length == URLLENGTH_LIMIT


@pytest.mark.parametrize(
    "kwargs, error, field",
    [
        ({"scope": 3}, PolicyTypeError, "scope"),
        ({"scope": "a|b"}, PolicyValueError, "scope"),
        ({"remove_params": 5}, PolicyTypeError, "remove_params"),
        ({"remove_params": [1]}, PolicyTypeError, "remove_params"),
        ({"remove_params": ["a=b"]}, PolicyValueError, "remove_params"),
        ({"key_params": {"bad host!": ["id"]}}, PolicyValueError, "key_params"),
        ({"key_params": {3: ["id"]}}, PolicyTypeError, "key_params"),
        ({"domain_aliases": [["only-one.test"]]}, PolicyValueError, "domain_aliases"),
        (
            {"domain_aliases": [["a.test", "b.test"], ["b.test", "c.test"]]},
            PolicyValueError,
            "domain_aliases",
        ),
        ({"domain_aliases": "a.test"}, PolicyTypeError, "domain_aliases"),
        ({"strip_host_prefixes": ["www.x"]}, PolicyValueError, "strip_host_prefixes"),
        ({"index_pages": ["a/index.html"]}, PolicyValueError, "index_pages"),
        ({"ignore_scheme": "yes"}, PolicyTypeError, "ignore_scheme"),
        ({"deny_extensions": "pdf"}, PolicyTypeError, "deny_extensions"),
        ({"max_url_length": 0}, PolicyValueError, "max_url_length"),
        ({"max_url_length": "2083"}, PolicyTypeError, "max_url_length"),
        ({"trap_repetitions": -1}, PolicyValueError, "trap_repetitions"),
        ({"sister_suffixes": ["not a host"]}, PolicyValueError, "sister_suffixes"),
        ({"sites": ["*.example.com"]}, PolicyValueError, "sites"),
        ({"strip_session_ids": 1}, PolicyTypeError, "strip_session_ids"),
        ({"ignore_path_prefixes": ["print/x"]}, PolicyValueError, "ignore_path_prefixes"),
    ],
)
def test_bad_values_name_the_field(kwargs, error, field):
    with pytest.raises(error) as info:
        Policy(**kwargs)
    assert info.value.field == field
    assert str(info.value).startswith(field + ":")
    # and they are the builtin exception types callers catch
    assert isinstance(info.value, TypeError if error is PolicyTypeError else ValueError)


def test_normalization_makes_equal_settings_equal_and_hashable():
    a = Policy(
        remove_params=["Utm_X", "b"],
        domain_aliases=[["WWW.Example.COM", "example.org."]],
        deny_extensions=[".PDF"],
        index_pages=["Index.HTML"],
    )
    b = Policy(
        remove_params=("utm_x", "b"),
        domain_aliases=(("www.example.com", "example.org"),),
        deny_extensions=("pdf",),
        index_pages=("index.html",),
    )
    assert a == b and hash(a) == hash(b)
    assert a.remove_params == (("", ("utm_x", "b")),)


def test_param_dicts_accept_star_and_urls_and_idn():
    p = Policy(key_params={"*": ["id"], "https://Bücher.example/": ["isbn"]})
    assert p.key_params == (("", ("id",)), ("xn--bcher-kva.example", ("isbn",)))


def test_aliases_accept_a_mapping():
    p = Policy(domain_aliases={"a.test": ["b.test", "c.test"]})
    assert p.domain_aliases == (("a.test", "b.test", "c.test"),)


def test_policy_is_immutable_and_replace_validates():
    p = Policy(scope="x")
    with pytest.raises(AttributeError):
        p.scope = "y"  # type: ignore[misc]
    assert p.replace(scope="y").scope == "y"
    with pytest.raises(PolicyValueError):
        p.replace(max_url_length=-5)


def test_field_names_match_the_settings():
    assert Policy.field_names() == (
        "scope",
        "remove_params",
        "ignore_params",
        "key_params",
        "ignore_path_prefixes",
        "ignore_path_suffixes",
        "url_forms",
        "domain_aliases",
        "sister_suffixes",
        "sites",
        "strip_host_prefixes",
        "index_pages",
        "ignore_scheme",
        "deny_extensions",
        "max_url_length",
        "trap_repetitions",
        "strip_session_ids",
        "strip_tracking_params",
        "ignore_action_params",
        "route_fragments",
        "ignore_amp",
    )
