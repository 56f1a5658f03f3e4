"""The crawl's policies: the settings' own and the current one, with the rules learned during the
crawl on top, and a unifier for each (docs/learning.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_urlunify.core._unify import unifier_for
from scrapy_urlunify.learning._rule_settings import policy_with

if TYPE_CHECKING:
    from scrapy_urlunify.core._policy import Policy


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
        path_suffixes: dict[str, list[str]] | None = None,
        url_forms: dict[str, dict[str, str]] | None = None,
    ) -> None:
        """Apply learned rules on top of the settings' policy (:func:`policy_with`)."""
        self.policy = policy_with(
            self.base_policy, ignore_params, aliases, path_prefixes, path_suffixes, url_forms
        )
        self.unifier = unifier_for(self.policy)
