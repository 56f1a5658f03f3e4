"""Near-duplicate pages in a crawl: each site's index of page fingerprints
(:class:`NearDuplicatePages`), the pages it remembers, and their JOBDIR file or Redis records
(docs/near_duplicates.md, "In the crawl": the thresholds in resemblance, what is remembered, how
processes share their pages).
"""

from __future__ import annotations

import logging
import struct
from collections import OrderedDict
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from lxml import etree

from scrapy_urlunify.integration.rules._fetched import RECENT
from scrapy_urlunify.learning._listing_pages import listing_fingerprint
from scrapy_urlunify.learning._near_duplicate_index import MAX_DISTANCE, Match, NearDuplicateIndex
from scrapy_urlunify.learning._near_duplicates import (
    DEFAULT_MAX_BYTES,
    folded_fingerprint,
    main_content,
    main_targets,
    other_rows,
    page_fingerprint,
    resemblance,
)

if TYPE_CHECKING:
    pass


logger = logging.getLogger(__name__)

#: appended to a site's name for the index of its pages too short for SimHash
#: (``learning.near_duplicates.short_fingerprint``): their digests are compared for equality only
SHORT_SITE = "\0short"
#: appended to a site's name for the index of its pages' digests up to numbers
#: (``learning.near_duplicates.folded_fingerprint``), compared for equality only
FOLDED_SITE = "\0folded"
#: appended to a site's name for the index of its short list pages' digests up to their pager
#: (``learning.listing_pages.listing_fingerprint``), compared for equality only
LISTING_SITE = "\0listing"
#: appended to a site's name in a shared log's record of what a page links to and shows
#: (``main_content``'s digest, in place of a fingerprint): not an index, read into the pages'
#: links
LINKS_SITE = "\0links"
#: what :meth:`NearDuplicatePages.repeated_links` finds for a page whose links were not noted
_UNKNOWN = object()
#: HTML bodies larger than this (or than ``URLUNIFY_SIGNATURE_MAX_BYTES``) get no fingerprint
MAX_BODY = 4 << 20
_MAGIC = b"URLUNIFY-NEAR 1\n"
_SIZE = struct.Struct("<I")
_RECORD = struct.Struct(
    "<QQ16sH"
)  # fingerprint, key, exact signature, site length; site, identifier


class NearDuplicate(NamedTuple):
    """The earlier page a page is nearly the same as: its base identifier (None when it was
    forgotten), its exact signature (of the first page of its near-duplicates, None when
    forgotten), the ``distance`` in bits between the fingerprints and the ``resemblance``, and
    whether the two link to or show other pages, or the same in another order (``other_links``:
    a list of other rows or sorted otherwise, which no SimHash distance tells from a view of the
    same one: ``learning.near_duplicates.other_rows``; False when the earlier page's links are
    not known)."""

    of: str | None
    signature: bytes | None
    distance: int
    resemblance: float
    other_links: bool = False


def distance_for(minimum: float) -> int:
    """The largest distance in bits (0 to 7, the index's reach) whose resemblance is at least
    ``minimum``: 0.94 -> 7, 0.985 -> 3, 1.0 -> 0."""
    bits = 0
    while bits < MAX_DISTANCE and resemblance(bits + 1) >= minimum:
        bits += 1
    return bits


def page_key(base_identifier: str) -> int:
    """The 64-bit key of a page in the index."""
    return int.from_bytes(blake2b(base_identifier.encode(), digest_size=8).digest(), "little")


class NearDuplicatePages:
    """The near-duplicate indexes of a crawl's sites, and the pages found near an earlier one."""

    def __init__(self, max_body: int, reach: int, group_distance: int) -> None:
        #: the largest body fingerprinted: libxslt writes a page's whole main text before the
        #: fingerprint reads its first MiB, and a 30 MiB page's text cost 120 MiB of peak memory
        self.max_body = max_body
        #: the largest distance any use asks for: the index is searched that far
        self.reach = reach
        #: a page this near an earlier one takes that page's signature as its signature for learning
        self.group_distance = group_distance
        self._indexes: dict[str, NearDuplicateIndex] = {}
        self._pages: OrderedDict[int, tuple[str, bytes]] = (
            OrderedDict()
        )  # key -> (base identifier, signature)
        #: key -> what the page's main content links and shows (``main_content``), for the last
        #: RECENT pages, in the JOBDIR file and the shared log too (a page whose links are
        #: unknown, forgotten or fetched by an older version, is judged by its text alone)
        self._links: OrderedDict[int, int | None] = OrderedDict()
        #: fetched URL -> the page it is a near-duplicate of, for the item pipeline
        self.marked: OrderedDict[str, NearDuplicate] = OrderedDict()
        #: with a shared (Redis) log: the records of the pages added since it was last written
        self.pending: list[bytes] | None = None

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> NearDuplicatePages:
        """The crawl's near-duplicate pages, from its checked ``URLUNIFY_*`` settings."""
        distances = [
            distance_for(settings[name])
            for name in (
                "URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE",
                "URLUNIFY_NEAR_DUPLICATE_ITEM_RESEMBLANCE",
                "URLUNIFY_NEAR_DUPLICATE_CANONICAL_RESEMBLANCE",
                "URLUNIFY_NEAR_DUPLICATE_LEARN_RESEMBLANCE",
            )
        ]
        return cls(
            min(settings["URLUNIFY_SIGNATURE_MAX_BYTES"], MAX_BODY),
            max(distances),
            distance_for(settings["URLUNIFY_NEAR_DUPLICATE_LEARN_RESEMBLANCE"]),
        )

    def __len__(self) -> int:
        """How many pages the indexes hold (a page's digest up to numbers is not one more)."""
        return sum(
            len(index)
            for site, index in self._indexes.items()
            if not site.endswith((FOLDED_SITE, LISTING_SITE))
        )

    def check(
        self,
        site: str,
        root: etree._Element,
        base_identifier: str,
        sig: bytes,
        url: str | None = None,
    ) -> tuple[int | None, NearDuplicate | None]:
        """A page of ``site`` was fetched (``root``: its parsed tree): its fingerprint (None
        for a page with no text), and the earlier page of another identifier nearest to it
        within :attr:`reach` bits (None when there is none). The page is remembered. A page of
        fewer than ``MIN_FEATURES`` chunks of text gets the digest of its main text, looked up
        in the site's index of such digests: a near-duplicate (0 bits) only of an equal main text.
        A longer page whose main text equals an earlier one's up to its numbers
        (``folded_fingerprint``, in an index of its own) is 0 bits from it, and so is a short
        list page fetched at ``url`` that shows what an earlier one shows under another pager
        (``listing_fingerprint``)."""
        try:
            text, links = main_content(root)
            found_fp = page_fingerprint(text, DEFAULT_MAX_BYTES)
        except (ValueError, etree.LxmlError):
            return None, None
        if found_fp is None:
            return None, None
        value, short = found_fp
        key = page_key(base_identifier)
        new_links = key not in self._links
        if new_links:
            self._note_links(key, links)
        # a short page's digest: equal or not, in an index of its own
        looked_up = [(site + SHORT_SITE if short else site, value)]
        match = self._seen(*looked_up[0], key, 0 if short else self.reach)
        if not short and (match is None or match.distance > 0):
            # equal up to its numbers: 0 bits, whatever the SimHash of the pager around them says
            looked_up.append((site + FOLDED_SITE, folded_fingerprint(text, DEFAULT_MAX_BYTES)))
            match = self._seen(*looked_up[1], key, 0) or match
        elif short and url is not None:
            listing = listing_fingerprint(root, text, url, DEFAULT_MAX_BYTES)
            if listing is not None:
                looked_up.append((site + LISTING_SITE, listing))
                listed = self._seen(*looked_up[1], key, 0)  # remembered whatever the match
                match = match or listed
        found = None
        group = sig
        if match is not None:
            of, earlier_sig = self._pages.get(match.key, (None, None))
            found = NearDuplicate(
                of,
                earlier_sig,
                match.distance,
                match.resemblance,
                other_rows(links, self._links.get(match.key, links), match.distance),
            )
            if earlier_sig is not None and match.distance <= self.group_distance:
                group = earlier_sig
        if key not in self._pages:
            self._remember(key, base_identifier, group)
            if self.pending is not None:
                if new_links and links is not None:
                    looked_up.append((site + LINKS_SITE, links))
                for index_name, indexed in looked_up:
                    name = index_name.encode()
                    self.pending.append(
                        _RECORD.pack(indexed, key, group[:16].ljust(16, b"\0"), len(name))
                        + name
                        + base_identifier.encode()
                    )
        return value, found

    def repeated_links(
        self, root: etree._Element, earlier: str
    ) -> tuple[int | None, int | None, tuple[str, ...]] | None:
        """What a page whose body text repeats that of the page ``earlier`` (its base
        identifier) links to and what that page links to (``main_content``'s digests, None for
        no link), and this page's targets as written; None when that page's links are unknown
        (forgotten, fetched by an older version, or not an HTML page) or this page's tree cannot
        be read."""
        known = self._links.get(page_key(earlier), _UNKNOWN)
        if known is _UNKNOWN:
            return None
        try:
            _, links, targets = main_targets(root)
        except (ValueError, etree.LxmlError):
            return None
        return links, known, targets  # type: ignore[return-value]

    def _note_links(self, key: int, links: int | None) -> None:
        """Remember what the page ``key`` links to (``main_content``'s digest)."""
        self._links[key] = links
        if len(self._links) > RECENT:
            self._links.popitem(last=False)

    def _seen(self, site: str, value: int, key: int, reach: int) -> Match | None:
        """Look ``value`` up in the index ``site``, and add it there: the nearest page of
        another key within ``reach``, if any."""
        match = self._index(site).seen(value, key, reach)
        return match if match is not None and match.key != key else None

    def _index(self, site: str) -> NearDuplicateIndex:
        index = self._indexes.get(site)
        if index is None:
            index = self._indexes[site] = NearDuplicateIndex()
        return index

    def replay(self, records: list[bytes]) -> int:
        """Add the pages of a shared log's ``records`` (see :attr:`pending`); how many were read
        (a record that does not unpack is skipped). A record replayed again adds nothing: its
        fingerprint is in the index already (at 0 bits, so not added twice), its key remembered."""
        read = 0
        for record in records:
            try:
                value, key, sig, size = _RECORD.unpack_from(record)
                site = record[_RECORD.size : _RECORD.size + size].decode()
                identifier = record[_RECORD.size + size :].decode()
            except (struct.error, UnicodeDecodeError):
                continue
            if site.endswith(LINKS_SITE):
                self._note_links(key, value)
                read += 1
                continue
            self._index(site).seen(value, key, 0)
            if key not in self._pages:
                self._remember(key, identifier, sig)
            read += 1
        return read

    def group(self, base_identifier: str, sig: bytes) -> bytes:
        """The signature the learner sees for a page of signature ``sig`` (or an exact duplicate
        of the page ``base_identifier``): that of the first page of its near-duplicates, so a
        page and its near-duplicates are a pair, and a probation sample compared with the page
        it was merged into agrees when they are near-duplicates."""
        known = self._pages.get(page_key(base_identifier))
        return known[1] if known is not None else sig

    def keep_apart(self, base_identifier: str, sig: bytes) -> None:
        """The page ``base_identifier`` is no near-duplicate for the learner (it shows the value
        its URL differs by): its exact duplicates are grouped under its own ``sig`` too."""
        key = page_key(base_identifier)
        if key in self._pages:
            self._pages[key] = (base_identifier, sig)

    def _remember(self, key: int, base_identifier: str, sig: bytes) -> None:
        pages = self._pages
        pages[key] = (base_identifier, sig)
        if len(pages) > RECENT:
            pages.popitem(last=False)

    def mark(self, url: str, found: NearDuplicate) -> None:
        """The page fetched at ``url`` is a near-duplicate of ``found`` (by URL, not identifier:
        the page that completes a rule's evidence changes its own identifier before its items
        reach the pipeline)."""
        marked = self.marked
        marked[url] = found
        if len(marked) > RECENT:
            marked.popitem(last=False)

    # -- JOBDIR ----------------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write the indexes and the pages remembered to ``path`` (replaced atomically)."""
        parts = [_MAGIC, _SIZE.pack(len(self._indexes))]
        for site, index in self._indexes.items():
            name, blob = site.encode(), index.to_bytes()
            parts += [_SIZE.pack(len(name)), name, _SIZE.pack(len(blob)), blob]
        parts.append(_SIZE.pack(len(self._pages)))
        for key, (identifier, sig) in self._pages.items():
            name = identifier.encode()
            parts += [
                key.to_bytes(8, "little"),
                sig[:16].ljust(16, b"\0"),
                _SIZE.pack(len(name)),
                name,
            ]
        # what the pages link to, after what older versions read (they stop before it)
        known = [(key, links) for key, links in self._links.items() if links is not None]
        parts.append(_SIZE.pack(len(known)))
        for key, links in known:
            parts += [key.to_bytes(8, "little"), links.to_bytes(8, "little")]
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(b"".join(parts))
        temporary.replace(path)

    def load(self, path: Path) -> bool:
        """Read what :meth:`save` wrote; False (and a warning) for a file unreadable."""
        try:
            data = memoryview(path.read_bytes())
        except FileNotFoundError:
            return False
        try:
            if bytes(data[: len(_MAGIC)]) != _MAGIC:
                raise ValueError("not a near-duplicate file")
            at = len(_MAGIC)

            def size() -> int:
                nonlocal at
                (value,) = _SIZE.unpack_from(data, at)
                at += _SIZE.size
                return int(value)

            def chunk(length: int) -> bytes:
                nonlocal at
                if at + length > len(data):
                    raise ValueError("truncated")
                at += length
                return bytes(data[at - length : at])

            indexes = {}
            for _ in range(size()):
                site = chunk(size()).decode()
                indexes[site] = NearDuplicateIndex.from_bytes(chunk(size()))
            pages: OrderedDict[int, tuple[str, bytes]] = OrderedDict()
            for _ in range(size()):
                key = int.from_bytes(chunk(8), "little")
                sig = chunk(16)
                pages[key] = (chunk(size()).decode(), sig)
            links: OrderedDict[int, int | None] = OrderedDict()
            if at < len(data):  # a file of an older version has no links
                for _ in range(size()):
                    key = int.from_bytes(chunk(8), "little")
                    links[key] = int.from_bytes(chunk(8), "little")
        except (ValueError, struct.error, UnicodeDecodeError) as e:
            logger.warning(
                "Ignoring unreadable near-duplicate index %s (%s): the near-duplicates of "
                "the pages fetched before this run are not found",
                path,
                e,
            )
            return False
        self._indexes, self._pages, self._links = indexes, pages, links
        return True
