"""What the costly string functions of the steps made of long texts, remembered for a while.

A URL of a megabyte meets the same text again and again: the rewrite layer's second pass reads
what its first wrote, and ``same()`` explains two URLs once more for each rule it leaves out,
each time through the steps before and after that rule. On such a text a step costs tens of
milliseconds; asked again with the same arguments, :func:`remembered` answers from the last
results. Short texts, every link of a crawl, are not remembered: they cost less than the lookup.
The functions are pure, so an answer is the one they would give.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, TypeVar

#: texts at least this long (characters) are remembered
LONG_TEXT = 1 << 15
#: characters of the texts and results held at most, over every function: a few megabyte URLs
CAPACITY = 1 << 25
# what a string in a tuple weighs, in characters: its object (~50 bytes) and its slot
_ITEM_SIZE = 64

P = ParamSpec("P")
R = TypeVar("R")

# (function, text, other arguments) -> result, the oldest first
_results: OrderedDict[tuple[object, ...], object] = OrderedDict()
_sizes: dict[tuple[object, ...], int] = {}
_held = 0
_lock = threading.Lock()


def remembered(fn: Callable[Concatenate[str, P], R]) -> Callable[Concatenate[str, P], R]:
    """``fn``, answering from its last results when called again on the same long text (its first
    argument) with equal other arguments (hashable: strings, frozensets, compiled patterns)."""
    return _remembering(fn, idempotent=False)


def remembered_idempotent(
    fn: Callable[Concatenate[str, P], R],
) -> Callable[Concatenate[str, P], R]:
    """:func:`remembered`, for a function that gives a text back unchanged when given its own
    result: that is remembered too (the rewrite layer's second pass reads what its first wrote)."""
    return _remembering(fn, idempotent=True)


def _remembering(
    fn: Callable[Concatenate[str, P], R], idempotent: bool
) -> Callable[Concatenate[str, P], R]:
    @wraps(fn)
    def call(text: str, *args: P.args, **kwargs: P.kwargs) -> R:
        if len(text) < LONG_TEXT:
            return fn(text, *args, **kwargs)
        rest = (*args, *sorted(kwargs.items())) if kwargs else args
        key = (fn, text, *rest)
        with _lock:
            if key in _results:
                _results.move_to_end(key)
                return _results[key]  # type: ignore[return-value]
        result = fn(text, *args, **kwargs)
        if isinstance(result, str):
            _keep(key, result, len(text) + len(result))
            if idempotent and len(result) >= LONG_TEXT:
                _keep((fn, result, *rest), result, len(result))
        else:
            # a tuple of strings (a query's items) counts as much as its objects weigh
            size = len(result) * _ITEM_SIZE if isinstance(result, tuple) else 0
            _keep(key, result, len(text) + size)
        return result

    return call


def _keep(key: tuple[object, ...], result: object, size: int) -> None:
    global _held
    if size > CAPACITY:
        return
    with _lock:
        if key in _results:
            return
        _results[key] = result
        _sizes[key] = size
        _held += size
        while _held > CAPACITY:
            old, _ = _results.popitem(last=False)
            _held -= _sizes.pop(old)


def forget() -> None:
    """Drop every result remembered (the benchmarks time a cold unifier)."""
    global _held
    with _lock:
        _results.clear()
        _sizes.clear()
        _held = 0


def held() -> int:
    """Characters of the texts and results remembered now (at most :data:`CAPACITY`)."""
    return _held
