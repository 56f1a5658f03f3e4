"""Near-duplicate signatures: a 64-bit SimHash of a page's main text (docs/near_duplicates.md).

Pure functions, no Scrapy import. The exact signature (the MD5 of the body text) says "the same
text"; this fingerprint says "almost the same text": a Permanent link with a "Revision as of ..."
banner, a redirect view with "(Redirected from ...)", a print view without the navigation, a
changed counter or "last edited" line. As in Charikar's SimHash, used by Manku, Jain and Das
Sarma at web scale, each page gets 64 bits, and two pages whose fingerprints differ in few bits
(their *distance*) have nearly the same features; :func:`resemblance` turns a distance
into the cosine similarity it estimates.

* Text: :func:`main_text` reads the *main content* of a parsed page -- MediaWiki's article text
  (``#mw-content-text``: without the "Revision as of", "(Redirected from ...)" lines above it,
  and without its section "[edit]" links and interface message boxes inside it),
  else the first ``<main>`` or element with ``role="main"`` (Sphinx's ``div.body``, most CMS
  themes), else the ``<body>`` -- without script/style/noscript/template, in one libxslt pass.
  A wiki's navigation, sidebar and footer are the same on every page: on raw body text two
  distinct stub articles would share most of their features (docs/near_duplicates.md measures
  it), and a print view (navigation gone) would be far from its page.
* Features: the text, white space removed, ASCII lower-cased and digits made 0, is cut into
  chunks of about four words at content-defined points (sentence punctuation, the letters w and
  v, two UTF-8 continuation bytes: see :data:`_TRANSLATE`), so an edit changes only the chunk it
  falls in and the cuts around it stay where they were. A page's features are the *set* of its
  chunks: a chunk repeated all over a page counts once. Cutting, hashing (CRC-32 of each chunk)
  and the bit counts all run in C (``bytes.translate``/``split``/``count``, ``map``, ``set``): no
  Python loop per word.
* Sensitivity: SimHash measures a change *relative* to the page. Adding m features to a page of
  n moves its fingerprint by about ``20 * sqrt(m / n)`` bits: a 25-word banner is ~2 bits on a
  3,000-word article, ~6 on a 300-word one, give or take the noise of 64 bits
  (docs/near_duplicates.md has the measured table).
* Deterministic across processes and machines (no ``hash()`` of str, explicit byte order): the
  fingerprints persist in a JOBDIR or Redis.
* Bounded: only the first ``max_bytes`` (default 1 MiB) of UTF-8 text are read.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
import zlib
from array import array
from itertools import compress

from lxml import etree

BITS = 64
DEFAULT_MAX_BYTES = 1 << 20
#: Calibrated thresholds in bits (docs/near_duplicates.md): a page this close to a page seen
#: before is a near-duplicate of it (its links still followed, evidence for learning, a check of a
#: canonical link) ...
PAGE_DISTANCE = 7
#: ... and this close, the strict one, an item is dropped: no two distinct articles of the
#: calibration sites came this close
ITEM_DISTANCE = 3
#: the fewest distinct chunks (about 60 words) a crawl fingerprints: on fewer, one or two chunks
#: are the whole page, and pages that differ only in a number (digits are made 0: "The text of
#: cms-1." and "... cms-2.") or a word would be near-duplicates
MIN_FEATURES = 16

# The main content of a page, else its body (else the whole document), in one libxslt pass.
# MediaWiki's article is found by id() (libxml2's table of the HTML ids): no scan of the tree,
# a third of the pass on a wiki page.
# MediaWiki puts two pieces of its interface inside its article text: the "[edit]" links of the
# sections (gone in the printable view) and message boxes ("The printable version is no longer
# supported ..."); on a stub they alone moved the printable view 8 bits from the article. A diff
# view ("?diff=prev&oldid=N") shows the change (table.diff, a "Latest revision as of" title) above
# revision N: on a stub the change is longer than the article. Only
# there (mode "mediawiki"): the class test on every element doubled the pass on other pages.
#: where the main text is read from, the first found: MediaWiki's article, the first ``<main>``
#: or ``role="main"`` element, the body (else the whole document)
_REGIONS = {
    "@ARTICLE@": "id('mw-content-text')[1]",
    "@MAIN@": "(//*[@role='main' or self::main])[1]",
    "@BODY@": "(//body)[1]",
}
_STYLESHEET = """\
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="utf-8"/>
  <xsl:template match="/">
    <xsl:variable name="article" select="@ARTICLE@"/>
    <xsl:choose>
      <xsl:when test="$article"><xsl:apply-templates select="$article" mode="mediawiki"/></xsl:when>
      <xsl:when test="@MAIN@"><xsl:apply-templates select="@MAIN@"/></xsl:when>
      <xsl:when test="@BODY@"><xsl:apply-templates select="@BODY@"/></xsl:when>
      <xsl:otherwise><xsl:apply-templates/></xsl:otherwise>
    </xsl:choose>
  </xsl:template>
  <xsl:template match="script|style|noscript|template"/>
  <xsl:template match="script|style|noscript|template" mode="mediawiki"/>
  <xsl:template match="*[@class][contains(@class, 'mw-editsection') or contains(@class, 'mw-message-box')
                                  or contains(concat(' ', @class, ' '), ' diff ')
                                  or contains(@class, 'diff-currentversion-title')]" mode="mediawiki"/>
  COMMENTS
</xsl:stylesheet>"""
for _token, _path in _REGIONS.items():
    _STYLESHEET = _STYLESHEET.replace(_token, _path)
del _token, _path
_FIND_REGIONS = tuple(etree.XPath(path) for path in _REGIONS.values())

#: The class names of a page's frame inside its content: the pager of a list, the breadcrumbs,
#: an item's "previous / next" links (Redmine's ``next-prev-links``, WordPress's ``nav-links``,
#: Trac's ``nav``, Bootstrap's ``pagination``/``pager``), a sidebar. Such a block names other
#: pages and changes with them or with the session, not with this page: Redmine shows "«
#: Previous | 3 of 55 | Next »" on an issue when the session's last list holds it, and marks
#: that list in its sidebar with a "Clear" link; two fetches of one issue were 4-9 bits apart,
#: and each was an item.
FRAME_CLASSES = (
    "nav",
    "navigation",
    "nav-links",
    "next-prev-links",
    "pagination",
    "pager",
    "breadcrumb",
    "breadcrumbs",
    "sidebar",
)
# HTML's own frame (<nav>, <aside>, role="navigation" or "complementary"), Redmine's and many
# themes' id="sidebar", and those classes are left out: on the elements pagers, breadcrumbs and
# sidebars are made of (div, ul, ol), the cheap substring tests first. A test on every element
# cost five times the pass on a Redmine issue page; with span too, twice the pass on
# python3-doc (its code is spans); on these three, 1.09 ms a python3-doc page instead of 1.07,
# 0.30 instead of 0.20 on Redmine's pages.
_FRAME_TEST = (
    "[@role='navigation' or @role='complementary' or @id='sidebar' or @class and ("
    "contains(@class, 'nav') or contains(@class, 'pag') or contains(@class, 'crumb')"
    " or contains(@class, 'next-prev') or contains(@class, 'sidebar')) and ("
    + " or ".join(f"contains(concat(' ', @class, ' '), ' {name} ')" for name in FRAME_CLASSES)
    + ")]"
)
_FRAME = (
    '<xsl:template match="nav|aside|'
    + "|".join(name + _FRAME_TEST for name in ("div", "ul", "ol"))
    + '"/>'
)
# What the main content links to and shows (main_content): each link's href and each image's
# src between two noncharacters, in the same pass as its text (a second pass over the tree for
# them alone cost more than the text's: 1.9 ms per 100 KB of python3-doc, 228 links a page).
# In the readers' comments (mode "comments") links are text only: a reply view moves the reply
# form, a comment page shows other comments.
_LINK, _LINK_END = "\ufdd1", "\ufdd2"
_LINKS = "".join(
    f'<xsl:template match="{tag}[@{attr}]"{mode}><xsl:text>{_LINK}</xsl:text>'
    f'<xsl:value-of select="normalize-space(@{attr})"/><xsl:text>{_LINK_END}</xsl:text>'
    f"<xsl:apply-templates{mode}/></xsl:template>"
    for tag, attr in (("a", "href"), ("img", "src"))
    for mode in ("", ' mode="mediawiki"')
)
_MARKED_LINK = re.compile(f"{_LINK}([^{_LINK_END}]*){_LINK_END}")
#: a link's path parameter (``;jsessionid=...`` up to the next segment, query or fragment)
_PATH_PARAMETER = re.compile(r";[^/?#]*")
#: the scheme and host of an absolute link (``https://m.example.com``), or of a scheme-relative one
_AUTHORITY = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:)?//[^/]*")
_MAIN_TEXT = etree.XSLT(etree.XML(_STYLESHEET.replace("COMMENTS", _FRAME + _LINKS).encode()))
#: the main text with its frame, for a page whose text without it is too short for a SimHash
_MAIN_TEXT_FRAMED = etree.XSLT(etree.XML(_STYLESHEET.replace("COMMENTS", _LINKS).encode()))
#: a text with this many characters other than white space has MIN_FEATURES chunks and more (a
#: chunk is about 25 bytes, a piece at most 64): only a shorter one is chunked to know
_SURELY_LONG = 4096

# The readers' comments: the element every "N comments" link points at (``#comments``: WordPress's
# classic themes, Drupal's, most blog engines'). A post's other comment pages and the post itself
# show one article under other comments, and a user yielding an item per post wants one: the
# comments' text is marked off by _COMMENTS, and main_text() leaves it out when the rest still
# makes a SimHash (a page that is little but comments, a guest book, keeps them). A second
# stylesheet, for pages that have the element only: its match on every element made the pass
# half as long again.
_COMMENTS = "\ufdd0"  # a noncharacter: no page's text has it, XML allows it
_HAS_COMMENTS = etree.XPath("boolean(id('comments'))")
_MAIN_TEXT_COMMENTED = etree.XSLT(
    etree.XML(
        _STYLESHEET.replace(
            "COMMENTS",
            _FRAME
            + _LINKS
            + f"""<xsl:template match="*[@id='comments']">
    <xsl:text>{_COMMENTS}</xsl:text><xsl:apply-templates mode="comments"/><xsl:text>{_COMMENTS}</xsl:text>
  </xsl:template>
  <xsl:template match="script|style|noscript|template" mode="comments"/>""",
        ).encode()
    )
)

# One translate() pass cuts the text into chunks: white space deleted (it carries no meaning for
# resemblance, and deleting it is cheaper than collapsing its runs), ASCII lower-cased, digits
# made 0 (a counter, a date, an oldid that changes leaves the chunk as it was, unless the number
# grows a digit), and the cut points mapped to \x01 for split(): sentence punctuation, the Latin
# letters w and v (about one letter in 30 in English, Serbian, German), the UTF-8 continuation
# byte b2 (Cyrillic в, ò, ...) and 80 (the second byte of every CJK punctuation mark, and of one
# CJK character in 64 or so). Chunks average about 25 bytes of English, four words: an edit changes
# the chunk it falls in, and the cuts before and after it stay where they were.
_TABLE = bytearray(range(256))
for _upper in range(ord("A"), ord("Z") + 1):
    _TABLE[_upper] = _upper + 32
for _digit in range(ord("1"), ord("9") + 1):
    _TABLE[_digit] = ord("0")
_TABLE[1] = 0  # never a cut by itself
for _byte in b".!?;:|wWvV\xb2\x80":
    _TABLE[_byte] = 1
_TRANSLATE = bytes(_TABLE)
#: a number's digits, made 0 by _TRANSLATE (white space gone: "1 2 3" is one run)
_DIGIT_RUNS = re.compile(b"0+")
_WHITE_SPACE = b" \t\n\r\x0b\x0c"
del _TABLE, _upper, _digit, _byte
#: a chunk longer than this (text without cut points: CJK, a long URL, a table of numbers) is cut
#: into pieces of _PIECE bytes, so one edit in it does not change all of it
_LONG_CHUNK = 400
_PIECE = 64

# SimHash gives each feature 64 pseudo-random bits and sets a fingerprint bit when most features
# have it. Here the CRC-32 of a chunk gives four bytes, and byte p of the CRC picks 16 of those
# bits (bits 16p..16p+15): for each such bit, a fixed table says which 128 of the 256 byte values
# have it. Exactly half: a table with 141 ones would set its bit on almost every page, and bring
# distinct pages closer. The count of features with a bit set is then two C passes over the
# p-th bytes of all CRCs: translate() each to 1 or 0, count() the ones.
_LANES = 16


def _bit_tables() -> tuple[tuple[bytes, ...], ...]:
    planes = []
    for plane in range(4):
        lanes = []
        for lane in range(_LANES):
            order = sorted(
                range(256),
                key=lambda value: hashlib.blake2b(
                    bytes((plane, lane, value)), digest_size=8, person=b"urlunify-near"
                ).digest(),
            )
            ones = frozenset(order[:128])
            lanes.append(bytes(value in ones for value in range(256)))
        planes.append(tuple(lanes))
    return tuple(planes)


_BIT_TABLES = _bit_tables()
_LITTLE_ENDIAN = sys.byteorder == "little"


def main_element(root: etree._Element) -> etree._Element:
    """The element of a parsed page whose text :func:`main_text` reads (before it leaves out
    the frame, the readers' comments and MediaWiki's interface)."""
    for find in _FIND_REGIONS:
        found = find(root)
        if found:
            return found[0]  # type: ignore[no-any-return]
    return root


_HIGH = 0xFFFFFFFF00000000
_LOW = 0xFFFFFFFF


def digest64(data: bytes, person: bytes) -> int:
    """A 64-bit blake2b digest of ``data`` (``person``: what it is a digest of)."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, person=person).digest(), "little")


def main_text(root: etree._Element) -> str:
    """The text a near-duplicate signature is made of: the main content of a parsed page
    (MediaWiki's ``#mw-content-text``, else the first ``<main>`` or ``role="main"`` element, else
    ``<body>``, else everything) without script,
    style, noscript and template elements nor comments, and without its readers' comments
    (``#comments``) when the rest has text enough for a SimHash, and without its frame (navigation,
    sidebars, pagers, breadcrumbs: :data:`FRAME_CLASSES`) unless that leaves too little text for
    a SimHash. ``root``: the document's root element (in a crawl, Scrapy's
    ``response.selector.root``); it is read, never modified."""
    return main_content(root)[0]


def main_content(root: etree._Element) -> tuple[str, int | None]:
    """The :func:`main_text` of a parsed page, and in the same pass a 64-bit digest of what that
    content links to and shows: its links' ``href`` and its images' ``src`` as written (not in
    its readers' comments, nor in its frame unless the text keeps it; a path parameter left
    out), as a set in its high 32 bits, and their paths (without scheme and host) in the order
    written in its low 32 (:func:`other_rows` reads them), None when it has none. Two views of one page link the same pages in one order; two lists
    of one template that show other rows (products 25 to 36 of 38, and 25 to 38), or the same
    rows in another order (sorted by price), do not, however alike their texts."""
    text, links, _ = main_targets(root)
    return text, links


def main_targets(root: etree._Element) -> tuple[str, int | None, tuple[str, ...]]:
    """:func:`main_content`, and the targets its digest is made of, as written."""
    if not _HAS_COMMENTS(root):
        text, links, targets = _unmarked(str(_MAIN_TEXT(root)))
    else:
        marked, links, targets = _unmarked(str(_MAIN_TEXT_COMMENTED(root)))
        parts = marked.split(_COMMENTS)
        # odd parts are inside #comments (a page's own U+FDD0 would make their count even:
        # then the whole text); one part: #comments is outside the main content
        rest = "".join(parts[::2])
        if len(parts) % 2 and _long_enough(rest):
            text = rest
        else:
            text = "".join(parts)
    if _long_enough(text):
        return text, links, targets
    # a short page: its frame may be all that tells it from its siblings (a photo's page whose
    # only words are "Gallery" and "Photo 3 of 55"), and a short page is compared whole
    return _unmarked(str(_MAIN_TEXT_FRAMED(root)))


def _unmarked(marked: str) -> tuple[str, int | None, tuple[str, ...]]:
    """A stylesheet's output without its marked link targets, their digest, and the targets."""
    if _LINK not in marked:
        return marked, None, ()
    written = tuple(t for t in dict.fromkeys(_MARKED_LINK.findall(marked)) if t)
    # a path parameter is a session id (``;jsessionid=``) far more often than a page: two views
    # of one page that differ only by it link the same pages
    plain = [t for t in dict.fromkeys(_PATH_PARAMETER.sub("", t) for t in written) if t]
    if not plain:
        return _MARKED_LINK.sub("", marked), None, ()
    # the high half: the targets (a set); the low half: their paths in the order first written,
    # each once (a list's rows in order: its pager's and its buttons' queries left out)
    # each on its own host: a page of an alias host (m.) links the same paths under its name
    paths = dict.fromkeys(
        _AUTHORITY.sub("", t.partition("#")[0].partition("?")[0], 1) for t in plain
    )
    targets = digest64("\n".join(sorted(plain)).encode("utf-8", "surrogatepass"), b"urlunify-links")
    order = digest64("\n".join(paths).encode("utf-8", "surrogatepass"), b"urlunify-order")
    return _MARKED_LINK.sub("", marked), (targets & _HIGH) | (order & _LOW), written


def other_rows(links: int | None, earlier: int | None, distance: int) -> bool:
    """Whether a page ``distance`` bits from an earlier one shows other rows than it, by the
    :func:`main_content` link digests of the two (None: none). Other paths, or the same in
    another order: at any distance (a list sorted otherwise is the same set of text features,
    0 bits). The same paths in one order under other queries: at 1 bit or more (at 0 bits, one
    list under another pager, whose pager and buttons link other queries of its own path)."""
    if links == earlier:
        return False
    if links is None or earlier is None or links & _LOW == earlier & _LOW:
        return distance > 0
    return True


def other_targets(links: int | None, earlier: int | None) -> bool:
    """Whether a page that repeats an earlier page's text links to targets the earlier does not
    link, by the :func:`main_content` link digests of the two (None: none): a page without links
    leads nowhere new, one with links where the earlier had none does, and two sets of targets
    differ when their digests' high halves do (each target as written: a session id in every
    link of one view differs too)."""
    if links is None:
        return False
    return earlier is None or links & _HIGH != earlier & _HIGH


def _long_enough(text: str) -> bool:
    """Whether ``text`` has the :data:`MIN_FEATURES` chunks of a SimHash."""
    # a page's text is often mostly indentation: its first characters are counted without it
    head = text[: 4 * _SURELY_LONG]
    if len(head) - sum(map(head.count, " \n\t\r")) >= _SURELY_LONG:
        return True
    chunks = set(_chunks(text, DEFAULT_MAX_BYTES))
    chunks.discard(b"")
    return len(chunks) >= MIN_FEATURES


def _normalized(text: str, max_bytes: int) -> bytes:
    """The first ``max_bytes`` bytes of ``text`` as the features read them: white space gone,
    ASCII lower-cased, digits made 0, cut points \x01."""
    # the characters first: a 50 MB text is not encoded whole to keep its first megabyte
    data = text[:max_bytes].encode("utf-8", "surrogatepass")[:max_bytes]
    return data.translate(_TRANSLATE, _WHITE_SPACE)


def _chunks(text: str, max_bytes: int) -> list[bytes]:
    """The features of ``text``: content-defined chunks of its first ``max_bytes`` bytes."""
    chunks = _normalized(text, max_bytes).split(b"\x01")
    if max(map(len, chunks)) > _LONG_CHUNK:
        pieces: list[bytes] = []
        for chunk in chunks:
            if len(chunk) > _LONG_CHUNK:
                pieces.extend(chunk[at : at + _PIECE] for at in range(0, len(chunk), _PIECE))
            else:
                pieces.append(chunk)
        chunks = pieces
    return chunks


def fingerprint(text: str, max_bytes: int = DEFAULT_MAX_BYTES, min_features: int = 1) -> int | None:
    """The 64-bit near-duplicate signature of a page's text (usually :func:`main_text`), or
    None when the text has fewer than ``min_features`` distinct chunks (none: equal empty texts
    would make every image gallery a near-duplicate of the first; a crawl asks for
    :data:`MIN_FEATURES`). Only the first ``max_bytes`` bytes of its UTF-8 are read."""
    chunks = _chunks(text, max_bytes)
    # a set: a chunk repeated all over a page ("0", "pyobject*", "edit") counts once, or the
    # pages of one genre would look alike through their commonest chunks
    crcs = array("I", set(map(zlib.crc32, compress(chunks, map(len, chunks)))))
    count = len(crcs)
    if not count or count < min_features:
        return None
    raw = crcs.tobytes()
    result = 0
    for plane, tables in enumerate(_BIT_TABLES):
        # byte `plane` of each CRC, least significant first whatever the machine's byte order
        plane_bytes = raw[plane if _LITTLE_ENDIAN else crcs.itemsize - 1 - plane :: crcs.itemsize]
        for lane, table in enumerate(tables):
            if 2 * plane_bytes.translate(table).count(1) > count:
                result |= 1 << (_LANES * plane + lane)
    return result


def short_fingerprint(text: str, max_bytes: int = DEFAULT_MAX_BYTES) -> int | None:
    """The fingerprint of a text too short for SimHash (fewer than :data:`MIN_FEATURES` chunks):
    a 64-bit digest of the text itself, white space collapsed, digits and case kept. Two such
    pages are near-duplicates (0 bits apart) only when their main texts are equal: a print view
    whose banner is outside the main content, a page shown with another pager or sidebar. None
    for a text with no word (equal empty texts would make every image gallery one page)."""
    words = text[:max_bytes].split()
    if not words:
        return None
    return digest64(" ".join(words).encode("utf-8", "surrogatepass"), b"urlunify-short")


def folded_fingerprint(text: str, max_bytes: int = DEFAULT_MAX_BYTES) -> int:
    """A 64-bit digest of ``text`` as :func:`fingerprint` reads it (white space gone, ASCII
    lower-cased), in order, with every number one ``0``: equal for two texts that differ only in
    their numbers, however many digits they have. SimHash cannot say that: a pager's
    ``?limit=24&page=3`` shows what ``?page=5`` shows but "(3 pages)" and a pager of three links
    instead of "(5 pages)" and five, 4 to 7 bits apart on a listing of 50 chunks, while the same
    listing sorted otherwise (its chunks are a set) is 4 bits away and one with a product more,
    2."""
    return digest64(folded_text(text, max_bytes), b"urlunify-fold")


def folded_text(text: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """``text`` as :func:`folded_fingerprint` digests it: white space gone, ASCII lower-cased,
    every number one ``0``."""
    return _DIGIT_RUNS.sub(b"0", _normalized(text, max_bytes))


def page_fingerprint(text: str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[int, bool] | None:
    """The fingerprint a crawl gives a page of main text ``text``, and whether it is a
    :func:`short_fingerprint` (compared for equality only, never by distance with a SimHash);
    None for a text with no word."""
    value = fingerprint(text, max_bytes, MIN_FEATURES)
    if value is not None:
        return value, False
    value = short_fingerprint(text, max_bytes)
    return None if value is None else (value, True)


def distance(a: int, b: int) -> int:
    """The number of bits two fingerprints differ in (their Hamming distance)."""
    return (a ^ b).bit_count()


def resemblance(bits: int) -> float:
    """The cosine similarity of the feature sets of two pages whose fingerprints are ``bits``
    apart, as SimHash estimates it (the angle between the feature vectors is ``pi * bits / 64``):
    1.0 for equal fingerprints, 0.99 at 3 bits, 0.92 at 8, 0 at 32."""
    return math.cos(math.pi * min(bits, BITS // 2) / BITS)
