"""Rule contexts: where on a host a parameter rule holds, and which pages are one page.

A *rule context* is a host, a path and the query items that identify the page there
(``/w/index.php?title=Special:UserLogin``). This module keeps what the learner needs to read
contexts from the URLs it sees, never from site-specific code (see "Rules with a context" in
``docs/learning.md``):

* the distinct values each parameter showed on each path (at most :data:`_MAX_VALUES` counted),
  and whether two of its values ever gave two texts there (it *identifies*): of a rest query's
  parameters, one that identifies, with the most values, names the *page* (``title`` on a
  wiki's ``/w/index.php``, not ``from``, a timestamp of as many values that changes nothing;
  ``cid`` on a one-script site), the others are options of that page (``days``, ``limit``);
  :meth:`RuleContexts.page_of` says which page a pair tested, and six option variants of one
  page are one page;
* whether a parameter ever showed more than one value on a host (``print=1`` never does;
  :meth:`RuleContexts.single_valued`), or on one of its paths (an action on the page itself,
  ``add_to_wishlist=<the page's own id>``, never does: :meth:`RuleContexts.one_value_per_path`);
* the values of a parameter seen with one text in one path (:class:`_Group`): many of them
  (:attr:`RuleContexts.values_needed`) make a rule of the context their URLs share;
* the distinct pages of a context where two values of a parameter gave one text each
  (``sort=price`` = ``sort=name`` on ``route=product/view&id=5``, ``id=6``...): many pages make
  a rule of that context (the learner says how many), where the parameter matters elsewhere on
  the host (``sort`` on a listing);
* the contexts a counter-example ruled out (never forgotten, like the learner's blocked
  candidates).

Bounded: at most ``max_keys`` paths-and-parameters and groups are remembered, least recently
used out; the blocked contexts of a parameter collapse to its whole path past
:data:`_MAX_BLOCKED` of them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from hashlib import blake2b
from typing import Any, TypeVar

#: Distinct values counted per path and parameter (enough to tell a page's name from its options).
_MAX_VALUES = 32
#: Blocked contexts kept per host and parameter before the whole path is blocked.
_MAX_BLOCKED = 64
#: URL pairs kept per group for the log.
_MAX_EXAMPLES = 3
_MULTI = "\0"  # a parameter seen with several values on a host
_T = TypeVar("_T")


def _h(s: str) -> int:
    return int.from_bytes(
        blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big"
    )


def _recent(table: OrderedDict[Any, _T], key: Any, make: Callable[[], _T], bound: int) -> _T:
    """``table[key]``, made if missing, now the most recent entry; the least recent entry goes
    when the table grows past ``bound``."""
    found = table.get(key)
    if found is None:
        found = table[key] = make()
        if len(table) > bound:
            table.popitem(last=False)
    else:
        table.move_to_end(key)
    return found


def context_text(path: str, items: tuple[str, ...] | frozenset[str] | set[str]) -> str:
    """A rule context as text: the path, and its items sorted after a ``?``."""
    return path + ("?" + "&".join(sorted(items)) if items else "")


def split_context(text: str) -> tuple[str, frozenset[str]]:
    """The path and items of :func:`context_text`'s output."""
    path, _, query = text.partition("?")
    return path, frozenset(query.split("&")) if query else frozenset()


class _Group:
    """The values of one parameter seen with one text on one path, and the items every URL of
    them shared (their rule context)."""

    __slots__ = ("common", "examples", "values")

    def __init__(self, rest: frozenset[str]) -> None:
        self.values: set[int] = set()
        self.common = rest
        self.examples: list[tuple[str, str]] = []


class _PageGroup:
    """The pages of one rule context where a parameter changed nothing, and those where two of
    its values did (not only its presence: ``?page=1`` is the list)."""

    __slots__ = ("examples", "pages", "valued")

    def __init__(self) -> None:
        self.pages: set[int] = set()
        self.valued: set[int] = set()
        self.examples: list[tuple[str, str]] = []


class RuleContexts:
    """Values per path and parameter, parameters per host, groups of one text, blocked contexts.
    ``values_needed``: distinct values of a parameter with one text that make a context rule."""

    def __init__(self, max_keys: int, values_needed: int) -> None:
        self.max_keys = max_keys
        self.values_needed = values_needed
        self._path_values: OrderedDict[tuple[str, str], set[int]] = (
            OrderedDict()
        )  # (host:port+path, name)
        self._identifying: OrderedDict[tuple[str, str], None] = (
            OrderedDict()
        )  # (host:port+path, name)
        self._host_values: OrderedDict[tuple[str, str], str] = (
            OrderedDict()
        )  # (host, name) -> value | _MULTI
        #: (host, name) -> whether a path of the host showed two values of it
        self._path_multi: OrderedDict[tuple[str, str], bool] = OrderedDict()
        self._groups: OrderedDict[tuple[str, str, str, str], _Group] = OrderedDict()
        #: (host, name, context) -> the pages where two values of name gave one text
        self._page_groups: OrderedDict[tuple[str, str, str], _PageGroup] = OrderedDict()
        self._blocked: dict[tuple[str, str], set[tuple[str, frozenset[str] | None]]] = {}

    # -- what the URLs say ---------------------------------------------------------------------

    def note_page(self, host: str, hostpath: str, items: list[str]) -> None:
        """An observed page (``items``: its query items, sorted): count its parameters' values."""
        values: dict[str, list[str]] = {}
        for item in items[:64]:
            name, _, value = item.partition("=")
            values.setdefault(name.lower(), []).append(value)
        for name, vs in values.items():
            value = "&".join(vs)
            key = (hostpath, name)
            seen = self._path_values.get(key)
            if seen is None:
                seen = self._path_values[key] = set()
            else:
                self._path_values.move_to_end(key)
            if len(seen) < _MAX_VALUES:
                seen.add(_h(value))
            hkey = (host, name)
            self._path_multi[hkey] = self._path_multi.get(hkey, False) or len(seen) > 1
            self._path_multi.move_to_end(hkey)
            known = self._host_values.get(hkey)
            if known is None:
                self._host_values[hkey] = value
            elif known != value:
                self._host_values[hkey] = _MULTI
        while len(self._path_values) > self.max_keys:
            self._path_values.popitem(last=False)
        while len(self._host_values) > self.max_keys:
            self._host_values.popitem(last=False)
        while len(self._path_multi) > self.max_keys:
            self._path_multi.popitem(last=False)

    def note_identifying(self, hostpath: str, name: str) -> None:
        """Two values of ``name`` gave two texts on ``hostpath`` (a counter-example)."""
        key = (hostpath, name)
        self._identifying[key] = None
        self._identifying.move_to_end(key)
        if len(self._identifying) > self.max_keys:
            self._identifying.popitem(last=False)

    def single_valued(self, host: str, name: str) -> bool:
        """Whether ``name`` showed one value only on ``host`` (as far as remembered)."""
        known = self._host_values.get((host, name))
        return known is not None and known != _MULTI

    def one_value_per_path(self, host: str, name: str) -> bool:
        """Whether ``name`` showed one value only on each path of ``host`` where it was seen
        (as far as remembered), whatever the values: ``add_to_wishlist=<the page's own id>``."""
        return self._path_multi.get((host, name)) is False

    def page_of(self, hint: str) -> str:
        """The page a pair tested, from its hint (``host:port/path?rest``): the path and the
        item of the rest's parameter that identifies pages on that path and has the most
        distinct values there (then one that does not identify; ties: the first name), or the
        path alone for an empty rest. Option variants of one page (``days=1`` and ``days=3``
        of ``title=Special:RecentChanges``) are one page."""
        hostpath, _, rest = hint.partition("?")
        if not rest:
            return hostpath
        best, best_n = "", (-1, -1)
        for item in rest.split("&"):
            name = item.partition("=")[0].lower()
            key = (hostpath, name)
            n = (key in self._identifying, len(self._path_values.get(key, ())))
            if n > best_n:
                best, best_n = item, n
        return f"{hostpath}?{best}"

    # -- many values, one text -----------------------------------------------------------------

    def add_values(
        self,
        host: str,
        hostpath: str,
        path: str,
        name: str,
        sig: str,
        values: tuple[str, str],
        rest: frozenset[str],
        example: tuple[str, str],
    ) -> tuple[str, int, list[tuple[str, str]]] | None:
        """Two values of ``name`` gave the text ``sig`` on ``path`` (the rest of their query:
        ``rest``). The rule context (``path?common items``), the distinct values and the
        examples when that makes ``values_needed`` values with this text: a rule of that
        context, if no counter-example blocks it (the caller's to check)."""
        group = _recent(
            self._groups, (host, hostpath, name, sig), lambda: _Group(rest), self.max_keys
        )
        group.common = group.common & rest
        before = len(group.values)
        for v in values:
            group.values.add(_h(v))
        if len(group.values) > before and len(group.examples) < _MAX_EXAMPLES:
            group.examples.append(example)
        if len(group.values) < self.values_needed:
            return None
        return context_text(path, group.common), len(group.values), list(group.examples)

    def drop_group(self, host: str, hostpath: str, name: str, sig: str) -> None:
        self._groups.pop((host, hostpath, name, sig), None)

    # -- one difference, many pages --------------------------------------------------------------

    def context_of(self, path: str, hint: str) -> tuple[str, str] | None:
        """The page a parameter pair tested and the rule context it shares with the other pages
        of its kind: ``/index.php?id=5&route=product%2Fview`` is the page ``id=5`` in the
        context ``/index.php?route=product%2Fview``. None when the rest of the query names no
        page (a pair of one path: a rule of the host's, not of a context)."""
        page = self.page_of(hint)
        rest = hint.partition("?")[2]
        item = page.partition("?")[2]
        if not item:
            return None
        common = tuple(i for i in rest.split("&") if i != item)
        return page, context_text(path, common)

    def add_page(
        self,
        host: str,
        name: str,
        context: str,
        page: str,
        example: tuple[str, str],
        valued: bool = True,
    ) -> tuple[int, int, list[tuple[str, str]]]:
        """Two values of ``name`` (``valued``), or the page with and without it, gave one text on
        ``page`` in ``context``: the distinct pages of that context where they did, how many of
        them by two values, and examples."""
        group = _recent(self._page_groups, (host, name, context), _PageGroup, self.max_keys)
        h = _h(page)
        if h not in group.pages and len(group.examples) < _MAX_EXAMPLES:
            group.examples.append(example)
        group.pages.add(h)
        if valued:
            group.valued.add(h)
        return len(group.pages), len(group.valued), list(group.examples)

    def has_pages(self, host: str, name: str, context: str) -> bool:
        """Whether pages of ``context`` where ``name`` changed nothing were seen."""
        return (host, name, context) in self._page_groups

    def drop_pages(self, host: str, name: str, context: str) -> None:
        self._page_groups.pop((host, name, context), None)

    # -- counter-examples ----------------------------------------------------------------------

    def block(self, host: str, name: str, path: str, rest: frozenset[str] | None) -> None:
        """``name`` changed the text of a page of ``path`` whose other items were ``rest``: no
        context of that path whose items are all in ``rest`` may ignore it (``None``: none of
        that path)."""
        blocked = self._blocked.setdefault((host, name), set())
        blocked.add((path, rest))
        if len(blocked) > _MAX_BLOCKED:
            on_path = {b for b in blocked if b[0] == path}
            blocked -= on_path
            blocked.add((path, None))

    def is_blocked(self, host: str, name: str, context: str) -> bool:
        """Whether a counter-example was seen in ``context`` (a rule context's text) for
        ``name``."""
        blocked = self._blocked.get((host, name))
        if not blocked:
            return False
        path, items = split_context(context)
        return any(p == path and (rest is None or items <= rest) for p, rest in blocked)

    # -- persistence ---------------------------------------------------------------------------

    def to_list(self) -> list[list[Any]]:
        return [
            [host, name, path, None if rest is None else sorted(rest)]
            for (host, name), entries in sorted(self._blocked.items())
            for path, rest in sorted(entries, key=lambda e: (e[0], sorted(e[1] or ())))
        ]

    def load(self, entries: list[list[Any]]) -> None:
        for host, name, path, rest in entries:
            self._blocked.setdefault((str(host), str(name)), set()).add(
                (str(path), None if rest is None else frozenset(map(str, rest)))
            )

    def blocked_count(self) -> int:
        return sum(map(len, self._blocked.values()))
