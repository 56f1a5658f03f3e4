"""A tracker's chart in many sets of options, on loopback: Redmine's Gantt chart and calendar
(``?month=&year=``, ``?query_id=``, ``?zoom=&months=&month=&year=``, ...). Each set of
parameter names is a URL pattern of its own with a few URLs, too few to be judged alone; every
chart shows rows of issues the lists showed (old text, in a selection of its own: no two charts
alike) and links every other chart. The home page links the chart first, then the issue lists,
so breadth-first the charts and the issues are one level, the charts scheduled first."""

from __future__ import annotations

import random
from itertools import combinations

from minisite import CountingSite, listen
from sortsite import description, issue, tracker_page

ISSUES = 40
PER_LIST = 5
#: the chart's sets of options: pairs of these names, each with VALUES values
NAMES = ("month", "year", "zoom", "months", "query_id", "period")
VALUES = 4
ROWS = 8


def option_sets() -> list[tuple[str, str]]:
    return list(combinations(NAMES, 2))


def charts() -> list[str]:
    """Every chart URL (path and query) the site links."""
    return [f"/chart?{a}={v}&{b}={v + 1}" for a, b in option_sets() for v in range(1, VALUES + 1)]


class ChartSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        lists = ISSUES // PER_LIST
        if base == "/":
            body = "<h1>Tracker</h1><a href='/chart'>Chart</a>" + "".join(
                f"<a href='/issues?page={k}'>Issues, page {k}</a>" for k in range(1, lists + 1)
            )
        elif base == "/issues" and params.get("page", "").isdigit():
            k = int(params["page"])
            body = "<h1>Issues</h1>" + "".join(
                f"<p><a href='/issues/{n}'>{issue(n)['subject']}</a></p>"
                for n in range(PER_LIST * (k - 1) + 1, PER_LIST * k + 1)
            )
        elif base.startswith("/issues/") and base[8:].isdigit() and 1 <= int(base[8:]) <= ISSUES:
            n = int(base[8:])
            body = f"<h1>Issue {n}</h1><h2>{issue(n)['subject']}</h2><p>{description(n)}</p>"
        elif base == "/chart":
            query = "&".join(f"{k}={v}" for k, v in sorted(params.items()))
            rows = random.Random(query).sample(range(1, ISSUES + 1), ROWS)
            body = "<h1>Chart</h1>" + "".join(f"<p>{issue(n)['subject']}</p>" for n in rows)
            body += "".join(f"<a href='{url}'>options</a>" for url in charts())
        else:
            request.setResponseCode(404)
            body = "<h1>Not found</h1>"
        return tracker_page(body)

    def issues_fetched(self) -> list[int]:
        return [int(p[8:]) for p in self.hits if p.startswith("/issues/") and p[8:].isdigit()]


def start() -> tuple[ChartSite, object, str]:
    site = ChartSite()
    return (site, *listen(site))
