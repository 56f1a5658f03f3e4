"""Issues with tab views, on loopback: the other trap of an issue tracker (Redmine's
``?tab=notes|history``, GitHub's ``?tab=`` and ``/files``). Each issue page shows its
description and notes and links two tab views, new pages of its old text (the notes alone, the
notes with the property changes), and the first issues link a related issue that no list
shows. Breadth-first, the related issues and the tab views are one level: scheduled together,
before any tab view was fetched."""

from __future__ import annotations

from minisite import CountingSite, listen
from sortsite import description, issue, sentence, tracker_page

LISTED = 20
RELATED = 10


def notes(n: int) -> list[str]:
    return [f"Note {k}: {sentence(n * 100 + 50 + k)}" for k in range(1, 4)]


class TabSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        last = LISTED + RELATED
        if base == "/":
            body = "<h1>Tracker</h1>" + "".join(
                f"<p><a href='/issues/{n}'>{issue(n)['subject']}</a></p>"
                for n in range(1, LISTED + 1)
            )
        elif base.startswith("/issues/") and base[8:].isdigit() and 1 <= int(base[8:]) <= last:
            n = int(base[8:])
            said = "".join(f"<p>{note}</p>" for note in notes(n))
            changes = f"<p>Status changed: {sentence(n * 100 + 90)}</p>"
            tab = params.get("tab")
            if tab == "notes":
                body = f"<h1>Issue {n}</h1>{said}"
            elif tab == "history":
                body = f"<h1>Issue {n}</h1>{said}{changes}"
            else:
                body = (
                    f"<h1>Issue {n}</h1><h2>{issue(n)['subject']}</h2><p>{description(n)}</p>"
                    f"{said}{changes}"
                )
            body += f"<a href='/issues/{n}?tab=notes'>Notes</a>"
            body += f"<a href='/issues/{n}?tab=history'>History</a>"
            if n <= RELATED:
                body += f"<a href='/issues/{n + LISTED}'>related</a>"
        else:
            request.setResponseCode(404)
            body = "<h1>Not found</h1>"
        return tracker_page(body)


def start() -> tuple[TabSite, object, str]:
    site = TabSite()
    return (site, *listen(site))
