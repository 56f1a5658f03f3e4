"""A small shop on loopback whose lists have two page sizes: the same list under two pagers, and
short pages that differ only in a number and are distinct pages.

* ``/category/C?limit=24&page=P``: a category's products, 12 a page unless ``limit=24``. With
  25 products, ``?page=3`` and ``?limit=24&page=2`` both show the 25th alone: "Showing 25 to 25
  of 25 (3 pages)" against "(2 pages)", and a pager of three links against two. One list.
* ``/product/N``: a product of one line; two of them differ only in a number ("1.7 litres",
  "1.8 litres"). Two pages.
* ``/photo?n=K``: a gallery's photos, "Photo K of 6" and a pager to the others on the same path,
  each with its own image. Six pages.
* ``/archive/a`` and ``/archive/b``: one long introduction above two lists of notes that differ
  in one row (notes 1-12, and 1-11 and 14): 2 bits apart, as close as a view of one page, but
  two lists. ``/note/N``: a note.

:func:`page_of` says which page a URL shows (a list's products in order, a product, a photo).
"""

from __future__ import annotations

from minisite import CountingSite, listen

#: products per category: 25 makes the last product a list of its own under both page sizes
CATEGORIES = {1: 25, 2: 7}
PHOTOS = 6
WORDS = (
    "the archive keeps every note we wrote about the garden the orchard and the bees through "
    "the seasons of the year"
).split()
INTRO = " ".join(WORDS[(i * 7) % len(WORDS)] + ("." if i % 9 == 8 else "") for i in range(260))
ARCHIVES = {"a": list(range(1, 13)), "b": [*range(1, 12), 14]}


def _products(category: int) -> list[int]:
    return [category * 100 + k for k in range(1, CATEGORIES[category] + 1)]


def _name(product: int) -> str:
    # the first two products differ only in a number, and so does their one-line text
    return {101: "Steel kettle", 102: "Steel kettle"}.get(product, f"Kettle model {product}")


def _line(product: int) -> str:
    return {101: "Steel, 1.7 litres.", 102: "Steel, 1.8 litres."}.get(
        product, f"Kettle number {product}."
    )


def _query(limit: int, page: int) -> str:
    params = [f"limit={limit}"] if limit != 12 else []
    params += [f"page={page}"] if page != 1 else []
    return "?" + "&".join(params) if params else ""


def _html(title: str, main: str) -> bytes:
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        f"<header><a href='/'>Shop</a></header><main><h1>{title}</h1>{main}</main></body></html>"
    ).encode()


def page_of(path: str, params: dict[str, str]) -> str | None:
    """The page a URL shows (None: not found)."""
    if path.startswith("/category/"):
        category = int(path.rsplit("/", 1)[1])
        limit, page = int(params.get("limit", 12)), int(params.get("page", 1))
        shown = _products(category)[(page - 1) * limit : page * limit]
        return f"list {shown}" if shown else None
    if path.startswith("/product/"):
        return path
    if path == "/photo":
        return f"photo {params.get('n')}"
    if path.startswith(("/archive/", "/note/")):
        return path
    return "home" if path == "/" else None


def archive(name: str) -> bytes:
    """The archive ``name`` (``a`` or ``b``): one introduction, a list of notes."""
    rows = "".join(
        f"<li><a href='/note/{r}'>Note {r}: the {WORDS[r % len(WORDS)]} in spring</a></li>"
        for r in ARCHIVES[name]
    )
    return _html("Archive", f"<p>{INTRO}</p><ul>{rows}</ul>")


class ListSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        if page_of(path, params) is None:
            request.setResponseCode(404)
            return _html("Not found", "<p>No such page.</p>")
        if path == "/":
            links = "".join(f"<a href='/category/{c}'>Category {c}</a> " for c in CATEGORIES)
            links += "".join(f"<a href='/archive/{a}'>Archive {a}</a> " for a in ARCHIVES)
            return _html("Shop", links + "<a href='/photo?n=1'>Gallery</a>")
        if path.startswith("/archive/"):
            return archive(path.rsplit("/", 1)[1])
        if path.startswith("/note/"):
            return _html("Note", f"<p>Note {path.rsplit('/', 1)[1]}, a line of its own.</p>")
        if path.startswith("/product/"):
            product = int(path.rsplit("/", 1)[1])
            return _html(_name(product), f"<p>{_line(product)}</p>")
        if path == "/photo":
            n = int(params["n"])
            pager = " ".join(f"<a href='/photo?n={k}'>{k}</a>" for k in range(1, PHOTOS + 1))
            return _html(
                "Gallery",
                f"<img src='/img/{n}.jpg' alt=''><p>Photo {n} of {PHOTOS}</p><p>{pager}</p>",
            )
        category = int(path.rsplit("/", 1)[1])
        limit, page = int(params.get("limit", 12)), int(params.get("page", 1))
        products = _products(category)
        shown = products[(page - 1) * limit : page * limit]
        pages = -(-len(products) // limit)
        first = (page - 1) * limit
        rows = "".join(
            f"<li><a href='/product/{p}'>{_name(p)}</a>: {p % 90 + 10}.00 EUR</li>" for p in shown
        )
        here = f"/category/{category}"
        sizes = " ".join(f"<a href='{here}{_query(size, 1)}'>Show {size}</a>" for size in (12, 24))
        pager = " ".join(f"<a href='{here}{_query(limit, n)}'>{n}</a>" for n in range(1, pages + 1))
        return _html(
            f"Category {category}",
            f"<p>Showing {first + 1} to {first + len(shown)} of {len(products)} ({pages} pages)"
            f"</p><ul>{rows}</ul><p>{sizes}</p><p>{pager}</p>",
        )


def start() -> tuple[ListSite, object, str]:
    site = ListSite()
    return (site, *listen(site))
