"""Candidate rules: the independent evidence gathered toward each (bounded), and the
candidates a counter-example blocked, with the first counter-example of each for the log.

Candidates are named by their rule key (``rule_types.rule_key``). Whether a piece of evidence
is independent of the others (see "Independence" in ``docs/learning.md``) is decided here, in
:meth:`Evidence.add`; when there is enough of it to adopt a rule is the learner's business.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from hashlib import blake2b
from typing import Any

from scrapy_urlunify.core._domains import within
from scrapy_urlunify.learning._rule_types import (
    ALIAS,
    PARAM,
    PATH,
    PATH_KINDS,
    SUFFIX,
    CounterExample,
    rule_key,
)

#: The candidate of a parameter rule learned from pages with and without it (``print=1``):
#: its evidence is kept apart, and needs twice as much (see "Evidence" in docs/learning.md).
PRESENCE = "presence"


#: URL pairs kept per rule for the log, and counter-examples kept in the log.
_MAX_EXAMPLES = 3
_MAX_COUNTER_LOG = 1000

RuleKey = tuple[str, str, str]


def _digest(s: str) -> str:
    return blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class Evidence:
    """Independent evidence toward one candidate rule (see "Independence")."""

    __slots__ = ("ctxs", "examples", "first", "items", "pairs", "paths", "sigs")

    def __init__(self, first: str = "") -> None:
        #: the pairs seen, independent or not: each a fetch the rule would have saved
        self.pairs = 0
        # (context digest, signature, path digest, page hint: see rule_contexts.page_of)
        self.items: list[tuple[str, str, str, str]] = []
        self.ctxs: set[str] = set()
        self.sigs: set[str] = set()
        self.paths: set[str] = set()
        self.examples: list[tuple[str, str]] = []
        self.first = first  # aliases: the host seen first

    def add(
        self, ctx: str, sig: str, path: str, example: tuple[str, str], cap: int, hint: str = ""
    ) -> bool:
        """Add a piece (``ctx`` and ``path`` as text, digested here; ``hint``: what tells
        which page it tested) unless it is not independent of those kept, or ``cap`` pieces
        are kept already and its path is known."""
        self.pairs += 1
        ctx, path = _digest(ctx), _digest(path)
        if ctx in self.ctxs or sig in self.sigs:
            return False  # same context or same content: not independent of what we have
        if len(self.items) >= cap and path in self.paths:
            return False  # enough from these paths; only a new path can still help
        self.items.append((ctx, sig, path, hint))
        self.ctxs.add(ctx)
        self.sigs.add(sig)
        self.paths.add(path)
        if len(self.examples) < _MAX_EXAMPLES:
            self.examples.append(example)
        return True

    def count(
        self, *left_out: set[str], page_of: Callable[[str], str] | None = None
    ) -> tuple[int, int]:
        """Independent pieces and distinct paths, the signatures of ``left_out`` (catch-all,
        shared) left out; with ``page_of``, pieces that tested one page (by their hints) are
        one piece."""
        kept = [i for i in self.items if not any(i[1] in s for s in left_out)]
        if page_of is None:
            return len(kept), len({i[2] for i in kept})
        pages = {page_of(i[3]) if i[3] else i[0]: i[2] for i in kept}
        return len(pages), len(set(pages.values()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": [list(i) for i in self.items],
            "examples": [list(e) for e in self.examples],
            "first": self.first,
            "pairs": self.pairs,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evidence:
        ev = cls(str(d.get("first", "")))
        for item in d["items"]:
            ctx, sig, path = item[:3]
            ev.items.append((ctx, sig, path, str(item[3]) if len(item) > 3 else ""))
            ev.ctxs.add(ctx)
            ev.sigs.add(sig)
            ev.paths.add(path)
        ev.examples = [(str(a), str(b)) for a, b in d["examples"]][:_MAX_EXAMPLES]
        ev.pairs = int(d.get("pairs", len(ev.items)))
        return ev


class Candidates:
    """Evidence per candidate (the ``max_candidates`` most recently supported), and the
    blocked candidates: a parameter or a leading segment per host, a pair of hosts."""

    def __init__(self, max_candidates: int) -> None:
        self.max_candidates = max_candidates
        self._evidence: OrderedDict[RuleKey, Evidence] = OrderedDict()
        self._blocked_params: dict[str, set[str]] = {}  # name -> hosts
        self._blocked_aliases: set[tuple[str, str]] = set()
        #: leading segment, or "/" and last segment -> hosts (:func:`_path_key`)
        self._blocked_paths: dict[str, set[str]] = {}
        self._counter_log: list[CounterExample] = []

    def __len__(self) -> int:
        return len(self._evidence)

    def evidence(self, key: RuleKey, first: str) -> Evidence:
        """The evidence toward ``key``, now the most recently supported candidate; new (with
        ``first``, the alias host seen first) when there is none, the least recently
        supported candidate dropped if there are too many."""
        ev = self._evidence.get(key)
        if ev is None:
            ev = self._evidence[key] = Evidence(first)
            if len(self._evidence) > self.max_candidates:
                self._evidence.popitem(last=False)
        else:
            self._evidence.move_to_end(key)
        return ev

    def open_params(self, minimum: int) -> list[tuple[str, str, int]]:
        """``(host, name, pairs)`` of the parameter candidates no counter-example blocked
        (their pages with two values, or with and without the parameter, had one text), with
        at least ``minimum`` pairs: each a fetch a rule would have saved."""
        found: dict[tuple[str, str], int] = {}
        for (kind, host, name), ev in self._evidence.items():
            if kind in (PARAM, PRESENCE) and not self.is_blocked(PARAM, host, name):
                found[host, name] = found.get((host, name), 0) + ev.pairs
        return [(host, name, n) for (host, name), n in found.items() if n >= minimum]

    def has(self, key: RuleKey) -> bool:
        """Whether there is evidence toward ``key``."""
        return key in self._evidence

    def drop(self, key: RuleKey) -> None:
        """Forget the evidence toward ``key`` (adopted, or contradicted)."""
        self._evidence.pop(key, None)

    def is_blocked(self, kind: str, host: str, name: str) -> bool:
        """Whether a counter-example rules out this candidate (``"alias"``: two hosts). A
        parameter is blocked on a host when a counter-example was seen on it or on one of its
        subdomains (a rule would cover them)."""
        if kind == ALIAS:
            return tuple(sorted((host, name))) in self._blocked_aliases
        if kind in PATH_KINDS:
            return any(within(h, host) for h in self._blocked_paths.get(_path_key(kind, name), ()))
        return any(within(h, host) for h in self._blocked_params.get(name.lower(), ()))

    def block(self, kind: str, a: str, b: str, earlier: str, url: str) -> None:
        """Block the candidate ``(kind, a, b)`` on the counter-example ``earlier != url``,
        dropping its evidence; the first counter-example of a candidate goes to the log."""
        key = rule_key(kind, a, b)
        self._evidence.pop(key, None)
        if kind == PARAM or kind in PATH_KINDS:
            blocked = self._blocked_params if kind == PARAM else self._blocked_paths
            hosts = blocked.setdefault(_path_key(kind, b), set())
            new = a not in hosts
            hosts.add(a)
        else:
            pair = (key[1], key[2])
            new = pair not in self._blocked_aliases
            self._blocked_aliases.add(pair)
        if new and len(self._counter_log) < _MAX_COUNTER_LOG:
            self._counter_log.append(CounterExample(kind, key[1], key[2], earlier, url))

    def unblock_from(self, urls: list[str]) -> None:
        """Unblock the candidates whose first counter-example involves one of ``urls`` (pages
        found unstable), and forget those counter-examples."""
        kept = []
        for c in self._counter_log:
            if c.url_a in urls or c.url_b in urls:
                self._unblock(c)
            else:
                kept.append(c)
        self._counter_log = kept

    def _unblock(self, c: CounterExample) -> None:
        if c.kind == ALIAS:
            self._blocked_aliases.discard((c.host, c.name))
            return
        blocked = self._blocked_params if c.kind == PARAM else self._blocked_paths
        name = _path_key(c.kind, c.name)
        hosts = blocked.get(name)
        if hosts is not None:
            hosts.discard(c.host)
            if not hosts:
                del blocked[name]

    def counter_examples(self) -> list[CounterExample]:
        """The first counter-example of each blocked candidate (at most 1,000), in order."""
        return list(self._counter_log)

    def blocked_count(self) -> int:
        return (
            sum(map(len, self._blocked_params.values()))
            + len(self._blocked_aliases)
            + sum(map(len, self._blocked_paths.values()))
        )

    # -- persistence (pieces of the learner's JSON) ---------------------------------------------

    def blocked_to_dict(self) -> dict[str, Any]:
        return {
            "blocked_params": {n: sorted(h) for n, h in sorted(self._blocked_params.items())},
            "blocked_aliases": sorted(list(p) for p in self._blocked_aliases),
            "blocked_paths": {n: sorted(h) for n, h in sorted(self._blocked_paths.items())},
        }

    def evidence_to_list(self) -> list[list[Any]]:
        return [[k[0], k[1], k[2], ev.to_dict()] for k, ev in self._evidence.items()]

    def counter_examples_to_list(self) -> list[list[str]]:
        return [list(c) for c in self._counter_log]

    def load(self, data: dict[str, Any]) -> None:
        """Read back the blocked candidates, the evidence and the counter-examples of the
        learner's JSON ``data`` (``KeyError``, ``TypeError`` or ``ValueError`` if malformed)."""
        self._blocked_params = {str(n): set(map(str, h)) for n, h in data["blocked_params"].items()}
        self._blocked_aliases = {(str(a), str(b)) for a, b in data["blocked_aliases"]}
        self._blocked_paths = {
            str(n): set(map(str, h)) for n, h in data.get("blocked_paths", {}).items()
        }
        for kind, a, b, ev in data["candidates"]:
            if kind not in (PARAM, ALIAS, PATH, SUFFIX, PRESENCE):
                raise ValueError(f"unknown rule kind {kind!r}")
            self._evidence[(kind, a, b)] = Evidence.from_dict(ev)
        while len(self._evidence) > self.max_candidates:
            self._evidence.popitem(last=False)
        self._counter_log = [CounterExample(*map(str, c)) for c in data["counter_examples"]]


def _path_key(kind: str, name: str) -> str:
    """Where a blocked candidate's segment is kept: a last segment after a ``/`` (a segment
    holds none), so that ``/amp/x`` and ``/x/amp`` are blocked apart."""
    return "/" + name if kind == SUFFIX else name
