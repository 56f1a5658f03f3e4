"""A compact in-memory set of 64-bit fingerprints.

Scrapy's ``RFPDupeFilter`` keeps a Python ``set`` of 20-byte ``bytes`` digests: a 56-byte
object plus a 16-byte hash-table slot (at most 60 % full) per URL, i.e. ~87-107 bytes per
entry. :class:`FingerprintSet` keeps the raw 8-byte integers in one ``array('Q')`` used as an
open-addressing hash table, i.e. 8 bytes divided by the load factor: 11.4-22.9 bytes per
entry, and one allocation instead of one object per URL.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from itertools import chain

__all__ = ["FingerprintSet"]

#: Grow the table once more than this fraction of its slots is used. Linear probing stays
#: cheap up to ~0.7 (expected probes for a miss: 6 at 0.7, 13 at 0.8), and doubling at 0.7
#: keeps the steady-state load between 0.35 and 0.7, i.e. 8 / load = 11.4-22.9 bytes/entry.
MAX_LOAD = 0.7

#: Smallest table; tiny sets (tests, short crawls) should not allocate megabytes.
MIN_SLOTS = 8

_ZERO_TABLE = array("Q", [0])


def _slots_for(capacity: int) -> int:
    """The smallest power-of-two table that holds ``capacity`` entries below MAX_LOAD."""
    slots = MIN_SLOTS
    while capacity > slots * MAX_LOAD:
        slots *= 2
    return slots


class FingerprintSet:
    """A set of integers in ``[0, 2**64)``, stored in ~11-23 bytes per member.

    The table is an ``array('Q')`` of ``2**k`` slots, open addressing with linear probing,
    slot 0 meaning "empty". A member's home slot is its low ``k`` bits, and the value itself
    is stored (no hashing, no mixing): fingerprints are meant to be taken from a digest
    (e.g. the first 8 bytes of SHA-1/BLAKE2), whose low bits are already uniform, and
    skipping a multiply-and-mask saves 10-15 % per call. Sequential integers spread
    perfectly too. What degrades (to O(n) probes, never to wrong answers) are values
    sharing their low bits, e.g. multiples of ``2**40``: don't build fingerprints that way.

    The fingerprint ``0``, which cannot be stored in the table since 0 marks an empty
    slot, is kept in a separate flag, so membership stays exact for all ``2**64`` values
    (mapping 0 onto another value instead would make the two indistinguishable).

    Out-of-range integers are never members; adding one raises ``ValueError``.

    Not thread-safe: ``add`` is atomic with respect to the caller's single thread (as in
    Scrapy's reactor), not with respect to concurrent threads.

    Memory: 8 bytes per slot, load kept in (0.35, 0.7] by doubling, so 11.4-22.9 bytes per
    entry. During a resize the old and the new table coexist for a moment: 3x the old
    table, i.e. ~34 bytes per entry at the instant of growth (e.g. 192 MiB while 5.9 M
    entries move from 64 MiB to 128 MiB).
    """

    __slots__ = ("_has_zero", "_limit", "_mask", "_table", "_used")

    def __init__(self, fingerprints: Iterable[int] = (), *, capacity: int = 0) -> None:
        """Create a set holding ``fingerprints``, pre-sized for ``capacity`` members.

        Pre-sizing (e.g. when reloading a log of known length) avoids every intermediate
        resize, which at 10 M entries is several seconds of rehashing.
        """
        slots = _slots_for(capacity)
        self._table = _ZERO_TABLE * slots
        self._mask = slots - 1
        self._used = 0  # members stored in the table, i.e. not counting 0
        self._limit = int(slots * MAX_LOAD)
        self._has_zero = False
        self.update(fingerprints)

    def add(self, fp: int) -> bool:
        """Record ``fp``; return True if it was not already a member.

        This is the single "seen? and record" step a dupefilter needs: one probe
        sequence, no separate lookup.
        """
        # Hot path (once per request): locals only, no helper calls, no range check --
        # an out-of-range value cannot equal a stored one and fails at the store below.
        table = self._table
        mask = self._mask
        i = fp & mask
        slot = table[i]
        while slot:
            if slot == fp:
                return False
            i = (i + 1) & mask
            slot = table[i]
        if not fp:
            if self._has_zero:
                return False
            self._has_zero = True
            return True
        try:
            table[i] = fp
        except OverflowError:
            raise ValueError(f"fingerprint {fp!r} is outside [0, 2**64)") from None
        self._used += 1
        if self._used > self._limit:
            self._resize(2 * len(table))
        return True

    def __contains__(self, fp: object) -> bool:
        """Whether ``fp`` is a member (False for anything not in ``[0, 2**64)``)."""
        table = self._table
        mask = self._mask
        i = fp & mask  # type: ignore[operator]  # non-ints raise TypeError, as intended
        slot = table[i]
        while slot:
            if slot == fp:
                return True
            i = (i + 1) & mask
            slot = table[i]
        return self._has_zero and fp == 0

    def __len__(self) -> int:
        return self._used + self._has_zero

    def __iter__(self) -> Iterator[int]:
        """Members in table order (arbitrary). Don't add while iterating: like a dict's
        iterator this one is undefined under mutation (it may miss or skip members)."""
        zero = (0,) if self._has_zero else ()
        return chain(zero, filter(None, self._table))

    def update(self, fingerprints: Iterable[int]) -> None:
        """Add every fingerprint of ``fingerprints``."""
        add = self.add
        for fp in fingerprints:
            add(fp)

    def reserve(self, capacity: int) -> None:
        """Grow the table now so ``capacity`` members fit without further resizing."""
        slots = _slots_for(capacity)
        if slots > len(self._table):
            self._resize(slots)

    @property
    def nbytes(self) -> int:
        """Bytes held by the table (the object header and the zero flag aside)."""
        return len(self._table) * self._table.itemsize

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + self.nbytes

    def __repr__(self) -> str:
        return f"<{type(self).__name__} len={len(self)} slots={len(self._table)}>"

    def _resize(self, slots: int) -> None:
        """Rehash every member into a new table of ``slots`` slots (a power of two).

        Because the home slot is the low bits, doubling *splits* the table: the member in
        old slot ``j`` lands in ``j`` or ``j + old_size`` (give or take its probe
        displacement), so both tables are walked almost sequentially and the loop stays
        cache-friendly (``benchmarks/bench_seen_memory.py`` times it). The table doubles, so
        each insert pays for one or two moves on average.
        Measured and rejected: a C-level chain of ``map``/``accumulate`` (slower, one
        builtin call per step), and clusters kept sorted so a resize is a single merge
        pass (saves less per resize than it costs on every insert).
        """
        # array * n allocates zeroed memory in C without a temporary bytes object, so the
        # peak is old + new table and nothing else.
        new = _ZERO_TABLE * slots
        mask = slots - 1
        # filter(None, ...) skips empty slots in C; the loop sees members only.
        for fp in filter(None, self._table):
            i = fp & mask
            while new[i]:
                i = (i + 1) & mask
            new[i] = fp
        self._table = new
        self._mask = mask
        self._limit = int(slots * MAX_LOAD)
