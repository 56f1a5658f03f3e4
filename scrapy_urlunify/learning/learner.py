"""The DUST learner: which URL differences do not change a page, learned from page signatures.

:class:`Learner` watches the downloaded pages of a crawl (:meth:`Learner.observe`, once per
page) and adopts three kinds of :class:`LearnedRule`: a query parameter that does not matter on
a host (``"param"``), a host that mirrors another (``"alias"``), a leading path segment that
does not matter (``"path"``). A rule needs several *independent* pairs of pages that differ
only in it and share a signature, and no counter-example; a later counter-example revokes it.
Pure Python, no Scrapy, deterministic, bounded in memory. Why each safeguard is there
(independence, the default-value trap, unstable pages, catch-all signatures, eviction) is in
``docs/learning.md``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any, NamedTuple

from ..core.domains import is_ip, prefix_matcher, split_domain, strip_prefixes, within
from ..core.policy import DEFAULT_INDEX_PAGES, DEFAULT_STRIP_HOST_PREFIXES
from ..core.rules import strip_index_pages, strip_trailing_slash
from ..core.url import Parts

__all__ = [
    "ALIAS",
    "CATCH_ALL_PATHS",
    "MAX_ITEMS",
    "MAX_PARAMS",
    "PARAM",
    "CounterExample",
    "LearnedRule",
    "Learner",
    "Revocation",
]

PARAM = "param"
ALIAS = "alias"
PATH = "path"

#: Parameters considered per URL (the first ones in sorted order); more are part of the context.
MAX_PARAMS = 20
#: A query with more items than this is only recorded as a whole (no per-parameter analysis).
MAX_ITEMS = 100
#: A signature seen on this many distinct paths is a catch-all page: pairs with it never count.
CATCH_ALL_PATHS = 3
#: Values of one parameter remembered per context, and records per index entry.
_MAX_VALUES = 3
_MAX_RECORDS = 32
#: Hosts remembered per path+query for aliases.
_MAX_HOSTS = 4
#: Hosts whose first page is remembered (to tell which of two mirrors came first).
_MAX_HOSTS_SEEN = 1 << 16
#: URL pairs kept per rule for the log, and counter-examples kept in the log.
_MAX_EXAMPLES = 3
_MAX_COUNTER_LOG = 1000
#: URLs remembered as unstable (two signatures for one URL).
_MAX_UNSTABLE = 10_000

_FORMAT = "scrapy_urlunify.learning/1"
_INDEX_PAGES = frozenset(DEFAULT_INDEX_PAGES)
_PREFIXES = prefix_matcher(DEFAULT_STRIP_HOST_PREFIXES)


@dataclass(frozen=True)
class LearnedRule:
    """One adopted rule.

    * ``kind``: ``"param"`` (a query parameter that does not matter on a host), ``"alias"``
      (two hosts serve the same pages) or ``"path"`` (a leading path segment does not matter).
    * ``host``: for ``"param"``, the identity host the rule applies to (and its subdomains);
      for ``"alias"``, the host that becomes an alias.
    * ``name``: for ``"param"``, the parameter name (lower-case); for ``"alias"``, the
      canonical host it maps to; for ``"path"``, the segment.
    * ``pairs``: independent pieces of evidence when adopted (see the module documentation).
    * ``examples``: up to three URL pairs that taught it, for the log.
    """

    kind: str
    host: str
    name: str
    pairs: int
    examples: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        if self.kind == ALIAS:
            what = f"host {self.host} is an alias of {self.name}"
        elif self.kind == PATH:
            what = f"a leading /{self.name}/ does not matter on {self.host}"
        else:
            what = f"parameter {self.name!r} does not matter on {self.host}"
        shown = "; ".join(f"{a} = {b}" for a, b in self.examples[:1])
        return f"{what} ({self.pairs} independent pairs, e.g. {shown})"

    def _json(self) -> dict[str, Any]:
        return {"kind": self.kind, "host": self.host, "name": self.name, "pairs": self.pairs,
                "examples": [list(e) for e in self.examples]}

    @classmethod
    def _from(cls, d: dict[str, Any]) -> LearnedRule:
        return cls(str(d["kind"]), str(d["host"]), str(d["name"]), int(d["pairs"]),
                   tuple((str(a), str(b)) for a, b in d["examples"]))


class Revocation(NamedTuple):
    """A rule withdrawn after its adoption, and the two URLs (same but for the rule's
    difference, different signatures) that contradicted it."""

    rule: LearnedRule
    counter_example: tuple[str, str]

    def __str__(self) -> str:
        a, b = self.counter_example
        return f"revoked: {self.rule.kind} {self.rule.host} {self.rule.name}: {a} != {b}"


class CounterExample(NamedTuple):
    """The first counter-example that blocked a candidate: for ``"param"``, ``host`` and the
    parameter ``name``; for ``"alias"``, the two hosts (sorted) in ``host`` and ``name``."""

    kind: str
    host: str
    name: str
    url_a: str
    url_b: str


class _Page(NamedTuple):
    """One observed page, as the three pair collectors read it."""

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


class _Pair(NamedTuple):
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


class _Evidence:
    """Independent evidence toward one candidate rule (see "Independence")."""

    __slots__ = ("ctxs", "examples", "first", "items", "paths", "sigs")

    def __init__(self, first: str = "") -> None:
        self.items: list[tuple[str, str, str]] = []  # (context digest, signature, path digest)
        self.ctxs: set[str] = set()
        self.sigs: set[str] = set()
        self.paths: set[str] = set()
        self.examples: list[tuple[str, str]] = []
        self.first = first  # aliases: the host seen first

    def add(self, ctx: str, sig: str, path: str, example: tuple[str, str], cap: int) -> bool:
        if ctx in self.ctxs or sig in self.sigs:
            return False  # same context or same content: not independent of what we have
        if len(self.items) >= cap and path in self.paths:
            return False  # enough from these paths; only a new path can still help
        self.items.append((ctx, sig, path))
        self.ctxs.add(ctx)
        self.sigs.add(sig)
        self.paths.add(path)
        if len(self.examples) < _MAX_EXAMPLES:
            self.examples.append(example)
        return True

    def count(self, *left_out: set[str]) -> tuple[int, int]:
        """Independent pieces and distinct paths, the signatures of ``left_out`` (catch-all,
        shared) left out."""
        kept = [i for i in self.items if not any(i[1] in s for s in left_out)]
        return len(kept), len({i[2] for i in kept})

    def _json(self) -> dict[str, Any]:
        return {"items": [list(i) for i in self.items], "examples": [list(e) for e in self.examples],
                "first": self.first}

    @classmethod
    def _from(cls, d: dict[str, Any]) -> _Evidence:
        ev = cls(str(d.get("first", "")))
        for ctx, sig, path in d["items"]:
            ev.items.append((ctx, sig, path))
            ev.ctxs.add(ctx)
            ev.sigs.add(sig)
            ev.paths.add(path)
        ev.examples = [(str(a), str(b)) for a, b in d["examples"]][:_MAX_EXAMPLES]
        return ev


def _digest(s: str) -> str:
    return blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _slot(s: str) -> int:
    """The index key of a context: a 64-bit digest (a third of the memory of the text; two
    contexts sharing one would need a 1 in 2**64 chance, and cost one wrong pair, not a rule)."""
    return int.from_bytes(blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def _registrable(host: str) -> str:
    """``shop.site.co.uk`` -> ``site.co.uk``; under no known public suffix, the last two labels
    (``mirror.site.test`` -> ``site.test``); ``""`` for an IP address or a public suffix."""
    if is_ip(host):
        return ""
    d = split_domain(host)
    if d.suffix:
        return f"{d.label}.{d.suffix}" if d.label else ""
    return ".".join(host.split(".")[-2:])


def _escape_glob(name: str) -> str:
    """A parameter name as a literal ``remove_params`` entry (``tags[]`` -> ``tags[[]]``)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _signature_text(signature: bytes | bytearray | memoryview | str) -> str:
    if isinstance(signature, str):
        return signature
    if isinstance(signature, (bytes, bytearray, memoryview)):
        return bytes(signature).hex()
    raise TypeError(f"signature must be bytes, got {type(signature).__name__}")


class Learner:
    """Learns parameter and host-alias rules from the signatures of downloaded pages.

    ``min_pairs`` (at least 2): independent pieces of evidence a rule needs. ``sites``: the
    hosts of the crawl (``allowed_domains``, start URL hosts); hosts within two of them may be
    learned as aliases. ``max_entries``: records of the per-page index (see "Memory and speed"
    in the module documentation). Not thread-safe, like the rest of a Scrapy crawl.
    """

    def __init__(self, min_pairs: int = 3, sites: Iterable[str] = (), max_entries: int = 200_000) -> None:
        if isinstance(min_pairs, bool) or not isinstance(min_pairs, int) or min_pairs < 2:
            raise ValueError(f"min_pairs must be an integer >= 2 (never learn from one pair), got {min_pairs!r}")
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise ValueError(f"max_entries must be an integer >= 0, got {max_entries!r}")
        if isinstance(sites, str):
            sites = [sites]
        self.min_pairs = min_pairs
        self.max_entries = max_entries
        self.max_candidates = max(100, max_entries // 20)
        self.sites: tuple[str, ...] = tuple(dict.fromkeys(
            strip_prefixes(s.strip().lower().rstrip("."), _PREFIXES) for s in sites if s and s.strip()
        ))
        self._item_cap = 4 * min_pairs
        # per-page index: digest of "P"+context (param), "A"+path?query (alias) or "S"+signature
        # -> records, least recently written first
        self._index: OrderedDict[int, tuple[Any, ...]] = OrderedDict()
        self._size = 0
        # learned state (persisted by to_json)
        self._rules: list[LearnedRule] = []
        self._revoked: list[Revocation] = []
        self._candidates: OrderedDict[tuple[str, str, str], _Evidence] = OrderedDict()
        self._blocked_params: dict[str, set[str]] = {}  # name -> hosts
        self._blocked_aliases: set[tuple[str, str]] = set()
        self._blocked_paths: dict[str, set[str]] = {}  # leading segment -> hosts
        self._counter_log: list[CounterExample] = []
        self._catch_all: set[str] = set()
        # signatures seen on two paths of a host: a soft 404, a login page (see _note_signature)
        self._shared: set[str] = set()
        self._version = 0
        self._stats = {"pages": 0, "repeats": 0, "skipped": 0, "equal_pairs": 0, "counter_pairs": 0,
                       "presence_pairs": 0, "unstable": 0, "evicted": 0}
        self._unstable: OrderedDict[str, None] = OrderedDict()  # URLs seen with two signatures
        self._unstable_log: list[str] = []
        self._related_cache: dict[tuple[str, str], bool] = {}
        self._first_seen: dict[str, int] = {}  # host -> order of its first page (aliases' direction)

    # -- public state ------------------------------------------------------------------------

    @property
    def rules(self) -> tuple[LearnedRule, ...]:
        """All adopted rules still in force, in adoption order."""
        return tuple(self._rules)

    @property
    def revoked(self) -> tuple[Revocation, ...]:
        """Rules revoked by a later counter-example, in revocation order."""
        return tuple(self._revoked)

    @property
    def version(self) -> int:
        """Changes (increases) whenever :attr:`rules` changes: adoption or revocation."""
        return self._version

    @property
    def index_size(self) -> int:
        """Records in the per-page index (never above ``max_entries`` between calls)."""
        return self._size

    @property
    def stats(self) -> dict[str, int]:
        """Counters for the log: pages observed, repeats ignored, equal and counter pairs, index
        records evicted, rules, revocations, blocked candidates, catch-all signatures."""
        s = dict(self._stats)
        s.update(rules=len(self._rules), revoked=len(self._revoked), index=self._size,
                 candidates=len(self._candidates),
                 blocked=sum(map(len, self._blocked_params.values())) + len(self._blocked_aliases)
                 + sum(map(len, self._blocked_paths.values())),
                 catch_all=len(self._catch_all), shared=len(self._shared))
        return s

    @property
    def unstable(self) -> tuple[str, ...]:
        """URLs seen twice with different signatures (at most 1,000), in order: their pairs
        are neither evidence nor counter-examples."""
        return tuple(self._unstable_log)

    def counter_examples(self) -> list[CounterExample]:
        """The first counter-example of each blocked candidate (at most 1,000), in order."""
        return list(self._counter_log)

    def is_blocked(self, kind: str, host: str, name: str) -> bool:
        """Whether a counter-example rules out this candidate (``"alias"``: two hosts). A
        parameter is blocked on a host when a counter-example was seen on it or on one of its
        subdomains (a rule would cover them)."""
        if kind == ALIAS:
            return tuple(sorted((host, name))) in self._blocked_aliases
        if kind == PATH:
            return any(within(h, host) for h in self._blocked_paths.get(name, ()))
        return any(within(h, host) for h in self._blocked_params.get(name.lower(), ()))

    def remove_params(self) -> dict[str, list[str]]:
        """The parameter rules as a ``remove_params`` dict ``{host: [names]}`` (names escaped
        so that ``fnmatch`` characters match literally)."""
        out: dict[str, list[str]] = {}
        for r in self._rules:
            if r.kind == PARAM:
                out.setdefault(r.host, []).append(_escape_glob(r.name))
        return out

    def path_prefixes(self) -> dict[str, list[str]]:
        """The path rules as an ``ignore_path_prefixes`` dict ``{host: [leading segments]}``."""
        out: dict[str, list[str]] = {}
        for r in self._rules:
            if r.kind == PATH:
                out.setdefault(r.host, []).append(r.name)
        return out

    def domain_aliases(self) -> list[list[str]]:
        """The alias rules as ``domain_aliases`` groups, canonical host first (chains
        ``c -> b -> a`` resolved into one group)."""
        groups: dict[str, list[str]] = {}
        for r in self._rules:
            if r.kind == ALIAS:
                groups.setdefault(self._root(r.name), []).append(r.host)
        return [[root, *hosts] for root, hosts in groups.items()]

    def remove_params_snippet(self) -> str:
        """Settings to paste into a project so a later crawl starts with what this one learned,
        in the layer the crawl applied them: ``URLUNIFY_IGNORE_PARAMS`` (identity only, the
        fetched URLs keep the parameters), ``URLUNIFY_DOMAIN_ALIASES`` and
        ``URLUNIFY_IGNORE_PATH_PREFIXES``; a line only when there is a rule of its kind (an
        empty value would replace the project's own setting). Merge with the project's own
        values, if it has some."""
        lines = ["# learned by scrapy_urlunify (merge with your own values of these settings)"]
        params = self.remove_params()
        if params:
            body = ", ".join(f"{h!r}: [{', '.join(repr(n) for n in names)}]" for h, names in params.items())
            lines.append(f"URLUNIFY_IGNORE_PARAMS = {{{body}}}")
        aliases = self.domain_aliases()
        if aliases:
            body = ", ".join(f"[{', '.join(repr(h) for h in g)}]" for g in aliases)
            lines.append(f"URLUNIFY_DOMAIN_ALIASES = [{body}]")
        prefixes = self.path_prefixes()
        if prefixes:
            body = ", ".join(f"{h!r}: [{', '.join(repr(n) for n in names)}]" for h, names in prefixes.items())
            lines.append(f"URLUNIFY_IGNORE_PATH_PREFIXES = {{{body}}}")
        if len(lines) == 1:
            lines.append("# (no rules learned)")
        return "\n".join(lines) + "\n"

    # -- observing ---------------------------------------------------------------------------

    def observe(self, url: str, identity_host: str, signature: bytes) -> list[LearnedRule]:
        """Record one downloaded page: ``url`` is the fetched URL (WHATWG-serialized and
        standardized), ``identity_host`` its host after ``www``-stripping and aliases, and
        ``signature`` its page signature. Returns the rules adopted because of this
        observation (usually none); revocations show in :attr:`revoked` and :attr:`version`.
        A URL that is not an http(s) URL is ignored. Give only signatures that may be evidence
        (the body text of an HTML page, not its raw bytes: see ``learning.signatures``)."""
        sig = _signature_text(signature)
        self._stats["pages"] += 1
        page = self._page(url, identity_host, sig)
        if page is None:
            self._stats["skipped"] += 1
            return []
        if url in self._unstable:
            self._stats["repeats"] += 1
            return []
        e0 = self._index.get(page.key, ())
        for r in e0:
            if r[0] is None:  # this very page again: nothing to compare, unless it changed
                self._stats["repeats"] += 1
                if r[2] != sig:
                    self._mark_unstable(url, r[3])
                return []
        pairs = self._param_pairs(page, e0)
        pairs += self._path_pairs(page)
        pairs += self._alias_pairs(page)
        self._note_signature(sig, page.path)
        adopted = self._weigh(pairs, url) if pairs else []
        self._evict()
        return adopted

    def _page(self, url: str, identity_host: str, sig: str) -> _Page | None:
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
        return _Page(url, sig, host, port, hostkey, p.path, frag, items, query,
                     _slot(f"P{hostkey}{p.path}?{query}{frag}"))

    def _param_pairs(self, page: _Page, e0: tuple[Any, ...]) -> list[_Pair]:
        """Pairs for parameter rules. Only two different values of a parameter with one
        content are evidence (``ref=a`` = ``ref=b``); a page with and without it (``page=1``
        and no ``page``: a default value) is only ever a counter-example, never evidence,
        since once learned from defaults the rule would merge ``page=2`` and nothing fetched
        afterwards could contradict it."""
        host, path, sig, frag, items = page.host, page.path, page.sig, page.frag, page.items
        pairs: list[_Pair] = []
        ctx_q = f"{path}?{page.query}{frag}"
        for name, _value, s, u in e0:  # pages with one more parameter than this one
            pairs.append(_Pair(PARAM, host, name, s == sig, ctx_q, path, sig, u, False))
        self._add(page.key, e0, (None, None, sig, page.url))
        if not items or len(items) > MAX_ITEMS:
            return pairs
        index = self._index
        base = page.hostkey + path
        lowered = [i.partition("=")[0].lower() for i in items]
        for name in sorted(set(lowered))[:MAX_PARAMS]:
            if not name:
                continue
            value = "&".join(i for i, n in zip(items, lowered, strict=True) if n == name)
            rest = "&".join(i for i, n in zip(items, lowered, strict=True) if n != name)
            key = _slot(f"P{base}?{rest}{frag}")
            entry = index.get(key, ())
            ctx = f"{path}?{rest}{frag}"
            if any(r[0] == name and r[1] == value for r in entry):
                continue  # this page's record is there already (a repeat we had forgotten)
            n_values = 0
            for other, _v, s, u in entry:
                if other is None:  # the page without the parameter
                    pairs.append(_Pair(PARAM, host, name, s == sig, ctx, path, sig, u, False))
                elif other == name:  # the same parameter with another value
                    n_values += 1
                    pairs.append(_Pair(PARAM, host, name, s == sig, ctx, path, sig, u, True))
            if n_values < _MAX_VALUES and len(entry) < _MAX_RECORDS:
                self._add(key, entry, (name, value, sig, page.url))
        return pairs

    def _path_pairs(self, page: _Page) -> list[_Pair]:
        """Pairs for path rules: ``/print/x`` and ``/x`` (same host, query and fragment). As the
        longer URL: the page without its first segment, seen before; as the shorter one: pages
        with one more leading segment, seen before. (Present/absent is evidence here: a path
        rule names its segment, so ``/en/x`` = ``/x`` merges nothing but those two.)"""
        host, path, sig, hostkey = page.host, page.path, page.sig, page.hostkey
        tail_key = f"?{page.query}{page.frag}"
        index = self._index
        pairs: list[_Pair] = []
        first, sep, tail = path[1:].partition("/")
        if sep and first and tail:
            rest = "/" + tail
            for r in index.get(_slot(f"P{hostkey}{rest}{tail_key}"), ()):
                if r[0] is None:
                    pairs.append(_Pair(PATH, host, first, r[2] == sig, rest, rest, sig, r[3], True))
            key = _slot(f"R{hostkey}{rest}{tail_key}")
            entry = index.get(key, ())
            if len(entry) < _MAX_RECORDS and not any(r[0] == first for r in entry):
                self._add(key, entry, (first, sig, page.url))
        for prefix, s, u in index.get(_slot(f"R{hostkey}{path}{tail_key}"), ()):
            pairs.append(_Pair(PATH, host, prefix, s == sig, path, path, sig, u, True))
        return pairs

    def _alias_pairs(self, page: _Page) -> list[_Pair]:
        """Pairs for alias rules: the same path and query on two related hosts."""
        host, port, sig = page.host, page.port, page.sig
        if is_ip(host):
            return []
        if host not in self._first_seen and len(self._first_seen) < _MAX_HOSTS_SEEN:
            self._first_seen[host] = len(self._first_seen)
        key = _slot(f"A{page.path}?{page.query}{page.frag}")
        entry = self._index.get(key, ())
        pairs: list[_Pair] = []
        seen_here = False
        for h, pt, s, u in entry:
            if h == host:
                seen_here = pt == port or seen_here
                continue
            if pt == port and self._related(h, host):
                pairs.append(_Pair(ALIAS, h, host, s == sig, page.path, page.path, sig, u, True))
        if not seen_here and len(entry) < _MAX_HOSTS:
            self._add(key, entry, (host, port, sig, page.url))
        return pairs

    def _weigh(self, pairs: list[_Pair], url: str) -> list[LearnedRule]:
        """Counter-examples first (one observation can both support and contradict), then
        evidence; pairs with a page known to be unstable count as neither."""
        unstable = self._unstable
        pairs = [p for p in pairs if p.earlier not in unstable]
        for p in pairs:
            if not p.equal:
                self._stats["counter_pairs"] += 1
                self._contradict(p.kind, p.a, p.b, p.earlier, url)
        adopted: list[LearnedRule] = []
        for p in pairs:
            if not p.equal:
                continue
            if not p.evidence:
                self._stats["presence_pairs"] += 1
                continue
            self._stats["equal_pairs"] += 1
            rule = self._support(p.kind, p.a, p.b, p.ctx, p.path, p.sig, p.earlier, url)
            if rule is not None:
                adopted.append(rule)
        return adopted

    def _mark_unstable(self, url: str, earlier: str) -> None:
        """One page gave two signatures (a clock, a token in the body): its pairs count as
        neither evidence nor counter-example from now on, and a candidate its first
        counter-example blocked is unblocked (a later, stable counter-example blocks it again).
        Both spellings are marked: the page's records in the index, and the counter-examples
        it gave, carry the URL of its first view (``earlier``), which may be spelled otherwise
        than this one (another scheme, parameter order, or host once an alias is learned)."""
        spellings = [u for u in dict.fromkeys((url, earlier)) if u not in self._unstable]
        if not spellings:
            return
        for u in spellings:
            self._unstable[u] = None
        while len(self._unstable) > _MAX_UNSTABLE:
            self._unstable.popitem(last=False)
        if url in spellings:
            self._stats["unstable"] += 1
            if len(self._unstable_log) < _MAX_COUNTER_LOG:
                self._unstable_log.append(url)
        kept = []
        for c in self._counter_log:
            if c.url_a in spellings or c.url_b in spellings:
                self._unblock(c)
            else:
                kept.append(c)
        self._counter_log = kept

    def _unblock(self, c: CounterExample) -> None:
        if c.kind == ALIAS:
            self._blocked_aliases.discard((c.host, c.name))
            return
        blocked = self._blocked_params if c.kind == PARAM else self._blocked_paths
        hosts = blocked.get(c.name)
        if hosts is not None:
            hosts.discard(c.host)
            if not hosts:
                del blocked[c.name]

    def _add(self, key: int, entry: tuple[Any, ...], record: Any) -> None:
        """Store ``entry + (record,)`` under ``key``, now the most recently written key.
        (Entries are tuples rebuilt on each write: they hold a few records, and a tuple costs
        half the memory of a list.)"""
        index = self._index
        index[key] = (*entry, record)
        index.move_to_end(key)
        self._size += 1

    def _evict(self) -> None:
        index = self._index
        while self._size > self.max_entries and index:
            _key, records = index.popitem(last=False)
            self._size -= len(records)
            self._stats["evicted"] += len(records)

    def _note_signature(self, sig: str, path: str) -> None:
        if sig in self._catch_all:
            return
        if "." in path:
            path = strip_index_pages(path, _INDEX_PAGES)
        path = strip_trailing_slash(path)
        key = _slot("S" + sig)
        entry = self._index.get(key, ())
        if path in entry:
            return
        if entry:
            # one text on two paths: a soft 404 ("not found" served with 200), a login wall,
            # an empty result, not one page; a parameter or an alias pair of it tests nothing
            # (every missing URL gives the same text whatever its parameters or host), so it is
            # no evidence for those rules from now on, even before it is a catch-all. (A path
            # rule's own evidence is such a text: /print/x = /x.)
            self._shared.add(sig)
        if len(entry) + 1 >= CATCH_ALL_PATHS:
            self._catch_all.add(sig)
            if entry:
                del self._index[key]
                self._size -= len(entry)
            return
        self._add(key, entry, path)

    def _related(self, a: str, b: str) -> bool:
        """Hosts whose pages may be compared for aliases (see the module documentation)."""
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

    # -- evidence and counter-examples -------------------------------------------------------

    def _key(self, kind: str, a: str, b: str) -> tuple[str, str, str]:
        if kind == ALIAS:
            return (ALIAS, *sorted((a, b)))  # type: ignore[return-value]
        return (kind, a, b)

    def _support(self, kind: str, a: str, b: str, ctx: str, path: str, sig: str,
                 earlier: str, url: str) -> LearnedRule | None:
        if sig in self._catch_all or (kind != PATH and sig in self._shared) or self.is_blocked(kind, a, b):
            return None
        if kind in (PARAM, PATH) and self._covered(kind, a, b):
            return None
        if kind == ALIAS and (self._alias_of(b) is not None or self._alias_of(a) is not None):
            return None  # one of them is mapped already (the caller's policy lags behind)
        key = self._key(kind, a, b)
        ev = self._candidates.get(key)
        if ev is None:
            ev = self._candidates[key] = _Evidence(first=self._seen_first(a, b) if kind == ALIAS else "")
            if len(self._candidates) > self.max_candidates:
                self._candidates.popitem(last=False)
        else:
            self._candidates.move_to_end(key)
        if not ev.add(_digest(ctx), sig, _digest(path), (earlier, url), self._item_cap):
            return None
        n, paths = ev.count(self._catch_all) if kind == PATH else ev.count(self._catch_all, self._shared)
        if n < self.min_pairs or (paths < 2 and n < 2 * self.min_pairs):
            return None
        if kind in (PARAM, PATH):
            rule = LearnedRule(kind, a, b, n, tuple(ev.examples))
        else:
            alias, canonical = self._direction(key[1], key[2], ev.first)
            root = self._root(canonical)
            if root == alias:
                return None
            rule = LearnedRule(ALIAS, alias, canonical, n, tuple(ev.examples))
        del self._candidates[key]
        self._rules.append(rule)
        self._version += 1
        return rule

    def _covered(self, kind: str, host: str, name: str) -> bool:
        """A rule for ``name`` on ``host`` or a parent domain is in force already."""
        return any(r.kind == kind and r.name == name and within(host, r.host) for r in self._rules)

    def _seen_first(self, earlier: str, later: str) -> str:
        """Of two hosts, the one whose first page came first (``earlier`` if unknown)."""
        seen = self._first_seen
        if earlier in seen and later in seen and seen[later] < seen[earlier]:
            return later
        return earlier

    def _direction(self, a: str, b: str, first: str) -> tuple[str, str]:
        """(alias, canonical): a parent domain is canonical for its subdomain; else the host
        within ``sites`` if only one is; else the one that names an alias group already; else
        the host seen first."""
        if within(b, a):
            return b, a
        if within(a, b):
            return a, b
        in_a = any(within(a, s) for s in self.sites)
        in_b = any(within(b, s) for s in self.sites)
        if in_a != in_b:
            return (b, a) if in_a else (a, b)
        names = {r.name for r in self._rules if r.kind == ALIAS}
        if (a in names) != (b in names):
            return (b, a) if a in names else (a, b)
        return (b, a) if first == a else (a, b)

    def _alias_of(self, host: str) -> str | None:
        for r in self._rules:
            if r.kind == ALIAS and r.host == host:
                return r.name
        return None

    def _root(self, host: str) -> str:
        seen = {host}
        while True:
            nxt = self._alias_of(host)
            if nxt is None or nxt in seen:
                return host
            seen.add(nxt)
            host = nxt

    def contradict(self, rule: LearnedRule, url_a: str, url_b: str) -> None:
        """A counter-example found by the caller (a request the rule merged, fetched anyway, with
        other content than the page it was merged into): blocks the rule, and revokes it if
        adopted (see :attr:`revoked`)."""
        self._stats["counter_pairs"] += 1
        self._contradict(rule.kind, rule.host, rule.name, url_a, url_b)

    def _contradict(self, kind: str, a: str, b: str, earlier: str, url: str) -> None:
        key = self._key(kind, a, b)
        self._candidates.pop(key, None)
        if kind in (PARAM, PATH):
            blocked = self._blocked_params if kind == PARAM else self._blocked_paths
            hosts = blocked.setdefault(b, set())
            new = a not in hosts
            hosts.add(a)
            doomed = [r for r in self._rules if r.kind == kind and r.name == b and within(a, r.host)]
        else:
            pair = (key[1], key[2])
            new = pair not in self._blocked_aliases
            self._blocked_aliases.add(pair)
            doomed = [r for r in self._rules if r.kind == ALIAS and {r.host, r.name} == {a, b}]
        if new and len(self._counter_log) < _MAX_COUNTER_LOG:
            self._counter_log.append(CounterExample(kind, key[1], key[2], earlier, url))
        for r in doomed:
            self._rules.remove(r)
            self._revoked.append(Revocation(r, (earlier, url)))
            self._version += 1

    # -- persistence ---------------------------------------------------------------------------

    def to_json(self) -> str:
        """Rules, revocations, blocked candidates, catch-all signatures and the evidence toward
        candidates, as JSON (the per-page index is not kept: a resumed crawl only misses pairs
        whose first page came before the restart)."""
        data = {
            "format": _FORMAT,
            "settings": {"min_pairs": self.min_pairs, "sites": list(self.sites), "max_entries": self.max_entries},
            "version": self._version,
            "rules": [r._json() for r in self._rules],
            "revoked": [{"rule": r.rule._json(), "counter_example": list(r.counter_example)} for r in self._revoked],
            "blocked_params": {n: sorted(h) for n, h in sorted(self._blocked_params.items())},
            "blocked_aliases": sorted(list(p) for p in self._blocked_aliases),
            "blocked_paths": {n: sorted(h) for n, h in sorted(self._blocked_paths.items())},
            "catch_all": sorted(self._catch_all),
            "shared": sorted(self._shared),
            "candidates": [[k[0], k[1], k[2], ev._json()] for k, ev in self._candidates.items()],
            "counter_examples": [list(c) for c in self._counter_log],
            "stats": dict(self._stats),
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, *, min_pairs: int | None = None, sites: Iterable[str] | None = None,
                  max_entries: int | None = None) -> Learner:
        """A learner from :meth:`to_json` output; the keyword arguments, when given, replace the
        saved settings (blocked candidates and catch-all signatures are always kept). Raises
        ``ValueError`` on text that is not such output."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as e:
            raise ValueError(f"not a saved Learner: {e}") from None
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"not a saved Learner (format {_FORMAT!r} expected)")
        try:
            saved = data["settings"]
            learner = cls(
                min_pairs=saved["min_pairs"] if min_pairs is None else min_pairs,
                sites=saved["sites"] if sites is None else sites,
                max_entries=saved["max_entries"] if max_entries is None else max_entries,
            )
            learner._rules = [LearnedRule._from(r) for r in data["rules"]]
            learner._revoked = [Revocation(LearnedRule._from(r["rule"]), tuple(r["counter_example"]))  # type: ignore[arg-type]
                                for r in data["revoked"]]
            learner._blocked_params = {str(n): set(map(str, h)) for n, h in data["blocked_params"].items()}
            learner._blocked_aliases = {(str(a), str(b)) for a, b in data["blocked_aliases"]}
            learner._blocked_paths = {str(n): set(map(str, h)) for n, h in data.get("blocked_paths", {}).items()}
            learner._catch_all = set(map(str, data["catch_all"]))
            learner._shared = set(map(str, data.get("shared", ())))
            for kind, a, b, ev in data["candidates"]:
                if kind not in (PARAM, ALIAS, PATH):
                    raise ValueError(f"unknown rule kind {kind!r}")
                learner._candidates[(kind, a, b)] = _Evidence._from(ev)
            while len(learner._candidates) > learner.max_candidates:
                learner._candidates.popitem(last=False)
            learner._counter_log = [CounterExample(*map(str, c)) for c in data["counter_examples"]]
            learner._stats.update({k: int(v) for k, v in data.get("stats", {}).items() if k in learner._stats})
            learner._version = int(data.get("version", len(learner._rules)))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a saved Learner: {e!r}") from None
        return learner
