"""A small blog on loopback for the comment-page tests: posts whose comments are paged as
WordPress pages them (the post shows its newest comment page, ``/p/N/comment-page-K/`` the
others), and a guest book whose pages are nothing but entries (``/guestbook/comment-page-K/``).

Each post has ``COMMENT_PAGES[N]`` pages of ten comments: the post and its comment pages show
one article under other comments. The guest book's three pages show a line of their own and
three different sets of entries: three pages.
"""

from __future__ import annotations

from minisite import CountingSite, listen
from wikisite import article_text

POSTS = 10
#: how many comment pages each post has (1: no other comment page)
COMMENT_PAGES = [1 + (n % 3) for n in range(POSTS)]
GUESTBOOK_PAGES = 3


def _comments(owner: str, page: int, pages: int, base: str) -> str:
    entries = "".join(
        f"<li>Reader {owner}-{page}-{i} says: {article_text(f'{owner}-{page}-{i}', 22)}</li>"
        for i in range(10)
    )
    pager = "".join(
        f"<a href='{base}comment-page-{k}/'>{k}</a>" for k in range(1, pages + 1) if k != page
    )
    return f"<div id='comments'><h2>Comments</h2><ol>{entries}</ol><nav>{pager}</nav></div>"


def _page(title: str, main: str) -> bytes:
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        "<nav><a href='/'>Blog</a> <a href='/guestbook/'>Guest book</a></nav>"
        f"<main><h1>{title}</h1>{main}</main></body></html>"
    ).encode()


class BlogSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _ = self.count(request)
        parts = [p for p in base.split("/") if p]
        if not parts:
            links = "".join(f"<li><a href='/p/{n}/'>Post {n}</a></li>" for n in range(POSTS))
            return _page("Blog", f"<ul>{links}</ul>")
        page = None
        if len(parts) >= 2 and parts[-1].startswith("comment-page-"):
            page = int(parts[-1].removeprefix("comment-page-"))
            parts = parts[:-1]
        if parts == ["guestbook"]:
            shown = page or GUESTBOOK_PAGES
            if shown <= GUESTBOOK_PAGES:
                return _page(
                    "Guest book",
                    "<p>Sign our guest book.</p>"
                    + _comments("guest", shown, GUESTBOOK_PAGES, "/guestbook/"),
                )
        if len(parts) == 2 and parts[0] == "p" and parts[1].isdigit() and int(parts[1]) < POSTS:
            n = int(parts[1])
            pages = COMMENT_PAGES[n]
            shown = page or pages
            if shown <= pages:
                return _page(
                    f"Post {n}",
                    f"<article><p>{article_text(f'post-{n}')}</p></article>"
                    + _comments(f"post{n}", shown, pages, f"/p/{n}/"),
                )
        request.setResponseCode(404)
        return b"not found"


def start() -> tuple[BlogSite, object, str]:
    site = BlogSite()
    return (site, *listen(site))
