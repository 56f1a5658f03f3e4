"""The near-duplicate index of one site: "have I seen a page this close?" over 64-bit fingerprints.

Pure, no Scrapy import. Manku, Jain and Das Sarma's scheme: cut a fingerprint into four 16-bit
blocks and keep, for each block, the pages by the value of that block. Two fingerprints at most 3
bits apart agree on at least one whole block (four blocks, three differing bits), so the pages
that share one of the four blocks are all the candidates; at most 7 bits apart, they agree on one
block but for at most one bit, so the candidates are in 4 x 17 buckets (the block, and the block
with each of its 16 bits flipped), read only when no page is within 3 bits. Calibration
(docs/near_duplicates.md) puts the thresholds at 3 and 7 bits.

Compact, in flat arrays rather than Python objects (benchmarks/bench_near_duplicates.py: 43
bytes a page at 100k pages, 34 at 1M): per page its fingerprint and a caller's 64-bit key (16
bytes), and for each block the position of the next page in its bucket (4 x 4 bytes); per block
a table of bucket heads that doubles as the index grows (about two pages a bucket, up to 65,536
buckets: past 131,072 pages a bucket holds pages/65,536, 15 at 1M). A lookup within 3 bits reads
4 buckets; one that finds nothing within 3 bits reads 68 (~100 pages compared at 100k, ~1,000
at 1M).

Bounded: at most ``capacity`` pages; a full index still answers, and adds no page. It
serialises to bytes (:meth:`NearDuplicateIndex.to_bytes`: 16 bytes a page and a header, the
buckets rebuilt on load) for a JOBDIR file or a Redis value.

The *key* of a page is the caller's: a 64-bit integer that leads back to the page (in a crawl,
the key of the page's base identifier or of its exact signature, which the signature index maps
to the identifier). The index never reads it.
"""

from __future__ import annotations

import struct
import sys
from array import array
from typing import NamedTuple

from scrapy_urlunify.learning._near_duplicates import resemblance

#: the largest distance a lookup is sure to find: four blocks of 16 bits, so two fingerprints
#: at most 7 bits apart differ in at most one bit in some block
MAX_DISTANCE = 7
#: up to this distance, some block is equal: one bucket per block to look at, not 17
_EXACT_BLOCK_REACH = 3
DEFAULT_CAPACITY = 1 << 24
_BLOCKS = 4
_BLOCK_BITS = 16
_MIN_HEAD_BITS = 2
_PAGES_PER_BUCKET = 2
_HEADER = struct.Struct("<4sBBxxQQ")  # magic, version, head bits (informative), count, capacity
_MAGIC = b"NDUP"
_VERSION = 1
_NONE = -1
#: by the number of low block bits a bucket leaves out: the block itself and each one-bit flip
#: of a bit the bucket keeps (a flip of a bit it leaves out is the same bucket)
_FLIPS = tuple(
    (0, *(1 << bit for bit in range(drop, _BLOCK_BITS))) for drop in range(_BLOCK_BITS + 1)
)


class Match(NamedTuple):
    """The page nearest to a fingerprint: its ``key``, the ``distance`` in bits between the two
    fingerprints, and the ``resemblance`` that distance estimates (:func:`resemblance`)."""

    key: int
    distance: int
    resemblance: float


class NearDuplicateIndex:
    """The fingerprints of one site's pages (see the module docstring)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._fingerprints = array("Q")
        self._keys = array("Q")
        self._next = tuple(array("i") for _ in range(_BLOCKS))
        self._head_bits = _MIN_HEAD_BITS
        self._heads = self._empty_heads()

    def __len__(self) -> int:
        return len(self._fingerprints)

    @property
    def full(self) -> bool:
        """Whether the index holds ``capacity`` pages (it adds no more)."""
        return len(self._fingerprints) >= self.capacity

    def _empty_heads(self) -> tuple[array[int], ...]:
        return tuple(array("i", [_NONE]) * (1 << self._head_bits) for _ in range(_BLOCKS))

    def nearest(self, fingerprint: int, max_distance: int = MAX_DISTANCE) -> Match | None:
        """The page nearest to ``fingerprint``, at most ``max_distance`` bits away (0 to 7), the
        first one added among equally near pages; None when there is none."""
        if not 0 <= max_distance <= MAX_DISTANCE:
            raise ValueError(f"max_distance must be between 0 and {MAX_DISTANCE}")
        fingerprints = self._fingerprints
        best = _NONE
        best_distance = max_distance + 1
        drop = _BLOCK_BITS - self._head_bits  # a bucket is the block's top head bits
        # the blocks themselves first: every page within 3 bits is there, so a match within 3
        # bits found there is the nearest, and the 4 x 16 flipped buckets are not read
        rounds: list[tuple[int, ...]] = [(0,)]
        if max_distance > _EXACT_BLOCK_REACH:
            rounds.append(_FLIPS[drop][1:])
        for flips in rounds:
            for block in range(_BLOCKS):
                nexts = self._next[block]
                heads = self._heads[block]
                value = (fingerprint >> (_BLOCK_BITS * block)) & 0xFFFF
                for flip in flips:
                    at = heads[(value ^ flip) >> drop]
                    while at != _NONE:
                        bits = (fingerprints[at] ^ fingerprint).bit_count()
                        if bits < best_distance or (bits == best_distance and at < best):
                            best, best_distance = at, bits
                        at = nexts[at]
            if best_distance <= _EXACT_BLOCK_REACH:
                break
        if best == _NONE:
            return None
        return Match(self._keys[best], best_distance, resemblance(best_distance))

    def add(self, fingerprint: int, key: int) -> bool:
        """Remember a page; False when the index is full (the page is not added)."""
        if len(self._fingerprints) >= self.capacity:
            return False
        at = len(self._fingerprints)
        self._fingerprints.append(fingerprint)
        self._keys.append(key)
        for block in range(_BLOCKS):
            self._next[block].append(_NONE)
        if at + 1 > _PAGES_PER_BUCKET << self._head_bits and self._head_bits < _BLOCK_BITS:
            self._grow()
        else:
            self._link(at, fingerprint)
        return True

    def seen(self, fingerprint: int, key: int, max_distance: int = MAX_DISTANCE) -> Match | None:
        """:meth:`nearest`, then the page is remembered unless its very fingerprint is known
        already (a near-duplicate is kept too, so that its own near-duplicates are found, and
        the nearest page, not the first, is what a later page matches)."""
        found = self.nearest(fingerprint, max_distance)
        if found is None or found.distance:
            self.add(fingerprint, key)
        return found

    def _link(self, at: int, fingerprint: int) -> None:
        for block in range(_BLOCKS):
            heads = self._heads[block]
            bucket = ((fingerprint >> (_BLOCK_BITS * block)) & 0xFFFF) >> (
                _BLOCK_BITS - self._head_bits
            )
            # prepended: a walk meets the newest first, so nearest() compares positions to
            # prefer the page added first among equally near ones
            self._next[block][at] = heads[bucket]
            heads[bucket] = at

    def _grow(self) -> None:
        """Double the buckets until they hold about :data:`_PAGES_PER_BUCKET` pages each, and
        relink every page (amortised: each page is relinked a few times in all)."""
        count = len(self._fingerprints)
        while count > _PAGES_PER_BUCKET << self._head_bits and self._head_bits < _BLOCK_BITS:
            self._head_bits += 1
        self._heads = self._empty_heads()
        for at, fingerprint in enumerate(self._fingerprints):
            self._link(at, fingerprint)

    def to_bytes(self) -> bytes:
        """The index as bytes (little-endian whatever the machine): :meth:`from_bytes` reads it."""
        fingerprints, keys = array("Q", self._fingerprints), array("Q", self._keys)
        if sys.byteorder == "big":  # pragma: no cover - little-endian machines only here
            fingerprints.byteswap()
            keys.byteswap()
        header = _HEADER.pack(_MAGIC, _VERSION, self._head_bits, len(fingerprints), self.capacity)
        return header + fingerprints.tobytes() + keys.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> NearDuplicateIndex:
        """The index :meth:`to_bytes` wrote; ValueError for anything else."""
        if len(data) < _HEADER.size:
            raise ValueError("not a near-duplicate index: too short")
        magic, version, _, count, capacity = _HEADER.unpack_from(data)
        if magic != _MAGIC or version != _VERSION:
            raise ValueError("not a near-duplicate index, or a version this code cannot read")
        if len(data) != _HEADER.size + 16 * count or count > capacity:
            raise ValueError("near-duplicate index truncated or inconsistent")
        index = cls(capacity)
        body = memoryview(data)[_HEADER.size :]
        index._fingerprints.frombytes(body[: 8 * count])
        index._keys.frombytes(body[8 * count :])
        if sys.byteorder == "big":  # pragma: no cover
            index._fingerprints.byteswap()
            index._keys.byteswap()
        for nexts in index._next:
            nexts.extend(array("i", [_NONE]) * count)
        index._grow()
        return index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NearDuplicateIndex):
            return NotImplemented
        return (self.capacity, self._fingerprints, self._keys) == (
            other.capacity,
            other._fingerprints,
            other._keys,
        )

    __hash__ = None  # type: ignore[assignment]
