"""Plain data classes describing the generated demo site."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Placeholder in an href that the server replaces with the current session id.
SID_PLACEHOLDER = "{sid}"
#: Placeholders the server fills per view on pages with a clock or a form token.
CLOCK_PLACEHOLDER = "{clock}"
TOKEN_PLACEHOLDER = "{token}"


@dataclass
class Link:
    """One ``<a href>`` on a page.

    ``href`` is written into the HTML verbatim (after ``{sid}`` substitution).
    ``target`` is the page id (``kind == "page"``), document id
    (``kind == "document"``) or None (``kind == "external"``: mailto/tel/js;
    ``kind == "missing"``: a broken link, answered by a soft 404).
    ``plain`` is True when the href, resolved WHATWG-style against the page's
    canonical base, is exactly the target's canonical URL (no variant at all).
    ``note`` is text rendered after the anchor (the table of contents' summaries).
    """

    href: str
    text: str
    target: str | None
    kind: str = "page"
    plain: bool = False
    note: str = ""


@dataclass
class Page:
    """One distinct page, i.e. one thing the server can answer with.

    ``base`` is the path-only ``<base href>`` the page is rendered with: it pins
    relative links to the page's real directory even when the page was
    requested through a mangled path like ``/docs//x.html`` or ``/docs\\x.html``
    (otherwise relative links would resolve differently per variant).
    """

    id: str
    site: str
    path: str
    query: tuple[tuple[str, str], ...]
    kind: str
    title: str
    heading: str
    paragraphs: tuple[str, ...]
    is_item: bool = False
    nav: list[Link] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    duplicate_of: str | None = None  # content duplicate of that page (print/mirror)
    session_style: str | None = None  # "jsessionid" | "PHPSESSID" | "sid"
    clock: bool = False  # the body shows the server's time: its text changes on every view
    token: bool = (
        False  # a form with a per-view token: its bytes change on every view, not its text
    )

    @property
    def base(self) -> str:
        return self.path if self.path.endswith("/") else self.path.rsplit("/", 1)[0] + "/"

    @property
    def all_links(self) -> list[Link]:
        return [*self.nav, *self.links]


@dataclass(frozen=True)
class Document:
    """A non-HTML resource (a small PDF)."""

    id: str
    site: str
    path: str
    title: str


@dataclass(frozen=True)
class Redirect:
    """A redirect rule on a normalized path.

    Exactly one mode: ``location`` (fixed absolute URL), ``to_https`` (only
    for http requests: same host/path on https), ``add_slash``, or ``flip_scheme``
    (http -> https and https -> http: a redirect loop through one page, which no
    link leads to; tests use it to check that a crawler still ends it).
    """

    status: int = 301
    location: str | None = None
    to_https: bool = False
    add_slash: bool = False
    flip_scheme: bool = False


@dataclass(frozen=True)
class Resolution:
    """What the server does with one requested URL.

    ``status`` is 200, 301/302 or 404.  ``known_host`` is False for hosts the
    demo does not serve (the proxy answers those with 502).  For a 200 exactly
    one of ``page_id`` / ``document_id`` / ``text`` is set, or ``soft_404``: a
    missing page answered 200 with the one "not found" page many URLs share.
    """

    status: int
    known_host: bool = True
    page_id: str | None = None
    document_id: str | None = None
    location: str | None = None
    text: bytes | None = None
    content_type: str = "text/html; charset=utf-8"
    soft_404: bool = False
