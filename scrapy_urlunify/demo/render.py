"""HTML and PDF rendering of demo pages, plus a stdlib body-text extractor."""

from __future__ import annotations

import hashlib
import re
from html import escape
from html.parser import HTMLParser

from scrapy_urlunify.demo.model import (
    CLOCK_PLACEHOLDER,
    SID_PLACEHOLDER,
    TOKEN_PLACEHOLDER,
    Document,
    Link,
    Page,
)

NO_SESSION = "0" * 32  # used when rendering outside a request (ground truth)
#: The view number used outside a request (ground truth): its clock and token.
NO_VIEW = 0


def _anchor(link: Link) -> str:
    anchor = f'<a href="{escape(link.href, quote=True)}">{escape(link.text)}</a>'
    return anchor + escape(link.note) if link.note else anchor


def page_template(page: Page) -> str:
    """The HTML of ``page`` with the per-view placeholders (``{sid}``, ``{clock}``, ``{token}``)
    still in it; :func:`fill` makes one view of it.

    The body text depends only on heading, paragraphs, link *texts* and notes (never on
    hrefs), which is what makes print views and mirror copies have exactly the body text of
    their originals; the clock is the only per-view part of a text.
    """
    nav = "".join(f"<li>{_anchor(link)}</li>" for link in page.nav)
    paras = "".join(f"<p>{escape(p)}</p>" for p in page.paragraphs)
    if page.clock:
        paras += f'<p class="clock">Server time: {CLOCK_PLACEHOLDER}</p>'
    if page.is_item:
        main = (
            f'<article><h1 class="title">{escape(page.heading)}</h1><div '
            f'class="text">{paras}</div></article>'
        )
    else:
        main = f"<h1>{escape(page.heading)}</h1>{paras}"
    links = "".join(f"<li>{_anchor(link)}</li>" for link in page.links)
    form = ""
    if page.token:  # a comment form: the token is an attribute, so only the bytes change
        form = (
            f'<form class="comment" method="post" action="{escape(page.path, quote=True)}">'
            f'<input type="hidden" name="token" value="{TOKEN_PLACEHOLDER}">'
            '<textarea name="comment"></textarea><button type="submit">Comment</button></form>\n'
        )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(page.title)}</title>"
        f'<base href="{escape(page.base, quote=True)}">'
        "</head>\n<body>\n"
        f"<nav><ul>{nav}</ul></nav>\n"
        f'<main>{main}\n<ul class="links">{links}</ul></main>\n'
        f"{form}"
        "</body></html>\n"
    )


def fill(template: str, session: str | None = None, view: int = NO_VIEW) -> bytes:
    """One view of a :func:`page_template`: ``session`` in session links, ``view`` numbers the
    clock and the token (the same view, the same bytes)."""
    html = template.replace(SID_PLACEHOLDER, session or NO_SESSION)
    if CLOCK_PLACEHOLDER in html:
        seconds = 8 * 3600 + view
        html = html.replace(
            CLOCK_PLACEHOLDER,
            f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}",
        )
    if TOKEN_PLACEHOLDER in html:
        html = html.replace(
            TOKEN_PLACEHOLDER, hashlib.sha256(f"token:{view}".encode()).hexdigest()[:32]
        )
    return html.encode("utf-8")


def render_page(page: Page, session: str | None = None, view: int = NO_VIEW) -> bytes:
    """The HTML of ``page``; ``session`` fills the ``{sid}`` of session links, ``view`` the clock
    and token."""
    return fill(page_template(page), session, view)


#: The one page every missing URL under a soft-404 prefix is answered with (status 200).
SOFT_404 = (
    b'<!DOCTYPE html>\n<html lang="en">'
    b'<head><meta charset="utf-8"><title>Site Test</title></head>\n'
    b"<body><main><h1>Sorry, we could not find that page</h1>"
    b"<p>The page you are looking for was moved, renamed or never existed.</p>"
    b'<p><a href="/">Back to the home page</a></p></main></body></html>\n'
)


def render_not_found(url: str) -> bytes:
    return (
        "<!DOCTYPE html>\n<html><head><title>Not found</title></head>"
        f"<body><h1>Not found</h1><p>{escape(url)}</p></body></html>\n"
    ).encode()


def render_redirect(location: str) -> bytes:
    return (
        "<!DOCTYPE html>\n<html><head><title>Moved</title></head>"
        f'<body><a href="{escape(location, quote=True)}">Moved</a></body></html>\n'
    ).encode()


def render_pdf(document: Document) -> bytes:
    """A tiny but valid one-page PDF containing the document title."""
    text = document.title.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>"
        ),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


class _BodyText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.skip = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.depth += 1
        elif tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "body":
            self.depth -= 1
        elif tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if self.depth > 0 and not self.skip:
            self.parts.append(data)


def body_text(html: bytes | str) -> str:
    """Whitespace-normalized text of ``<body>`` (what a body signature hashes)."""
    parser = _BodyText()
    parser.feed(html.decode("utf-8") if isinstance(html, bytes) else html)
    parser.close()
    return re.sub(r"\s+", " ", " ".join(parser.parts)).strip()
