"""scrapy-urlunify: stop a Scrapy crawl from fetching, parsing and storing the same page twice.

The package root holds the version, the public functions of the core (pure Python, no Scrapy
import):

* :func:`resolve` -- browser-equivalent resolution of a link (WHATWG URL Standard);
* :func:`standardize` -- the URL to fetch (only rewrites a server answers identically);
* :func:`identify` -- the unicity identifier (two URLs share it when they are one page);
* :func:`filter_reason` -- why a link must not be followed at all;
* :class:`Policy` -- the validated configuration of all of the above.

The Scrapy components (``Addon``, which enables the others, ``LinkMiddleware``,
``Fingerprinter``, ``DupeFilter``, ``SignatureMiddleware``, ``RedisDupeFilter``, ``RedisQueue``,
the pipelines, ``follow_all``...) are imported lazily from here, so ``import scrapy_urlunify``
stays cheap and Scrapy-free for users of the core alone; ``scrapy_urlunify.<Name>`` is the
path to give Scrapy's settings.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .core._explain import Comparison, Explanation, explain, same
from .core._policy import Policy, PolicyError, PolicyTypeError, PolicyValueError
from .core._unify import Unifier, filter_reason, identify, standardize
from .core._url import InvalidURL, resolve

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
    "Addon": "scrapy_urlunify.integration.addon",
    "LinkMiddleware": "scrapy_urlunify.integration.links._middleware",
    "follow_all": "scrapy_urlunify.integration.links._follow",
    "Fingerprinter": "scrapy_urlunify.integration.seen._fingerprinter",
    "DupeFilter": "scrapy_urlunify.integration.seen._dupefilter",
    "RedisDupeFilter": "scrapy_urlunify.integration.seen._redis_dupefilter",
    "ResumeMiddleware": "scrapy_urlunify.integration.seen._resume_middlewares",
    "ResumeDoneMiddleware": "scrapy_urlunify.integration.seen._resume_middlewares",
    "SignatureMiddleware": "scrapy_urlunify.integration.pages._signatures",
    "DuplicatePageGate": "scrapy_urlunify.integration.pages._signatures",
    "SignaturePipeline": "scrapy_urlunify.integration.pages._pipelines",
    "UnicityPipeline": "scrapy_urlunify.integration.pages._pipelines",
    "DequeueMiddleware": "scrapy_urlunify.integration.rules._dequeue",
    "DequeueDropGate": "scrapy_urlunify.integration.rules._dequeue",
    "RedisQueue": "scrapy_urlunify.integration.queue._redis_queue",
    "QueueDoneMiddleware": "scrapy_urlunify.integration.queue._queue_done",
    "QueueGivenBackMiddleware": "scrapy_urlunify.integration.queue._queue_done",
    "QueueFailureMiddleware": "scrapy_urlunify.integration.queue._queue_done",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scrapy_urlunify' has no attribute {name!r}")
    return getattr(import_module(module), name)
