"""What looks like another spelling of a page before it is fetched (``core._spellings``): only
the frontier's order depends on it."""

from __future__ import annotations

import pytest

from scrapy_urlunify.core._spellings import is_variant_host_label, looks_like_variant


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("doc/3/", "ref=sidebar"),
        ("doc/3/", "a=1&From=nav"),
        ("news/story", "output=amp"),
        ("print/doc/3/", ""),
        ("doc/3/print.html", ""),
        ("doc/3/amp/", ""),
        ("2024/05/post/comment-page-2/", ""),
        ("issues/5.atom", ""),
        ("projects/p/issues.CSV", "sort=id%2Cstatus"),
        ("projects/p/wiki/FAQ.txt", ""),
    ],
)
def test_views_and_referrals_look_like_variants(path, query):
    assert looks_like_variant(path, query)


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("doc/3/", ""),
        ("list", "page=2"),
        ("list", "sort=price&limit=24"),
        ("news/printing-press", ""),
        ("wiki/Amplifier", ""),
        ("index.php", "title=Main_Page&action=edit"),
        ("docs/guide.html", ""),
        ("papers/2024.pdf", ""),
        ("releases/v1.txt/", ""),
        ("wiki/.txt", ""),
    ],
)
def test_pages_and_their_own_parameters_do_not(path, query):
    assert not looks_like_variant(path, query)


def test_a_view_value_looks_like_a_variant_whatever_its_parameter():
    # a false look too (a search for the word): it costs order, never a page (docs/frontier.md)
    assert looks_like_variant("search", "q=print")
    assert not looks_like_variant("search", "q=printer-friendly")


def test_copy_host_labels():
    assert all(map(is_variant_host_label, ["m", "mirror", "www2", "AMP", "old", "web1"]))
    assert not any(map(is_variant_host_label, ["blog", "docs", "shop", "mobiles"]))
