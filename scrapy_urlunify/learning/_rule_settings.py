"""Learned rules as the settings that apply them: ``ignore_params``, ``domain_aliases``,
``ignore_path_prefixes``, ``ignore_path_suffixes`` and ``url_forms`` values, and the settings
snippet a project pastes to start a later crawl with them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scrapy_urlunify.core._forms import subsumes
from scrapy_urlunify.learning._rule_types import (
    ALIAS,
    FORM,
    PARAM,
    PATH,
    SUFFIX,
    LearnedRule,
    alias_root,
)

if TYPE_CHECKING:
    from scrapy_urlunify.core._policy import Policy


def policy_with(
    base: Policy,
    ignore: dict[str, list[str]],
    aliases: list[list[str]],
    prefixes: dict[str, list[str]] | None = None,
    suffixes: dict[str, list[str]] | None = None,
    forms: dict[str, dict[str, str]] | None = None,
) -> Policy:
    """``base`` with learned rules added to its own (they never replace the settings'):
    parameters to ``ignore_params`` (identity only: fetched URLs keep them), mirror hosts to
    ``domain_aliases`` (canonical host first), leading and last path segments to
    ``ignore_path_prefixes`` and ``ignore_path_suffixes``, URL forms to ``url_forms`` (after the
    settings' own). The crawl applies its rules so, and so does ``urlunify same``."""
    all_prefixes: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_path_prefixes}
    for host, names in (prefixes or {}).items():
        all_prefixes.setdefault(host, []).extend(names)
    all_suffixes: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_path_suffixes}
    for host, names in (suffixes or {}).items():
        all_suffixes.setdefault(host, []).extend(names)
    all_ignore: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_params}
    for host, names in ignore.items():
        all_ignore.setdefault(host, []).extend(names)
    all_forms: dict[str, list[tuple[str, str]]] = {h or "*": list(f) for h, f in base.url_forms}
    for host, pairs in (forms or {}).items():
        all_forms.setdefault(host, []).extend(pairs.items())
    groups = [list(g) for g in base.domain_aliases]
    for canonical, *others in aliases:
        for alias in others:
            if any(alias in g for g in groups):
                continue  # already unified, one way or the other
            into = next((g for g in groups if canonical in g), None)
            if into is None:
                groups.append([canonical, alias])
            else:
                into.append(alias)
    return base.replace(
        ignore_params=all_ignore,
        domain_aliases=groups,
        ignore_path_prefixes=all_prefixes,
        ignore_path_suffixes=all_suffixes,
        url_forms=all_forms,
    )


def _escape_glob(name: str) -> str:
    """A parameter name as a literal ``fnmatch`` entry (``tags[]`` -> ``tags[[]]``)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def ignore_params(rules: Sequence[LearnedRule]) -> dict[str, list[str]]:
    """The parameter rules as an ``ignore_params`` dict ``{host: [names]}`` (names escaped so
    that ``fnmatch`` characters match literally); a rule of one rule context under its scope
    (``{"wiki.test/w/index.php?title=Special:UserLogin": ["returnto"]}``)."""
    out: dict[str, list[str]] = {}
    for r in rules:
        if r.kind == PARAM:
            out.setdefault(r.context_key, []).append(_escape_glob(r.name))
    return out


def path_prefixes(rules: Sequence[LearnedRule]) -> dict[str, list[str]]:
    """The path rules as an ``ignore_path_prefixes`` dict ``{host: [leading segments]}``."""
    out: dict[str, list[str]] = {}
    for r in rules:
        if r.kind == PATH:
            out.setdefault(r.host, []).append(r.name)
    return out


def path_suffixes(rules: Sequence[LearnedRule]) -> dict[str, list[str]]:
    """The suffix rules as an ``ignore_path_suffixes`` dict ``{host: [last segments]}`` (escaped
    so that ``fnmatch`` characters match literally)."""
    out: dict[str, list[str]] = {}
    for r in rules:
        if r.kind == SUFFIX:
            out.setdefault(r.host, []).append(_escape_glob(r.name))
    return out


def url_forms(rules: Sequence[LearnedRule]) -> dict[str, dict[str, str]]:
    """The form rules as a ``url_forms`` dict ``{host: {source: target}}``, without a form
    that a wider one of the same host subsumes (``/shop/hats/{s2}`` once ``/shop/*/{s2}`` was
    learned: it merges nothing more, and stays a rule, in force again if the wider one is
    revoked)."""
    forms = [r for r in rules if r.kind == FORM]
    out: dict[str, dict[str, str]] = {}
    for r in forms:
        if not any(
            w.host == r.host and subsumes((w.name, w.target), (r.name, r.target)) for w in forms
        ):
            out.setdefault(r.host, {})[r.name] = r.target
    return out


def domain_aliases(rules: Sequence[LearnedRule]) -> list[list[str]]:
    """The alias rules as ``domain_aliases`` groups, canonical host first (chains
    ``c -> b -> a`` resolved into one group)."""
    groups: dict[str, list[str]] = {}
    for r in rules:
        if r.kind == ALIAS:
            groups.setdefault(alias_root(rules, r.name), []).append(r.host)
    return [[root, *hosts] for root, hosts in groups.items()]


def settings_snippet(rules: Sequence[LearnedRule]) -> str:
    """Settings to paste into a project so a later crawl starts with what this one learned,
    in the layer the crawl applied them: ``URLUNIFY_IGNORE_PARAMS`` (identity only, the
    fetched URLs keep the parameters; a rule of one rule context keyed by host, path and the
    items that identify the page there), ``URLUNIFY_DOMAIN_ALIASES`` and
    ``URLUNIFY_IGNORE_PATH_PREFIXES``, ``URLUNIFY_IGNORE_PATH_SUFFIXES``, ``URLUNIFY_URL_FORMS``;
    a line only when there is a rule of its kind (an
    empty value would replace the project's own setting). Merge with the project's own
    values, if it has some."""
    lines = ["# learned by scrapy_urlunify (merge with your own values of these settings)"]
    params = ignore_params(rules)
    if params:
        body = ", ".join(
            f"{h!r}: [{', '.join(repr(n) for n in names)}]" for h, names in params.items()
        )
        lines.append(f"URLUNIFY_IGNORE_PARAMS = {{{body}}}")
    aliases = domain_aliases(rules)
    if aliases:
        body = ", ".join(f"[{', '.join(repr(h) for h in g)}]" for g in aliases)
        lines.append(f"URLUNIFY_DOMAIN_ALIASES = [{body}]")
    prefixes = path_prefixes(rules)
    if prefixes:
        body = ", ".join(
            f"{h!r}: [{', '.join(repr(n) for n in names)}]" for h, names in prefixes.items()
        )
        lines.append(f"URLUNIFY_IGNORE_PATH_PREFIXES = {{{body}}}")
    suffixes = path_suffixes(rules)
    if suffixes:
        body = ", ".join(
            f"{h!r}: [{', '.join(repr(n) for n in names)}]" for h, names in suffixes.items()
        )
        lines.append(f"URLUNIFY_IGNORE_PATH_SUFFIXES = {{{body}}}")
    forms = url_forms(rules)
    if forms:
        lines.append(f"URLUNIFY_URL_FORMS = {forms!r}")
    if len(lines) == 1:
        lines.append("# (no rules learned)")
    return "\n".join(lines) + "\n"
