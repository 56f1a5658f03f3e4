"""A duplicate page's own rows: the links of a page whose body text repeats an earlier page's,
when they lead where that page's do not (docs/rules.md, "A duplicate page that links other
pages").

A tracker's list whose rows are links, fetched after a text-only view of it that shows them as
text, is a duplicate page; dropped whole, the pages only it links are never fetched. Such a
duplicate goes to the spider (its items dropped) and is its own page to the learner, when its
main content shows other rows than the earlier page's (other paths, or in another order: not
other queries of its paths, as an empty month of a calendar linking the next), one of them never
requested, and it is the first such duplicate of that page (a text many URLs repeat with rows of
their own is a template: an empty calendar whose months are paths).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

from scrapy_urlunify.core._url import host_of
from scrapy_urlunify.integration.links._hosts import requested
from scrapy_urlunify.integration.rules._fetched import RECENT
from scrapy_urlunify.learning._near_duplicates import other_rows, other_targets

if TYPE_CHECKING:
    from scrapy.http import HtmlResponse

    from scrapy_urlunify.integration.crawl._policies import CrawlPolicies
    from scrapy_urlunify.integration.pages._near_duplicates import NearDuplicatePages
    from scrapy_urlunify.integration.seen._seen import SeenKeys


class OwnRows(NamedTuple):
    """What a duplicate page's own rows mean: whether the spider gets it for its links
    (``follow``), and the digest of its rows as 8 bytes (``rows``: empty when they are not its
    own), which makes its signature for the learner."""

    follow: bool
    rows: bytes


#: a duplicate page with no rows of its own: dropped, and evidence, as any duplicate page
NONE = OwnRows(False, b"")


class DuplicateRows:
    """The duplicate pages of a crawl whose rows are their own."""

    def __init__(
        self,
        policies: CrawlPolicies,
        near: NearDuplicatePages,
        seen: SeenKeys | None,
        allowed: tuple[str, ...],
        *,
        follow: bool,
    ) -> None:
        self.policies = policies
        #: the spider's ``allowed_domains`` (:func:`allowed_domains`): a row the crawl never
        #: requests (offsite) is no row to follow
        self.allowed = allowed
        #: host -> whether the crawl requests its pages (the hosts of allowed_domains' crawls)
        self._requested: dict[str, bool] = {}
        self.near = near
        self.seen = seen
        #: the spider gets such a page: its items must be dropped (SignaturePipeline enabled)
        self.follow = follow
        #: the pages (base identifiers) one of whose duplicates showed rows of its own
        self._taken: OrderedDict[str, None] = OrderedDict()

    def check(self, response: HtmlResponse, earlier: str) -> OwnRows:
        """A page whose body text repeats that of the page ``earlier`` (its base identifier)
        was fetched: whether its rows are its own."""
        repeated = self.near.repeated_links(response.selector.root, earlier)
        if repeated is None:
            return NONE
        links, known, targets = repeated
        if (
            links is None
            or not other_targets(links, known)
            or earlier in self._taken
            or (known is not None and not other_rows(links, known, 0))
            or not self._unseen(response, targets)
        ):
            return NONE
        self._taken[earlier] = None
        if len(self._taken) > RECENT:
            self._taken.popitem(last=False)
        return OwnRows(self.follow, links.to_bytes(8, "little"))

    def _unseen(self, response: HtmlResponse, targets: tuple[str, ...]) -> bool:
        """Whether a page links a page the crawl requests and has not requested yet
        (``targets``: its main content's, as written; a page of a host outside the spider's
        ``allowed_domains`` is never requested: no row to follow), looked up in one call to the
        seen store (one round trip to a shared one). When the store cannot say (keys of another
        fingerprinter), it may: its links meet the dupefilter anyway."""
        unifier = self.policies.unifier
        identifiers: dict[str, None] = {}
        for target in targets:
            try:
                url = response.urljoin(target)
                if unifier.filter_reason(url) is not None:
                    continue
                if self.allowed:  # (without, every host is requested: nothing to look up)
                    host = host_of(url)
                    if host not in self._requested:
                        identity_host = unifier.host_rules(host).identity_host
                        self._requested[host] = requested(host, identity_host, self.allowed)
                    if not self._requested[host]:
                        continue
                identifiers[unifier.identify(url)] = None
            except ValueError:  # not a URL: no link to follow
                continue
        if not identifiers:
            return False
        held = self.seen.holds_identifiers(list(identifiers)) if self.seen is not None else None
        return held is None or not all(held)
