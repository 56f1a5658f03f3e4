"""The compiled twins of the unifier's and the seen set's hot paths, when they were built
(one switch for the core and the stores, which import nothing else of the package's).

``scrapy_urlunify/_speedups.c`` is an optional extension (``setup.py``): a machine without a C
compiler installs the package without it, and every caller then runs the Python code it
mirrors, with the same results (``tests/core/test_speedups.py`` runs both). Setting the
environment variable ``URLUNIFY_PURE_PYTHON`` to a non-empty value before the package is
imported runs the Python code even where the extension is built.
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["PURE_PYTHON_VARIABLE", "speedups"]

#: the environment variable (not a Scrapy setting: it is read once, at import)
PURE_PYTHON_VARIABLE = "URLUNIFY_PURE_PYTHON"

speedups: ModuleType | None = None
if not os.environ.get(PURE_PYTHON_VARIABLE):
    try:
        from . import _speedups as speedups
    except ImportError:  # not built: the Python code
        speedups = None
