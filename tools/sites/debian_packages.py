"""The Debian packages a real-software test site needs: which are missing, and ``apt-get``
them (``tools/sites/mediawiki.py``, ``tools/sites/wordpress.py``)."""

from __future__ import annotations

import os
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
