"""URL patterns: the groups of URLs a site's software serves with one template, learned from the
URLs seen (after Lei et al. 2010, "A pattern tree-based approach to learning URL normalization
rules": a tree of a host's path segments whose positions with many values are generalised).

A URL's **URL pattern** is its host, its path with each segment kept or generalised to ``*``,
and its query: the names of its parameters, each with its value or ``*``::

    wiki.test/wiki/*                                  (every article: /wiki/<title>)
    wiki.test/w/index.php?action=history&title=*      (every article's history)
    wiki.test/w/index.php?returnto=*&title=Special:UserLogin

What is generalised is learned, per place in the tree, from the distinct values seen there:

* a path segment is a child of the node of the segments before it; a node that has seen more
  than ``max_segments`` (24) distinct children generalises that position (``/wiki/*``): its
  children are forgotten and every segment there goes to one ``*`` child from then on. An
  application's sections are more than a parameter's kinds of page (Redmine: 12 at its root,
  10 in a project); at 8, ``/projects/P/wiki/Title`` and ``/issues/gantt`` were one
  ``/*/*/*/*``. A position is generalised sooner when three of its children have two children
  in common (``/projects/*``: projects with the same sections);
* the URLs ending at a node are grouped by the set of their parameter names; in each group, a
  parameter keeps its value while the group has seen at most ``max_values`` of them
  (``action=history``, ``title=Special:UserLogin``), and is ``*`` once it has seen more
  (article titles, ``returnto`` targets);
* a value that looks like an id (digits, a long hexadecimal or dashed token, more than 64
  characters) is ``*`` from the first URL, without counting as a value of its place;
* a segment's file extension is kept apart (``/wiki/*.txt``, ``/issues/*.atom``,
  ``/issues.csv``): a page and its exports share a place in the tree (one value: its stem), not
  a template (the frontier judged a wiki's articles by their plain-text exports). A segment
  whose stem looks like an id (``12.atom``) is generalised at once.

So the pattern of a URL depends on the URLs seen before it: early URLs of a group are more
specific than later ones, until the group's values are known. Scheme, user info and fragment
are not part of a pattern.

Memory is bounded: ``max_hosts`` hosts (the least recently seen host's tree is forgotten), at
most ``max_nodes`` path nodes per host (a URL going further past that bound is generalised
without learning), ``MAX_DEPTH`` path segments (the rest is ``**``), ``MAX_GROUPS`` parameter
name sets per node and ``MAX_NAMES`` names per set (beyond: ``?*``), and ``max_values`` values
of at most 64 characters per parameter. The cost of a URL is one pass over its segments and
parameters, a dictionary lookup each.

Pure Python, no Scrapy: :mod:`scrapy_urlunify.integration.queue._frontier` uses it in a crawl.
"""

from __future__ import annotations

import re
from collections import OrderedDict

#: a segment or value generalised: many values were seen at its place, or it looks like an id
WILDCARD = "*"
#: path segments learned; the rest of a longer path is ``**``
MAX_DEPTH = 12
#: parameter name sets per path node; URLs with another set go to one ``?*`` group
MAX_GROUPS = 32
#: parameter names in a set; a URL with more is in the ``?*`` group
MAX_NAMES = 16
#: children of a position alike (sharing :data:`ALIKE_KEYS` children of theirs) that generalise it
ALIKE_SIBLINGS = 3
#: children two path nodes share to be alike
ALIKE_KEYS = 2
#: values longer than this are never kept (nor stored)
MAX_VALUE_LENGTH = 64

# a file extension: a dot, a letter, up to four more letters or digits, at the end of a segment
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}$").search
# digits (with separators: 2024-05-01, 1.2.3), or a long token of hexadecimal digits and dashes
# holding a digit (a hash, a UUID)
_ID = re.compile(r"[0-9][0-9.,_:-]*|(?=[^/]*[0-9])[0-9a-fA-F-]{8,}").fullmatch


def looks_like_id(value: str) -> bool:
    """A segment or value that names one of many things by number or hash: generalised at once."""
    return len(value) > MAX_VALUE_LENGTH or _ID(value) is not None


def coarser(pattern: str) -> str | None:
    """The pattern above ``pattern`` in the tree: every parameter value generalised
    (``?action=history&title=*`` -> ``?action=*&title=*``); None when no value was kept. What
    is learned of the coarser pattern holds for its patterns with too few URLs of their own."""
    path, sep, query = pattern.partition("?")
    if not sep or query == WILDCARD:
        return None
    out = (
        path + "?" + "&".join(pair.partition("=")[0] + "=" + WILDCARD for pair in query.split("&"))
    )
    return out if out != pattern else None


def any_query(pattern: str) -> str | None:
    """The pattern of every query of ``pattern``'s path (``w.test/w/index.php?action=history&
    title=*`` -> ``w.test/w/index.php?*``): a path's parameter sets; None for a pattern without
    a query, or that pattern itself. What is learned of it holds for a parameter set too new to
    have a coarser pattern with URLs of its own (a chart's eleventh set of options)."""
    path, sep, query = pattern.partition("?")
    return path + "?" + WILDCARD if sep and query != WILDCARD else None


class _Node:
    """A path position: its specific children (None once generalised), its ``*`` child, and the
    parameter groups of the URLs whose path ends here."""

    __slots__ = ("children", "groups", "wild")

    def __init__(self) -> None:
        self.children: dict[str, _Node] | None = {}
        self.wild: _Node | None = None
        #: sorted parameter names -> name -> the values seen (None once generalised)
        self.groups: dict[tuple[str, ...], dict[str, set[str] | None]] = {}


class _Host:
    __slots__ = ("nodes", "root")

    def __init__(self) -> None:
        self.root = _Node()
        self.nodes = 1


def _size(node: _Node) -> int:
    """Nodes in the subtree of ``node`` (itself included)."""
    count, stack = 0, [node]
    while stack:
        n = stack.pop()
        count += 1
        if n.children:
            stack.extend(n.children.values())
        if n.wild is not None:
            stack.append(n.wild)
    return count


def _generalise(tree: _Host, node: _Node) -> None:
    """``node``'s position is generalised: what was learned below its kept children goes, and
    every segment there goes to its ``*`` child from now on."""
    if node.children is not None:
        tree.nodes -= sum(_size(c) for c in node.children.values())
        node.children = None


class URLPatterns:
    """The URL patterns of a crawl, learned from the URLs given to :meth:`pattern`."""

    def __init__(
        self,
        max_values: int = 8,
        max_hosts: int = 1000,
        max_nodes: int = 5000,
        max_segments: int = 24,
    ) -> None:
        if min(max_values, max_hosts, max_nodes, max_segments) < 1:
            raise ValueError("max_values, max_hosts, max_nodes and max_segments must be at least 1")
        self.max_values = max_values
        self.max_segments = max_segments
        self.max_hosts = max_hosts
        self.max_nodes = max_nodes
        self._hosts: OrderedDict[str, _Host] = OrderedDict()

    def __len__(self) -> int:
        """Path nodes held, over all hosts (the memory bound is ``max_hosts * max_nodes``)."""
        return sum(h.nodes for h in self._hosts.values())

    def pattern(self, url: str) -> str:
        """The URL pattern of ``url`` (an absolute URL), learning from it."""
        rest = url.partition("://")[2] or url
        rest = rest.partition("#")[0]
        cut = len(rest)
        for sep in "/?":
            at = rest.find(sep)
            if 0 <= at < cut:
                cut = at
        host = rest[:cut].rpartition("@")[2].lower()
        rest = rest[cut:]
        path, _, query = rest.partition("?")
        tree = self._host(host)
        node: _Node | None = tree.root
        # the node above ``node`` when ``node`` is one of its kept children
        parent: _Node | None = None
        parts = [host]
        segments = path.split("/")[1:] if path else []
        for depth, segment in enumerate(segments):
            if depth == MAX_DEPTH:
                parts.append("**")
                node = None
                break
            extension = _EXTENSION(segment)
            stem = segment if extension is None else segment[: extension.start()]
            held = tree.nodes
            token, child = self._step(tree, node, stem)
            if tree.nodes > held and parent is not None and node is not None:
                self._alike(tree, parent, node)
            parent = node if token != WILDCARD else None
            node = child
            parts.append(token if extension is None else token + extension.group())
        out = "/".join(parts) if len(parts) > 1 else host + "/"
        if query:
            out += "?" + self._query(node, query)
        return out

    def _host(self, host: str) -> _Host:
        hosts = self._hosts
        tree = hosts.get(host)
        if tree is None:
            tree = hosts[host] = _Host()
            if len(hosts) > self.max_hosts:
                hosts.popitem(last=False)
        else:
            hosts.move_to_end(host)
        return tree

    def _step(self, tree: _Host, node: _Node | None, segment: str) -> tuple[str, _Node | None]:
        """The token of ``segment`` under ``node`` and the node it leads to (None: past the
        tree's bound, nothing learned further down)."""
        if node is None:
            return WILDCARD, None
        children = node.children
        if children is not None and not looks_like_id(segment):
            child = children.get(segment)
            if child is not None:
                return segment, child
            if len(children) < self.max_segments:
                if tree.nodes >= self.max_nodes:
                    return WILDCARD, None
                child = children[segment] = _Node()
                tree.nodes += 1
                return segment, child
            # one value too many: this position is generalised
            _generalise(tree, node)
        wild = node.wild
        if wild is None:
            if tree.nodes >= self.max_nodes:
                return WILDCARD, None
            wild = node.wild = _Node()
            tree.nodes += 1
        return WILDCARD, wild

    def _alike(self, tree: _Host, parent: _Node, node: _Node) -> None:
        """``node``, a kept child of ``parent``, has a new child: ``parent``'s position is
        generalised when :data:`ALIKE_SIBLINGS` of its children (``node`` among them) share
        :data:`ALIKE_KEYS` children of theirs. Projects whose sections are the same sections
        are one template, whatever their number; an application's own sections, whose
        children differ, are not."""
        children, keys = parent.children, node.children
        if children is None or keys is None or len(keys) < ALIKE_KEYS:
            return
        alike = 1
        for sibling in children.values():
            if (
                sibling is not node
                and sibling.children is not None
                and len(keys.keys() & sibling.children.keys()) >= ALIKE_KEYS
            ):
                alike += 1
                if alike >= ALIKE_SIBLINGS:
                    _generalise(tree, parent)
                    return

    def _query(self, node: _Node | None, query: str) -> str:
        """The query part of a pattern: ``name=value`` or ``name=*`` for each parameter name."""
        values: dict[str, str] = {}
        for pair in query.split("&"):
            if pair:
                name, _, value = pair.partition("=")
                values.setdefault(name, value)
        names = tuple(sorted(values))
        if len(names) > MAX_NAMES or node is None:
            return WILDCARD
        groups = node.groups
        group = groups.get(names)
        if group is None:
            if len(groups) >= MAX_GROUPS:
                return WILDCARD
            group = groups[names] = {name: set() for name in names}
        out = []
        limit = self.max_values
        for name in names:
            value = values[name]
            seen = group[name]
            if seen is None or looks_like_id(value):
                token = WILDCARD
            elif value in seen:
                token = value
            elif len(seen) < limit:
                seen.add(value)
                token = value
            else:
                group[name] = None  # many values: this parameter does not name a kind of page
                token = WILDCARD
            out.append(f"{name}={token}")
        return "&".join(out)
