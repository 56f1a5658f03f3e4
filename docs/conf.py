"""Sphinx configuration of the scrapy-urlunify documentation (``make docs``).

Sphinx, as Scrapy, scrapy-poet and scrapy-zyte-api use; the pages stay Markdown through MyST, so
the files under docs/ read the same on GitHub. The settings reference and the command-line help
are generated from the package itself (``_ext/urlunify_reference.py``), so they cannot drift.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
# the checkout's package, whether or not it is the one installed
sys.path.insert(0, str(DOCS.parent))

from scrapy_urlunify import __version__

project = "scrapy-urlunify"
author = "the scrapy-urlunify authors"
copyright = "2026, the scrapy-urlunify authors"
version = release = __version__

extensions = ["myst_parser", "urlunify_reference"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# `(stores.md#redis)`-style links between pages resolve to their headings
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = f"scrapy-urlunify {release}"
