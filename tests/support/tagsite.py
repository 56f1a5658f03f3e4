"""A small blog on loopback whose start page lists thirty tag pages between ten posts: what
"content first" is checked on (tests/integration/test_content_first.py).

* ``/`` links posts 0-4, then ``/tag/<t>`` for each of ``TAGS`` tags, then posts 5-9 (five
  posts come first in either order: breadth-first the first links go first, in Scrapy's
  default order the last);
* ``/post/<n>`` (``POSTS`` of them) is a post: a paragraph of its own (new content);
* ``/tag/<t>`` is a listing: a sentence of its own on every other tag page (new text), one
  every tag page shows on the others (old text once one was fetched), a link to the one post
  only it lists (``10 + t``), and links to two other tags.

Half the tag pages are new pages: no tag page is penalised, nor is the tags' pattern one of
content. Breadth-first, plain Scrapy fetches every tag page before the posts they list, a
level below.
"""

from __future__ import annotations

from minisite import CountingSite, listen

POSTS = 40
TAGS = 30
#: posts the start page lists before the tags, and after them
LISTED = 5
_WORDS = (
    "amber basil cedar delta ember fjord grove heron iris lark maple nutmeg olive pepper quartz "
    "raven sorrel thyme umber violet willow yarrow zinnia acorn bramble clover dune fennel "
    "garnet hazel indigo jasper kelp linden moss nettle oak pine"
).split()


def _text(n: int) -> str:
    """A paragraph no other post shows: twenty words of its own choosing."""
    words = [_WORDS[(n * n * 7 + k * (2 * n + 3)) % len(_WORDS)] for k in range(20)]
    return f"Post {n} tells of the {', the '.join(words)}, as seen on day {n * 13 + 1}."


def _html(title: str, main: str) -> bytes:
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head>"
        f"<body><main><h1>{title}</h1>{main}</main></body></html>"
    ).encode()


def posts() -> set[str]:
    """The paths of every post."""
    return {f"/post/{n}" for n in range(POSTS)}


class TagSite(CountingSite):
    def __init__(self) -> None:
        super().__init__()
        #: the paths requested, in order
        self.order: list[str] = []

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, _ = self.count(request)
        self.order.append(request.uri.decode())
        parts = path.strip("/").split("/")
        if path == "/":
            first = "".join(f"<a href='/post/{n}'>Post {n}</a> " for n in range(LISTED))
            tags = "".join(f"<a href='/tag/{t}'>Tag {t}</a> " for t in range(TAGS))
            last = "".join(f"<a href='/post/{n}'>Post {n}</a> " for n in range(LISTED, 2 * LISTED))
            return _html("Blog", f"<p>The newest posts, and every tag.</p>{first}{tags}{last}")
        if len(parts) == 2 and parts[1].isdigit():
            n = int(parts[1])
            if parts[0] == "post" and n < POSTS:
                return _html(f"Post {n}", f"<p>{_text(n)}</p><a href='/'>Blog</a>")
            if parts[0] == "tag" and n < TAGS:
                post = 2 * LISTED + n
                links = f"<a href='/post/{post}'>Post {post}</a> " + "".join(
                    f"<a href='/tag/{(n + k) % TAGS}'>Tag {(n + k) % TAGS}</a> " for k in (1, 7)
                )
                about = (
                    f"Tag {n} gathers the posts about the {_WORDS[n]} and the {_WORDS[n + 5]}."
                    if n % 2 == 0
                    else "Every post filed under this tag, newest first."
                )
                return _html("Tag", f"<p>{about}</p>{links}")
        request.setResponseCode(404)
        return _html("Not found", "<p>No such page.</p>")


def start() -> tuple[TagSite, object, str]:
    site = TagSite()
    return (site, *listen(site))
