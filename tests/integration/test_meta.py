"""``meta_of``: the one read of a request's meta that reaches into Scrapy's ``Request``."""

from __future__ import annotations

from scrapy import Request
from scrapy.http import FormRequest

from scrapy_urlunify.integration.crawl._meta import meta_of


def test_a_request_without_meta_has_none_and_gets_no_dict() -> None:
    request = Request("https://a.test/")
    assert meta_of(request) is None
    # the public property would make one: meta_of must not have made it first
    assert meta_of(request) is None
    assert request.meta == {}
    assert meta_of(request) == {}


def test_a_request_with_meta_is_read_as_its_meta() -> None:
    request = Request("https://a.test/", meta={"verbatim_url": True})
    assert meta_of(request) is request.meta
    form = FormRequest("https://a.test/", formdata={"q": "x"}, meta={"depth": 2})
    assert meta_of(form) is form.meta


def test_a_subclass_without_slots_of_its_own_is_read_as_well() -> None:
    class Mine(Request):
        pass

    request = Mine("https://a.test/", meta={"urlunify": False})
    assert meta_of(request) == {"urlunify": False}
    assert meta_of(Mine("https://a.test/")) is None
