"""Articles with old revisions, on loopback: a wiki's ``/wiki/Page/N`` (Redmine, MediaWiki's
``oldid``), each marked ``<meta name="robots" content="noindex">`` as those wikis mark them.
An old revision's text is mostly new to the crawl (an earlier wording of the article), so only
the site's ``noindex`` says it is no new content. Each listed article links its three old
revisions and then, for the first ones, a related article no list shows: breadth-first, the
revisions and the related articles are one level, the revisions first."""

from __future__ import annotations

from minisite import CountingSite, listen
from sortsite import sentence

LISTED = 20
RELATED = 10
REVISIONS = 3


def article(n: int, revision: int = 0) -> str:
    """The text of article ``n``, or of one of its old revisions: a wording of its own."""
    return "".join(f"<p>{sentence(n * 1000 + revision * 10 + k)}</p>" for k in range(3))


class RevisionSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _ = self.count(request)
        last = LISTED + RELATED
        parts = base.split("/")  # "", "articles", n[, "revisions", k]
        head = ""
        n = int(parts[2]) if len(parts) >= 3 and parts[2].isdigit() else 0
        if base == "/":
            body = "<h1>Articles</h1>" + "".join(
                f"<p><a href='/articles/{k}'>Article {k}</a></p>" for k in range(1, LISTED + 1)
            )
        elif 1 <= n <= last and len(parts) == 3:
            body = f"<h1>Article {n}</h1>{article(n)}" + "".join(
                f"<a href='/articles/{n}/revisions/{k}'>revision {k}</a>"
                for k in range(1, REVISIONS + 1)
            )
            if n <= RELATED:
                body += f"<a href='/articles/{n + LISTED}'>related</a>"
        elif 1 <= n <= last and len(parts) == 5 and parts[3] == "revisions":
            k = int(parts[4]) if parts[4].isdigit() else 0
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
