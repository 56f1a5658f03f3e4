"""A calendar chain among penalised pages, on loopback: the Gantt trap of an issue tracker
(Redmine's ``/issues/gantt?month=&year=&zoom=``). :data:`TOPICS` topics, each with a page of its
own (``/topics/<t>``) that links its archive (``/archive/<t>``: the topic's text again, old text)
and its month of a calendar (``/calendar?month=<t>&zoom=1``). Every :data:`POST_EVERY`-th
archive also links a post that nothing else links (``/posts/<t>``, new content): archives lead
to new pages too seldom to be worth their place, and are pushed back with the calendar.

The calendar has no events: every period shows one text, and links the periods before and after
it at each of :data:`ZOOMS` zooms, :data:`MONTHS` months each way. In Scrapy's default order
(last in, first out) the newest penalised request is a calendar period's neighbour, each
response adds more, and the posts behind the archives wait for the calendar's end."""

from __future__ import annotations

from minisite import CountingSite, listen
from sortsite import description, tracker_page

TOPICS = 24
POST_EVERY = 6
ZOOMS = 4
MONTHS = 120


def posts() -> set[str]:
    return {f"/posts/{t}" for t in range(TOPICS) if t % POST_EVERY == 0}


def periods() -> int:
    """The calendar's URLs: every month of the range, at every zoom."""
    return (2 * MONTHS + 1) * ZOOMS


class ChainSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        parts = base.strip("/").split("/")
        number = int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else -1
        if base == "/":
            body = "<h1>Topics</h1>" + "".join(
                f"<p><a href='/topics/{t}'>Topic {t}</a></p>" for t in range(TOPICS)
            )
        elif parts[0] == "topics" and 0 <= number < TOPICS:
            body = (
                f"<h1>Topic {number}</h1><p>{description(300 + number)}</p>"
                f"<p><a href='/archive/{number}'>Archive</a></p>"
                f"<p><a href='/calendar?month={number}&zoom=1'>Calendar</a></p>"
            )
        elif parts[0] == "archive" and 0 <= number < TOPICS:
            body = f"<h1>Topic {number}</h1><p>{description(300 + number)}</p>"
            if number % POST_EVERY == 0:
                body += f"<p><a href='/posts/{number}'>An older post</a></p>"
        elif parts[0] == "posts" and 0 <= number < TOPICS and number % POST_EVERY == 0:
            body = f"<h1>Post {number}</h1><p>{description(700 + number)}</p>"
        elif base == "/calendar" and _period(params) is not None:
            month, _ = _period(params)  # type: ignore[misc]
            links = "".join(
                f"<a href='/calendar?month={m}&zoom={z}'>{m} at zoom {z}</a> "
                for m in (month - 1, month + 1)
                if abs(m) <= MONTHS
                for z in range(1, ZOOMS + 1)
            )
            body = f"<h1>Calendar</h1><p>No events in this period.</p><nav>{links}</nav>"
        else:
            request.setResponseCode(404)
            body = "<h1>Not found</h1>"
        return tracker_page(body)


def _period(params: dict[str, str]) -> tuple[int, int] | None:
    try:
        month, zoom = int(params["month"]), int(params["zoom"])
    except (KeyError, ValueError):
        return None
    return (month, zoom) if abs(month) <= MONTHS and 1 <= zoom <= ZOOMS else None


def start() -> tuple[ChainSite, object, str]:
    site = ChainSite()
    return (site, *listen(site))
