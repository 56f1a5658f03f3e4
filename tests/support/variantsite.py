"""A site where a parameter does not matter on some pages and matters on others: ``/`` links
``/a/N?v=a`` and ``?v=b`` (``v`` changes nothing there: the learner adopts "``v`` does not
matter"), then ``/e/N`` in the spellings ``e_queries`` (by default ``?v=x`` and ``?v=y``), where
``v`` shows another text: the rule's probation must revoke it there."""

from __future__ import annotations

import minisite


class VariantSite(minisite.CountingSite):
    def __init__(self, pages: int = 3, e_queries: tuple[str, ...] = ("?v=x", "?v=y")) -> None:
        super().__init__()
        self.pages = pages
        self.e_queries = e_queries

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            links = [f"/a/{n}?v={v}" for n in range(self.pages) for v in "ab"]
            links += [f"/e/{n}{q}" for n in range(self.pages) for q in self.e_queries]
            body = "".join(f"<a href='{h}'>{h}</a>" for h in links)
            return minisite.page("home", "<p>Welcome home</p>" + body)
        text = f"page {base}" + (f" variant {params.get('v')}" if base.startswith("/e/") else "")
        return minisite.page(
            text, minisite.ARTICLE.format(t=text, x=f"The text of {text}, long enough to sign.")
        )
