"""scrapy-urlunify: stop a Scrapy crawl from fetching, parsing and storing the same page twice.

The core (this package's top level) is pure Python with no Scrapy import:

* :func:`resolve` -- browser-equivalent resolution of a link (WHATWG URL Standard);
* :func:`standardize` -- the URL to fetch (only rewrites a server answers identically);
* :func:`identify` -- the unicity identifier (two URLs share it when they are one page);
* :func:`filter_reason` -- why a link must not be followed at all;
* :class:`Policy` -- the validated configuration of all of the above.

The Scrapy components (``UrlUnifyMiddleware``, ``UnifyFingerprinter``, ``UnifyDupeFilter``,
``PageSignatureMiddleware``, ``ResumeMiddleware``, ``UnifyRedisDupeFilter``, ``Addon``, the
pipelines) are imported lazily from here, so ``import scrapy_urlunify`` stays
cheap and Scrapy-free for users of the core alone.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .policy import Policy, PolicyError, PolicyTypeError, PolicyValueError
from .rules import InvalidURL, resolve
from .unify import Comparison, Explanation, Unifier, explain, filter_reason, identify, same, standardize

__version__ = "0.1.0"

__all__ = [
    "resolve",
    "standardize",
    "identify",
    "filter_reason",
    "explain",
    "same",
    "Policy",
    "PolicyError",
    "PolicyTypeError",
    "PolicyValueError",
    "InvalidURL",
    "Unifier",
    "Explanation",
    "Comparison",
]

# Scrapy adapters, resolved on first access (PEP 562) so the core never imports Scrapy.
_LAZY = {
    "UrlUnifyMiddleware": "scrapy_urlunify.middleware",
    "UnifyFingerprinter": "scrapy_urlunify.fingerprinter",
    "UnifyDupeFilter": "scrapy_urlunify.dupefilter",
    "UnifyRedisDupeFilter": "scrapy_urlunify.redis_dupefilter",
    "PageSignatureMiddleware": "scrapy_urlunify.pages",
    "ResumeMiddleware": "scrapy_urlunify.jobdir",
    "Addon": "scrapy_urlunify.addon",
    "SignaturePipeline": "scrapy_urlunify.pipelines",
    "UnicityPipeline": "scrapy_urlunify.pipelines",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_urlunify' has no attribute {name!r}")
    return getattr(import_module(module), name)
