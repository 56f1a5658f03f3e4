"""A site on loopback whose every page links a log-in page, as a wiki's pages do: the real pages
(``/p/<n>``, a chain of :data:`PAGES`: one deeper than the other), each with its own text, and a log-in page behind
each of them (``/login?returnto=...``) that is nearly the same on every URL (only the "return
to" line outside its ``<main>`` changes) and links one more log-in page, up to :data:`CHAIN`
deep. Scrapy's default order (last in, first out) takes the log-in link of each page first (it
is the page's last link) and digs its chain before the next real page; breadth-first, each
level of real pages comes after the log-in pages of the levels above it."""

from __future__ import annotations

from urllib.parse import quote

from minisite import CountingSite, listen
from wikisite import article_text

#: the real pages: /p/0 .. /p/<PAGES - 1>, /p/<n> links /p/<n + 1>
PAGES = 15
#: log-in pages behind each real page, one linking the next
CHAIN = 6

LOGIN_TEXT = article_text("log in")


def real_pages() -> set[str]:
    return {f"/p/{n}" for n in range(PAGES)}


class LoginSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            return self._page("Home", article_text("home"), ["/p/0"], "/")
        if base.startswith("/p/"):
            n = int(base[3:])
            children = [f"/p/{n + 1}"] if n + 1 < PAGES else []
            return self._page(f"Page {n}", article_text(f"page {n}"), children, base)
        if base == "/login":
            back = params.get("returnto", "")
            step = back.count(".")
            more = [f"/login?returnto={back}.{step + 1}"] if step < CHAIN - 1 else []
            return (
                f"<html><body><header>Return to {back}</header><main><h1>Log in</h1><p>{LOGIN_TEXT}</p>"
                f"</main>{''.join(f'<a href={u!r}>more</a>' for u in more)}</body></html>"
            ).encode()
        request.setResponseCode(404)
        return b"<html><body>not found</body></html>"

    @staticmethod
    def _page(title: str, text: str, links: list[str], path: str) -> bytes:
        anchors = "".join(f"<a href='{u}'>{u}</a>" for u in links)
        login = f"<a href='/login?returnto={quote(path.strip('/').replace('/', '-') or 'home')}'>log in</a>"
        return (
            f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p>"
            f"{anchors}</main><footer>{login}</footer></body></html>"
        ).encode()


def start() -> tuple[LoginSite, object, str]:
    site = LoginSite()
    return (site, *listen(site))
