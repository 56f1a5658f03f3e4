"""What fetching a URL would ask of the rules a learner has not adopted nor ruled out: the
frontier's question before it lets a request go (``integration.queue._frontier``), read from a
:class:`~._learner.Learner`'s rules, evidence and pages found unstable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_urlunify.core._spellings import LINK_TAG_PARAMS
from scrapy_urlunify.learning._candidates import PRESENCE
from scrapy_urlunify.learning._pairs import other_items, read_page, split_last
from scrapy_urlunify.learning._rule_types import (
    ALIAS,
    PARAM,
    SUFFIX,
    alias_of,
    covered,
    in_context_rule,
)

if TYPE_CHECKING:
    from collections.abc import Container, Sequence

    from scrapy_urlunify.learning._candidates import Candidates
    from scrapy_urlunify.learning._pairs import PairFinder
    from scrapy_urlunify.learning._rule_contexts import RuleContexts
    from scrapy_urlunify.learning._rule_types import LearnedRule
    from scrapy_urlunify.learning._url_forms import FormEvidence, Parts

#: ``(question, candidate rule, values observed)``, as the frontier weighs them
Questions = list[tuple[str, str, int]]


def open_questions(
    url: str,
    identity_host: str,
    rules: Sequence[LearnedRule],
    unstable: Container[str],
    candidates: Candidates,
    contexts: RuleContexts,
    finder: PairFinder,
    forms: tuple[FormEvidence, Parts | None] | None = None,
) -> Questions:
    """What fetching ``url`` would ask of a parameter rule not yet adopted nor ruled out (on
    the host, or in the rule context of ``url``) on the page the rest of its URL names:
    ``(question, candidate, n)``, the question and its candidate rule as text, ``n`` the
    other values of the parameter observed on that page (two values with one text are the
    page's piece of evidence; a third adds nothing). A parameter of a page not observed
    yet is asked only of a candidate with evidence (a rule under way), or when it is a link
    tag (``core._spellings.LINK_TAG_PARAMS``). A page observed on a related host asks whether
    the two hosts are aliases, and a last segment under way whose directory was observed
    (``/x/amp/`` after ``/x/``) asks its suffix rule. What the frontier asks before it
    lets a request go (``integration.queue._frontier``). With ``forms`` (the form evidence and
    the parts of ``url``'s identifier), a URL that asks no parameter its question asks the form
    shapes under way it may add a pair to (:meth:`~._url_forms.FormEvidence.asks`); a
    parameter's question paces it already, and asking both held a page's second value (the
    other half of its piece of evidence) behind the first."""
    page = read_page(url, identity_host, "")
    if page is None or url in unstable:
        return []
    found: Questions = []
    host = page.host
    for name, hint, n in finder.values_seen(page):
        if covered(rules, PARAM, host, name) or in_context_rule(
            rules, host, name, page.path, other_items(hint)
        ):
            continue
        candidate = f"{name} {host}"
        if candidates.is_blocked(PARAM, host, name):
            context = contexts.context_of(page.path, hint)
            if context is None or contexts.is_blocked(host, name, context[1]):
                continue
            candidate = f"{name} {host}{context[1]}"
            under_way = contexts.has_pages(host, name, context[1])
        else:
            under_way = candidates.has((PARAM, host, name)) or candidates.has(
                (PRESENCE, host, name)
            )
        # a page of its own, one more page of a rule under way, or a link tag: its page
        # without it makes a pair (let go at once, a dozen were fetched before the rule)
        if n >= 0 or under_way or name in LINK_TAG_PARAMS:
            found.append((f"{name} {hint}", candidate, max(n, 0)))
    for other in finder.hosts_seen(page):  # a page of a host that may mirror another
        pair = sorted((host, other))
        if (
            candidates.is_blocked(ALIAS, host, other)
            or alias_of(rules, host)
            or alias_of(rules, other)
        ):
            continue
        found.append((f"alias {host}{page.path}?{page.query}", f"alias {pair[0]} {pair[1]}", 0))
    evidence, parts = forms or (None, None)
    head, last = split_last(page.path)
    if (
        head
        and last
        and (candidates.has((SUFFIX, host, last)) or finder.segment_pending(host, last))
        and not covered(rules, SUFFIX, host, last)
        and not candidates.is_blocked(SUFFIX, host, last)
        and finder.directory_seen(page, head, None if parts is None else parts[2] or "")
    ):
        # one more page of a last segment under way (``/x/amp/``, ``/x/`` seen): its directory
        # makes the pair, one directory at a time (in depth-first order a product's views
        # leave the queue with the next product's)
        found.append((f"/{last} {page.hostkey}{head}", f"suffix {host} {last}", 0))
    if found or evidence is None or parts is None:
        return found
    return [(f"form {parts}", shape, 0) for shape in evidence.asks(parts)]
