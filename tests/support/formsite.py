"""A small shop whose pages declare their canonical URL, linked in two URL forms: what a form rule
learns from (tests/integration/test_url_forms.py).

* ``/cat/<c>/`` lists its products twice: by their pretty URL ``/product/<slug>/`` and by the
  category path form ``/shop/<c>/<slug>/`` (the same page, declaring the pretty URL canonical);
* ``/cat/<c>/?color=red`` filters a category by colour. The first ``WHOLE`` categories hold red
  products only, so the filter shows the category itself, and declares it canonical; the others
  are mixed, and their red list is a page of its own (declaring itself: the site never lies).
  A form ``/cat/{c}?color=red`` -> ``/cat/{c}`` learned from the first is wrong for the rest.

``page_of(path, params)`` is the page a URL shows (None: a 404): what a crawl is scored on.
"""

from __future__ import annotations

from minisite import CountingSite, declared_page, listen

CATEGORIES = 9
PRODUCTS = 10  # per category
#: categories whose products are all red: their red filter is the category itself
WHOLE = 7
_WORDS = "oak pine elm ash birch maple cedar walnut cherry beech".split()


def slug(c: int, n: int) -> str:
    return f"{_WORDS[c]}-item-{n}"


def color(c: int, n: int) -> str:
    return "red" if c < WHOLE or n % 2 == 0 else "blue"


def page_of(path: str, params: dict[str, str]) -> str | None:
    """The page of a URL: ``/``, ``/cat/<c>/`` (or its red list ``/cat/<c>/red``), or
    ``/product/<slug>/``; None for any other URL."""
    parts = path.strip("/").split("/")
    if path == "/" and not params:
        return "/"
    if parts[0] == "cat" and len(parts) == 2 and parts[1].isdigit() and int(parts[1]) < CATEGORIES:
        c = int(parts[1])
        if not params:
            return f"/cat/{c}/"
        if params == {"color": "red"}:
            return f"/cat/{c}/" if c < WHOLE else f"/cat/{c}/red"
        return None
    if params:
        return None
    slugs = {slug(c, n) for c in range(CATEGORIES) for n in range(PRODUCTS)}
    if parts[0] == "product" and len(parts) == 2 and parts[1] in slugs:
        return f"/product/{parts[1]}/"
    if parts[0] == "shop" and len(parts) == 3 and parts[2] in slugs:
        c = next(c for c in range(CATEGORIES) if parts[2].startswith(_WORDS[c] + "-"))
        if parts[1] == str(c):
            return f"/product/{parts[2]}/"
    return None


class FormSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, params = self.count(request)
        page = page_of(path, params)
        if page is None:
            request.setResponseCode(404)
            return declared_page("Not found", "<p>No such page.</p>")
        if page == "/":
            links = "".join(f"<a href='/cat/{c}/'>Category {c}</a> " for c in range(CATEGORIES))
            return declared_page("Home", f"<p>Our categories.</p>{links}")
        if page.startswith("/product/"):
            s = page.split("/")[2]
            c, n = next(
                (c, n) for c in range(CATEGORIES) for n in range(PRODUCTS) if slug(c, n) == s
            )
            text = f"<p>The {s.replace('-', ' ')}, {color(c, n)}, from category {c}.</p>"
            return declared_page(f"Product {s}", text, canonical=page)
        c = int(page.split("/")[2])
        red = page.endswith("/red")
        shown = [n for n in range(PRODUCTS) if not red or color(c, n) == "red"]
        rows = "".join(
            f"<li><a href='/product/{slug(c, n)}/'>{slug(c, n)}</a> "
            f"<a href='/shop/{c}/{slug(c, n)}/'>(in category {c})</a></li>"
            for n in shown
        )
        canonical = f"/cat/{c}/?color=red" if red else f"/cat/{c}/"
        links = f"<a href='/cat/{c}/?color=red'>Red only</a>"
        return declared_page(f"Category {c}", f"<ul>{rows}</ul>{links}", canonical=canonical)


def start() -> tuple[FormSite, object, str]:
    site = FormSite()
    return (site, *listen(site))
