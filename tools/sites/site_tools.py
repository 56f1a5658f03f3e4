"""What the real-software test sites share (``tools/sites/mediawiki.py``,
``tools/sites/wordpress.py``): the Debian packages they need (which are missing, ``apt-get``
them), and stopping the servers they start."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence


def missing_packages(packages: Sequence[str]) -> list[str]:
    """Those of ``packages`` dpkg does not have installed."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Status}\n", *packages],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    installed = {
        line.split()[0] for line in out.splitlines() if line.endswith("install ok installed")
    }
    return [p for p in packages if p not in installed]


def install(packages: Sequence[str], main: str) -> None:
    """``apt-get install`` the missing ``packages`` (``apt-get update`` once first if apt does
    not know the site's ``main`` package). Their services are neither started nor used here."""
    missing = missing_packages(packages)
    if not missing:
        print("all installed:", " ".join(packages))
        return
    known = subprocess.run(
        ["apt-cache", "policy", main], capture_output=True, text=True, check=False
    ).stdout
    if "Candidate:" not in known or "Candidate: (none)" in known:
        subprocess.run(["apt-get", "update"], check=True)
    subprocess.run(
        ["apt-get", "install", "-y", "--no-install-recommends", *missing],
        check=True,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


def stop_group(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Stop a server started in its own process group (its workers too): SIGTERM, then SIGKILL
    after ``timeout`` seconds."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
