"""A compact in-memory set of 64-bit keys.

Scrapy's ``RFPDupeFilter`` keeps a Python ``set`` of 20-byte ``bytes`` digests: a 56-byte
object plus a 16-byte hash-table slot (at most 60 % full) per URL, i.e. ~87-107 bytes per
entry. :class:`FingerprintSet` keeps the raw 8-byte integers in one ``array('Q')`` used as an
*ordered* linear-probing hash table kept 67-84 % full, i.e. 9.5-11.9 bytes per entry, and one
allocation instead of one object per URL.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import chain

__all__ = ["FingerprintSet"]

#: Grow the table once more than this fraction of its home slots is used. An ordered table
#: (below) stops a search at the first larger member, so a miss costs what a hit costs:
#: (1 + 1/(1 - load)) / 2 probes on average, 3.6 at 0.84 (Knuth's analysis).
MAX_LOAD = 0.84

#: Growth factor. Growing by 1.25 rather than 2 keeps the load in (0.67, 0.84], i.e.
#: 9.5-11.9 bytes per member at every size, and the old and new tables that coexist during
#: a resize take 2.25x the old one rather than 3x.
GROWTH = 1.25

#: Smallest number of home slots; tiny sets (tests, short crawls) should not allocate megabytes.
MIN_SLOTS = 8

#: Empty slots after the last home slot, where the runs of the last homes spill over; the
#: table is extended by this much when a run reaches its last slot, which stays empty as the
#: sentinel that ends every search.
SPILL = 64

_ZERO_TABLE = array("Q", [0])


def _slots_for(capacity: int) -> int:
    """The number of home slots that holds ``capacity`` members at most MAX_LOAD full."""
    return max(MIN_SLOTS, int(capacity / MAX_LOAD) + 1)


class FingerprintSet:
    """A set of integers in ``[0, 2**64)``, stored in 9.5-11.9 bytes per member.

    The table is an ``array('Q')`` of ``n`` home slots (any ``n``, not a power of two, so it
    can grow by 1.25) plus a few spill slots, slot value 0 meaning "empty". A member's home
    slot is ``key * n / 2**64``, its position among ``n`` equal ranges of the 64-bit space, which
    is *monotonic* in the value: the table is an ordered hash table (Amble & Knuth, 1974), all
    members sorted from slot 0 on. A search starts at the home slot and stops at the first
    member that is not smaller: a miss stops as early as a hit, which is what lets the table
    run 84 % full with ~3.6 probes a search. A new member is inserted at that point and the
    rest of its run moves one slot right (one ``memmove``).

    Home slots come from the high bits of the value, with no mixing: keys are meant to
    be taken from a digest (e.g. the first 8 bytes of SHA-1/BLAKE2), whose bits are uniform;
    a multiply to mix them would cost as much as the rest of a lookup. Values sharing their
    high bits (small integers, 0..5000) fall into one long run: slower (runs longer than
    four probes are searched by ``bisect`` in C), never wrong.

    The key ``0``, which cannot be stored in the table since 0 marks an empty
    slot, is kept in a separate flag, so membership stays exact for all ``2**64`` values.
    Out-of-range integers are never members; adding one raises ``ValueError``.

    Not thread-safe: ``add`` is atomic with respect to the caller's single thread (as in
    Scrapy's reactor), not with respect to concurrent threads.
    """

    __slots__ = ("_has_zero", "_limit", "_n", "_shift_in", "_shift_out", "_table", "_used")

    def __init__(self, keys: Iterable[int] = (), *, capacity: int = 0) -> None:
        """Create a set holding ``keys``, pre-sized for ``capacity`` members.

        Pre-sizing (e.g. when reloading a log of known length) avoids every intermediate
        resize, which at 10 M entries is several seconds of rehashing.
        """
        self._alloc(_slots_for(capacity))
        self._used = 0  # members stored in the table, i.e. not counting 0
        self._has_zero = False
        self.update(keys)

    def _alloc(self, n: int) -> None:
        # array * k allocates zeroed memory in C without a temporary bytes object
        self._table = _ZERO_TABLE * (n + SPILL)
        self._n = n
        # home slot = ((key >> shift_in) * n) >> shift_out: floor(key * n / 2**64) to within a
        # quarter slot, with small-int arithmetic (a 64x64-bit product costs twice as much)
        self._shift_out = n.bit_length() + 2
        self._shift_in = 64 - self._shift_out
        self._limit = int(n * MAX_LOAD)

    def add(self, key: int) -> bool:
        """Record ``key``; return True if it was not already a member.

        This is the single "seen? and record" step a dupefilter needs: one probe
        sequence, no separate lookup.
        """
        table = self._table
        # Hot path (once per request): locals only, the first probes unrolled, no range
        # check (an out-of-range value lands outside the table or fails at the store below)
        try:
            i = ((key >> self._shift_in) * self._n) >> self._shift_out
            slot = table[i]
            if slot and slot < key:
                i += 1
                slot = table[i]
                if slot and slot < key:
                    i += 1
                    slot = table[i]
                    if slot and slot < key:
                        i = self._seek(key, i + 1)
                        slot = table[i]
        except IndexError:
            raise ValueError(f"key {key!r} is outside [0, 2**64)") from None
        if slot == key and key:
            return False
        if not key:
            if key != 0:
                raise ValueError(f"key {key!r} is outside [0, 2**64)")
            if self._has_zero:
                return False
            self._has_zero = True
            return True
        if key < 0 or key >> 64:
            raise ValueError(f"key {key!r} is outside [0, 2**64)")
        if slot:  # a larger member: it and the rest of its run move one slot right
            end = table.index(0, i)  # the sentinel at the latest
            table[i + 1 : end + 1] = table[i:end]
        else:
            end = i
        table[i] = key
        return self._inserted(end)

    def _inserted(self, end: int) -> bool:
        """A new member is in, its run ending at slot ``end``: keep the last slot empty and the
        load under MAX_LOAD. True (what ``add`` returns)."""
        if end == len(self._table) - 1:
            self._table.extend(_ZERO_TABLE * SPILL)
        self._used += 1
        if self._used > self._limit:
            self._resize(int(self._n * GROWTH))
        return True

    def _seek(self, key: int, i: int) -> int:
        """The slot of the first member not smaller than ``key`` in the run going on from slot
        ``i`` (or of the run's end): a binary search, in C, over a long run."""
        table = self._table
        return bisect_left(table, key, i, table.index(0, i))

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is a member (False for anything not in ``[0, 2**64)``)."""
        table = self._table
        try:
            i = ((key >> self._shift_in) * self._n) >> self._shift_out  # type: ignore[operator]
            slot = table[i]
            if slot and slot < key:  # type: ignore[operator]
                i += 1
                slot = table[i]
                if slot and slot < key:  # type: ignore[operator]
                    i += 1
                    slot = table[i]
                    if slot and slot < key:  # type: ignore[operator]
                        slot = table[self._seek(key, i + 1)]  # type: ignore[arg-type]
        except IndexError:
            return False
        if slot == key and slot:
            return True
        return key == 0 and self._has_zero

    def __len__(self) -> int:
        return self._used + self._has_zero

    def __iter__(self) -> Iterator[int]:
        """Members in increasing order. Don't add while iterating: like a dict's iterator
        this one is undefined under mutation (it may miss or skip members)."""
        zero = (0,) if self._has_zero else ()
        return chain(zero, filter(None, self._table))

    def update(self, keys: Iterable[int]) -> None:
        """Add every key of ``keys``."""
        add = self.add
        for key in keys:
            add(key)

    def reserve(self, capacity: int) -> None:
        """Grow the table now so ``capacity`` members fit without further resizing."""
        slots = _slots_for(capacity)
        if slots > self._n:
            self._resize(slots)

    @property
    def nbytes(self) -> int:
        """Bytes held by the table (the object header and the zero flag aside)."""
        return len(self._table) * self._table.itemsize

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + self.nbytes

    def __repr__(self) -> str:
        return f"<{type(self).__name__} len={len(self)} slots={len(self._table)}>"

    def _resize(self, n: int) -> None:
        """Move every member into a new table of ``n`` home slots.

        The members are read in order, so each goes to its new home slot or, if that is
        taken, right after the member before it: one sequential pass over both tables
        (``benchmarks/bench_seen_memory.py`` times it). Growing by 1.25 moves each member
        about four times over the life of the set, twice as often as doubling would.
        """
        old = self._table
        self._alloc(n)
        new = self._table
        last = len(new) - 1
        free = 0  # the first slot after the last member placed
        shift_in, shift_out = self._shift_in, self._shift_out
        for key in filter(None, old):
            i = ((key >> shift_in) * n) >> shift_out
            if i < free:
                i = free
            if i >= last:
                new.extend(_ZERO_TABLE * SPILL)
                last = len(new) - 1
            new[i] = key
            free = i + 1
