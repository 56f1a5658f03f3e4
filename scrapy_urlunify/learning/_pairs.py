"""The pair finders: which one URL difference an observed page and a page seen before show
(a query parameter, the host, a leading path segment), and whether their signatures agree.

:func:`read_page` reads an observed page's URL once; :class:`PairFinder` looks its
neighbours up in the :class:`~.page_index.PageIndex` and records the page there for later
ones. Each :class:`Pair` is a candidate rule with one piece of evidence (equal signatures) or
one counter-example (different ones); weighing them is the learner's business.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple
from urllib.parse import unquote

from scrapy_urlunify.core._domains import is_ip, split_domain, within
from scrapy_urlunify.core._url import Parts
from scrapy_urlunify.learning._page_index import PageIndex, slot
from scrapy_urlunify.learning._rule_types import ALIAS, PARAM, PATH, SUFFIX

#: Parameters considered per URL (the first ones in sorted order); more are part of the context.
MAX_PARAMS = 20
#: A query with more items than this is only recorded as a whole (no per-parameter analysis).
MAX_ITEMS = 100
#: Values of one parameter remembered per context, and records per index entry.
_MAX_VALUES = 3
_MAX_RECORDS = 32
#: last segments remembered for suffix pairs (the least recently seen forgotten first), and the
#: pairs kept of each while it was seen under one directory only
_MAX_SUFFIXES = 1 << 15
_KEPT_PAIRS = 4
#: Hosts remembered per path+query for aliases.
_MAX_HOSTS = 4
#: Hosts whose first page is remembered (to tell which of two mirrors came first).
_MAX_HOSTS_SEEN = 1 << 16


class Page(NamedTuple):
    """One observed page, as the three pair finders read it."""

    url: str
    sig: str
    host: str  # identity host
    port: str
    hostkey: str  # host[:port]
    path: str
    frag: str  # "" or "#fragment"
    items: list[str]  # query items, as the identity layer reads them, sorted
    query: str
    key: int  # index slot of this very page


class Pair(NamedTuple):
    """Two pages that differ in exactly one thing: the candidate rule ``(kind, a, b)``, whether
    their signatures are equal, the context and path digests' sources, and whether an equal
    pair is evidence (a present/absent parameter pair is only ever a counter-example)."""

    kind: str
    a: str
    b: str
    equal: bool
    ctx: str
    path: str
    sig: str
    earlier: str
    evidence: bool
    #: a parameter pair's ``host:port/path?rest`` (the rest of the query: the page it tested,
    #: see ``rule_contexts``), and the parameter's two values ("" where absent)
    hint: str = ""
    values: tuple[str, str] = ("", "")

    @property
    def where(self) -> tuple[str, frozenset[str]]:
        """The path and the other query items of a parameter pair (the rule contexts it is in)."""
        return self.path, other_items(self.hint)


#: parameter values that select everything a filter could (``status_id=*`` on Redmine, ``all``)
SELECT_ALL = frozenset({"*", "all", "any"})


def _selects_all(items: str) -> bool:
    """Whether a value of the query items ``items`` of one parameter (``status_id=%2A``, as
    written in the URL) selects everything."""
    return any(unquote(item.partition("=")[2]).lower() in SELECT_ALL for item in items.split("&"))


def other_items(hint: str) -> frozenset[str]:
    """The other query items of a parameter pair, from its hint."""
    rest = hint.partition("?")[2]
    return frozenset(rest.split("&")) if rest else frozenset()


def read_page(url: str, identity_host: str, sig: str) -> Page | None:
    """The page of an http(s) URL; None for anything else."""
    host = identity_host.strip().lower() if isinstance(identity_host, str) else ""
    if not host or not isinstance(url, str):
        return None
    try:
        p = Parts.split(url)
    except ValueError:
        return None
    if p is None or not p.path.startswith("/") or p.scheme not in ("http", "https"):
        return None
    port = p.port
    hostkey = f"{host}:{port}" if port else host
    frag = "" if p.fragment is None else "#" + p.fragment
    q = p.query
    if q:
        if "%20" in q:
            q = q.replace("%20", "+")
        items = sorted(i for i in q.split("&") if i and i[-1] != "=")
    else:
        items = []
    query = "&".join(items)
    return Page(
        url,
        sig,
        host,
        port,
        hostkey,
        p.path,
        frag,
        items,
        query,
        _param_slot(hostkey + p.path, query, frag),
    )


def _each_param(items: list[str]) -> Iterator[tuple[str, str, str]]:
    """For each parameter of a query's ``items`` (the first :data:`MAX_PARAMS` names, lower-cased,
    sorted): its name, its value (all its items) and the rest of the query."""
    lowered = [i.partition("=")[0].lower() for i in items]
    for name in sorted(set(lowered))[:MAX_PARAMS]:
        if name:
            yield (
                name,
                "&".join(i for i, n in zip(items, lowered, strict=True) if n == name),
                "&".join(i for i, n in zip(items, lowered, strict=True) if n != name),
            )


def split_last(path: str) -> tuple[str, str]:
    """``/x/amp/`` -> ``("/x", "amp")``: a path's directory and last segment (its slash left
    out); ``""`` for what it has not."""
    head, _, last = (path[:-1] if path.endswith("/") else path).rpartition("/")
    return head, last


def _param_slot(base: str, rest: str, frag: str) -> int:
    """The index slot of ``base`` (``host:port/path``) with the query ``rest``: the page's own
    record (the page without a parameter, for a pair) and those of that page with one parameter
    more, each value; written and read by the pair finders and :meth:`PairFinder.values_seen`."""
    return slot(f"P{base}?{rest}{frag}")


def _alias_slot(page: Page) -> int:
    """The index slot of ``page``'s path and query on any host (alias pairs)."""
    return slot(f"A{page.path}?{page.query}{page.frag}")


def _registrable(host: str) -> str:
    """``shop.site.co.uk`` -> ``site.co.uk``; under no known public suffix, the last two labels
    (``mirror.site.test`` -> ``site.test``); ``""`` for an IP address or a public suffix."""
    if is_ip(host):
        return ""
    d = split_domain(host)
    if d.suffix:
        return f"{d.label}.{d.suffix}" if d.label else ""
    return ".".join(host.split(".")[-2:])


class PairFinder:
    """Finds the pairs of each observed page in ``index``. ``sites``: the hosts of the crawl
    (two hosts within them may be aliases, as may two hosts of one registrable domain)."""

    def __init__(self, index: PageIndex, sites: Sequence[str]) -> None:
        self.index = index
        self.sites = sites
        self._related_cache: dict[tuple[str, str], bool] = {}
        #: (host, last segment) -> (its first directory and the pairs kept from it), or
        #: ("", []) once it was seen under a second directory (:meth:`_repeated`)
        self._suffixes: OrderedDict[tuple[str, str], tuple[str, list[Pair]]] = OrderedDict()
        self._first_seen: dict[
            str, int
        ] = {}  # host -> order of its first page (aliases' direction)

    def param_pairs(
        self, page: Page, e0: tuple[Any, ...], ruled: frozenset[str] = frozenset()
    ) -> list[Pair]:
        """Pairs for parameter rules (``e0``: the index entry of this very page). Only two
        different values of a parameter with one content are evidence (``ref=a`` =
        ``ref=b``); a page with and without it (``page=1`` and no ``page``: a default value)
        is only ever a counter-example, never evidence, since once learned from defaults the
        rule would merge ``page=2`` and nothing fetched afterwards could contradict it.
        ``ruled``: parameters a rule in force says do not matter on the page's host; a page
        recorded with one of them instead of this page's parameter (``?ref=p5`` for
        ``?print=1``) is the page without it, as that rule reads it."""
        host, path, sig, frag, items = page.host, page.path, page.sig, page.frag, page.items
        pairs: list[Pair] = []
        ctx_q = f"{path}?{page.query}{frag}"
        base = page.hostkey + path
        hint_q = f"{base}?{page.query}"
        for name, value, s, u in e0:  # pages with one more parameter than this one
            pairs.append(
                Pair(PARAM, host, name, s == sig, ctx_q, path, sig, u, False, hint_q, ("", value))
            )
        index = self.index
        index.add(page.key, e0, (None, None, sig, page.url))
        if not items or len(items) > MAX_ITEMS:
            return pairs
        records = index.records
        for name, value, rest in _each_param(items):
            key = _param_slot(base, rest, frag)
            entry = records.get(key, ())
            ctx = f"{path}?{rest}{frag}"
            if any(r[0] == name and r[1] == value for r in entry):
                continue  # this page's record is there already (a repeat we had forgotten)
            n_values = 0
            hint = f"{base}?{rest}"
            without = False
            for other, v, s, u in entry:
                if other is None or (
                    other in ruled and other != name
                ):  # the page without the parameter
                    if without:
                        continue  # one pair with it: its spellings under the rule are one page
                    without = True
                    pairs.append(
                        Pair(
                            PARAM, host, name, s == sig, ctx, path, sig, u, False, hint, (value, "")
                        )
                    )
                elif other == name:  # the same parameter with another value
                    n_values += 1
                    # a value that selects everything is the parameter's absence, as a default
                    # value is: the two agree whenever the filter selects all there is
                    evidence = not (_selects_all(value) or _selects_all(v))
                    pairs.append(
                        Pair(
                            PARAM,
                            host,
                            name,
                            s == sig,
                            ctx,
                            path,
                            sig,
                            u,
                            evidence,
                            hint,
                            (value, v),
                        )
                    )
            if n_values < _MAX_VALUES and len(entry) < _MAX_RECORDS:
                index.add(key, entry, (name, value, sig, page.url))
        return pairs

    def values_seen(self, page: Page) -> list[tuple[str, str, int]]:
        """For each parameter of ``page`` (not fetched yet): ``(name, hint, n)``, ``n`` the other
        values of it observed with the rest of its URL, -1 when no page with that rest was
        (``hint``: ``host:port/path?rest``, as a pair's). Reads the index only: the
        pair finders above record the page once it is fetched."""
        items = page.items
        if not items or len(items) > MAX_ITEMS:
            return []
        records = self.index.records
        found: list[tuple[str, str, int]] = []
        base = page.hostkey + page.path
        for name, value, rest in _each_param(items):
            entry = records.get(_param_slot(base, rest, page.frag), ())
            others = {r[1] for r in entry if r[0] == name and r[1] != value}
            found.append((name, f"{base}?{rest}", len(others) if entry else -1))
        return found

    def hosts_seen(self, page: Page) -> list[str]:
        """The related hosts (see :meth:`alias_pairs`) on which the path and query of ``page``
        (not fetched yet) were observed. Reads the index only."""
        host = page.host
        if is_ip(host):
            return []
        entry = self.index.records.get(_alias_slot(page), ())
        return [
            h for h, pt, _s, _u in entry if h != host and pt == page.port and self._related(h, host)
        ]

    def directory_seen(self, page: Page, head: str, query: str | None = None) -> bool:
        """Whether the directory ``head`` of ``page`` (not fetched yet: ``/x`` of ``/x/amp/``,
        spelled ``/x/`` or ``/x``) was observed with its query, or with ``query`` (the query
        the rules in force leave it: ``/x/amp/?v=1`` once ``v`` is a rule, and ``/x/``
        fetched): a pair for a suffix rule once fetched. Reads the index only."""
        records = self.index.records
        queries = {page.query} if query is None else {page.query, query}
        for spelled in (head + "/", head):
            for q in queries:
                entry = records.get(_param_slot(page.hostkey + spelled, q, page.frag), ())
                if any(r[0] is None for r in entry):
                    return True
        return False

    def segment_pending(self, host: str, segment: str) -> bool:
        """Whether ``segment`` showed its directory's text under the one directory it was seen
        last under so far: the pair :meth:`_repeated` keeps until a second directory, a rule
        under way before it is a candidate."""
        state = self._suffixes.get((host, segment))
        return state is not None and any(p.equal for p in state[1])

    def path_pairs(self, page: Page) -> list[Pair]:
        """Pairs for path rules: ``/print/x`` and ``/x`` (same host, query and fragment). As the
        longer URL: the page without its first segment, seen before; as the shorter one: pages
        with one more leading segment, seen before. (Present/absent is evidence here: a path
        rule names its segment, so ``/en/x`` = ``/x`` merges nothing but those two.)"""
        host, path, sig, hostkey = page.host, page.path, page.sig, page.hostkey
        tail_key = f"?{page.query}{page.frag}"
        records = self.index.records
        pairs: list[Pair] = []
        first, sep, tail = path[1:].partition("/")
        if sep and first and tail:
            rest = "/" + tail
            for r in records.get(_param_slot(hostkey + rest, page.query, page.frag), ()):
                if r[0] is None:
                    pairs.append(Pair(PATH, host, first, r[2] == sig, rest, rest, sig, r[3], True))
            key = slot(f"R{hostkey}{rest}{tail_key}")
            entry = records.get(key, ())
            if len(entry) < _MAX_RECORDS and not any(r[0] == first for r in entry):
                self.index.add(key, entry, (first, sig, page.url))
        for prefix, s, u in records.get(slot(f"R{hostkey}{path}{tail_key}"), ()):
            pairs.append(Pair(PATH, host, prefix, s == sig, path, path, sig, u, True))
        return pairs

    def suffix_pairs(self, page: Page) -> list[Pair]:
        """Pairs for suffix rules: ``/x/print.html`` (or ``/x/amp/``) and its directory ``/x/``
        or ``/x`` (same host, query and fragment), found as :meth:`path_pairs` finds them: as
        the longer URL, the directory seen before; as the directory, its pages with one more
        last segment seen before. Only of a segment seen last under two directories: every
        page is the last segment of its directory, and a segment seen under one (an
        article's name) could never make a rule, nor should its counter-example be kept."""
        host, path, sig, hostkey = page.host, page.path, page.sig, page.hostkey
        tail_key = f"?{page.query}{page.frag}"
        records = self.index.records
        found: list[Pair] = []
        bare = path[:-1] if path.endswith("/") else path
        head, last = split_last(path)
        if head and last:
            directory = head + "/"
            for spelled in (directory, head):
                for r in records.get(_param_slot(hostkey + spelled, page.query, page.frag), ()):
                    if r[0] is None:
                        found.append(
                            Pair(
                                SUFFIX,
                                host,
                                last,
                                r[2] == sig,
                                directory,
                                directory,
                                sig,
                                r[3],
                                True,
                            )
                        )
            key = slot(f"S{hostkey}{head}{tail_key}")
            entry = records.get(key, ())
            if len(entry) < _MAX_RECORDS and not any(r[0] == last for r in entry):
                self.index.add(key, entry, (last, sig, page.url))
            found = self._repeated(host, last, directory, found)
        if bare:
            directory = bare + "/"
            for suffix, s, u in records.get(slot(f"S{hostkey}{bare}{tail_key}"), ()):
                pair = Pair(SUFFIX, host, suffix, s == sig, directory, directory, sig, u, True)
                found += self._repeated(host, suffix, directory, [pair])
        return found

    def _repeated(self, host: str, segment: str, directory: str, pairs: list[Pair]) -> list[Pair]:
        """``pairs`` of ``segment`` under ``directory``, once the segment was seen last under
        two directories of ``host`` (with those kept from its first directory); until then
        they are kept (a few) and none is given."""
        seen = self._suffixes
        key = (host, segment)
        state = seen.get(key)
        if state is None:
            if len(seen) >= _MAX_SUFFIXES:
                seen.popitem(last=False)
            seen[key] = (directory, pairs[:_KEPT_PAIRS])
            return []
        seen.move_to_end(key)
        first, kept = state
        if not kept and first == "":
            return pairs  # repeated already
        if first == directory:
            kept.extend(pairs[: _KEPT_PAIRS - len(kept)])
            return []
        seen[key] = ("", [])
        return kept + pairs

    def alias_pairs(self, page: Page) -> list[Pair]:
        """Pairs for alias rules: the same path and query on two related hosts."""
        host, port, sig = page.host, page.port, page.sig
        if is_ip(host):
            return []
        if host not in self._first_seen and len(self._first_seen) < _MAX_HOSTS_SEEN:
            self._first_seen[host] = len(self._first_seen)
        key = _alias_slot(page)
        entry = self.index.records.get(key, ())
        pairs: list[Pair] = []
        seen_here = False
        for h, pt, s, u in entry:
            if h == host:
                seen_here = pt == port or seen_here
                continue
            if pt == port and self._related(h, host):
                pairs.append(Pair(ALIAS, h, host, s == sig, page.path, page.path, sig, u, True))
        if not seen_here and len(entry) < _MAX_HOSTS:
            self.index.add(key, entry, (host, port, sig, page.url))
        return pairs

    def counterpart_pairs(self, page: Page, others: Iterable[tuple[str, str]]) -> list[Pair]:
        """Alias pairs of ``page`` with the pages observed here that the caller's policy gives
        its identifier on another host (``(URL, identity host)`` each): ``m.site/x/`` and
        ``site/shop/c/x/?v=1`` are one path and query only once ``v`` and the category's path
        are rules, and :meth:`alias_pairs` compares paths and queries as fetched."""
        pairs: list[Pair] = []
        if is_ip(page.host):
            return pairs
        for url, host in others:
            other = read_page(url, host, "")
            if other is None or host == page.host or other.port != page.port:
                continue
            if not self._related(host, page.host):
                continue
            for r in self.index.records.get(other.key, ()):
                if r[0] is None and r[3] == url:  # its own record: observed, with its text
                    equal = r[2] == page.sig
                    pairs.append(
                        Pair(
                            ALIAS, host, page.host, equal, page.path, page.path, page.sig, url, True
                        )
                    )
                    break
        return pairs

    def seen_first(self, earlier: str, later: str) -> str:
        """Of two hosts, the one whose first page came first (``earlier`` if unknown)."""
        seen = self._first_seen
        if earlier in seen and later in seen and seen[later] < seen[earlier]:
            return later
        return earlier

    def _related(self, a: str, b: str) -> bool:
        """Hosts whose pages may be compared for aliases: both within the crawl's sites, or of
        one registrable domain."""
        k = (a, b) if a < b else (b, a)
        r = self._related_cache.get(k)
        if r is None:
            if len(self._related_cache) >= 4096:
                self._related_cache.clear()
            sites = self.sites
            r = bool(
                (any(within(a, s) for s in sites) and any(within(b, s) for s in sites))
                or ((ra := _registrable(a)) and ra == _registrable(b))
            )
            self._related_cache[k] = r
        return r
