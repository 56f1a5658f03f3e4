"""A small WordPress-like blog whose posts declare a shortlink: what declared shortlinks are
checked on (tests/integration/test_shortlinks.py).

* ``/`` lists the first ``LISTED`` posts by permalink ``/post/<slug>/``; the others are linked
  only by shortlink, from other posts;
* a post declares its shortlink ``/?p=<id>`` (even posts in ``<link rel="shortlink">``, odd
  ones in a ``Link`` header, as WordPress sends both), shows it ("Short link"), links the next
  three posts by shortlink ("Related") and one more by the query form
  ``/?post_type=post&p=<id>`` ("Recently viewed");
* ``/?p=<id>`` redirects (301) to the permalink, as WordPress does; ``/?post_type=post&p=<id>``
  answers with the post itself, declaring its permalink canonical;
* every fifth post has a second comment page ``/post/<slug>/comment-page-2/``: a page of its
  own that declares its post's shortlink too (WordPress does);
* ``lying``: a site whose posts declare the next post's shortlink (their claims are false);
* ``linked=False``: a site that never links a shortlink (the related posts by query form too),
  as a WooCommerce product's ``/?p=<id>`` is never linked: only a probe checks its claims.

``page_of(path, params)`` is the page a URL shows (None: a 404, or a redirect).
"""

from __future__ import annotations

from minisite import CountingSite, listen

POSTS = 30
LISTED = 20
_WORDS = ["amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "iris", "juniper"]


def slug(i: int) -> str:
    return f"{_WORDS[i % 10]}-{i}"


def post_id(i: int) -> int:
    return 100 + 7 * i


def _index(params: dict[str, str]) -> int | None:
    p = params.get("p", "")
    if p.isdigit() and (int(p) - 100) % 7 == 0 and 0 <= (int(p) - 100) // 7 < POSTS:
        return (int(p) - 100) // 7
    return None


def page_of(path: str, params: dict[str, str]) -> str | None:
    """``/``, ``/post/<slug>/`` or ``/post/<slug>/comment-page-2/``; None for any other URL."""
    if path == "/":
        if not params:
            return "/"
        i = _index(params)
        if i is not None and params == {"post_type": "post", "p": str(post_id(i))}:
            return f"/post/{slug(i)}/"
        return None
    parts = path.strip("/").split("/")
    posts = {slug(i): i for i in range(POSTS)}
    if params or parts[0] != "post" or len(parts) not in (2, 3) or parts[1] not in posts:
        return None
    if len(parts) == 2:
        return path
    if parts[2] == "comment-page-2" and posts[parts[1]] % 5 == 0:
        return path
    return None


def _html(title: str, main: str, head: str) -> bytes:
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{head}</head>"
        f"<body><main><h1>{title}</h1>{main}</main></body></html>"
    ).encode()


class ShortlinkSite(CountingSite):
    def __init__(self, lying: bool = False, linked: bool = True) -> None:
        super().__init__()
        #: posts declare the next post's shortlink
        self.lying = lying
        #: posts link their own shortlink and the related posts' (else their query forms)
        self.linked = linked
        #: the URLs requested, in order
        self.order: list[str] = []

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        self.order.append(request.uri.decode())
        if path == "/" and set(params) == {"p"} and _index(params) is not None:
            request.setResponseCode(301)
            request.setHeader(b"Location", f"/post/{slug(_index(params))}/".encode())  # type: ignore[arg-type]
            return b""
        page = page_of(path, params)
        if page is None:
            request.setResponseCode(404)
            return _html("Not found", "<p>No such page.</p>", "")
        if page == "/":
            links = "".join(f"<a href='/post/{slug(i)}/'>Post {i}</a> " for i in range(LISTED))
            return _html("Blog", f"<p>Latest posts.</p>{links}", "")
        i = next(i for i in range(POSTS) if f"/post/{slug(i)}/" in page)
        short = f"/?p={post_id((i + 1) % POSTS if self.lying else i)}"
        head = f"<link rel='canonical' href='{page}'>"
        if i % 2 == 0:
            head += f"<link rel='shortlink' href='{short}'>"
        else:
            request.setHeader(b"Link", f"<{short}>; rel=shortlink".encode())
        if page.endswith("comment-page-2/"):
            main = f"<p>Older comments on {slug(i)}: lovely, thanks, agreed.</p>"
            return _html(f"Comments on {slug(i)}", main, head)
        form = "/?p=" if self.linked else "/?post_type=post&amp;p="
        related = "".join(
            f"<li><a href='{form}{post_id((i + k) % POSTS)}'>Post {(i + k) % POSTS}</a></li>"
            for k in (1, 2, 3)
        )
        recent = f"/?post_type=post&amp;p={post_id((i + 5) % POSTS)}"
        own = f"<p><a href='/?p={post_id(i)}'>Short link</a></p>" if self.linked else ""
        main = (
            f"<p>Post {i}: notes about {slug(i).replace('-', ' ')} and more.</p>"
            f"{own}<ul>{related}</ul><p><a href='{recent}'>Recently viewed</a></p>"
        )
        if i % 5 == 0:
            main += f"<p><a href='/post/{slug(i)}/comment-page-2/'>Older comments</a></p>"
        return _html(f"Post {slug(i)}", main, head)


def start(lying: bool = False, linked: bool = True) -> tuple[ShortlinkSite, object, str]:
    site = ShortlinkSite(lying, linked)
    return (site, *listen(site))
