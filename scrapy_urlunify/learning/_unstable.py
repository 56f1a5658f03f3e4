"""Unstable pages: URLs seen twice with two signatures (a clock, a token, a counter in the
body). Their pairs are neither evidence nor counter-examples (see "Which signatures may
teach" in ``docs/learning.md``)."""

from __future__ import annotations

from collections import OrderedDict

#: URLs remembered as unstable, and kept in the log.
_MAX_UNSTABLE = 10_000
_MAX_LOG = 1000


class UnstablePages:
    """The ``urls`` found unstable (the 10,000 most recent), and the first 1,000 in ``log``."""

    __slots__ = ("log", "urls")

    def __init__(self) -> None:
        self.urls: OrderedDict[str, None] = OrderedDict()
        self.log: list[str] = []

    def mark(self, url: str, earlier: str) -> list[str]:
        """Mark a page that gave two signatures, under both its spellings: ``url`` as it was
        fetched now, and ``earlier``, the URL of its first view, which the page's records in
        the index and its counter-examples carry (it may be spelled otherwise: another scheme,
        parameter order, or host once an alias is learned). The spellings newly marked."""
        spellings = [u for u in dict.fromkeys((url, earlier)) if u not in self.urls]
        for u in spellings:
            self.urls[u] = None
        while len(self.urls) > _MAX_UNSTABLE:
            self.urls.popitem(last=False)
        if url in spellings and len(self.log) < _MAX_LOG:
            self.log.append(url)
        return spellings
