"""An issue list whose column headers sort it, on loopback: the trap of an issue tracker
(Redmine, Trac, Bugzilla). A header link puts its column first in the current order, so the
orders are every sequence of up to three of the six columns (156 lists), each a new page of
old text: the same rows in another order. Each row links its issue, a page of text of its own.
In link order the issue links come first and the header links last, so Scrapy's default order
(last in, first out) walks the orders before the issues."""

from __future__ import annotations

import random
from itertools import permutations

from minisite import CountingSite, listen

ISSUES = 30
COLUMNS = ("id", "tracker", "status", "priority", "subject", "assignee")
TRACKERS = ("Bug", "Feature", "Support")
STATUSES = ("New", "In progress", "Resolved", "Closed")
PRIORITIES = ("Low", "Normal", "High", "Urgent")
PEOPLE = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov")
WORDS = (
    "parser crashes when the configuration file holds a tab character after a key name",
    "export to spreadsheet loses the dates of tasks created before the migration",
    "search results page ignores the project filter when a tag is selected too",
    "upload of large attachments times out behind the reverse proxy we run",
    "calendar view shows recurring meetings twice in the week after a holiday",
    "password reset mail links to the staging host instead of production",
)


def orders() -> list[tuple[str, ...]]:
    """Every sort order a crawler can reach: sequences of up to three distinct columns."""
    return [o for n in (1, 2, 3) for o in permutations(COLUMNS, n)]


def issue(n: int) -> dict[str, str]:
    return {
        "id": str(n),
        "tracker": TRACKERS[n % 3],
        "status": STATUSES[n % 4],
        "priority": PRIORITIES[(n * 7) % 4],
        "subject": f"Issue {n}: {WORDS[n % len(WORDS)]} (report {n * 37 % 101})",
        "assignee": PEOPLE[n % len(PEOPLE)],
    }


#: words of the issues' texts: each issue's own sequence of them (pages that differ only in
#: their numbers are near-duplicates: docs/near_duplicates.md)
VOCABULARY = (
    "cache server client timeout header cookie session token upload download mirror queue "
    "worker thread lock index table column migration schema backup restore release branch "
    "commit merge review patch build test fixture log trace stack memory disk network proxy "
    "certificate domain route handler template widget button dialog menu sidebar footer"
).split()


def sentence(seed: int, words: int = 12) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCABULARY) for _ in range(words)).capitalize() + "."


def description(n: int) -> str:
    return " ".join(sentence(n * 100 + k) for k in range(4))


class SortSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            body = "<h1>Tracker</h1><a href='/issues?sort=id'>Issues</a>"
        elif base == "/issues":
            keys = [k for k in params.get("sort", "id").split("%2C") if k in COLUMNS][:3]
            rows = sorted(
                (issue(n) for n in range(1, ISSUES + 1)), key=lambda i: [i[k] for k in keys]
            )
            body = "<h1>Issues</h1><table>" + "".join(
                "<tr>"
                + "".join(f"<td>{row[c]}</td>" for c in COLUMNS[1:])
                + f"<td><a href='/issues/{row['id']}'>#{row['id']}</a></td></tr>"
                for row in rows
            )
            headers = "".join(
                f"<a href='/issues?sort={'%2C'.join([c, *[k for k in keys if k != c]][:3])}'>{c}</a>"
                for c in COLUMNS
            )
            body += f"</table><p>{headers}</p>"
        elif base.startswith("/issues/") and base[8:].isdigit() and 1 <= int(base[8:]) <= ISSUES:
            n = int(base[8:])
            i = issue(n)
            body = (
                f"<h1>{i['tracker']} #{n}</h1><h2>{i['subject']}</h2>"
                f"<p>{description(n)}</p><a href='/issues?sort=id'>all issues</a>"
            )
        else:
            request.setResponseCode(404)
            body = "<h1>Not found</h1>"
        return tracker_page(body)

    def issues_fetched(self) -> list[int]:
        """The issues fetched, in the order of their first fetch."""
        return [
            int(path[8:])
            for path in self.hits
            if path.startswith("/issues/") and path[8:].isdigit()
        ]


def tracker_page(body: str) -> bytes:
    """A page of the tracker: ``body`` and the footer every page shows."""
    return (
        "<!DOCTYPE html><html><head><title>t</title></head><body>"
        f"{body}<footer>Powered by a tracker of issues, version 5.0 (c) its authors</footer>"
        "</body></html>"
    ).encode()


def start() -> tuple[SortSite, object, str]:
    site = SortSite()
    return (site, *listen(site))
