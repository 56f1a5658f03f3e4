"""The pages a crawl with learning fetched lately (or obtained under a trusted declared
canonical): by URL, by identifier under the current policy, by base identifier, and (Redis) the
scope's set of pages every process fetched. The
dequeue check asks whether a queued request's page was fetched while it waited, and rule
probation compares a sample with the page it was merged into; identifiers change with every
learned rule, so the URLs are kept and identified again (docs/learning.md, "In the crawl").
"""

from __future__ import annotations

from collections import OrderedDict
from hashlib import blake2b
from typing import TYPE_CHECKING, TypeVar

from scrapy_urlunify.core._url import InvalidURL

if TYPE_CHECKING:
    from scrapy_urlunify.core._unify import Unifier
    from scrapy_urlunify.integration.crawl._faults import StoreFaults
    from scrapy_urlunify.stores._redis_tables import RedisFetchedStore


#: pages (and declared canonicals' identifiers) remembered, the most recent ones
RECENT = 100_000

V = TypeVar("V")


class Recent(OrderedDict[str, V]):
    """A table of the :data:`RECENT` keys remembered last: the oldest go first."""

    def remember(self, key: str, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > RECENT:
            self.popitem(last=False)


class FetchedPages:
    """The pages fetched lately (by this process; with Redis, the identifiers of every
    process's too)."""

    def __init__(self, faults: StoreFaults, shared: RedisFetchedStore | None) -> None:
        self.faults = faults
        #: Redis: the identifiers every process of the scope fetched
        self.shared = shared
        self._urls: Recent[bytes] = (
            Recent()
        )  # URL -> signature, identified again when a rule is learned
        self._identifiers: Recent[tuple[str, bytes]] = (
            Recent()
        )  # identifier now -> (URL, signature)
        self._base: Recent[None] = Recent()  # their identifiers under the settings' policy

    def add(self, url: str, identifier: str, sig: bytes) -> None:
        """A page fetched now, ``identifier`` under the current policy."""
        self._urls.remember(url, sig)
        self._identifiers.remember(identifier, (url, sig))
        shared = self.shared
        if shared is not None:
            self.faults.guarded(lambda: shared.add(_member(identifier)), None)

    def add_base(self, base_identifier: str) -> None:
        """A page fetched, or fetched anyway as a sample, under its base identifier."""
        self._base.remember(base_identifier, None)

    def has_base(self, base_identifier: str) -> bool:
        return base_identifier in self._base

    def page(self, identifier: str) -> tuple[str, bytes] | None:
        """``(URL, signature)`` of the page this process fetched with ``identifier`` (under the
        current policy), or None."""
        return self._identifiers.get(identifier)

    def urls(self) -> list[str]:
        return list(self._urls)

    def identify_again(self, unifier: Unifier) -> None:
        """A rule was adopted or revoked: the identifiers of the pages fetched so far under the
        new policy (shared with the other processes' dequeue checks)."""
        self._identifiers.clear()
        self._identify(unifier)
        shared = self.shared
        if shared is not None and self._identifiers:
            members = [_member(i) for i in self._identifiers]
            self.faults.guarded(lambda: shared.add_many(members), None)

    def resumed(self, pages: list[tuple[str, str, bytes]], unifier: Unifier) -> int:
        """The pages an earlier run of the job fetched (``(URL, base identifier, signature)``),
        as the pages this run fetches; the number of pages now known."""
        for url, base_identifier, sig in pages:
            self._urls.remember(url, sig)
            self._base.remember(base_identifier, None)
        self._identify(unifier)
        return len(self._urls)

    def _identify(self, unifier: Unifier) -> None:
        for url, sig in self._urls.items():
            try:
                self._identifiers[unifier.identify(url)] = (url, sig)
            except InvalidURL:
                continue

    def fetched(self, identifier: str, shared: bool = True) -> bool:
        """Whether a page with this identifier (under the current policy) was fetched: lately by
        this process, or, with Redis and ``shared``, by any process of the scope (one round
        trip, which also carries this process's fetches not sent yet)."""
        if identifier in self._identifiers:
            return True
        store = self.shared
        if store is None or not shared:
            return False
        # not fetched, as far as we know, when the store fails (the crawl closes)
        return self.faults.guarded(lambda: store.fetched(_member(identifier)), False)

    def flush(self) -> None:
        """Send the fetches not sent yet (Redis)."""
        shared = self.shared
        if shared is not None:
            self.faults.guarded(shared.flush, None)


def _member(identifier: str) -> bytes:
    """The member of the shared fetched set for an identifier."""
    return blake2b(identifier.encode("utf-8", "surrogatepass"), digest_size=8).digest()
