"""The rules a crawl learned (``URLUNIFY_LEARN``), read where the crawl keeps them, and the
policy they make on top of the settings' policy.

A crawl keeps its learned state with :class:`~..learning.persist.LearnedRulesStore`: the file
``urlunify-learned.json`` of its JOBDIR, or the ``:rules`` hash of its scope in Redis (where
every process of the scope reads it when it starts). Every rule in that state applies to the
crawl's identifiers, those still on probation too (a revoked rule is no longer in it), so
:meth:`Learned.policy` applies them all, in the layer the crawl does: parameters are ignored
for identity (fetched URLs keep them), hosts become aliases, leading path segments are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import scrapy_urlunify.learning._rule_settings as rule_settings
from scrapy_urlunify.core._explain import same
from scrapy_urlunify.learning._persist import LearnedRulesStore
from scrapy_urlunify.learning._rule_types import ALIAS, FORM, PATH, SUFFIX, LearnedRule
from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._jobdir import LEARNED_FILENAME

if TYPE_CHECKING:
    import redis

    from scrapy_urlunify.core._policy import Policy


class Learned:
    """What a crawl's store holds of learned rules (``found`` False: it holds no learned state,
    the crawl learned nothing or ran without ``URLUNIFY_LEARN``)."""

    def __init__(
        self,
        where: str,
        rules: Sequence[LearnedRule] = (),
        on_probation: frozenset[str] = frozenset(),
        revoked: int = 0,
        found: bool = True,
    ) -> None:
        self.where = where
        self.rules = tuple(rules)
        #: ``kind|host|name`` of each rule still on probation (as the crawl saves its probation)
        self.on_probation = on_probation
        self.revoked = revoked
        self.found = found

    def probation_of(self, rule: LearnedRule) -> bool:
        return f"{rule.kind}|{rule.context_key}|{rule.name}" in self.on_probation

    @property
    def probation_count(self) -> int:
        return sum(self.probation_of(r) for r in self.rules)

    def summary(self) -> str:
        """``2 rules from /job/urlunify-learned.json (1 on probation)``."""
        if not self.found:
            return f"none kept in {self.where} (a crawl with URLUNIFY_LEARN keeps them there)"
        count = len(self.rules)
        text = f"{count} rule{'' if count == 1 else 's'} from {self.where}"
        details = []
        if self.probation_count:
            details.append(f"{self.probation_count} on probation")
        if self.revoked:
            details.append(f"{self.revoked} revoked")
        return text + (f" ({', '.join(details)})" if details else "")

    def policy(self, base: Policy) -> Policy:
        return with_rules(base, self.rules)

    def deciding(self, a: str, b: str, base: Policy) -> list[LearnedRule]:
        """The learned rules each of which alone, on top of ``base``, makes ``a`` and ``b`` one
        page (empty when it takes several of them together)."""
        return [r for r in self.rules if same(a, b, with_rules(base, [r])).same]


def with_rules(base: Policy, rules: Sequence[LearnedRule]) -> Policy:
    """``base`` with the learned ``rules`` added to its own, as the crawl merges them."""
    return rule_settings.policy_with(
        base,
        rule_settings.ignore_params(rules),
        rule_settings.domain_aliases(rules),
        rule_settings.path_prefixes(rules),
        rule_settings.path_suffixes(rules),
        rule_settings.url_forms(rules),
    )


def describe(rule: LearnedRule) -> str:
    """A rule in a few words (``parameter 'sid' does not matter on shop.test``)."""
    if rule.kind == ALIAS:
        return f"host {rule.host} is an alias of {rule.name}"
    if rule.kind == PATH:
        return f"a leading /{rule.name}/ does not matter on {rule.host}"
    if rule.kind == SUFFIX:
        return f"a last /{rule.name} does not matter on {rule.host}"
    if rule.kind == FORM:
        return f"URLs of the form {rule.name} on {rule.host} are the pages of {rule.target}"
    return f"parameter {rule.name!r} does not matter on {rule.context_key}"


def _read(store: LearnedRulesStore, where: str) -> Learned:
    from scrapy_urlunify.learning._learner import Learner

    try:
        state = store.load_state()
        if not state.learner:
            return Learned(where, found=False)
        learner = Learner.from_json(state.learner)
    except ValueError as e:  # corrupt JSON, or JSON of another shape
        raise StoreError(f"{where}: not a crawl's learned rules ({e})") from None
    return Learned(
        where,
        learner.rules,
        frozenset(state.probation or ()),
        len(learner.revoked),
    )


def from_jobdir(jobdir: Path) -> Learned:
    path = jobdir / LEARNED_FILENAME
    return _read(LearnedRulesStore(path=path), str(path))


def from_redis(client: redis.Redis, key: str, url: str) -> Learned:
    """The learned rules of the scope whose rules hash is ``key`` (``url``: for messages)."""
    from scrapy_urlunify.stores._redis_tables import RedisRulesStore

    store = RedisRulesStore(client, key, unavailable_timeout=0)
    return _read(LearnedRulesStore(redis=store), f"Redis {url} key {store.key}")
