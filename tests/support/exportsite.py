"""A tracker-like site on loopback whose pages mark links ``rel="nofollow"``, as Redmine's do: the
issues (``/issues/<n>``, :data:`ISSUES` of them, all linked from the home page), each with its own
text, and two links of each marked ``nofollow``, its HTML export (``/issues/<n>.html``: no format
extension says it is one) and its "watch" view (``/issues/<n>/watch``), each of text no other
page shows (so that no URL pattern of theirs is judged to bring little new), linked last on the
issue's page (Scrapy's default order, last in first out, takes them first). The home page links
``/about`` twice, once marked ``nofollow`` (its footer) and once not (its menu): not a link the
page marks ``nofollow``."""

from __future__ import annotations

from minisite import CountingSite, listen
from wikisite import article_text

#: the issues: /issues/1 .. /issues/<ISSUES>
ISSUES = 12
#: what each issue links with nofollow, after its path
MARKED = (".html", "/watch")


def issue_pages() -> set[str]:
    return {f"/issues/{n}" for n in range(1, ISSUES + 1)}


def marked_pages() -> set[str]:
    return {f"/issues/{n}{tail}" for n in range(1, ISSUES + 1) for tail in MARKED}


class ExportSite(CountingSite):
    marked = marked_pages()

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, _ = self.count(request)
        if base == "/":
            issues = "".join(f"<a href='/issues/{n}'>Issue {n}</a>" for n in range(1, ISSUES + 1))
            return (
                "<html><body><nav><a href='/about'>About</a></nav><main><h1>Tracker</h1>"
                f"<p>{article_text('tracker home')}</p>{issues}</main>"
                "<footer><a rel='nofollow' href='/about'>about us</a></footer></body></html>"
            ).encode()
        if base == "/about":
            return f"<html><body><p>{article_text('about')}</p></body></html>".encode()
        if base in self.marked:
            return f"<html><body><p>{article_text('marked ' + base)}</p></body></html>".encode()
        if base.startswith("/issues/") and base[8:].isdigit():
            n = int(base[8:])
            marked = "".join(f"<a rel='nofollow' href='{base}{tail}'>{tail}</a>" for tail in MARKED)
            return (
                f"<html><body><main><h1>Issue {n}</h1><p>{article_text(f'issue {n}')}</p>"
                f"</main><p class='other-formats'>Also: {marked}</p></body></html>"
            ).encode()
        request.setResponseCode(404)
        return b"<html><body>not found</body></html>"


def start() -> tuple[ExportSite, object, str]:
    site = ExportSite()
    return (site, *listen(site))
