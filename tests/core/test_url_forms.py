"""URL forms (``URLUNIFY_URL_FORMS``, ``core/_forms.py``): a URL of one form identifies as the
page of another; forms a setting cannot mean fail at start-up naming it."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from scrapy_urlunify import Policy, identify, standardize
from scrapy_urlunify.core._forms import identity_parts, subsumes, with_carry, with_host
from scrapy_urlunify.integration.settings import SettingsError, policy_from_settings

FORMS = {
    "shop.test": {
        "/shop/*/{slug}/": "/product/{slug}/",
        "/category/{c}?paged={n}": "/category/{c}/page/{n}",
        "/?cat={c}": "/category/{c}",
        "/list/{c}": "/search?in={c}&all=1",
    }
}
POLICY = Policy(url_forms=FORMS, ignore_params={"shop.test": ["v"]})


@pytest.mark.parametrize(
    ("url", "page"),
    [
        # a product under its category's path, www and a trailing slash aside
        ("http://www.shop.test/shop/hats/red-cap/", "http://shop.test/product/red-cap"),
        ("http://shop.test/shop/shoes/red-cap", "http://shop.test/product/red-cap"),
        # the "load more" button's page is the pager's; ignored parameters go first
        ("http://shop.test/category/tea/?paged=3&v=9", "http://shop.test/category/tea/page/3"),
        ("http://shop.test/?cat=tea", "http://shop.test/category/tea"),
        # a target may write a query: sorted, as every identifier's
        ("http://shop.test/list/tea", "http://shop.test/search?all=1&in=tea"),
    ],
)
def test_a_url_of_a_source_form_identifies_as_its_target(url: str, page: str) -> None:
    assert identify(url, POLICY) == identify(page, POLICY)
    # identity only: the URL fetched is the URL given
    assert standardize(url, policy=POLICY) == standardize(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://shop.test/shop/hats/red-cap/reviews",  # another number of segments
        "http://shop.test/shop/hats/red-cap?color=red",  # another parameter
        "http://shop.test/category/tea?paged=2&paged=3",  # a name twice
        "http://shop.test/category/tea?paged=",  # a hole is never empty
        "http://other.test/shop/hats/red-cap",  # another host
        "http://shop.test/?cat=tea&sort=price",
    ],
)
def test_a_url_not_of_the_form_keeps_its_own_identity(url: str) -> None:
    assert identify(url, POLICY) == identify(url, Policy(ignore_params={"shop.test": ["v"]}))


def test_forms_apply_to_subdomains_and_all_hosts() -> None:
    sub = Policy(url_forms={"shop.test": {"/p/{id}": "/product/{id}"}})
    assert identify("http://eu.shop.test/p/7", sub) == identify("http://eu.shop.test/product/7")
    every = Policy(url_forms={"*": {"/p/{id}": "/product/{id}"}})
    assert identify("http://a.test/p/7", every) == identify("http://a.test/product/7")


@pytest.mark.parametrize(
    ("forms", "message"),
    [
        ({"shop.test": {"/p/{id}": "/product/{other}"}}, "does not capture"),
        ({"shop.test": {"p/{id}": "/product/{id}"}}, "starting with /"),
        ({"shop.test": {"/p/*": "/product/*"}}, "a target has no *"),
        ({"shop.test": {"/p/{id}": "/p/{id}"}}, "as itself"),
        ({"shop.test": {"/p/{a}/{a}": "/product/{a}"}}, "one name twice"),
        ({"shop.test": {"/p/x{id}": "/product/{id}"}}, "not a mix"),
        ({"shop.test": "/p"}, "forms"),
        (["/p"], "dict"),
        ({"shop.test:8080": {"/p/{id}": "/product/{id}"}}, "bare host name"),
        ({"shop.test": {"/p?id={id}&*": "/product/{id}"}}, "both forms or neither"),
    ],
)
def test_a_form_the_setting_cannot_mean_fails_at_start_naming_the_setting(
    forms: object, message: str
) -> None:
    with pytest.raises(SettingsError, match=r"URLUNIFY_URL_FORMS.*" + message):
        policy_from_settings(Settings({"URLUNIFY_URL_FORMS": forms}), spider_name="s")


def test_forms_given_as_json_text_are_read() -> None:
    text = '{"shop.test": {"/p/{id}": "/product/{id}"}}'
    policy = policy_from_settings(Settings({"URLUNIFY_URL_FORMS": text}), spider_name="s")
    assert identify("http://shop.test/p/1", policy) == identify(
        "http://shop.test/product/1", policy
    )


def test_identity_parts_split_an_identifier_without_scope_scheme_or_port() -> None:
    assert identity_parts("s|shop.test:8080/a/b?x=1", "s|") == ("shop.test", "/a/b", "x=1")
    assert identity_parts("http://[::1]:81/", "") == ("[::1]", "/", None)
    assert identity_parts("shop.test/?", "") == ("shop.test", "/", "")


def test_a_wider_form_subsumes_the_narrower_forms_it_gives_the_same_pages() -> None:
    paged = ("/{s0}/{s1}?paged={q0}", "/{s0}/{s1}/page/{q0}")
    assert subsumes(paged, ("/product-tag/{s1}?paged=2", "/product-tag/{s1}/page/2"))
    assert subsumes(paged, ("/{s0}/{s1}?paged=2", "/{s0}/{s1}/page/2"))
    assert subsumes(("/shop/*/{s2}", "/product/{s2}"), ("/shop/hats/{s2}", "/product/{s2}"))
    assert subsumes(
        ("/c/{s1}?orderby={q0}&paged={q1}", "/c/{s1}/page/{q1}?orderby={q0}"),
        ("/c/health?orderby={q0}&paged={q1}", "/c/health/page/{q1}?orderby={q0}"),
    )
    # another page for some URL: not subsumed
    assert not subsumes(("/shop/*/{s2}", "/product/{s2}"), ("/shop/hats/{s2}", "/item/{s2}"))
    assert not subsumes(("/a/{s1}", "/b/{s1}"), ("/a/x", "/b/y"))
    assert not subsumes(("/a/*", "/b"), ("/a/{s1}", "/c/{s1}"))
    # a narrower form does not subsume a wider one, nor a form itself
    assert not subsumes(("/shop/hats/{s2}", "/product/{s2}"), ("/shop/*/{s2}", "/product/{s2}"))
    assert not subsumes(paged, paged)


CARRYING = Policy(url_forms={"shop.test": {"/c/{c}?paged={n}&*": "/c/{c}/page/{n}?*"}})


@pytest.mark.parametrize(
    ("url", "page"),
    [
        ("http://shop.test/c/tea?paged=2", "http://shop.test/c/tea/page/2"),
        # the other parameters go to the target as they are
        (
            "http://shop.test/c/tea?orderby=date&paged=2",
            "http://shop.test/c/tea/page/2?orderby=date",
        ),
        ("http://shop.test/c/tea?paged=2&min=1&max=5", "http://shop.test/c/tea/page/2?max=5&min=1"),
        # as they are written: an item without a value stays without one
        ("http://shop.test/c/tea?paged=2&all", "http://shop.test/c/tea/page/2?all"),
    ],
)
def test_a_form_that_carries_the_other_parameters_takes_urls_with_more(url: str, page: str) -> None:
    assert identify(url, CARRYING) == identify(page, CARRYING)


def test_a_carrying_form_still_needs_its_own_parameters() -> None:
    plain = Policy()
    for url in ("http://shop.test/c/tea?orderby=date", "http://shop.test/c/tea/x?paged=2&a=1"):
        assert identify(url, CARRYING) == identify(url, plain)
    # a parameter the target writes itself is never carried over it
    clash = Policy(url_forms={"shop.test": {"/c/{c}?paged={n}&*": "/c/{c}?all=1&page={n}&*"}})
    url = "http://shop.test/c/tea?all=0&paged=2"
    assert identify(url, clash) == identify(url, plain)


def test_a_carrying_form_subsumes_the_forms_it_widens() -> None:
    paged = ("/{s0}/{s1}?paged={q0}", "/{s0}/{s1}/page/{q0}")
    carrying = (with_carry(paged[0]), with_carry(paged[1]))
    assert carrying == ("/{s0}/{s1}?paged={q0}&*", "/{s0}/{s1}/page/{q0}?*")
    assert subsumes(carrying, paged)
    assert subsumes(carrying, ("/c/{s1}?orderby={q0}&paged={q1}", "/c/{s1}/page/{q1}?orderby={q0}"))
    assert not subsumes(paged, carrying)
    assert not subsumes(carrying, ("/c/{s1}?orderby={q0}&paged={q1}", "/c/{s1}/page/{q1}"))


def test_an_identifier_is_written_on_another_host() -> None:
    assert with_host("s|m.shop.test:81/a?x=1", "s|", "m.shop.test", "shop.test") == (
        "s|shop.test:81/a?x=1"
    )
    assert with_host("http://m.shop.test/a", "", "m.shop.test", "shop.test") == "http://shop.test/a"
    assert with_host("m.shop.test.evil/a", "", "m.shop.test", "shop.test") is None
