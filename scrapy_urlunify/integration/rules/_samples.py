"""One rule on probation (:class:`RuleOnProbation`): the requests it merges, which of them are its
samples (one per *sample key*: its path, or for a rule of one rule context the query items
outside the context; one of them unlike the lead its evidence shares), and when their verdicts
are enough (docs/learning.md, "One sample unlike the evidence"); an alias rule's samples include
its host's root page (docs/learning.md, "An alias host's root page"). Fetching the samples, the kept
requests and the verdicts' bookkeeping are :class:`~._probation.Probation`'s; how a sample is
named in the kept store (:func:`key_text`), how far ahead it is scheduled
(:func:`sample_priority`), which rules take samples of their own (:func:`sampling`: not one a
wider rule on probation subsumes) and in which order kept requests are verified at idle
(:func:`fresh_paths_first`) are here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_urlunify.core._domains import within
from scrapy_urlunify.core._forms import UrlForm
from scrapy_urlunify.core._params import context_items
from scrapy_urlunify.learning._rule_contexts import split_context
from scrapy_urlunify.learning._rule_types import FORM, evidence_lead, param_value, subsumes_rule

if TYPE_CHECKING:
    from scrapy_urlunify.learning._rule_types import LearnedRule


#: a learned rule's ``(kind, host, name)``
RuleKey = tuple[str, str, str]

#: a rule's sample unlike its evidence: none yet, one fetched (awaiting its verdict), one
#: agreed, none needed (the crawl went idle with no request unlike the evidence kept); the
#: same for an alias rule's sample of its host's root page
_NONE, _SAMPLED, _AGREED, _WAIVED = range(4)


#: prefix of the rule name of a kept entry that is a probation sample (fetched, awaiting its
#: verdict)
SAMPLE = "~"


#: added to a sample's priority when it is scheduled: fetched next, in any crawl order, so a
#: rule is confirmed or revoked within a few fetches of its samples, not at the end of a queue
#: (with the frontier, twice its penalty more: a sample's URL pattern is usually one of
#: duplicates, penalised twice)
SAMPLE_PRIORITY = 1000


def sample_priority(settings: dict[str, Any]) -> int:
    """The priority boost of a request fetched to check something (a rule's sample, a declared
    shortlink): ahead of every request, penalised by the frontier or not."""
    boost = SAMPLE_PRIORITY
    if settings["URLUNIFY_FRONTIER"]:
        boost += 2 * settings["URLUNIFY_FRONTIER_PENALTY"]
    return boost


def rule_key(rule: LearnedRule) -> RuleKey:
    """``(kind, host, name)``; a rule of one rule context has its context key for host."""
    return (rule.kind, rule.context_key, rule.name)


def key_text(key: RuleKey) -> str:
    """A rule key as the kept store names it."""
    return "|".join(key)


def text_key(text: str) -> RuleKey:
    """The rule key a kept store's name gives (a sample's name starts with :data:`SAMPLE`)."""
    kind, _, rest = text.removeprefix(SAMPLE).partition("|")
    # a rule context may hold "|" (a raw query), a host never does
    host, _, name = (
        rest.partition("|") if "/" not in rest.partition("|")[0] else rest.rpartition("|")
    )
    return (kind, host, name)


def url_path(url: str) -> str:
    """``url`` without its query and fragment."""
    return url.split("?", 1)[0].split("#", 1)[0]


def is_root(url: str) -> bool:
    """Whether ``url`` is a host's root page (``http://h.test/``, no query)."""
    rest = url.split("#", 1)[0].partition("://")[2]
    return rest.partition("/")[2] == ""


class RuleOnProbation:
    """A rule adopted but not yet confirmed: its samples (fetched anyway) and their verdicts."""

    __slots__ = (
        "confirmed",
        "context_items",
        "form",
        "key",
        "lead",
        "paths",
        "root",
        "rule",
        "sampled",
        "unlike",
        "verified_at_idle",
    )

    def __init__(self, rule: LearnedRule) -> None:
        self.rule = rule
        self.key = rule_key(rule)
        #: the query items of the rule's context (none for a rule of a whole host)
        self.context_items = split_context(rule.context)[1]
        #: a form rule's source and target, compiled
        self.form = UrlForm(rule.name, rule.target) if rule.kind == "form" else None
        self.paths: set[str] = set()  # the sample keys sampled
        self.sampled = 0
        self.confirmed = 0
        self.verified_at_idle = 0  # kept requests fetched as samples when the crawl went idle
        #: what every value of its parameter in its evidence starts with (``Talk:``), or ""
        self.lead = evidence_lead(rule)
        self.unlike = _NONE
        #: an alias rule's sample of its host's root page, which differs from the site's first
        #: when anything does (a mirror's home announcing it is one): sampled whatever the count
        self.root = _NONE if rule.kind == "alias" else _WAIVED

    # -- saved with the learned state ------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {
            "sampled": self.sampled,
            "confirmed": self.confirmed,
            "paths": sorted(self.paths),
            "unlike": self.unlike == _AGREED,
            "root": self.root in (_AGREED, _WAIVED),
        }

    def restore(self, progress: dict[str, Any]) -> None:
        self.sampled = int(progress.get("sampled", 0))
        self.confirmed = int(progress.get("confirmed", 0))
        self.paths = {str(x) for x in progress.get("paths", ())}
        self.unlike = _AGREED if progress.get("unlike") else _NONE
        if progress.get("root", True):  # (saved by a version without it: not asked)
            self.root = _WAIVED

    # -- which requests -------------------------------------------------------------------------

    def covers(self, url: str, identity_host: str) -> bool:
        """Whether the rule takes part in merging ``url`` (its identity host under the
        settings' policy): the host is the rule's, and has the parameter or leading segment
        or last segment (in the rule's context, for a rule of one), or is of its source form."""
        rule = self.rule
        if not within(identity_host, rule.host):
            return False
        if rule.kind == "alias":
            return True
        rest = url.split("/", 3)[3] if url.count("/") >= 3 else ""
        rest = rest.split("#", 1)[0]
        path, _, query = rest.partition("?")
        if rule.kind == "path":
            return path.split("/", 1)[0] == rule.name
        if rule.kind == "suffix":
            head, _, last = path.removesuffix("/").rpartition("/")
            return bool(head) and last == rule.name
        if self.form is not None:
            return self.form.covers(path, query)
        if rule.context and not rule.applies_to("/" + path, set(context_items(query))):
            return False
        return any(item.partition("=")[0].lower() == rule.name for item in query.split("&"))

    def sample_key(self, url: str) -> str:
        """What two samples of the rule must differ in: their path; for a rule of one rule
        context (one path), the query items outside the context -- the parameter's value and
        the item naming the page (``returnto=X``; ``id=5&sort=price``) -- so that its samples
        come as fast as the requests it merges, even for a parameter of two or three values.
        For a form rule, the whole URL: what it captures may be all in the query
        (``/?p={q0}&post_type=product``, every URL on the path ``/``)."""
        if self.rule.kind == FORM:
            return url.split("#", 1)[0]
        if not self.rule.context:
            return url_path(url)
        query = url.split("#", 1)[0].partition("?")[2]
        common = self.context_items
        return (
            url_path(url)
            + "?"
            + "&".join(sorted(i for i in context_items(query) if i not in common))
        )

    def is_unlike(self, url: str) -> bool:
        """Whether ``url``'s value of the rule's parameter does not start with the rule's lead."""
        if not self.lead:
            return False
        value = param_value(url, self.rule.name)
        return value is not None and not value.startswith(self.lead)

    # -- samples and verdicts -------------------------------------------------------------------

    def wants(self, url: str, key: str, needed: int) -> bool:
        """Whether a request it merged (of sample key ``key``) is to be a sample: one per key,
        ``needed`` in all, the last kept for a request unlike the evidence while none came."""
        if self.root == _NONE and is_root(url):
            return True
        if key in self.paths:
            return False
        waiting = bool(self.lead) and self.unlike == _NONE
        if waiting and self.is_unlike(url):
            return True
        return self.sampled < needed - (1 if waiting else 0)

    def note(self, url: str, key: str) -> None:
        """``url`` (of sample key ``key``) is fetched as a sample, or was fetched anyway."""
        self.paths.add(key)
        if self.root == _NONE and is_root(url):
            self.root = _SAMPLED
        if self.unlike == _NONE and self.is_unlike(url):
            self.unlike = _SAMPLED

    def sample(self, url: str, key: str) -> None:
        """``url`` is one of the samples it takes from the requests it merges."""
        self.note(url, key)
        self.sampled += 1

    def agreed(self, url: str) -> None:
        """A sample (or a page fetched anyway) of ``url`` showed the page it was merged into."""
        self.confirmed += 1
        if self.root != _WAIVED and is_root(url):
            self.root = _AGREED
        if self.is_unlike(url):
            self.unlike = _AGREED

    def done(self, needed: int) -> bool:
        """Whether enough samples agreed, one of them unlike the evidence if it has a lead."""
        return (
            self.confirmed >= needed
            and (not self.lead or self.unlike in (_AGREED, _WAIVED))
            and self.root in (_AGREED, _WAIVED)
        )

    def root_url(self) -> str | None:
        """The root page of an alias rule's host, as its evidence spells the host, while it is
        to be sampled; else None."""
        if self.root != _NONE:
            return None
        for pair in self.rule.examples:
            for url in pair:
                scheme, _, rest = url.partition("://")
                authority = rest.partition("/")[0]
                if authority.rpartition("@")[2].partition(":")[0] == self.rule.host:
                    return f"{scheme}://{authority}/"
        return None

    def waive_root(self) -> None:
        """Its host's root page needs no sample (fetched before the rule, or never to be)."""
        if self.root != _AGREED:
            self.root = _WAIVED

    def at_idle(self, kept: list[str]) -> int | None:
        """The crawl went idle, nothing in flight; ``kept``: the URLs of the requests it kept, in
        the order they would be verified. The index of the one to verify first (unlike its
        evidence), if it still needs one; when none of them is, it needs none."""
        if self.root in (_NONE, _SAMPLED):
            self.root = _WAIVED  # its root page was answered otherwise, or never asked
        if self.unlike == _SAMPLED:
            self.unlike = _NONE  # that sample was answered otherwise (an error, a redirect)
        if not self.lead or self.unlike != _NONE:
            return None
        for i, url in enumerate(kept):
            if self.is_unlike(url):
                return i
        self.unlike = _WAIVED
        return None


def sampling(
    rules: list[RuleOnProbation], on_probation: list[LearnedRule]
) -> list[RuleOnProbation]:
    """Of ``rules`` (merging one request), those that take samples of their own: not one a
    wider rule on probation (of ``on_probation``) subsumes (``subsumes_rule``). The wider rule
    merges the request into the same page, so its sample checks both, and its confirmation
    confirms the narrower one: a form and the last segment learned beside it from the same
    pages (``/product/{s1}/amp`` and ``amp``) each took three samples of one kind of URL."""
    return [
        p
        for p in rules
        if not any(w is not p.rule and subsumes_rule(w, p.rule) for w in on_probation)
    ]


def fresh_paths_first(urls: list[str], sampled: set[str]) -> list[int]:
    """The order in which kept requests (their ``urls``) are verified: one per path not
    ``sampled`` yet first."""
    fresh: list[int] = []
    rest: list[int] = []
    paths = set(sampled)
    for i, url in enumerate(urls):
        path = url_path(url)
        (rest if path in paths else fresh).append(i)
        paths.add(path)
    return fresh + rest
