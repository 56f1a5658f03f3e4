"""A site where a rule is learned while a page is being fetched, and a link met after it names
that page under another spelling (tests/integration/test_frontier_hold.py):

* ``/``: ``/q/N?v=a`` and ``?v=b`` for N in 0..3 (``v`` changes nothing: the learner adopts
  it), ``/item/0?v=a`` (its URL group's first request, which lands at once), ``/hub-a`` and
  ``/hub-b``;
* ``/hub-a`` (answered at once): ``/item/9?v=a``, fetched before ``v`` is learned;
* ``/hub-b`` (answered after :data:`LATE` seconds, once ``v`` is learned): ``/item/9?v=b``, one
  page with ``/item/9?v=a`` under the rule, which its own dupefilter key does not say;
* ``/item/9?v=...``: answered after :data:`SLOW` seconds, so that the link from ``/hub-b``
  leaves the queue while the one from ``/hub-a`` is still being fetched.

``hits`` counts the requests of each URL.
"""

from __future__ import annotations

from twisted.internet import reactor
from twisted.web import server

from minisite import CountingSite, listen

#: seconds before ``/hub-b`` is answered: ``v`` is learned by then (within a tenth of that)
LATE = 1.5
#: seconds before ``/item/9`` is answered: ``/hub-b`` and its link come long before
SLOW = 3.0
EVIDENCE = 4


def html(page_id: str, links: list[str] = ()) -> bytes:  # type: ignore[assignment]
    hrefs = "".join(f"<a href='{h}'>{h}</a>" for h in links)
    return (
        f"<!DOCTYPE html><html><head><title>{page_id}</title></head><body><article>"
        f"<h1>{page_id}</h1><p class='text'>The text of {page_id}, the same whatever its v."
        f"</p></article>{hrefs}</body></html>"
    ).encode()


class InFlightSite(CountingSite):
    def render_GET(self, request):  # type: ignore[no-untyped-def]
        path, _ = self.count(request)
        if path == "/":
            links = [f"/q/{n}?v={v}" for n in range(EVIDENCE) for v in "ab"]
            body = html("home", [*links, "/item/0?v=a", "/hub-a", "/hub-b"])
        elif path in ("/hub-a", "/hub-b"):
            body = html(path, [f"/item/9?v={path[-1]}"])
        elif path.startswith(("/q/", "/item/")):
            body = html(path)
        else:
            request.setResponseCode(404)
            return b"not found"
        delay = LATE if path == "/hub-b" else SLOW if path == "/item/9" else 0.0
        if not delay:
            return body

        def answer() -> None:
            request.write(body)
            request.finish()

        reactor.callLater(delay, answer)
        return server.NOT_DONE_YET


def start() -> tuple[InFlightSite, object, str]:
    site = InFlightSite()
    port, base = listen(site)
    return site, port, base
