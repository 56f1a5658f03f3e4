"""A wiki on loopback with the two kinds of page wikis ask robots not to index: old revisions of
articles (``/articles/N/revisions/K``, ``noindex,follow`` as Redmine marks its old wiki
versions) and special pages among the articles (``/wiki/Special:...``, ``noindex,nofollow`` as
MediaWiki marks them). An old revision's text is mostly new to the crawl (an earlier wording of
its article), so only the site's ``noindex`` says it is no page of its own.

``/`` lists ``LISTED`` articles, each linking its ``REVISIONS`` old revisions and then, for the
first ones, a related article no list shows: breadth-first, the revisions and the related
articles are one level, the revisions first. ``/wiki/`` lists ``SPECIALS`` special pages, then
``LISTED`` wiki articles, then ``LISTED`` news items, all of new text: the special pages, the
articles and the news are one level, and the special pages and articles share ``/wiki/*``."""

from __future__ import annotations

from minisite import CountingSite, listen
from sortsite import sentence

LISTED = 20
RELATED = 10
REVISIONS = 3
SPECIALS = 6


def article(n: int, revision: int = 0) -> str:
    """The text of article ``n``, or of one of its old revisions: a wording of its own."""
    return "".join(f"<p>{sentence(n * 1000 + revision * 10 + k)}</p>" for k in range(3))


def _wiki(path: str) -> tuple[str, str] | None:
    """(robots meta, body) of a page of ``/wiki/``, None when there is none."""
    name = path[len("/wiki/") :]
    if name == "":
        return "", (
            "<h1>Wiki</h1>"
            + "".join(f"<a href='/wiki/Special:Tool_{k}'>tool</a>" for k in range(SPECIALS))
            + "".join(f"<a href='/wiki/Page_{k}'>page</a>" for k in range(LISTED))
            + "".join(f"<a href='/news/{k}'>news</a>" for k in range(LISTED))
        )
    kind, _, number = name.rpartition("_")
    if not number.isdigit():
        return None
    if kind == "Special:Tool" and int(number) < SPECIALS:
        # each special page shows something new (a tool's own output), as MediaWiki's do
        return '<meta name="robots" content="noindex,nofollow">', (
            f"<h1>Tool {number}</h1>{article(500 + int(number))}"
        )
    if kind == "Page" and int(number) < LISTED:
        return "", f"<h1>Page {number}</h1>{article(600 + int(number))}"
    return None


class RevisionSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _ = self.count(request)
        last = LISTED + RELATED
        parts = base.split("/")  # "", "articles", n[, "revisions", k]
        head = ""
        n = int(parts[2]) if len(parts) >= 3 and parts[2].isdigit() else -1
        page = _wiki(base) if base.startswith("/wiki/") else None
        if page is not None:
            head, body = page
        elif base == "/":
            body = "<h1>Articles</h1>" + "".join(
                f"<p><a href='/articles/{k}'>Article {k}</a></p>" for k in range(1, LISTED + 1)
            )
        elif parts[1] == "news" and 0 <= n < LISTED:
            body = f"<h1>News {n}</h1>{article(700 + n)}"
        elif parts[1] == "articles" and 1 <= n <= last and len(parts) == 3:
            body = f"<h1>Article {n}</h1>{article(n)}" + "".join(
                f"<a href='/articles/{n}/revisions/{k}'>revision {k}</a>"
                for k in range(1, REVISIONS + 1)
            )
            if n <= RELATED:
                body += f"<a href='/articles/{n + LISTED}'>related</a>"
        elif parts[1] == "articles" and 1 <= n <= last and len(parts) == 5:
            k = int(parts[4]) if parts[4].isdigit() and parts[3] == "revisions" else 0
            head = '<meta name="robots" content="noindex,follow">'
            body = f"<h1>Article {n}, revision {k}</h1>{article(n, k)}"
        else:
            request.setResponseCode(404)
            body = "<h1>Not found</h1>"
        return (
            f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>"
            f"{body}<footer>Powered by a wiki of articles, version 1.39 (c) its authors</footer>"
            "</body></html>"
        ).encode()


def start() -> tuple[RevisionSite, object, str]:
    site = RevisionSite()
    return (site, *listen(site))
