"""The learned rules: their five kinds, an adopted rule, a revocation, a counter-example, how
alias rules chain and which host of a pair becomes the alias, and the *lead* of a rule's
evidence (below).

A rule is named by its **rule key** ``(kind, host, name)`` (:func:`rule_key`): ``"param"``
(a query parameter that does not matter on a host), ``"alias"`` (a host that mirrors another),
``"path"`` (a leading path segment that does not matter), ``"suffix"`` (a last path segment
that does not matter: ``/x/print.html`` is ``/x/``), ``"form"`` (a URL form whose pages are those
of another: ``/shop/*/{s2}`` is ``/product/{s2}``, its ``target``). A parameter rule may hold in one
**rule context** only: a path of the host and the items that identify the page there
(``/w/index.php?title=Special:UserLogin``); its key's host is then the host and the context
(:attr:`LearnedRule.context_key`), the way ``URLUNIFY_IGNORE_PARAMS`` names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import unquote_plus

from scrapy_urlunify.core._domains import within
from scrapy_urlunify.core._forms import subsumes

PARAM = "param"
ALIAS = "alias"
PATH = "path"
SUFFIX = "suffix"
FORM = "form"
#: the kinds of path rules: a segment of the path that does not matter, at its start or its end
PATH_KINDS = (PATH, SUFFIX)


@dataclass(frozen=True)
class LearnedRule:
    """One adopted rule.

    * ``kind``: ``"param"`` (a query parameter that does not matter on a host), ``"alias"``
      (two hosts serve the same pages), ``"path"`` (a leading path segment does not matter) or
      ``"suffix"`` (a last path segment does not matter).
    * ``host``: for ``"param"``, the identity host the rule applies to (and its subdomains);
      for ``"alias"``, the host that becomes an alias.
    * ``name``: for ``"param"``, the parameter name (lower-case); for ``"alias"``, the
      canonical host it maps to; for ``"path"`` and ``"suffix"``, the segment.
      For ``"form"``, the identity host and the source form (``core._forms``).
    * ``pairs``: independent pieces of evidence when adopted (see ``docs/learning.md``); for
      ``"form"``, the declared canonicals of that shape found true.
    * ``examples``: up to three URL pairs that taught it, for the log.
    * ``context``: for a ``"param"`` rule that holds in one rule context only, its path and
      the items that identify the page there (``"/login"``, ``"/w/index.php?title=X"``,
      items sorted); ``""`` for a rule of the whole host. Its ``pairs`` are then the
      distinct values of the parameter seen with one text in that context, or the distinct
      pages of the context on which two of its values showed one text.
    * ``target``: for ``"form"``, the target form (``""`` for the other kinds).
    """

    kind: str
    host: str
    name: str
    pairs: int
    examples: tuple[tuple[str, str], ...]
    context: str = ""
    target: str = ""

    @property
    def context_key(self) -> str:
        """Where the rule holds, as ``URLUNIFY_IGNORE_PARAMS`` keys it: the host, or the host
        and the rule context (``wiki.test/w/index.php?title=Special:UserLogin``)."""
        return self.host + self.context

    def applies_to(self, path: str, items: set[str] | frozenset[str]) -> bool:
        """Whether a URL of the rule's host with this path and these query items (as
        ``core.params.context_items`` reads them) is in the rule's context."""
        if not self.context:
            return True
        cpath, _, query = self.context.partition("?")
        return path == cpath and (not query or set(query.split("&")) <= items)

    def __str__(self) -> str:
        if self.kind == ALIAS:
            what = f"host {self.host} is an alias of {self.name}"
        elif self.kind == PATH:
            what = f"a leading /{self.name}/ does not matter on {self.host}"
        elif self.kind == SUFFIX:
            what = f"a last /{self.name} does not matter on {self.host}"
        elif self.kind == FORM:
            shown = "; ".join(f"{a} declares {b}" for a, b in self.examples[:1])
            return (
                f"URLs of the form {self.name} on {self.host} are the pages of {self.target} "
                f"({self.pairs} declared canonicals found true, e.g. {shown})"
            )
        elif self.context:
            what = f"parameter {self.name!r} does not matter on {self.context_key}"
            shown = "; ".join(f"{a} = {b}" for a, b in self.examples[:1])
            return (
                f"{what} ({self.pairs} values with one text, or pages whose values show one text, "
                f"in this context, e.g. {shown})"
            )
        else:
            what = f"parameter {self.name!r} does not matter on {self.host}"
        shown = "; ".join(f"{a} = {b}" for a, b in self.examples[:1])
        return f"{what} ({self.pairs} independent pairs, e.g. {shown})"

    def to_dict(self) -> dict[str, Any]:
        """The rule as a JSON object (:meth:`from_dict` reads it back)."""
        d = {
            "kind": self.kind,
            "host": self.host,
            "name": self.name,
            "pairs": self.pairs,
            "examples": [list(e) for e in self.examples],
        }
        if self.context:
            d["context"] = self.context
        if self.target:
            d["target"] = self.target
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LearnedRule:
        return cls(
            str(d["kind"]),
            str(d["host"]),
            str(d["name"]),
            int(d["pairs"]),
            tuple((str(a), str(b)) for a, b in d["examples"]),
            str(d.get("context", "")),
            str(d.get("target", "")),
        )


class Revocation(NamedTuple):
    """A rule withdrawn after its adoption, and the two URLs (same but for the rule's
    difference, different signatures) that contradicted it."""

    rule: LearnedRule
    counter_example: tuple[str, str]

    def __str__(self) -> str:
        a, b = self.counter_example
        return f"revoked: {self.rule.kind} {self.rule.context_key} {self.rule.name}: {a} != {b}"


class CounterExample(NamedTuple):
    """The first counter-example that blocked a candidate: for ``"param"``, ``host`` and the
    parameter ``name``; for ``"alias"``, the two hosts (sorted) in ``host`` and ``name``."""

    kind: str
    host: str
    name: str
    url_a: str
    url_b: str


def rule_key(kind: str, a: str, b: str) -> tuple[str, str, str]:
    """The rule key of a candidate: ``(kind, host, name)``; an alias candidate's two hosts
    sorted, since which one becomes the alias is decided only when it is adopted."""
    if kind == ALIAS:
        return (ALIAS, *sorted((a, b)))  # type: ignore[return-value]
    return (kind, a, b)


def alias_of(rules: Sequence[LearnedRule], host: str) -> str | None:
    """The host an alias rule maps ``host`` to, or None."""
    for r in rules:
        if r.kind == ALIAS and r.host == host:
            return r.name
    return None


def alias_direction(
    a: str, b: str, first: str, sites: Sequence[str], rules: Sequence[LearnedRule]
) -> tuple[str, str]:
    """(alias, canonical) of two hosts found to serve the same pages: a parent domain is
    canonical for its subdomain; else the host within the crawl's ``sites`` if only one is;
    else the one that names an alias group already; else the host seen ``first``."""
    if within(b, a):
        return b, a
    if within(a, b):
        return a, b
    in_a = any(within(a, s) for s in sites)
    in_b = any(within(b, s) for s in sites)
    if in_a != in_b:
        return (b, a) if in_a else (a, b)
    names = {r.name for r in rules if r.kind == ALIAS}
    if (a in names) != (b in names):
        return (b, a) if a in names else (a, b)
    return (b, a) if first == a else (a, b)


def alias_root(rules: Sequence[LearnedRule], host: str) -> str:
    """The end of ``host``'s chain of alias rules (``c -> b -> a``: ``a``); ``host`` itself
    when it is no alias. A cycle stops where it closes."""
    seen = {host}
    while True:
        nxt = alias_of(rules, host)
        if nxt is None or nxt in seen:
            return host
        seen.add(nxt)
        host = nxt


def covered(rules: Sequence[LearnedRule], kind: str, host: str, name: str) -> bool:
    """A rule of the whole host for ``name`` on ``host`` or a parent domain is in force."""
    return any(
        r.kind == kind and r.name == name and not r.context and within(host, r.host) for r in rules
    )


def host_params(rules: Sequence[LearnedRule], host: str) -> frozenset[str]:
    """The parameters a rule of the whole host says do not matter on ``host``."""
    return frozenset(
        r.name for r in rules if r.kind == PARAM and not r.context and within(host, r.host)
    )


def in_context_rule(
    rules: Sequence[LearnedRule], host: str, name: str, path: str, items: frozenset[str]
) -> bool:
    """A rule of a rule context for ``name`` on ``host`` already covers this context."""
    return any(
        r.kind == PARAM
        and r.name == name
        and r.context
        and r.host == host
        and r.applies_to(path, items)
        for r in rules
    )


# -- the lead of a rule's evidence ----------------------------------------------------------
#
# What a decisive sample of a parameter rule must not look like: the *lead* its evidence shares.
#
# A wiki learns ``title`` does not matter on ``/w/index.php?action=edit&redlink=1`` from a dozen
# ``title=Talk:…`` values, one text (the talk pages nobody wrote). ``title=Category_talk:…`` shows
# another text, and the requests the rule merges are mostly more ``Talk:…``: samples like the
# evidence agree whatever the rule is worth elsewhere. The **lead** of a rule is the leading part
# every value of its parameter in its examples shares, up to and including the last separator (a
# character neither letter nor digit) in it: ``Talk:`` there, ``2026-12-`` for days of one month,
# nothing for ``p451``/``p129`` or ``name``/``price``. A rule with a lead is confirmed only once a
# request whose value does not start with it agreed too (or none such was met: see
# ``integration.rules._probation``). Pure functions; the examples are the rule's own, kept with it, so
# a resumed run finds the same lead.


def param_value(url: str, name: str) -> str | None:
    """The (decoded) value of the first item of ``url``'s query named ``name`` (lower-case; names
    compare case-insensitively, as rules apply), None when it has none."""
    query = url.split("#", 1)[0].partition("?")[2]
    for item in query.split("&"):
        key, eq, value = item.partition("=")
        if eq and key.lower() == name:
            return unquote_plus(value)
    return None


def evidence_lead(rule: LearnedRule) -> str:
    """The lead of ``rule``: what every value of its parameter in its examples starts with, cut
    after the last separator in it; ``""`` when the values share none, when the examples show
    fewer than two values, or for an alias or path rule."""
    if rule.kind != PARAM:
        return ""
    values = {
        v
        for pair in rule.examples
        for url in pair
        if (v := param_value(url, rule.name)) is not None
    }
    if len(values) < 2:
        return ""
    first, last = min(values), max(values)  # what these two share, all the others share
    n = 0
    while n < len(first) and n < len(last) and first[n] == last[n]:
        n += 1
    cut = max((i for i, c in enumerate(first[:n]) if not c.isalnum()), default=-1)
    return first[: cut + 1]


def subsumes_rule(wide: LearnedRule, rule: LearnedRule) -> bool:
    """Whether ``wide`` merges every URL ``rule`` merges into the page ``rule`` merges it into,
    so that a check of ``wide`` is one of ``rule``: a form of a wider source
    (``core._forms.subsumes``), a parameter of the whole host over that parameter in one
    context, a last segment over a form that only drops it (``/product/{s1}/amp``)."""
    if wide.host != rule.host:
        return False
    if wide.kind == FORM and rule.kind == FORM:
        return subsumes((wide.name, wide.target), (rule.name, rule.target))
    if wide.kind == PARAM and rule.kind == PARAM:
        return wide.name == rule.name and not wide.context and bool(rule.context)
    if wide.kind == SUFFIX and rule.kind == FORM:
        return "?" not in rule.name and rule.name == f"{rule.target}/{wide.name}"
    return False
