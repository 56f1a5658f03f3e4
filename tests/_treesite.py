"""A tree-shaped site on loopback: page ``i`` (``/p/<i>``) links to pages ``3i+1..3i+3``, so each
page is linked from exactly one other page. A crawl that loses the links of one page loses its
whole subtree: the right site to count pages lost to a fault.

The server runs in a thread of the test process; ``hits`` (path -> count of 200 responses) is
the ground truth of what crawls fetched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SIZE = 100


def children(i: int, size: int = SIZE) -> list[int]:
    return [c for c in (3 * i + 1, 3 * i + 2, 3 * i + 3) if c < size]


class TreeSite:
    """``with TreeSite() as site: site.url(0)``: a started server."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                parts = self.path.split("/")
                if len(parts) != 3 or parts[1] != "p" or not parts[2].isdigit() or int(parts[2]) >= site.size:
                    self.send_error(404)
                    return
                i = int(parts[2])
                with site._lock:
                    site.hits[self.path] += 1
                links = "".join(f"<li><a href='/p/{c}'>page {c}</a></li>" for c in children(i, site.size))
                body = (f"<!DOCTYPE html><html><head><title>Page {i}</title></head><body>"
                        f"<h1>Page {i}</h1><p>The text of page number {i}, found nowhere else.</p>"
                        f"<ul>{links}</ul></body></html>").encode()
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

    def fetched_twice(self) -> set[str]:
        return {p for p, n in self.hits.items() if n > 1}

    def __enter__(self) -> TreeSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# -- running tests/tree_job.py ---------------------------------------------------------------------

HERE = Path(__file__).parent


@dataclass
class Run:
    returncode: int
    stderr: str
    stats: dict[str, Any]

    @property
    def killed(self) -> bool:
        return self.returncode == -9


def run_job(tmp_path: Path, site: TreeSite, **config: Any) -> Run:
    """One run of the tree job on ``tmp_path/job``; the once-only kills are remembered there."""
    result = tmp_path / "result.json"
    result.unlink(missing_ok=True)
    conf = {"start": site.url(0), "jobdir": str(tmp_path / "job"), "result": str(result),
            "marks": str(tmp_path / "marks"), **config}
    (tmp_path / "config.json").write_text(json.dumps(conf))
    proc = subprocess.run([sys.executable, str(HERE / "tree_job.py"), str(tmp_path / "config.json")],
                          capture_output=True, text=True, timeout=120)
    stats = json.loads(result.read_text())["stats"] if result.exists() else {}
    return Run(proc.returncode, proc.stderr, stats)


def resume_until_finished(tmp_path: Path, site: TreeSite, runs: int, **config: Any) -> list[Run]:
    out = []
    for _ in range(runs):
        out.append(run_job(tmp_path, site, **config))
        if not out[-1].killed:
            break
    return out
