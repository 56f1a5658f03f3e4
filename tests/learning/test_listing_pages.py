"""The digest of a short list page up to its pager (learning/_listing_pages.py)."""

from __future__ import annotations

from lxml import html

from scrapy_urlunify.learning._listing_pages import listing_fingerprint
from scrapy_urlunify.learning._near_duplicates import main_text

URL = "http://shop.test/category/5"


def _list(
    query: str, pages: int, rows: str = "<li><a href='/p/49'>Lamp</a> 12.00 EUR</li>"
) -> tuple:
    pager = " ".join(f"<a href='?page={n}'>{n}</a>" for n in range(1, pages + 1))
    body = (
        f"<html><body><nav><a href='/cart?sessionid={query}'>Cart</a></nav><main><h1>Lamps</h1>"
        f"<p>Showing 49 to 49 of 49 ({pages} pages)</p><ul>{rows}</ul>"
        f"<a href='?limit=24'>Show 24</a> {pager}</main></body></html>"
    )
    root = html.fromstring(body)
    return root, main_text(root), URL + query


def test_one_list_under_two_pagers_has_one_digest() -> None:
    five = listing_fingerprint(*_list("?page=5", 5))
    three = listing_fingerprint(*_list("?limit=24&page=3", 3))
    assert five is not None
    assert five == three


def test_a_list_of_other_products_or_text_has_another_digest() -> None:
    lamp = listing_fingerprint(*_list("?page=5", 5))
    other = listing_fingerprint(
        *_list("?sort=price&page=5", 5, "<li><a href='/p/50'>Lamp</a> 12.00 EUR</li>")
    )
    renamed = listing_fingerprint(
        *_list("?sort=name&page=5", 5, "<li><a href='/p/49'>Desk lamp</a> 12.00 EUR</li>")
    )
    assert len({lamp, other, renamed}) == 3


def _photo(n: int, image: bool, links: str = "") -> tuple:
    pager = " ".join(f"<a href='/photo?n={k}'>{k}</a>" for k in range(1, 7))
    img = f"<img src='/img/{n}.jpg'>" if image else ""
    root = html.fromstring(
        f"<html><body><main>{img}<p>Photo {n} of 6</p>{links}<p>{pager}</p></main></body></html>"
    )
    return root, main_text(root), f"http://shop.test/photo?n={n}"


def test_photos_of_a_gallery_differ_by_what_they_show() -> None:
    assert listing_fingerprint(*_photo(3, True)) != listing_fingerprint(*_photo(4, True))
    # nothing shown nor linked off the page's path: its numbers are all it has, no digest
    assert listing_fingerprint(*_photo(3, False)) is None
    # a photo's links to its neighbours are off its path (/photo/2 ...) and tell it apart
    assert listing_fingerprint(
        *_photo(3, False, "<a href='/photos/2'>prev</a><a href='/photos/4'>next</a>")
    ) != listing_fingerprint(
        *_photo(4, False, "<a href='/photos/3'>prev</a><a href='/photos/5'>next</a>")
    )


def test_a_page_without_a_pager_on_its_path_has_no_digest() -> None:
    root = html.fromstring(
        "<html><body><main><h1>Kettle</h1><p>Steel, 1.7 litres.</p>"
        "<a href='/p/2'>1</a> <a href='/p/3'>2</a> <a href='?x=1'>Next</a></main></body></html>"
    )
    assert listing_fingerprint(root, main_text(root), "http://shop.test/p/1") is None
    root, text, _ = _list("?page=5", 5)
    assert listing_fingerprint(root, text, "not a url") is None
    assert listing_fingerprint(root, text, "mailto:a@b.test") is None
