"""Walk one link through the add-on's code in a real crawl, and count what a reader follows.

A small site is served on loopback and crawled with ``ADDONS = {"scrapy_urlunify.Addon": 0}``.
For one link, the first time it is met, the calls into the package's own modules are traced
(``sys.setprofile``) while three entry points run: ``LinkMiddleware.get_processed_request`` (the
link), ``DupeFilter.request_seen`` (its request at the scheduler) and
``SignatureMiddleware.process_response`` (its response). For each:

* **calls**: the package's functions entered, in order;
* **stops**: the calls that enter another file than the call before (a reader opens a file);
* **files**: the distinct files;
* **returns**: the stops into a file the walk had already left (a reader goes back).

Also counted over the whole crawl: the places (file:function) that ask the unifier about that
link's URL (``identify``, ``standardize``, ``filter_reason``, ``result``).

Run from a checkout: ``python tools/walk_link.py`` (``--json`` for a machine-readable line).
Fewer stops and returns is the aim of the package's layout; docs/architecture.md quotes the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import scrapy_urlunify

PACKAGE_DIR = Path(scrapy_urlunify.__file__).parent
TARGET_PATH = "/docs/guide.html"

PAGES = {
    "/": ["/docs/", "/news/", "/about.html"],
    "/docs/": ["/docs/guide.html?utm_source=home", TARGET_PATH, "/docs/index.html", "/"],
    "/news/": ["/news/1.html", "/news/2.html", "/docs/guide.html#top"],
    "/news/1.html": ["/news/2.html", "/"],
    "/news/2.html": ["/news/1.html", TARGET_PATH],
    "/docs/guide.html": ["/docs/", "/about.html"],
    "/about.html": ["/"],
}


class _Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        path = "/docs/" if path == "/docs/index.html" else path
        links = PAGES.get(path)
        if links is None:
            self.send_response(404)
            self.end_headers()
            return
        body = "".join(f'<p><a href="{href}">{href}</a></p>' for href in links)
        data = f"<html><head><title>{path}</title></head><body><h1>{path}</h1>{body}</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class Walk:
    """The package's calls made while one entry point handles the target."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        path = frame.f_code.co_filename
        if path.startswith(str(PACKAGE_DIR)):
            self.calls.append(
                (Path(path).relative_to(PACKAGE_DIR).as_posix(), frame.f_code.co_name)
            )

    def summary(self) -> dict[str, Any]:
        stops: list[str] = []
        for file, _ in self.calls:
            if not stops or stops[-1] != file:
                stops.append(file)
        returns = sum(1 for i, file in enumerate(stops) if file in stops[:i])
        return {
            "calls": len(self.calls),
            "stops": len(stops),
            "files": len(set(stops)),
            "returns": returns,
            "path": stops,
        }


def traced(method: Any, walk: Walk, is_target: Any) -> Any:
    done = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if done or not is_target(args, kwargs):
            return method(*args, **kwargs)
        done.append(True)
        previous = sys.getprofile()
        sys.setprofile(walk.profile)
        try:
            return method(*args, **kwargs)
        finally:
            sys.setprofile(previous)

    return wrapper


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    args = ap.parse_args()

    from scrapy import Spider
    from scrapy.crawler import CrawlerProcess

    from scrapy_urlunify import DupeFilter, LinkMiddleware, SignatureMiddleware, Unifier

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    target = base + TARGET_PATH

    link_walk, seen_walk, response_walk = Walk(), Walk(), Walk()

    def link_is_target(a: tuple[Any, ...], kw: dict[str, Any]) -> bool:
        request = a[1] if len(a) > 1 else kw.get("request")
        return getattr(request, "url", None) == target

    def request_is_target(a: tuple[Any, ...], kw: dict[str, Any]) -> bool:
        request = a[1] if len(a) > 1 else kw.get("request")
        return getattr(request, "url", None) == target

    LinkMiddleware.get_processed_request = traced(  # type: ignore[method-assign]
        LinkMiddleware.get_processed_request, link_walk, link_is_target
    )
    DupeFilter.request_seen = traced(DupeFilter.request_seen, seen_walk, request_is_target)  # type: ignore[method-assign]

    def response_is_target(a: tuple[Any, ...], kw: dict[str, Any]) -> bool:
        response = a[2] if len(a) > 2 else kw.get("response")
        return getattr(response, "url", None) == target

    SignatureMiddleware.process_response = traced(  # type: ignore[method-assign]
        SignatureMiddleware.process_response, response_walk, response_is_target
    )

    askers: Counter[str] = Counter()
    for name in ("identify", "standardize", "filter_reason", "result"):
        original = getattr(Unifier, name)

        def asking(self: Any, url: str, *a: Any, __original: Any = original, **kw: Any) -> Any:
            if url == target:
                caller = sys._getframe(1).f_code
                askers[f"{Path(caller.co_filename).name}:{caller.co_name}"] += 1
            return __original(self, url, *a, **kw)

        setattr(Unifier, name, asking)

    class WalkSpider(Spider):
        name = "walk"
        start_urls = [base + "/"]

        def parse(self, response):  # type: ignore[no-untyped-def]
            yield {"url": response.url}
            yield from response.follow_all(css="a")

    process = CrawlerProcess(
        {
            "ADDONS": {"scrapy_urlunify.Addon": 0},
            "ROBOTSTXT_OBEY": False,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "ERROR",
            "CONCURRENT_REQUESTS": 1,
        }
    )
    process.crawl(WalkSpider)
    process.start()
    server.shutdown()

    result = {
        "link": link_walk.summary(),
        "request_seen": seen_walk.summary(),
        "response": response_walk.summary(),
        "unifier_askers": dict(askers),
        "places_asking": len(askers),
    }
    if args.json:
        print(json.dumps(result))
        return 0
    for name in ("link", "request_seen", "response"):
        s = result[name]
        print(
            f"{name:13s} {s['calls']:3d} calls, {s['stops']:3d} stops in {s['files']:2d} files, "
            f"{s['returns']:3d} returns"
        )
        print("              " + " > ".join(s["path"]))
    print(f"places asking the unifier about {TARGET_PATH}: {len(askers)}")
    for place, n in sorted(askers.items()):
        print(f"  {place} ({n})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
