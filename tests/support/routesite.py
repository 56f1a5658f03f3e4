"""A small shop on loopback whose products have two paths, the site saying which is canonical.

* ``/``: links each product by its CMS route, ``/index.php?route=product/view&id=N`` (a "new
  products" box that bypasses the shop's SEO URLs), and the category.
* ``/category``: links each product by its pretty URL, ``/product/N``.
* a product, under either path: one text, ``rel=canonical`` to ``/product/N``, and links to its
  two client-side views, ``/product/N?view=gallery`` and ``?view=details`` (the same text).

A product's text is on two paths, as a soft 404's is; the declared canonical says why.
:func:`page_of` says which page a URL shows.
"""

from __future__ import annotations

from minisite import CountingSite, listen

PRODUCTS = 12
VIEWS = ("gallery", "details")


def page_of(path: str, params: dict[str, str]) -> str | None:
    """The page a URL shows (None: not found)."""
    if path == "/index.php" and params.get("route") == "product/view":
        path = f"/product/{params.get('id')}"
    if path.startswith("/product/"):
        n = path.rsplit("/", 1)[1]
        return path if n.isdigit() and 1 <= int(n) <= PRODUCTS else None
    return path if path in ("/", "/category") else None


def _html(title: str, main: str, canonical: str = "") -> bytes:
    link = f"<link rel='canonical' href='{canonical}'>" if canonical else ""
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{link}</head><body>"
        f"<header><a href='/'>Shop</a> <a href='/category'>All products</a></header>"
        f"<main><h1>{title}</h1>{main}</main></body></html>"
    ).encode()


class RouteSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        page = page_of(path, params)
        if page is None:
            request.setResponseCode(404)
            return _html("Not found", "<p>No such page.</p>")
        if page == "/":
            links = "".join(
                f"<a href='/index.php?route=product/view&amp;id={n}'>New: product {n}</a> "
                for n in range(1, PRODUCTS + 1)
            )
            return _html("Shop", links)
        if page == "/category":
            links = "".join(
                f"<a href='/product/{n}'>Product {n}</a> " for n in range(1, PRODUCTS + 1)
            )
            return _html("All products", links)
        n = int(page.rsplit("/", 1)[1])
        views = " ".join(f"<a href='{page}?view={v}'>{v.title()}</a>" for v in VIEWS)
        return _html(
            f"Product {n}",
            f"<p>Product {n} is a kettle of {n + 9} cups, in steel.</p><p>{views}</p>",
            canonical=page,
        )


def start() -> tuple[RouteSite, object, str]:
    site = RouteSite()
    return (site, *listen(site))
