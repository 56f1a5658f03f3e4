"""FO-flt: links that must not be followed at all, with a short stable reason code.

The codes are used as Scrapy stats keys (``urlunify/filtered/<code>``), so they never change:

==================  ===========================================================================
``invalid``         the WHATWG URL parser fails on the link
``scheme:<name>``   any scheme but http and https (``scheme:mailto``, ``scheme:javascript``...)
``too-long``        longer than the policy's ``max_url_length`` once resolved
``extension:<x>``   the last path segment ends in a denied extension (``extension:pdf``)
``trap``            one path segment repeated ``trap_repetitions`` times or more
==================  ===========================================================================
"""

from __future__ import annotations

from collections import Counter

INVALID = "invalid"
TOO_LONG = "too-long"
TRAP = "trap"


def scheme_reason(url: str) -> str | None:
    """``scheme:<name>`` for a resolved URL whose scheme is not http(s)."""
    if url.startswith(("https://", "http://")):
        return None
    return "scheme:" + url.partition(":")[0]


def extension_reason(path: str, denied: dict[str, tuple[str, ...]]) -> str | None:
    """``extension:<ext>`` when the last segment of ``path`` ends in a denied extension.

    ``denied`` maps the last dot-part of each denied extension to the extensions ending in it
    (``{"pdf": ("pdf",), "gz": ("tar.gz",)}``), all lower-case; the comparison ignores case
    (``/A.PDF`` is a PDF). See :func:`compile_extensions`.
    """
    k = path.rfind(".")
    if k < 0 or path.find("/", k) >= 0:
        return None
    candidates = denied.get(path[k + 1 :].lower())
    if candidates is None:
        return None
    low = path[path.rfind("/") + 1 :].lower()
    for ext in candidates:
        if low.endswith("." + ext):
            return "extension:" + ext
    return None


def compile_extensions(extensions: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The lookup table of :func:`extension_reason`; longer extensions are tried first."""
    table: dict[str, list[str]] = {}
    for ext in sorted(extensions, key=len, reverse=True):
        table.setdefault(ext.rsplit(".", 1)[-1], []).append(ext)
    return {k: tuple(v) for k, v in table.items()}


def trap_reason(path: str, repetitions: int) -> str | None:
    """``trap`` when one non-empty segment occurs ``repetitions`` times or more in ``path``
    (``/a/b/a/b/a/b/`` -- relative links that keep appending to themselves)."""
    if repetitions <= 0 or path.count("/") < repetitions:
        return None
    segments = path.split("/")
    # a segment seen `repetitions` times makes at least repetitions-1 duplicates: most paths
    # have none, and leave here without counting
    if len(segments) - len(set(segments)) < repetitions - 1:
        return None
    # counted in C (a generator is a Python step per segment: 0.1 s on a megabyte of "a/b/")
    counts = Counter(segments)
    del counts[""]
    if counts and max(counts.values()) >= repetitions:
        return TRAP
    return None
