"""Page signatures: the MD5 of a page's body text (the seeds' duplicate-content rule), and the
site a signature belongs to.

Pure functions, no Scrapy import. As in Soon and Lee's URL signatures ("Reducing redundant web
crawling using URL signatures"), a page's signature is the MD5 of its *body text*, so what
changes from one view of a page to the next -- session ids in links, timestamps in comments,
attributes, scripts -- does not break the equality of two copies of one page:

* HTML (``text/html``, ``application/xhtml+xml``, or a body that starts like HTML): the text of
  ``<body>`` (the whole document when there is none) without ``script``, ``style``, ``noscript``
  and ``template`` elements and without comments, white space collapsed to single spaces; MD5 of
  its UTF-8 bytes. The caller may hand over the document already parsed (``tree``: in a crawl,
  the tree of Scrapy's ``response.selector``, which the spider uses too), so a page is parsed
  once; it is read, never modified.
* anything else, an HTML body larger than ``max_bytes`` (default 32 MiB, a memory cap: lxml
  reads a 3 MB table of contents in a few tens of ms), or an HTML page with no text at all (an
  image gallery: equal empty texts would make every such page a duplicate of the first): MD5 of
  the raw body bytes.

A raw-bytes signature of an HTML page changes whenever a session id in a link does, so it is
good enough to drop a byte-identical duplicate but never evidence for learning:
:func:`page_signature` says which kind a signature is.

Two *distinct* pages can share a body text by design: an empty search result, a soft 404
("page not found" with status 200), a login wall. Their signatures collide and the second is
treated as a duplicate of the first; the paper measured 0.54% such false positives. Signatures
are compared within one *site* (see :func:`site_key`), never across sites.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from lxml import etree, html

from scrapy_urlunify.core._domains import split_domain

DEFAULT_MAX_BYTES = 32 * 1024 * 1024

_DROPPED = ("script", "style", "noscript", "template")
_SPACE = re.compile(r"\s+")
_SLICE = 1 << 16  # characters of text collapsed at a time
_HTML_START = re.compile(rb"\s*(?:<!doctype\s+html|<html|<head|<body|<!--)", re.IGNORECASE)


def is_html(content_type: str | None, body: bytes) -> bool:
    """Whether a response is HTML, from its Content-Type or, without one, its first bytes."""
    if content_type:
        ct = content_type.split(";", 1)[0].strip().lower()
        return ct in ("text/html", "application/xhtml+xml")
    return _HTML_START.match(body[:512]) is not None


# huge_tree as parsel's parser (Scrapy's selectors): without it libxml2 cuts the text of a page
# nested deeper than 256 elements, and drops a text node over 10 MB
_PARSER = html.HTMLParser(remove_comments=True, huge_tree=True)

# The body text of a parsed document, without the _DROPPED elements (their tails kept), comments
# and processing instructions, in one pass of libxslt over the tree (a third of the time of the
# same walk in Python): the first <body>, or the whole document without one.
_BODY_TEXT = etree.XSLT(
    etree.XML(b"""\
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="utf-8"/>
  <xsl:template match="/">
    <xsl:choose>
      <xsl:when test="//body"><xsl:apply-templates select="(//body)[1]"/></xsl:when>
      <xsl:otherwise><xsl:apply-templates/></xsl:otherwise>
    </xsl:choose>
  </xsl:template>
  <xsl:template match="script|style|noscript|template"/>
</xsl:stylesheet>""")
)
#: above this many bytes of body, the text of a parsed tree is read one text node at a time (the
#: transform holds the whole text, three times over, until it is hashed)
_WHOLE_TEXT_MAX = 4 << 20
_DROPPED_TAGS = frozenset(_DROPPED)


def _body(document: bytes | str) -> html.HtmlElement | None:
    """The ``<body>`` of an HTML document (the whole document without one), without the
    :data:`_DROPPED` elements; None when it cannot be parsed."""
    if not document:
        return None
    try:
        root = html.document_fromstring(document, parser=_PARSER)
    except ValueError:
        if not isinstance(document, str):
            return None
        # lxml refuses a str with an XML encoding declaration: give it the bytes it declares
        try:
            root = html.document_fromstring(
                document.encode("utf-8", "surrogatepass"), parser=_PARSER
            )
        except (etree.ParserError, ValueError):
            return None
    except etree.ParserError:
        return None
    bodies = root.xpath("//body")
    node = bodies[0] if bodies else root
    etree.strip_elements(node, *_DROPPED, with_tail=False)
    return node


def body_text(document: bytes | str) -> str:
    """The visible text of an HTML document's ``<body>``, white space collapsed.

    Give the decoded text when the encoding is known (Scrapy's ``response.text``); bytes are
    decoded by libxml2 from the document's own declarations."""
    node = _body(document)
    return "" if node is None else _SPACE.sub(" ", node.text_content()).strip()


def tree_body_text(root: etree._Element) -> str:
    """:func:`body_text` of a document already parsed (``root``: its root element, Scrapy's
    ``response.selector.root``), read without modifying it."""
    return _SPACE.sub(" ", str(_BODY_TEXT(root))).strip()


def _body_text_md5(document: bytes | str) -> bytes | None:
    """MD5 of ``body_text(document)`` in UTF-8, or None when that text is empty."""
    node = _body(document)
    return None if node is None else _md5_of_text(_batched(node.itertext()))


def _tree_text_md5(root: etree._Element, size: int) -> bytes | None:
    """:func:`_body_text_md5` of a document already parsed (``root``: its root element, as
    ``lxml.html`` or parsel parse it, comments kept), read without modifying it. ``size``: the
    document's size in bytes."""
    if size <= _WHOLE_TEXT_MAX:
        return _md5_of_text((str(_BODY_TEXT(root)),))
    bodies = root.xpath("//body")
    return _md5_of_text(_batched(_text_nodes(bodies[0] if bodies else root)))


def _text_nodes(node: etree._Element) -> Iterator[str]:
    """``node.itertext()`` as if the :data:`_DROPPED` elements, comments and processing
    instructions had been removed from the tree, their tails kept."""
    walker = etree.iterwalk(node, events=("start", "end", "comment", "pi"))
    for event, element in walker:
        if event == "start":
            if element.tag in _DROPPED_TAGS:
                walker.skip_subtree()  # its "end" still comes, with its tail
            elif element.text:
                yield element.text
        elif element.tail and element is not node:
            yield element.tail


def _batched(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` joined into strings of about :data:`_SLICE` characters: the same text, hashed
    with one regular-expression call per slice rather than one per text node."""
    batch: list[str] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece)
        if size >= _SLICE:
            yield "".join(batch)
            batch, size = [], 0
    if batch:
        yield "".join(batch)


def _md5_of_text(pieces: Iterable[str]) -> bytes | None:
    """MD5 of the concatenated ``pieces`` with white space collapsed and stripped, in UTF-8, or
    None when that text is empty.

    Hashed piece by piece, never holding the whole text: on a page of 30 MB, ``_SPACE.sub`` over
    the joined text alone peaked at +450 MB (a list of a string per run of spaces). Runs of white
    space are collapsed across pieces, as in the joined text."""
    md5 = hashlib.md5()
    started = space = False  # some text hashed; white space after it, not hashed yet
    for piece in pieces:
        for at in range(0, len(piece), _SLICE):  # a slice may cut a word or a run of spaces
            text = _SPACE.sub(" ", piece[at : at + _SLICE])
            core = text.strip(" ")
            if not core:
                space = space or bool(text)
                continue
            if started and (space or text[0] == " "):
                md5.update(b" ")
            md5.update(core.encode("utf-8", "surrogatepass"))
            started, space = True, text[-1] == " "
    return md5.digest() if started else None


def text_signature(text: str) -> bytes:
    """MD5 of a text after white-space collapsing (for an item's own text field)."""
    return hashlib.md5(_SPACE.sub(" ", text).strip().encode("utf-8", "surrogatepass")).digest()


class PageSignature(NamedTuple):
    """A page's 16-byte signature, and whether it may teach the learner: ``False`` for the raw
    bytes of an HTML page (too large, or no text), which change with any session id in a link."""

    digest: bytes
    evidence: bool


def page_signature(
    body: bytes,
    content_type: str | None = None,
    decoded: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    tree: Callable[[], etree._Element | None] | None = None,
) -> PageSignature:
    """The signature of a response body (see the module docstring); ``decoded`` is the body as
    text when the caller knows its encoding. ``tree`` gives the root element of the document
    parsed from ``decoded`` (Scrapy's ``response.selector.root``), called only when the body's
    text is hashed; a NUL character (which that parse drops, and this module's own parse reads
    as U+FFFD) leaves the text to this module's own parse, as before the tree was used."""
    if not is_html(content_type, body):
        return PageSignature(hashlib.md5(body).digest(), True)
    if len(body) <= max_bytes:
        root = None
        if tree is not None and (decoded is None or "\x00" not in decoded):
            try:
                root = tree()
            except (ValueError, etree.LxmlError):  # the own parse below says what it can
                root = None
        if root is not None:
            digest = _tree_text_md5(root, len(body))
        else:
            digest = _body_text_md5(decoded if decoded is not None else body)
        if digest is not None:
            return PageSignature(digest, True)
    return PageSignature(hashlib.md5(body).digest(), False)


def signature(
    body: bytes,
    content_type: str | None = None,
    decoded: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> bytes:
    """The 16-byte MD5 signature of a response body (:func:`page_signature` without its kind)."""
    return page_signature(body, content_type, decoded, max_bytes).digest


def site_key(identity_host: str, granularity: str = "site") -> str:
    """The part of the page-source hash index a host's pages go to.

    ``"site"``: the registrable domain of the host after aliases (``shop.termomont.rs`` ->
    ``termomont.rs``; for a host without a known public suffix -- ``.test``, ``localhost``, an
    IP address -- its last two labels or the address itself); ``"host"``: the host itself;
    ``"scope"``: one index for the whole crawl.
    """
    if granularity == "scope":
        return ""
    if granularity == "host":
        return identity_host
    d = split_domain(identity_host)
    if d.suffix and d.label:
        return f"{d.label}.{d.suffix}"
    if identity_host.startswith("[") or identity_host.replace(".", "").isdigit():
        return identity_host
    return ".".join(identity_host.split(".")[-2:])


def signature_text(signature: bytes | bytearray | memoryview | str) -> str:
    """A signature as the learner keeps it: hex text."""
    if isinstance(signature, str):
        return signature
    if isinstance(signature, (bytes, bytearray, memoryview)):
        return bytes(signature).hex()
    raise TypeError(f"signature must be bytes, got {type(signature).__name__}")
