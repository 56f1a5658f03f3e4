"""scrapy-urlunify: stop a Scrapy crawl from fetching, parsing and storing the same page twice.

The package root holds the version, the public functions of the core (pure Python, no Scrapy
import):

* :func:`resolve` -- browser-equivalent resolution of a link (WHATWG URL Standard);
* :func:`standardize` -- the URL to fetch (only rewrites a server answers identically);
* :func:`identify` -- the unicity identifier (two URLs share it when they are one page);
* :func:`filter_reason` -- why a link must not be followed at all;
* :class:`Policy` -- the validated configuration of all of the above.

The Scrapy components (``LinkMiddleware``, ``Fingerprinter``, ``DupeFilter``,
``SignatureMiddleware``, ``ResumeMiddleware``, ``RedisDupeFilter``, ``RedisQueue``, ``Addon``,
the pipelines, ``follow_all``) are imported lazily from here, so ``import scrapy_urlunify`` stays
cheap and Scrapy-free for users of the core alone.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .core.explain import Comparison, Explanation, explain, same
from .core.policy import Policy, PolicyError, PolicyTypeError, PolicyValueError
from .core.unify import Unifier, filter_reason, identify, standardize
from .core.url import InvalidURL, resolve

__version__ = "0.1.0"

__all__ = [
    "Comparison",
    "Explanation",
    "InvalidURL",
    "Policy",
    "PolicyError",
    "PolicyTypeError",
    "PolicyValueError",
    "Unifier",
    "explain",
    "filter_reason",
    "identify",
    "resolve",
    "same",
    "standardize",
]

# Scrapy adapters, resolved on first access (PEP 562) so the core never imports Scrapy.
_LAZY = {
    "LinkMiddleware": "scrapy_urlunify.integration.links",
    "Fingerprinter": "scrapy_urlunify.integration.fingerprinter",
    "DupeFilter": "scrapy_urlunify.integration.dupefilter",
    "RedisDupeFilter": "scrapy_urlunify.integration.redis_dupefilter",
    "SignatureMiddleware": "scrapy_urlunify.integration.signatures",
    "ResumeMiddleware": "scrapy_urlunify.integration.resume",
    "Addon": "scrapy_urlunify.integration.addon",
    "SignaturePipeline": "scrapy_urlunify.integration.pipelines",
    "UnicityPipeline": "scrapy_urlunify.integration.pipelines",
    "follow_all": "scrapy_urlunify.integration.follow",
    "RedisQueue": "scrapy_urlunify.integration.redis_queue",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_urlunify' has no attribute {name!r}")
    return getattr(import_module(module), name)
