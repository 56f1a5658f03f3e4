"""One list shown with another pager: the digest of a short list page that tells its pager's
numbers from what it shows (docs/near_duplicates.md, "A list under another pager").

A shop's category shows its last product on ``?page=5`` and again on ``?limit=24&page=3``:
"Showing 49 to 49 of 49 (5 pages)" and a pager of five links, against "(3 pages)" and three.
On a page too short for a SimHash the digest is of the exact text (numbers kept, or a one-line
"1.7 litres" product would be one page with its "1.8 litres" sibling), so the two are two
items. With every number folded (``folded_text``), a gallery's "Photo 3 of 55" would be one
page with "Photo 4 of 55". What tells them apart is what the page shows: the two spellings of a
list link to the same products, the photos show other images. So a short page with a pager (two
links or more on its own path whose text is a number) gets a digest of its text up to numbers
*and* of the images it shows and the pages it links to off its own path (its own path's links
are the list's other pages, sorts and sizes, which differ with the pager); equal digests are the
same list.
"""

from __future__ import annotations

import re

from lxml import etree

from scrapy_urlunify.core._url import InvalidURL, Parts, resolve
from scrapy_urlunify.learning._near_duplicates import (
    DEFAULT_MAX_BYTES,
    digest64,
    folded_text,
    main_element,
)

#: the text of a pager's link: a page number (white space around it)
_PAGE_NUMBER = re.compile(r"\s*[0-9]{1,6}\s*\Z")
_SHOWN = etree.XPath(".//a[@href] | .//img[@src]")
#: the fewest page-number links on a page's own path that make a pager
PAGER_LINKS = 2


def listing_fingerprint(
    root: etree._Element, text: str, url: str, max_bytes: int = DEFAULT_MAX_BYTES
) -> int | None:
    """The 64-bit digest of a list page fetched at ``url`` (``root``: its parsed tree, ``text``:
    its main text) up to its pager: its text with every number folded, and the images and
    off-path link targets of its main content (resolved, without fragments). None for a page
    without a pager (fewer than :data:`PAGER_LINKS` page-number links to its own path), for one
    that shows and links nothing off its path (its numbers would be all that tell it from its
    siblings), and for a ``url`` that is not an http(s) URL."""
    try:
        own = Parts.split(resolve(url))
    except (InvalidURL, ValueError):
        return None
    elements = _SHOWN(main_element(root))
    if (
        sum(1 for e in elements if e.tag == "a" and _PAGE_NUMBER.match(e.text_content()))
        < PAGER_LINKS
    ):
        return None  # no pager whatever the links' targets: none resolved
    numbers = 0
    shown: set[str] = set()
    for element in elements:
        image = element.tag == "img"
        try:
            target = Parts.split(resolve(element.get("src" if image else "href"), url))
        except (InvalidURL, ValueError):
            continue
        target.fragment = None
        if image:
            shown.add("img " + target.url())
        elif target.host == own.host and target.port == own.port and target.path == own.path:
            # the list's own pages, sorts, sizes and filters: they change with the pager
            if _PAGE_NUMBER.match(element.text_content()):
                numbers += 1
        else:
            shown.add(target.url())
    if numbers < PAGER_LINKS or not shown:
        return None
    data = (
        folded_text(text, max_bytes)
        + b"\0"
        + "\n".join(sorted(shown)).encode("utf-8", "surrogatepass")
    )
    return digest64(data, b"urlunify-list")
