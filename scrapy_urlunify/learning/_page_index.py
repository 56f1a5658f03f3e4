"""The learner's page index: the pages observed, by the context a pair of them shares, and
the paths each signature was seen on; bounded, least recently written evicted first.

Keys are 64-bit digests of a context (:func:`slot`): ``"P"`` + host, path and query (the pages
a parameter pair is found among), ``"R"`` + a path's tail (pages with one more leading segment),
``"A"`` + path and query (the same page on other hosts), ``"S"`` + a signature (the paths it
was seen on). What each record holds is the pair finders' business (``learning.pairs``); this
module keeps the records within ``max_entries``, and tells which signatures are no evidence: a
text seen on two paths is *shared* (a soft 404, a login wall) unless each page of it declared a
path it was seen on its canonical, on :data:`CATCH_ALL_PATHS` a *catch-all*. And the pages found
*unstable* (:class:`UnstablePages`): URLs seen twice with two signatures (a clock, a token, a
counter in the body), whose pairs are neither evidence nor counter-examples (see "Which
signatures may teach" in ``docs/learning.md``).
"""

from __future__ import annotations

from collections import OrderedDict
from hashlib import blake2b
from typing import Any

from scrapy_urlunify.core._policy import DEFAULT_INDEX_PAGES
from scrapy_urlunify.core._rules import strip_index_pages, strip_trailing_slash

#: A signature seen on this many distinct paths is a catch-all page: pairs with it never count
#: (paths one segment apart, a page's spellings, count as one).
CATCH_ALL_PATHS = 3
#: ... and on this many paths, whatever they are
_MAX_PATHS = 8

_INDEX_PAGES = frozenset(DEFAULT_INDEX_PAGES)


def slot(s: str) -> int:
    """The index key of a context: a 64-bit digest (a third of the memory of the text; two
    contexts sharing one would need a 1 in 2**64 chance, and cost one wrong pair, not a rule)."""
    return int.from_bytes(
        blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big"
    )


class PageIndex:
    """Records under context keys, at most ``max_entries`` of them between observations, and
    the signatures that are no evidence (``shared``, ``catch_all``: kept by the learner's
    ``to_json``, unlike the records)."""

    __slots__ = ("catch_all", "max_entries", "records", "shared", "size")

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        # key -> records, least recently written first
        self.records: OrderedDict[int, tuple[Any, ...]] = OrderedDict()
        self.size = 0
        self.catch_all: set[str] = set()
        # signatures seen on two paths of a host: a soft 404, a login page (see note_signature)
        self.shared: set[str] = set()

    def add(self, key: int, entry: tuple[Any, ...], record: Any) -> None:
        """Store ``entry + (record,)`` under ``key``, now the most recently written key.
        (Entries are tuples rebuilt on each write: they hold a few records, and a tuple costs
        half the memory of a list.)"""
        records = self.records
        records[key] = (*entry, record)
        records.move_to_end(key)
        self.size += 1

    def evict(self) -> int:
        """Drop the least recently written keys until at most ``max_entries`` records are
        left; the number of records dropped."""
        records = self.records
        dropped = 0
        while self.size > self.max_entries and records:
            _key, gone = records.popitem(last=False)
            self.size -= len(gone)
            dropped += len(gone)
        return dropped

    def note_signature(self, sig: str, path: str, spellings: tuple[str, ...] = ()) -> None:
        """Record that a page of this ``path`` has signature ``sig``; ``spellings``: the paths of
        other URLs of this very page, as the site declares them (its declared canonical): the
        text is on those paths too, which makes it no soft 404."""
        if sig in self.catch_all:
            return
        key = slot("S" + sig)
        entry = self.records.get(key, ())
        declared = [_normal(p) for p in spellings]
        own = list(dict.fromkeys((_normal(path), *declared)))
        new = [p for p in own if p not in entry]
        if not new:
            return
        if entry and not any(p in entry for p in declared):
            # one text on two paths: a soft 404 ("not found" served with 200), a login wall,
            # an empty result, not one page; a parameter or an alias pair of it tests nothing
            # (every missing URL gives the same text whatever its parameters or host), so it is
            # no evidence for those rules from now on, even before it is a catch-all. (A path
            # rule's own evidence is such a text: /print/x = /x.) Not when the page's own
            # declared canonical names a path the text was seen on (a product's CMS route, its
            # category path and its AMP copy, each naming its pretty URL): the site says they
            # are one page, each path added so; a text on unrelated paths is a catch-all at
            # the third all the same, whatever it declares (a "not found" page naming /404).
            self.shared.add(sig)
        # paths one segment apart (/x, /print/x, /x/amp) are one page's spellings, not the
        # unrelated paths a soft 404 answers: they count once toward a catch-all
        paths = (*entry, *new)
        families = sum(
            not any(_one_segment_apart(p, q) for q in paths[:i]) for i, p in enumerate(paths)
        )
        if families >= CATCH_ALL_PATHS or len(paths) >= _MAX_PATHS:
            self.catch_all.add(sig)
            if entry:
                del self.records[key]
                self.size -= len(entry)
            return
        for p in new:
            self.add(key, entry, p)
            entry = self.records[key]


def _normal(path: str) -> str:
    """A path as the index compares it: index page and trailing slash stripped."""
    if "." in path:
        path = strip_index_pages(path, _INDEX_PAGES)
    return strip_trailing_slash(path)


def _one_segment_apart(a: str, b: str) -> bool:
    """Whether one of two normalized paths is the other with one more leading or last segment
    (``/print/x`` or ``/x/amp`` and ``/x``)."""
    if len(a) < len(b):
        a, b = b, a
    base = b.rstrip("/")
    if a.startswith(base + "/") and "/" not in a[len(base) + 1 :]:
        return True
    return a.endswith(b) and a[: len(a) - len(b)].count("/") == 1 and b.startswith("/")


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
