"""``SeenText``: whether a page's text is new to the crawl, block by block, for the frontier's
judgement of what a URL pattern yields (docs/frontier.md, "What a pattern yields").

A page's signature says whether *the page* is new; many pages a site's software builds are new
pages of old text: an issue list sorted by another column, a chart of another month, an issue's
notes tab, an export. Their text is made of blocks shown on other pages before (an issue's
subject, its notes), in another order or another selection. So the frontier counts a page as new
content when a quarter of its text, by characters, is in blocks the crawl has not shown before.

A block is a text node of the page outside script, style, form controls and the like, its white
space collapsed, of :data:`MIN_BLOCK` characters or more (shorter ones, "Bug", "New", a date,
a page number, are everywhere and say nothing). The blocks seen are kept as two bits each in a
fixed bitmap (a Bloom filter: 2 MiB, whatever the crawl's size); one taken for another makes a new
block look seen, about one in 70 once a million blocks are in it, and costs order, not pages.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lxml import etree

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.http import Response

#: the shortest text node that is a block
MIN_BLOCK = 24
#: a page whose new blocks hold fewer than 1/NEW_SHARE of its blocks' characters is old text
NEW_SHARE = 4
#: log2 of the bitmap's size in bits
BITS = 24
#: the characters of a page read at most: its first blocks say whether it is new text, and a
#: page of 50 MiB of text must not cost 50 MiB of strings more than the spider's own parse
MAX_CHARS = 1 << 20
#: the text nodes of a page read at most (the XPath result is cut in libxml2, before any
#: Python string is made)
MAX_NODES = 20_000

# the text nodes of the body (else the document: a feed) outside elements that are code or form
# controls: a textarea holds a page's source (a wiki's edit view), an option list the same menu
_TEXT = etree.XPath(
    "((//body | /*[not(//body)])[1]//text()[not(ancestor::script or ancestor::style or "
    "ancestor::noscript or ancestor::template or ancestor::textarea or ancestor::select)])"
    f"[position() <= {MAX_NODES}]",
    smart_strings=False,
)
_SPACE = re.compile(r"\s+")
#: the cells and lines of a text that is not markup (a CSV or plain-text export)
_PLAIN_BLOCKS = re.compile(r"[\r\n\t,;]+")


def markup_blocks(root: etree._Element, max_chars: int = MAX_CHARS) -> list[str]:
    """The blocks of a parsed HTML or XML document (``root``: its root element, as Scrapy's
    ``response.selector.root``) in its first ``max_chars`` characters of text (at most
    :data:`MAX_NODES` text nodes), read without modifying it."""
    blocks = []
    read = 0
    for node in _TEXT(root):
        if read >= max_chars:
            break
        read += len(node)
        if len(node) >= MIN_BLOCK:
            text = _SPACE.sub(" ", node).strip()
            if len(text) >= MIN_BLOCK:
                blocks.append(text)
    return blocks


def plain_blocks(text: str, max_chars: int = MAX_CHARS) -> list[str]:
    """The blocks of a text that is not markup (its lines and cells) in its first
    ``max_chars`` characters."""
    return [
        block
        for part in _PLAIN_BLOCKS.split(text[:max_chars])
        if len(block := _SPACE.sub(" ", part).strip()) >= MIN_BLOCK
    ]


def page_blocks(response: Response, max_bytes: int) -> list[str] | None:
    """The blocks of a downloaded page: of its tree (HTML, XML: Scrapy's selector, parsed once
    for the spider too), of its text (other text), or None (not text: an image, a PDF; a body
    above ``max_bytes``, the signature's limit, whose text is not decoded)."""
    from scrapy.http import HtmlResponse, TextResponse, XmlResponse

    if isinstance(response, (HtmlResponse, XmlResponse)):
        try:
            return markup_blocks(response.selector.root)
        except (ValueError, etree.LxmlError):  # a document lxml cannot read
            return None
    if isinstance(response, TextResponse) and len(response.body) <= max_bytes:
        return plain_blocks(response.text)
    return None


class SeenText:
    """The text blocks a crawl has shown, and whether a page's are new."""

    def __init__(self, bits: int = BITS) -> None:
        self._mask = (1 << bits) - 1
        self._bitmap = bytearray(1 << (bits - 3))

    def new_text(self, blocks: Iterable[str]) -> bool | None:
        """Whether the page of ``blocks`` is new text (a quarter of its blocks' characters in
        blocks not shown before), or None for a page without blocks; its blocks are shown from
        now on."""
        bitmap, mask = self._bitmap, self._mask
        total = new = 0
        for block in blocks:
            size = len(block)
            total += size
            h = hash(block)
            seen = True
            for index in (h & mask, (h >> 32) & mask):
                byte, bit = index >> 3, 1 << (index & 7)
                if not bitmap[byte] & bit:
                    seen = False
                    bitmap[byte] |= bit
            if not seen:
                new += size
        if not total:
            return None
        return NEW_SHARE * new >= total
