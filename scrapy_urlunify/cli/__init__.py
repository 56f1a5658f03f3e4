"""The ``urlunify`` command line (no Scrapy): ``main`` (explain, same, identify, standardize)
and ``store`` (``urlunify store info|clear``)."""

from ._main import main

__all__ = ["main"]
