"""How many distinct values a crawl met, estimated in 16 KiB whatever their number
(HyperLogLog): the requests plain Scrapy would have made for the links the crawl met, without a
table of them (docs/stats.md, "requests saved")."""

from __future__ import annotations

import math

#: 2**14 registers: a standard error of about 0.8% (1.04 / sqrt(2**14))
_BITS = 14
_SIZE = 1 << _BITS
_REST = 64 - _BITS
_MASK = (1 << 64) - 1
_ALPHA = 0.7213 / (1 + 1.079 / _SIZE)


class DistinctCount:
    """A HyperLogLog sketch of strings (Python's own string hash: this process only)."""

    def __init__(self) -> None:
        self._registers = bytearray(_SIZE)

    def add(self, value: str) -> None:
        h = hash(value) & _MASK
        slot = h >> _REST
        # the rank of the first 1 bit of the rest of the hash (1 for a leading 1)
        rank = _REST - (h & ((1 << _REST) - 1)).bit_length() + 1
        if rank > self._registers[slot]:
            self._registers[slot] = rank

    def __len__(self) -> int:
        registers = self._registers
        estimate = _ALPHA * _SIZE * _SIZE / sum(2.0**-r for r in registers)
        zeros = registers.count(0)
        if estimate <= 2.5 * _SIZE and zeros:  # few values: count the empty registers instead
            estimate = _SIZE * math.log(_SIZE / zeros)
        return round(estimate)
