"""A tree-shaped site on loopback: page ``i`` (``/p/<i>``) links to pages ``3i+1..3i+3``, so each
page is linked from exactly one other page. A crawl that loses the links of one page loses its
whole subtree: the right site to count pages lost to a fault.

The server runs in a thread of the test process; ``hits`` (path without its query -> count of 200
responses) is the ground truth of what crawls fetched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SIZE = 100


def children(i: int, size: int = SIZE) -> list[int]:
    return [c for c in (3 * i + 1, 3 * i + 2, 3 * i + 3) if c < size]


def tree_links(i: int, size: int) -> list[str]:
    return [f"/p/{c}" for c in children(i, size)]


class TreeSite:
    """``with TreeSite() as site: site.url(0)``: a started server.

    ``links(i, size)``: the hrefs of page ``i`` (default: its tree children only). ``gate``: hold
    the first ``gate`` requests until that many arrived (e.g. racing crawlers have each sent
    their start request)."""

    def __init__(
        self,
        size: int = SIZE,
        *,
        gate: int = 0,
        links: Callable[[int, int], list[str]] = tree_links,
    ) -> None:
        self.size = size
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._arrived = 0
        self._open = threading.Event()
        if not gate:
            self._open.set()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with site._lock:
                    site._arrived += 1
                    if site._arrived >= gate:
                        site._open.set()
                site._open.wait(30)
                path = self.path.partition("?")[0]
                parts = path.split("/")
                if (
                    len(parts) != 3
                    or parts[1] != "p"
                    or not parts[2].isdigit()
                    or int(parts[2]) >= site.size
                ):
                    self.send_error(404)
                    return
                i = int(parts[2])
                with site._lock:
                    site.hits[path] += 1
                anchors = "".join(
                    f"<li><a href='{href}'>{href}</a></li>" for href in links(i, site.size)
                )
                body = (
                    f"<!DOCTYPE html><html><head><title>Page {i}</title></head><body>"
                    f"<h1>Page {i}</h1><p>The text of page number {i}, found nowhere else.</p>"
                    f"<ul>{anchors}</ul></body></html>"
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, i: int) -> str:
        return f"{self.base}/p/{i}"

    def pages(self) -> set[str]:
        return {f"/p/{i}" for i in range(self.size)}

    def lost(self) -> set[str]:
        """Pages no crawl fetched."""
        return self.pages() - set(self.hits)

    def fetched_twice(self) -> dict[str, int]:
        """Pages fetched more than once -> how many times."""
        return {p: n for p, n in self.hits.items() if n > 1}

    def __enter__(self) -> TreeSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._open.set()
        self._server.shutdown()
        self._server.server_close()


# -- running tests/support/tree_job.py ---------------------------------------------------------------------

HERE = Path(__file__).parent


@dataclass
class Run:
    returncode: int
    stderr: str
    stats: dict[str, Any]

    @property
    def killed(self) -> bool:
        return self.returncode == -9


def start_job(
    directory: Path, start: str | None, **config: Any
) -> tuple[subprocess.Popen[str], Path]:
    """Start the tree job on ``directory/job`` from the URL ``start`` (None: a fleet worker, which
    reads it from Redis); the once-only kills are remembered in ``directory/marks`` unless
    ``config`` says where."""
    directory.mkdir(parents=True, exist_ok=True)
    result = directory / "result.json"
    result.unlink(missing_ok=True)
    conf = {
        "start": start,
        "jobdir": str(directory / "job"),
        "result": str(result),
        "marks": str(directory / "marks"),
        **config,
    }
    (directory / "config.json").write_text(json.dumps(conf))
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "tree_job.py"), str(directory / "config.json")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, result


def finish(proc: subprocess.Popen[str], result: Path, timeout: float = 120) -> Run:
    """Wait for a started job (killed after ``timeout`` s) and read its result."""
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stats = json.loads(result.read_text())["stats"] if result.exists() else {}
    return Run(proc.returncode, err, stats)


def wait_for_pages(site: TreeSite, proc: subprocess.Popen[str], n: int) -> None:
    """Until the site has served ``n`` pages (the crawl still running)."""
    deadline = time.monotonic() + 60
    while sum(site.hits.values()) < n:
        assert proc.poll() is None, "the crawl ended too early"
        assert time.monotonic() < deadline
        time.sleep(0.01)


def run_job(tmp_path: Path, site: TreeSite, **config: Any) -> Run:
    """One run of the tree job on ``tmp_path/job``, from the site's page 0."""
    return finish(*start_job(tmp_path, site.url(0), **config))


def resume_until_finished(tmp_path: Path, site: TreeSite, runs: int, **config: Any) -> list[Run]:
    out = []
    for _ in range(runs):
        out.append(run_job(tmp_path, site, **config))
        if not out[-1].killed:
            break
    return out
