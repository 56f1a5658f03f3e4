"""``urlunify same --fetch``: how alike the pages two URLs show, measured as a crawl measures them.

:func:`compare_pages` downloads both URLs once and reads each page the way the crawl's signature
middleware does: Scrapy's decoding (``w3lib.encoding.html_to_unicode``) and parse (a parsel tree),
the exact signature (``page_signature``: the MD5 of the body text) and the near-duplicate
fingerprint (``main_text`` + ``page_fingerprint``), so the verdict printed is the one a crawl with
the default thresholds would reach. URL identity (the exit status of ``same``) is not changed by it:
two spellings of one URL are one page whatever their pages say today.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import NamedTuple

from parsel import Selector
from w3lib.encoding import html_to_unicode

from scrapy_urlunify import __version__
from scrapy_urlunify.learning._near_duplicates import (
    DEFAULT_MAX_BYTES,
    ITEM_DISTANCE,
    MIN_FEATURES,
    PAGE_DISTANCE,
    distance,
    main_text,
    page_fingerprint,
    resemblance,
)
from scrapy_urlunify.learning._page_signature import is_html, page_signature

#: bodies read at most (a crawl fingerprints no body over 4 MiB either)
MAX_BODY = 4 << 20


class FetchedPage(NamedTuple):
    """One URL's page: the URL answered (after redirects), its status, its exact signature and
    its fingerprint (None: not HTML, or no text), and whether that is the digest of a text too
    short for SimHash (equal or not, no distance)."""

    url: str
    status: int
    signature: bytes
    fingerprint: int | None
    short: bool = False


class PageComparison(NamedTuple):
    """Two pages compared: the same exact signature? their distance in bits and resemblance
    (None when either page has no fingerprint)."""

    first: FetchedPage
    second: FetchedPage
    same_text: bool
    bits: int | None
    resemblance: float | None


def read_page(url: str, body: bytes, content_type: str | None, status: int) -> FetchedPage:
    """A downloaded page read as the crawl reads it."""
    _, text = html_to_unicode(content_type, body)
    if is_html(content_type, body):
        root = Selector(text=text, type="html").root
        sig = page_signature(body, content_type, text, tree=lambda: root).digest
        found = page_fingerprint(main_text(root), DEFAULT_MAX_BYTES)
        value, short = found if found is not None else (None, False)
    else:
        sig, value, short = page_signature(body, content_type).digest, None, False
    return FetchedPage(url, status, sig, value, short)


def fetch(url: str, timeout: float) -> FetchedPage:
    """Download ``url`` (errors answered by the server are pages too: a soft 404 is one)."""
    request = urllib.request.Request(
        url, headers={"User-Agent": f"scrapy-urlunify/{__version__} (urlunify same)"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return read_page(
                response.geturl(),
                response.read(MAX_BODY),
                response.headers.get("Content-Type"),
                response.status,
            )
    except urllib.error.HTTPError as e:
        return read_page(e.geturl() or url, e.read(MAX_BODY), e.headers.get("Content-Type"), e.code)


def compare_pages(url1: str, url2: str, timeout: float = 30.0) -> PageComparison:
    """Fetch both URLs and compare their pages; ``OSError`` (``URLError``) when one cannot be
    fetched."""
    first, second = fetch(url1, timeout), fetch(url2, timeout)
    bits = None
    if first.fingerprint is not None and second.fingerprint is not None:
        if first.short or second.short:  # digests of short texts: equal (0 bits) or unrelated
            bits = (
                0
                if first.short and second.short and first.fingerprint == second.fingerprint
                else None
            )
        else:
            bits = distance(first.fingerprint, second.fingerprint)
    return PageComparison(
        first,
        second,
        first.signature == second.signature,
        bits,
        None if bits is None else resemblance(bits),
    )


def describe(c: PageComparison) -> str:
    """What a crawl with the default thresholds would make of the two pages."""
    lines = [f"page {n}: {p.url} (HTTP {p.status})" for n, p in ((1, c.first), (2, c.second))]
    if c.same_text:
        lines.append(
            "pages: the same text (one exact signature): a duplicate page, its items dropped"
        )
        return "\n".join(lines)
    if c.bits is None:
        lines.append(
            "pages: different texts; no resemblance (a page that is not HTML or has no text gets "
            f"no fingerprint; one under {MIN_FEATURES} chunks of text is alike only when its main "
            "text is equal)"
        )
        return "\n".join(lines)
    alike = f"{c.resemblance:.1%} alike ({c.bits} bits of 64 apart)"
    if c.bits <= ITEM_DISTANCE:
        verdict = "a near-duplicate page, its items dropped"
    elif c.bits <= PAGE_DISTANCE:
        verdict = "a near-duplicate page (its items kept at the default item threshold)"
    else:
        verdict = "different pages"
    lines.append(f"pages: different texts, {alike}: {verdict}")
    return "\n".join(lines)
