"""Page signatures: the MD5 of a page's body text, and the site a signature is compared within."""

from __future__ import annotations

import hashlib

import pytest
from parsel import Selector

from scrapy_urlunify.learning._page_signature import (
    _WHOLE_TEXT_MAX,
    _tree_text_md5,
    body_text,
    page_signature,
    signature,
    site_key,
    tree_body_text,
)


def test_body_text_ignores_scripts_styles_comments_and_spacing():
    a = (
        b"<html><head><title>T</title><style>p{}</style></head><body><p>Hello\n  <b>world</b></p>"
        b"<script>var x=1</script><noscript>enable js</noscript><!-- 12:00 --></body></html>"
    )
    assert body_text(a) == "Hello world"
    assert tree_body_text(Selector(text=a.decode()).root) == "Hello world"  # from a parsed tree too
    b = b"<html><body><p>Hello world</p><!-- 13:00 --><a href='/x;jsessionid=2'></a></body></html>"
    assert signature(a, "text/html") == signature(b, "text/html")
    assert signature(a, "text/html") != signature(b.replace(b"world", b"there"), "text/html")


def test_non_html_empty_text_and_large_bodies_hash_the_raw_bytes():
    import hashlib

    pdf = b"%PDF-1.4 binary"
    assert signature(pdf, "application/pdf") == hashlib.md5(pdf).digest()
    gallery = b"<html><body><img src='a.png'></body></html>"
    assert signature(gallery, "text/html") == hashlib.md5(gallery).digest()
    big = b"<html><body>" + b"x" * 100 + b"</body></html>"
    assert signature(big, "text/html", max_bytes=50) == hashlib.md5(big).digest()
    assert signature(big, "text/html") != hashlib.md5(big).digest()


def test_decoded_text_gives_the_same_signature_whatever_the_encoding():
    text = "<html><body>Čačak é</body></html>"
    assert signature(text.encode("cp1250", "replace"), "text/html", text) == signature(
        text.encode(), "text/html", text
    )


def test_site_keys():
    assert site_key("shop.termomont.rs") == "termomont.rs"
    assert site_key("mirror.site.test") == site_key("site.test") == "site.test"
    assert site_key("127.0.0.1") == "127.0.0.1"
    assert site_key("a.b.example.co.uk", "host") == "a.b.example.co.uk"
    assert site_key("a.example.com", "scope") == ""


# varied HTML, and the signature each had before the tree of Scrapy's selector was used (the
# parse of this module, as of commit a814eeb)
CASES = {
    "scripts_comments": "<html><head><title>T</title><style>p{}</style></head><body><p>Hello\n  <b>world</b></p>"
    "<script>var x=1</script><noscript>enable <i>js</i></noscript>tail<!-- 12:00 -->after</body></html>",
    "nested_dropped": "<html><body><noscript><p>n</p>t1</noscript>t2<template><b>z</b></template>t3<style>s</style>"
    "<script>if (a < b) { x = '</p>'; }</script>t4</body></html>",
    "no_body": "<p>first</p><p>second &amp; third</p>",
    "two_bodies": "<html><body>a</body><body>b</body></html>",
    "text_after_body": "<html><body>a</body>tail<p>after</p></html>",
    "frameset": "<html><frameset><frame src=a></frameset></html>",
    "xml_declaration": '<?xml version="1.0" encoding="iso-8859-1"?><html><body>\u00e9t\u00e9</body></html>',
    "xhtml": '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x"><html xmlns="http://www.w3.org/1999/xhtml">'
    "<body><p>x<br/>y</p><script>z</script></body></html>",
    "entities_unicode": "<html><body>a&nbsp;b&amp;c&#x1F600;&bogus; \u010ca\u010dak \u4e2d\u6587</body></html>",
    "cdata_pi": "<html><body><![CDATA[ x ]]>y<?php echo 1 ?>z</body></html>",
    "svg_math": "<html><body><svg><style>s</style><text>svg text</text></svg><math><mi>x</mi></math></body></html>",
    "broken": "<html><body><div><p>unclosed <b>bold <i>both</div> rest <table><tr><td>cell</table></body>",
    "whitespace_runs": "<html><body>  a \t\n b  <p> </p>  <p>c</p>\u00a0\u2003d  </body></html>",
    "nul": "<html><body>a\x00b c</body></html>",
    "empty_text": "<html><body><img src='a.png'></body></html>",
    "comment_only": "<!-- x -->",
    "large_text": "<html><body>"
    "<p>paragraph "
    + "word " * 2000
    + "</p>\n" * 1200
    + "<script>"
    + "s" * 70000
    + "</script>end</body></html>",
}


PINNED = {
    "scripts_comments": "1494f72f6e2be693279c4d61d1751a99",
    "nested_dropped": "5a66b2fb6897e5dc5e24abb22928e194",
    "no_body": "e9bfa32fa02a9dc6f8dad911bac2211d",
    "two_bodies": "0cc175b9c0f1b6a831c399e269772661",
    "text_after_body": "0cc175b9c0f1b6a831c399e269772661",
    "frameset": "3a346d3fa77ed938b66d2b10b2786800-raw",
    "xml_declaration": "deaf6a1e9612a4d8c221e68ee23d58d2",
    "xhtml": "3e44107170a520582ade522fa73c1d15",
    "entities_unicode": "a901dbbf83c49a9d882b5a474208a800",
    "cdata_pi": "2151a2bc77807b81113febbf50c4bc95",
    "svg_math": "c7e0a4971580d6a40e23dc24f0ef22fa",
    "broken": "489e1c4d0b40fdae0120f1579e6d8aa1",
    "whitespace_runs": "713f592bd537f7725d491a03e837d64a",
    "nul": "1617aea139d0dd555e33cdfa8b38bee5",
    "empty_text": "5d4f75cab4c7fddfbd38390772101685-raw",
    "comment_only": "5ccf102ab13ce90fa139beb27aed34f2-raw",
    "large_text": "8a3411171ed5f8e5acda7b4a4e0ff790",
}


def _parsel_tree(text: str):  # type: ignore[no-untyped-def]
    """What SignatureMiddleware hands over: the root of the tree Scrapy's selector parses."""
    return lambda: Selector(text=text, type="html").root


def _pinned(sig) -> str:  # type: ignore[no-untyped-def]
    return sig.digest.hex() + ("" if sig.evidence else "-raw")


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_text_read_from_the_selector_tree_gives_the_signature_of_the_own_parse(name):
    """The same signature from parsel's tree (comments kept, nothing stripped from it), from this
    module's own parse, and as before the tree was used."""
    text = CASES[name]
    body = text.encode("utf-8")
    from_tree = page_signature(body, "text/html", text, tree=_parsel_tree(text))
    assert _pinned(from_tree) == _pinned(page_signature(body, "text/html", text)) == PINNED[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_large_tree_is_read_one_text_node_at_a_time_with_the_same_text(name):
    """Above 4 MiB the tree's text is read node by node (bounded memory), not by the transform:
    the same digest either way."""
    root = Selector(text=CASES[name], type="html").root
    assert _tree_text_md5(root, 1) == _tree_text_md5(root, _WHOLE_TEXT_MAX + 1)


def test_a_page_over_4_mib_read_from_the_tree():
    text = (
        "<html><body>"
        + "<p>a paragraph of text <script>x</script> <!-- c --> tail</p>\n" * 80_000
        + "</body></html>"
    )
    body = text.encode()
    assert len(body) > _WHOLE_TEXT_MAX
    tree = _parsel_tree(text)
    assert page_signature(body, "text/html", text, tree=tree) == page_signature(
        body, "text/html", text
    )


def test_the_tree_is_not_asked_for_when_the_text_is_not_hashed():
    """Non-HTML, over max_bytes, or a NUL character (parsel drops it, the own parse reads U+FFFD):
    no tree, and the signatures of before."""

    def no_tree():  # type: ignore[no-untyped-def]
        raise AssertionError("the tree was asked for")

    big = b"<html><body>" + b"x" * 100 + b"</body></html>"
    assert page_signature(big, "text/html", big.decode(), max_bytes=50, tree=no_tree) == (
        hashlib.md5(big).digest(),
        False,
    )
    assert (
        page_signature(b"%PDF-1.4", "application/pdf", tree=no_tree).digest
        == hashlib.md5(b"%PDF-1.4").digest()
    )
    text = CASES["nul"]
    assert _pinned(page_signature(text.encode(), "text/html", text, tree=no_tree)) == PINNED["nul"]


def test_a_tree_that_cannot_be_built_leaves_the_text_to_the_own_parse():
    def broken():  # type: ignore[no-untyped-def]
        raise ValueError("no tree")

    text = CASES["broken"]
    assert (
        _pinned(page_signature(text.encode(), "text/html", text, tree=broken)) == PINNED["broken"]
    )


def test_the_demo_site_keeps_its_signatures():
    """Every page of the demo site (traps included: a 3 MB index, clocks, soft 404s) has the same
    signature from the selector's tree as from the own parse. (The own parse gave the code of
    before the tree the same 279 signatures when this was written: the site changes, the pins
    of CASES do not.)"""
    from scrapy_urlunify.demo.site import DemoSite

    site = DemoSite(size=289)
    for page_id in sorted(site.pages):
        body = site.render(page_id)
        text = body.decode("utf-8")
        assert page_signature(body, None, text, tree=_parsel_tree(text)) == page_signature(
            body, None, text
        ), page_id
