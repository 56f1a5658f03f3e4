"""A compact in-memory set of 64-bit keys.

Scrapy's ``RFPDupeFilter`` keeps a Python ``set`` of 20-byte ``bytes`` digests: a 56-byte
object plus a 16-byte hash-table slot (at most 60 % full) per URL, i.e. ~87-107 bytes per
entry. :class:`FingerprintSet` keeps the raw 8-byte integers in sorted ``array('Q')``
*buckets*, one per equal range of the 64-bit space: ~8.5 bytes per entry at every size, and
one object per few hundred keys instead of one per URL.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import chain
from sys import getsizeof

#: Mean members per bucket past which every bucket splits in two. A bucket costs ~100 bytes of
#: its own (the array object, its allocation's header, its slot in the list of buckets), so a
#: few hundred members make that a fraction of a byte per key; an insert moves half a bucket
#: (``memmove`` of ~2 KB) and a search is ~9 comparisons in C: both stay well under what
#: hashing a URL costs.
SPLIT_AT = 512


def _bits_for(capacity: int) -> int:
    """log2 of the bucket count that holds ``capacity`` members without a split."""
    bits = 0
    while (SPLIT_AT << bits) < capacity and bits < 48:
        bits += 1
    return bits


class FingerprintSet:
    """A set of integers in ``[0, 2**64)``, stored in ~8.5 bytes per member.

    The members live in ``2**bits`` buckets, bucket ``i`` holding those whose top ``bits`` bits
    are ``i``, each a sorted ``array('Q')``: a search is one ``bisect`` in C, an insert one
    ``array.insert`` (a ``memmove`` of the larger members of its bucket). An array grows by
    itself, 1/16 at a time, so the set's memory follows its members closely instead of the
    steps of a hash table. When the buckets hold :data:`SPLIT_AT` members on average, each is
    cut in two at its middle value (two slices, in C), one bucket after the other: no member
    is hashed again, and the memory a split needs beyond the set's is one bucket's.

    Keys are meant to be taken from a digest (e.g. the first 8 bytes of SHA-1/BLAKE2), whose
    high bits are uniform. Values sharing their high bits (small integers, 0..5000) all fall
    into one bucket: slower (its inserts move more), never wrong.

    Out-of-range integers are never members; adding one raises ``ValueError``.

    Not thread-safe: ``add`` is atomic with respect to the caller's single thread (as in
    Scrapy's reactor), not with respect to concurrent threads.
    """

    __slots__ = ("_buckets", "_limit", "_shift", "_used")

    def __init__(self, keys: Iterable[int] = (), *, capacity: int = 0) -> None:
        """Create a set holding ``keys``, with buckets enough for ``capacity`` members.

        Pre-sizing (e.g. when reloading a log of known length) spares the splits on the way."""
        self._alloc(_bits_for(capacity))
        self._used = 0
        self.update(keys)

    def _alloc(self, bits: int) -> None:
        self._buckets = [array("Q") for _ in range(1 << bits)]
        self._set_bits(bits)

    def _set_bits(self, bits: int) -> None:
        self._shift = 64 - bits
        self._limit = SPLIT_AT << bits

    def add(self, key: int) -> bool:
        """Record ``key``; return True if it was not already a member.

        This is the single "seen? and record" step a dupefilter needs: one search, no
        separate lookup.
        """
        try:
            bucket = self._buckets[key >> self._shift]
        except IndexError:
            raise ValueError(f"key {key!r} is outside [0, 2**64)") from None
        i = bisect_left(bucket, key)
        if i < len(bucket) and bucket[i] == key:
            return False
        try:
            # a negative key picks a bucket from the end of the list: the array refuses it
            bucket.insert(i, key)
        except OverflowError:
            raise ValueError(f"key {key!r} is outside [0, 2**64)") from None
        self._used += 1
        if self._used > self._limit:
            self._split()
        return True

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is a member (False for anything not in ``[0, 2**64)``)."""
        try:
            bucket = self._buckets[key >> self._shift]  # type: ignore[operator]
            i = bisect_left(bucket, key)  # type: ignore[call-overload]
        except (IndexError, TypeError):
            return False
        return i < len(bucket) and bucket[i] == key

    def __len__(self) -> int:
        return self._used

    def __iter__(self) -> Iterator[int]:
        """Members in increasing order. Don't add while iterating: like a dict's iterator
        this one is undefined under mutation (it may miss or repeat members)."""
        return chain.from_iterable(self._buckets)

    def update(self, keys: Iterable[int]) -> None:
        """Add every key of ``keys``."""
        add = self.add
        for key in keys:
            add(key)

    def reserve(self, capacity: int) -> None:
        """Split the buckets now so ``capacity`` members fit without further splits."""
        while self._limit < capacity and self._shift > 16:
            self._split()

    @property
    def nbytes(self) -> int:
        """Bytes held by the buckets and their list (the object header aside)."""
        return getsizeof(self._buckets) + sum(map(getsizeof, self._buckets))

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + self.nbytes

    def __repr__(self) -> str:
        return f"<{type(self).__name__} len={len(self)} buckets={len(self._buckets)}>"

    def _split(self) -> None:
        """Cut every bucket in two at its middle value, one after the other: each is let go
        as soon as its halves exist."""
        old = self._buckets
        shift = self._shift - 1
        new: list[array[int]] = []
        append = new.append
        for i in range(len(old) - 1, -1, -1):  # from the end: pop() lets each bucket go
            bucket = old.pop()
            middle = bisect_left(bucket, ((i << 1) | 1) << shift)
            append(bucket[middle:])
            append(bucket[:middle])
        new.reverse()
        self._buckets = new
        self._set_bits(64 - shift)
