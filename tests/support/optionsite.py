"""A catalogue on loopback whose every item page links four views of itself that show the same
text (``?view=a`` .. ``?view=d``: a parameter that does not matter) and two parts of itself that
do not (``?part=2``, ``?part=3``: their own texts), as a shop links its gallery and details views.
The home page links every item ``/item/<n>`` (:data:`ITEMS` of them): in Scrapy's default order
the items wait in the queue while the views of one are fetched."""

from __future__ import annotations

from minisite import CountingSite, listen
from wikisite import article_text

ITEMS = 16
VIEWS = ("a", "b", "c", "d")
PARTS = (2, 3)


def distinct_pages() -> set[str]:
    """The paths of the pages with a text of their own."""
    items = {f"/item/{n}" for n in range(ITEMS)}
    return {"/"} | items | {f"{i}?part={p}" for i in items for p in PARTS}


class OptionSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            return self._page("Home", article_text("home"), [f"/item/{n}" for n in range(ITEMS)])
        if base.startswith("/item/"):
            n = int(base[6:])
            part = params.get("part", "1")
            links = [f"{base}?view={v}" for v in VIEWS] + [f"{base}?part={p}" for p in PARTS]
            return self._page(
                f"Item {n}, part {part}", article_text(f"item {n} part {part}"), links
            )
        request.setResponseCode(404)
        return b"<html><body>not found</body></html>"

    @staticmethod
    def _page(title: str, text: str, links: list[str]) -> bytes:
        anchors = "".join(f"<a href='{u}'>{u}</a>" for u in links)
        return (
            f"<html><head><title>{title}</title></head><body><main><article><h1>{title}</h1>"
            f"<p class='text'>{text}</p></article>{anchors}</main></body></html>"
        ).encode()


def start() -> tuple[OptionSite, object, str]:
    site = OptionSite()
    return (site, *listen(site))
