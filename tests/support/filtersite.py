"""A tracker-like site on loopback whose filtered lists are nearly alike: ``/issues?filter=<k>``
(:data:`FILTERS` of them) each show the same rows of the open issues, and every
:data:`SPARSE`-th shows one row more, a closed issue (``/closed/<k>``) that no other page links.
The home page links the open issues' list, then the filtered lists.

A list with one more row is a near-duplicate of the others (its text is theirs and one line), and
the others are one text under :data:`FILTERS` values of ``filter``: the evidence of a rule that
``filter`` does not matter on ``/issues``, under which the closed issues behind the lists not
fetched yet would never be found. Every list links its rows (the open issues' list is the
filtered lists' text and links: a duplicate page, whose links the others give too)."""

from __future__ import annotations

from minisite import CountingSite, listen
from sortsite import description, issue, tracker_page

OPEN = 12
FILTERS = 40
SPARSE = 8


def closed_pages() -> set[str]:
    return {f"/closed/{k}" for k in range(0, FILTERS, SPARSE)}


class FilterSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        # the open issues' rows, as every list shows them
        rows = "".join(
            f"<p><a href='/issues/{n}'>{issue(n)['subject']}</a></p>" for n in range(1, OPEN + 1)
        )
        if base == "/":
            body = "<h1>Tracker</h1><a href='/issues'>Issues</a>" + "".join(
                f"<a href='/issues?filter={k}'>Filter {k}</a>" for k in range(FILTERS)
            )
        elif base == "/issues" and not params:
            body = f"<h1>Issues</h1>{rows}"
        elif base == "/issues" and params.get("filter", "").isdigit():
            k = int(params["filter"])
            body = f"<h1>Issues</h1>{rows}"
            if k % SPARSE == 0:
                body += f"<p><a href='/closed/{k}'>{issue(1000 + k)['subject']}</a></p>"
        elif base.startswith("/issues/") and base[8:].isdigit() and int(base[8:]) <= OPEN:
            n = int(base[8:])
            body = f"<h1>Issue {n}</h1><h2>{issue(n)['subject']}</h2><p>{description(n)}</p>"
        elif base.startswith("/closed/") and base[8:].isdigit():
            k = int(base[8:])
            body = f"<h1>Closed issue {k}</h1><p>{description(1000 + k)}</p>"
        else:
            request.setResponseCode(404)
            body = "<h1>Not found</h1>"
        return tracker_page(body)


def start() -> tuple[FilterSite, object, str]:
    site = FilterSite()
    return (site, *listen(site))
