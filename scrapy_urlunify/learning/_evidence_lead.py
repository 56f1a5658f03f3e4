"""What a decisive sample of a parameter rule must not look like: the *lead* its evidence shares.

A wiki learns ``title`` does not matter on ``/w/index.php?action=edit&redlink=1`` from a dozen
``title=Talk:…`` values, one text (the talk pages nobody wrote). ``title=Category_talk:…`` shows
another text, and the requests the rule merges are mostly more ``Talk:…``: samples like the
evidence agree whatever the rule is worth elsewhere. The **lead** of a rule is the leading part
every value of its parameter in its examples shares, up to and including the last separator (a
character neither letter nor digit) in it: ``Talk:`` there, ``2026-12-`` for days of one month,
nothing for ``p451``/``p129`` or ``name``/``price``. A rule with a lead is confirmed only once a
request whose value does not start with it agreed too (or none such was met: see
``integration.rules._probation``). Pure functions; the examples are the rule's own, kept with it, so
a resumed run finds the same lead.
"""

from __future__ import annotations

from urllib.parse import unquote_plus

from scrapy_urlunify.learning._rule_types import PARAM, LearnedRule


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
