"""The crawl's policies: the settings' own and the current one, with the rules learned during the
crawl on top, and a unifier for each (docs/learning.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_urlunify.core.unify import unifier_for

if TYPE_CHECKING:
    from scrapy_urlunify.core.policy import Policy


class CrawlPolicies:
    """The policy of the settings (``base_policy``) and the policy in force (``policy``): the
    same until a rule is learned. Components read :attr:`unifier` on every call rather than
    keep it: it changes with every learned rule."""

    def __init__(self, policy: Policy) -> None:
        self.base_policy = self.policy = policy
        self.base_unifier = self.unifier = unifier_for(policy)
        #: the crawl's scope (learned rules never change it)
        self.scope: str | None = policy.scope

    def set_learned(
        self,
        ignore_params: dict[str, list[str]],
        aliases: list[list[str]],
        path_prefixes: dict[str, list[str]] | None = None,
    ) -> None:
        """Apply learned rules on top of the settings' policy: parameters go to ``ignore_params``
        (identity only: fetched URLs keep them), mirror hosts to ``domain_aliases``, leading
        path segments to ``ignore_path_prefixes``."""
        base = self.base_policy
        prefixes: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_path_prefixes}
        for host, names in (path_prefixes or {}).items():
            prefixes.setdefault(host, []).extend(names)
        ignore: dict[str, list[str]] = {h or "*": list(n) for h, n in base.ignore_params}
        for host, names in ignore_params.items():
            ignore.setdefault(host, []).extend(names)
        groups = [list(g) for g in base.domain_aliases]
        for group in aliases:
            for alias in group[1:]:
                _add_alias(groups, canonical=group[0], alias=alias)
        self.policy = base.replace(
            ignore_params=ignore, domain_aliases=groups, ignore_path_prefixes=prefixes
        )
        self.unifier = unifier_for(self.policy)


def _add_alias(groups: list[list[str]], canonical: str, alias: str) -> None:
    for group in groups:
        if alias in group:
            return  # already unified, one way or the other
    for group in groups:
        if canonical in group:
            group.append(alias)
            return
    groups.append([canonical, alias])
