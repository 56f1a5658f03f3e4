"""A tracker-like site on loopback whose issue lists have a text-only view, as a print or
screen-reader view does: :data:`PROJECTS` projects, each with a page (``/projects/<p>``) that
links its list's text view (``/projects/<p>/issues?format=text``) before its list
(``/projects/<p>/issues``), and :data:`ISSUES` issues (``/projects/<p>/issues/<n>``) that only
the list links. The text view shows the list's rows as text, not as links: the two have one body
text, so whichever is fetched second is a duplicate page. Fetched first (breadth-first order),
the text view makes the list a duplicate page whose links lead where no other page does.

Beside them, a calendar (``/calendar?month=<m>``, :data:`MONTHS` months each way from the home
page's) whose months are all empty: one body text, each month linking the next and the one
before, as an events calendar does far into the future. Its months are duplicate pages too,
whose links lead to other queries of the same path. And another whose months are paths
(``/events/<m>/``): its duplicates link other paths, as a list's rows would. And a list of
partners with its text view, whose rows are another site's pages (``localhost``). And a list of
reports (``/reports``) linking its two-column view (``?columns=2``), whose rows are the same
reports spelled with a trailing slash: a duplicate page whose rows are other as written and
were all requested."""

from __future__ import annotations

from minisite import CountingSite, listen
from sortsite import description, issue, tracker_page

PROJECTS = 12
ISSUES = 3
MONTHS = 200
REPORTS = 3


def issue_pages() -> set[str]:
    return {f"/projects/{p}/issues/{n}" for p in range(PROJECTS) for n in range(1, ISSUES + 1)}


def partner_pages() -> set[str]:
    return {f"/partner/{n}" for n in range(1, 4)}


class TextViewSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        parts = base.strip("/").split("/")
        project = parts[1] if len(parts) > 1 and parts[0] == "projects" else ""
        if base == "/":
            body = (
                "<h1>Tracker</h1>"
                + "".join(
                    f"<p><a href='/projects/{p}'>Project {p}</a></p>" for p in range(PROJECTS)
                )
                + "<p><a href='/calendar?month=0'>Calendar</a></p>"
                + "<p><a href='/events/0/'>Events</a></p>"
                + "<p><a href='/partners?format=text'>Partners (text)</a></p>"
                + "<p><a href='/partners'>Partners</a></p>"
                + "<p><a href='/reports'>Reports</a></p>"
            )
        elif base == "/reports" and params in ({}, {"columns": "2"}):
            # the two-column view spells its rows' links with a trailing slash: other rows as
            # written, the same pages, all requested once the list was parsed (it links it)
            slash, more = (
                ("/", "<p>Two columns</p>")
                if params
                else ("", "<p><a href='/reports?columns=2'>Two columns</a></p>")
            )
            rows = [
                f"<p><a href='/reports/{n}{slash}'>Report {n}: {description(900 + n)}</a></p>"
                for n in range(1, REPORTS + 1)
            ]
            body = f"<h1>Reports</h1>{''.join(rows)}{more}"
        elif base.rstrip("/").startswith("/reports/") and base.rstrip("/")[9:].isdigit():
            n = int(base.rstrip("/")[9:])
            body = f"<h1>Report {n}</h1><p>{description(950 + n)}</p>" if n <= REPORTS else ""
        elif base == "/partners" and params in ({}, {"format": "text"}):
            # the same view of a list whose rows are another site's pages (localhost: this
            # server under another name, no network)
            names = [f"Partner {n}" for n in range(1, 4)]
            port = request.getHost().port
            rows = (
                [f"<p>{name}</p>" for name in names]
                if params
                else [
                    f"<p><a href='http://localhost:{port}/partner/{n}'>{name}</a></p>"
                    for n, name in enumerate(names, 1)
                ]
            )
            body = f"<h1>Our partners</h1>{''.join(rows)}"
        elif base.startswith("/partner/") and base[9:].isdigit():
            body = f"<h1>Partner {base[9:]}</h1><p>{description(500 + int(base[9:]))}</p>"
        elif base.startswith("/events/") and base[8:].strip("/").lstrip("-").isdigit():
            month = int(base[8:].strip("/"))
            if abs(month) > MONTHS:
                body = ""
            else:
                body = (
                    "<h1>Upcoming events</h1><p>Nothing planned yet.</p>"
                    f"<p><a href='/events/{month - 1}/'>Previous month</a> "
                    f"<a href='/events/{month + 1}/'>Next month</a></p>"
                )
        elif base == "/calendar" and params.get("month", "").lstrip("-").isdigit():
            month = int(params["month"])
            if abs(month) > MONTHS:
                body = ""
            else:
                body = (
                    "<h1>Events</h1><p>No events this month.</p>"
                    f"<p><a href='/calendar?month={month - 1}'>Previous month</a> "
                    f"<a href='/calendar?month={month + 1}'>Next month</a></p>"
                )
        elif not project.isdigit() or int(project) >= PROJECTS:
            body = ""
        elif len(parts) == 2:
            body = (
                f"<h1>Project {project}</h1><p>{description(int(project))}</p>"
                f"<p><a href='/projects/{project}/issues?format=text'>Issues (text)</a></p>"
                f"<p><a href='/projects/{project}/issues'>Issues</a></p>"
            )
        elif len(parts) == 3 and parts[2] == "issues" and params in ({}, {"format": "text"}):
            rows = []
            for n in range(1, ISSUES + 1):
                subject = issue(100 * int(project) + n)["subject"]
                link = f"/projects/{project}/issues/{n}"
                rows.append(
                    f"<p>{subject}</p>" if params else f"<p><a href='{link}'>{subject}</a></p>"
                )
            body = f"<h1>Issues of project {project}</h1>{''.join(rows)}"
        elif len(parts) == 4 and parts[2] == "issues" and parts[3].isdigit():
            n = 100 * int(project) + int(parts[3])
            body = f"<h1>Issue {n}</h1><h2>{issue(n)['subject']}</h2><p>{description(n)}</p>"
        else:
            body = ""
        if not body:
            request.setResponseCode(404)
            body = "<h1>Not found</h1>"
        return tracker_page(body)


def start() -> tuple[TextViewSite, object, str]:
    site = TextViewSite()
    return (site, *listen(site))
