"""What several benchmarks share: running a measurement in a process of its own (so each
contender starts from a fresh interpreter and its memory is its own) and reading its result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def child_json(script: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """Run ``python script args...`` and return the JSON object of the last line of its output
    that holds one; a child that failed or printed none stops the benchmark with its stderr."""
    out = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, check=False, env=env)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{Path(script).name} {' '.join(args)} failed (exit status {out.returncode}):\n"
                         f"{out.stderr[-3000:]}")
    return json.loads(lines[-1])


def run_measured(process: Any, crawler: Any) -> tuple[dict[str, Any], float, float]:
    """Run ``crawler`` in ``process`` (a ``CrawlerProcess``) to its end: its stats, and the CPU
    seconds (user + system) and wall seconds the crawl took in this process."""
    import resource
    import time

    process.crawl(crawler)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, wall0 = usage.ru_utime + usage.ru_stime, time.monotonic()
    process.start()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    stats = crawler.stats.get_stats() if crawler.stats else {}
    return stats, round(usage.ru_utime + usage.ru_stime - cpu0, 2), round(time.monotonic() - wall0, 1)


def write_json(path: Path | None, results: Any) -> None:
    """``--json PATH``: also write the results there (nothing without the option)."""
    if path:
        path.write_text(json.dumps(results, indent=1))
