"""The stores of a crawl without JOBDIR nor Redis: in the process's memory only, lost with it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from scrapy_urlunify.stores._base import ClosingContext, KeptEntry
from scrapy_urlunify.stores._fingerprints import FingerprintSet


class MemorySeenStore(FingerprintSet, ClosingContext):
    """A :class:`~.base.SeenStore` in memory only.

    A subclass rather than a wrapper so ``add`` is FingerprintSet's own method: no
    extra call per request.
    """

    __slots__ = ()

    def close(self) -> None:
        pass


class MemorySignatureStore(ClosingContext):
    """A :class:`~.base.SignatureStore` in memory only: a dict."""

    def __init__(self) -> None:
        self._ids: dict[bytes, str] = {}

    def get_or_set(self, signature: bytes, identifier: str) -> str | None:
        known = self._ids.get(signature)
        if known is None:
            self._ids[signature] = identifier
        return known

    def __len__(self) -> int:
        return len(self._ids)

    def items(self) -> Iterator[tuple[bytes, str]]:
        """Every ``(signature, identifier)`` pair (a resumed crawl rebuilds what it fetched)."""
        return iter(self._ids.items())

    def close(self) -> None:
        pass


class MemoryKeptStore:
    """A :class:`~.base.KeptStore` that keeps nothing: without JOBDIR nor Redis the
    signature middleware's own list is the only copy, and a kill loses it with everything else."""

    def entries(self) -> list[KeptEntry]:
        return []

    def add(self, entry_id: bytes, rules: tuple[str, ...], data: bytes) -> None:
        pass

    def remove(self, entry_ids: Iterable[bytes]) -> None:
        pass

    def close(self) -> None:
        pass

    def __str__(self) -> str:
        return "memory"
