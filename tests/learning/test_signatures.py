"""Page signatures: the MD5 of a page's body text, and the site a signature is compared within."""


from __future__ import annotations

from scrapy_urlunify.learning.signatures import body_text, signature, site_key


def test_body_text_ignores_scripts_styles_comments_and_spacing():
    a = b"<html><head><title>T</title><style>p{}</style></head><body><p>Hello\n  <b>world</b></p>" \
        b"<script>var x=1</script><noscript>enable js</noscript><!-- 12:00 --></body></html>"
    assert body_text(a) == "Hello world"
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
    assert signature(text.encode("cp1250", "replace"), "text/html", text) == signature(text.encode(), "text/html", text)


def test_site_keys():
    assert site_key("shop.termomont.rs") == "termomont.rs"
    assert site_key("mirror.site.test") == site_key("site.test") == "site.test"
    assert site_key("127.0.0.1") == "127.0.0.1"
    assert site_key("a.b.example.co.uk", "host") == "a.b.example.co.uk"
    assert site_key("a.example.com", "scope") == ""
