"""A site on loopback with the traps a learner must survive, each page with an id.

Every real page is an ``<article>`` whose ``<h1>`` is its page id, so a crawl can say which
pages it missed and which it yielded twice. URL noise the learner may learn: ``arglink=`` on
the CMS pages (any value, same page). Traps:

* ``/toc``: a 3 MB table of contents whose links carry a per-view session id in an attribute
  (its raw bytes differ on every view, its text never), reachable as ``?arglink=1`` and ``=2``;
* default values: ``/S/list`` = ``/S/list?page=1`` but ``?page=2`` is another page; ``/S/x`` =
  ``/S/x?lang=en`` but ``?lang=de`` is another; ``/S/find`` = ``/S/find?sort=relevance`` but
  ``?sort=date`` is another;
* ``/S/clock?ref=...``: a clock in the body (no two views alike);
* ``/S/gone-N`` and ``/S/item?id=98``: soft 404s (status 200, one text), met before the real
  ``/S/item?id=1`` and ``=2``;
* ``/blog/...``: every post declares the blog's front page its canonical (a broken template);
* ``/good/N?view=print``: declares ``/good/N`` its canonical, rightly;
* ``/w/N?v=...``: ``v`` does not matter on the first four pages (enough to learn it), but does
  on the next four, met only after the rule: a wrong rule that probation must catch.
"""

from __future__ import annotations

from minisite import CountingSite, listen

SECTIONS = ("news", "docs", "shop", "help")
CMS_PAGES = 8
BLOG_POSTS = 8
GOOD_PAGES = 8
W_PAGES = 8  # the first half ignore ?v=, the second half do not


def _html(page_id: str, body: str = "", head: str = "", extra: str = "") -> bytes:
    article = (
        f"<article><h1>{page_id}</h1><p class='text'>The text of {page_id}.</p></article>"
        if page_id
        else ""
    )
    return (
        f"<!DOCTYPE html><html><head><title>{page_id}</title>{head}</head><body>{article}{extra}"
        f"{body}</body></html>"
    ).encode()


def _links(hrefs: list[str]) -> str:
    return "".join(f"<a href='{h}'>{h}</a>" for h in hrefs)


def expected_pages() -> set[str]:
    """Every page id a complete crawl from ``/`` yields."""
    ids = {"home", "toc", "more", "blog", "good", "good-more", "good-last"}
    ids |= {f"cms-{i}" for i in range(CMS_PAGES)}
    ids |= {f"post-{i}" for i in range(BLOG_POSTS)}
    ids |= {f"good-{i}" for i in range(GOOD_PAGES)}
    for s in SECTIONS:
        ids |= {f"{s}-list-{p}" for p in (1, 2, 3)}
        ids |= {f"{s}-x-{lang}" for lang in ("en", "de", "fr")}
        ids |= {f"{s}-find-{order}" for order in ("relevance", "date")}
        ids |= {
            f"{s}-clock-a",
            f"{s}-clock-b",
            f"{s}-front",
            f"{s}-next",
            f"{s}-item-1",
            f"{s}-item-2",
        }
    ids |= {"w", "w-next", "w-last"} | {f"w-{i}" for i in range(W_PAGES // 2)}
    ids |= {f"w-{i}-{v}" for i in range(W_PAGES // 2, W_PAGES) for v in "xyz"}
    ids.add("not-found")  # the soft 404s: one text, one page
    return ids


class TrapSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        parts = base.strip("/").split("/")
        if base == "/":
            hrefs = ["/toc?arglink=1", "/toc?arglink=2"]
            hrefs += [f"/cms/{i}?arglink={v}" for i in range(4) for v in ("a", "b")]
            hrefs += [f"/{s}/" for s in SECTIONS]
            hrefs += ["/blog/post-0", "/good/", "/more", "/w/"]
            return _html("home", _links(hrefs))
        if base == "/toc":  # 3 MB; a session id per view in every link's attributes
            view = self.views
            row = "".join(
                f"<li><a href='/cms/{i}?arglink=t' data-session='s{view:08d}'>CMS page {i}</a></li>"
                for i in range(CMS_PAGES)
            )
            filler = "".join(
                f"<p data-session='s{view:08d}'>Chapter {n}</p>" for n in range(60_000)
            )
            return _html("toc", f"<ul>{row}</ul>{filler}")
        if base == "/more":  # crawled after the rule could be learned: arglink spellings
            return _html(
                "more", _links([f"/cms/{i}?arglink={v}" for i in range(CMS_PAGES) for v in "cde"])
            )
        if parts[0] == "cms" and len(parts) == 2:
            return _html(f"cms-{parts[1]}")
        if parts[0] in SECTIONS:
            return self._section(request, parts, params)
        if parts[0] == "blog":  # every post declares the front page its canonical (wrongly)
            if len(parts) == 1 or not parts[1]:
                return _html("blog", _links([f"/blog/post-{i}" for i in range(BLOG_POSTS)]))
            head = "<link rel='canonical' href='/blog/'>"
            return _html(parts[1], _links(["/blog/"]), head=head)
        if parts[0] == "good":  # print views that rightly declare their article canonical
            if len(parts) == 1 or not parts[1]:  # the first five, then the rest, one level down
                hrefs = [f"/good/{i}?view=print" for i in range(5)] + [
                    f"/good/{i}" for i in range(5)
                ]
                return _html("good", _links([*hrefs, "/good/more"]))
            if parts[1] == "more":  # the print views, then (deeper) their articles
                hrefs = [f"/good/{i}?view=print" for i in range(5, GOOD_PAGES)] + ["/good/last"]
                return _html("good-more", _links(hrefs))
            if parts[1] == "last":
                return _html("good-last", _links([f"/good/{i}" for i in range(5, GOOD_PAGES)]))
            head = (
                f"<link rel='canonical' href='/good/{parts[1]}'>"
                if params.get("view") == "print"
                else ""
            )
            return _html(f"good-{parts[1]}", head=head)
        if parts[0] == "w":
            return self._w(parts, params)
        request.setResponseCode(404)
        return b"not found"

    def _w(self, parts: list[str], params: dict[str, str]) -> bytes:
        half = W_PAGES // 2
        leaf = parts[1] if len(parts) > 1 else ""
        if not leaf:  # v does not matter on these: the rule is learned here
            return _html(
                "w", _links([f"/w/{i}?v={v}" for i in range(half) for v in "ab"] + ["/w/next"])
            )
        if leaf == "next":  # pages where v matters, first spelling
            return _html(
                "w-next", _links([f"/w/{i}?v=x" for i in range(half, W_PAGES)] + ["/w/last"])
            )
        if leaf == "last":  # ... and the others, merged by the (wrong) rule
            return _html(
                "w-last", _links([f"/w/{i}?v={v}" for i in range(half, W_PAGES) for v in "yz"])
            )
        if int(leaf) < half:
            return _html(f"w-{leaf}")
        return _html(f"w-{leaf}-{params.get('v', '')}")

    def _section(self, request, parts: list[str], params: dict[str, str]) -> bytes:  # type: ignore[no-untyped-def]
        s = parts[0]
        leaf = parts[1] if len(parts) > 1 else ""
        if not leaf:
            hrefs = [
                f"/{s}/list",
                f"/{s}/list?page=1",
                f"/{s}/x",
                f"/{s}/x?lang=en",
                f"/{s}/find",
                f"/{s}/find?sort=relevance",
                f"/{s}/clock?ref=a",
                f"/{s}/clock?ref=b",
                f"/{s}/gone-1",
                f"/{s}/gone-2",
                f"/{s}/item?id=98",
                f"/{s}/item?id=99",
                f"/{s}/next",
            ]
            return _html(f"{s}-front", _links(hrefs))
        if leaf == "next":  # one level deeper: the other values, after the defaults
            hrefs = [
                f"/{s}/list?page=2",
                f"/{s}/list?page=3",
                f"/{s}/x?lang=de",
                f"/{s}/x?lang=fr",
                f"/{s}/find?sort=date",
                f"/{s}/item?id=1",
                f"/{s}/item?id=2",
            ]
            return _html(f"{s}-next", _links(hrefs))
        if leaf == "list":
            page = params.get("page", "1")
            return _html(f"{s}-list-{page}")
        if leaf == "x":
            return _html(f"{s}-x-{params.get('lang', 'en')}")
        if leaf == "find":
            return _html(f"{s}-find-{params.get('sort', 'relevance')}")
        if leaf == "clock":
            # no two views alike: each spelling is its own page to anyone who fetches it
            return _html(
                f"{s}-clock-{params.get('ref', '')}", extra=f"<p>It is {self.views} o'clock.</p>"
            )
        if leaf.startswith("gone-") or (leaf == "item" and params.get("id") not in ("1", "2")):
            return _html("not-found")  # a soft 404: status 200
        if leaf == "item":
            return _html(f"{s}-item-{params['id']}")
        request.setResponseCode(404)
        return b"not found"


def start() -> tuple[TrapSite, object, str]:
    site = TrapSite()
    return (site, *listen(site))
