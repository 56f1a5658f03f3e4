"""A near-duplicate page that shows the value its URL differs by is told apart by it."""

from __future__ import annotations

from scrapy_urlunify.learning._value_shown import shows_own_value

EDIT = "http://wiki.test/w/index.php?title={}&action=edit&redlink=1"


def test_an_edit_view_shows_its_title_and_not_the_other_one():
    text = "Creating Talk:Iron Fort  You have followed a link to a page that does not exist yet."
    other = (
        "wiki|wiki.test/w/index.php?action=edit&redlink=1&title=Talk%3AMain_Page"  # an identifier
    )
    assert shows_own_value(EDIT.format("Talk:Iron_Fort"), other, lambda: text)
    # the other page's title on this page too (a list of both): the value tells nothing apart
    assert not shows_own_value(
        EDIT.format("Talk:Iron_Fort"), other, lambda: text + " See also Talk:Main Page."
    )


def test_values_a_page_does_not_show_or_that_are_numbers_are_not_looked_for():
    view = "http://shop.test/product/4?view={}"
    assert not shows_own_value(
        view.format("gallery"), view.format("details"), lambda: "A kettle. Price 20."
    )
    # the page may well show "2": numbers are everywhere
    assert not shows_own_value(
        "http://s.test/list?page=2", "http://s.test/list?page=1", lambda: "Page 2 of 5"
    )
    assert not shows_own_value(
        "http://s.test/a?ref=p9", "http://s.test/a", lambda: "ref p9"
    )  # no value there
