"""A site for probation across kills and processes, served in its own process so a test can kill
the crawler and keep the server (``python probation_site.py GATE LOG [--hold TEXT]...``).

* ``/``: ``/a/N?v=a`` and ``?v=b`` for N in 0..3 (``v`` changes nothing there: the learner
  adopts it) and ``/next``;
* ``/next``: ``/b/N?v=x`` for N in 0..4 and ``/last``; on ``/b/`` pages ``v`` matters (unless
  ``--same-b``: then it does not, and the rule is confirmed);
* ``/last``: ``/b/N?v=y`` and ``?v=z``: merged by the rule, on probation: ``v=y`` are its samples
  (one per path), ``v=z`` are kept;
* ``/sa`` and ``/sb``: ``/c/N?v=a`` (resp. ``?v=b``) for N in 0..7: one page each, two spellings;
  ``/sab``: both, ``?v=a`` first.
* ``/few/K`` (a rule that gets few samples): ``/a/N?v=a`` and ``?v=b`` as on ``/``, then
  ``/few/K/next``: ``/few/K/last`` first, then ``/d/N?v=x`` for N < K and ``/few/K/end`` (a
  page to hold once the ``/d/`` pages are fetched); ``/few/K/last``:
  ``/d/N?v=y``, linked before the pages they are merged into are fetched, so the rule ``v``
  keeps them and samples none. On ``/d/`` pages ``v`` matters (unless
  ``--same-d``).

Requests whose URI holds one of the ``--hold`` texts are answered only once the file ``GATE``
exists (a sample held while the crawler is killed). Every request is written to ``LOG`` as
``received <uri>`` and, once its response is written to an open connection, ``answered <uri>``:
the ground truth of what the crawls fetched. The first line on stdout is ``{"base": URL}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from twisted.internet import reactor
from twisted.web import resource, server

A_PAGES, B_PAGES, C_PAGES = 4, 5, 8


def html(page_id: str, links: list[str] = ()) -> bytes:  # type: ignore[assignment]
    hrefs = "".join(f"<a href='{h}'>{h}</a>" for h in links)
    return (
        f"<!DOCTYPE html><html><head><title>{page_id}</title></head><body><article><h1>{page_id}</h1>"
        f"<p class='text'>The text of {page_id}.</p></article>{hrefs}</body></html>"
    ).encode()


class ProbationSite(resource.Resource):
    isLeaf = True

    def __init__(
        self, gate: str, log: str, hold: list[str], same_b: bool, same_d: bool = False
    ) -> None:
        super().__init__()
        self.gate, self.hold, self.same_b, self.same_d = gate, hold, same_b, same_d
        self.log = open(log, "a", buffering=1)  # noqa: SIM115

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        uri = request.uri.decode()
        self.log.write(f"received {uri}\n")
        body = self.page(uri)
        if body is None:
            request.setResponseCode(404)
            return b"not found"
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def answer() -> None:
            if gone:
                return  # the crawler was killed while it waited
            if any(h in uri for h in self.hold) and not os.path.exists(self.gate):
                reactor.callLater(0.05, answer)
                return
            request.write(body)
            request.finish()
            self.log.write(f"answered {uri}\n")

        answer()
        return server.NOT_DONE_YET

    def page(self, uri: str) -> bytes | None:
        path, _, query = uri.partition("?")
        v = dict(p.partition("=")[::2] for p in query.split("&") if p).get("v", "")
        parts = path.strip("/").split("/")
        if path == "/":
            return html("home", [f"/a/{i}?v={x}" for i in range(A_PAGES) for x in "ab"] + ["/next"])
        if path == "/next":
            return html("next", [f"/b/{i}?v=x" for i in range(B_PAGES)] + ["/last"])
        if path == "/last":
            return html("last", [f"/b/{i}?v={x}" for i in range(B_PAGES) for x in "yz"])
        if path in ("/sa", "/sb"):
            return html(path[1:], [f"/c/{i}?v={path[2]}" for i in range(C_PAGES)])
        if path == "/sab":
            return html("sab", [f"/c/{i}?v={x}" for x in "ab" for i in range(C_PAGES)])
        if parts[0] == "few" and len(parts) >= 2 and parts[1].isdigit():
            k, leaf = int(parts[1]), parts[2] if len(parts) == 3 else ""
            if not leaf:
                return html(
                    "few",
                    [f"/a/{i}?v={x}" for i in range(A_PAGES) for x in "ab"] + [f"/few/{k}/next"],
                )
            if leaf == "next":
                return html(
                    "few-next",
                    [f"/few/{k}/last"] + [f"/d/{i}?v=x" for i in range(k)] + [f"/few/{k}/end"],
                )
            if leaf == "last":
                return html("few-last", [f"/d/{i}?v=y" for i in range(k)])
            if leaf == "end":
                return html("few-end")
        if len(parts) == 2 and parts[0] in "abcd" and parts[1].isdigit():
            if (parts[0] == "b" and not self.same_b) or (parts[0] == "d" and not self.same_d):
                return html(f"{parts[0]}-{parts[1]}-{v}")
            return html(f"{parts[0]}-{parts[1]}")
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("gate")
    parser.add_argument("log")
    parser.add_argument("--hold", action="append", default=[])
    parser.add_argument("--same-b", action="store_true")
    parser.add_argument("--same-d", action="store_true")
    args = parser.parse_args()
    site = ProbationSite(args.gate, args.log, args.hold, args.same_b, args.same_d)
    port = reactor.listenTCP(0, server.Site(site), interface="127.0.0.1")
    sys.stdout.write(json.dumps({"base": f"http://127.0.0.1:{port.getHost().port}"}) + "\n")
    sys.stdout.flush()
    reactor.run()


if __name__ == "__main__":
    main()
