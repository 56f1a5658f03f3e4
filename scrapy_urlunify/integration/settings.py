"""Every ``URLUNIFY_*`` Scrapy setting: its default, its doc, and how its value is checked
(docs/settings.md is generated from this table).

:data:`SETTINGS` is the one table of them (as scrapy-redis's ``defaults.py``): the **policy**
settings, one per :class:`~scrapy_urlunify.Policy` field (read into the crawl's policy by
:func:`policy_from_settings`), and the **integration** switches. Components read a setting only
through :func:`get`, which validates it, so a bad value fails at start-up with a
:class:`SettingsError` naming the setting; ``UnifyCrawl`` checks them all when a crawl opens.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
from dataclasses import dataclass
from typing import Any

from scrapy_urlunify.core._policy import Policy, PolicyError
from scrapy_urlunify.core._url import InvalidURL, host_of, resolve
from scrapy_urlunify.learning._page_signature import DEFAULT_MAX_BYTES
from scrapy_urlunify.stores._location import (
    DEFAULT_KEY_TEMPLATE,
    MEMORY,
    is_redis_url,
    mask_url,
    redis_keys,
    redis_missing,
)

__all__ = ["SETTINGS", "Setting", "SettingsError", "get", "policy_from_settings"]

logger = logging.getLogger(__name__)

PREFIX = "URLUNIFY_"

#: policy field -> kind of value (for conversion of command-line strings)
POLICY_SETTINGS: dict[str, str] = {
    "scope": "str",
    "remove_params": "params",
    "ignore_params": "params",
    "key_params": "params",
    "ignore_path_prefixes": "params",
    "ignore_path_suffixes": "params",
    "url_forms": "forms",
    "domain_aliases": "groups",
    "sister_suffixes": "bool_or_list",
    "ignore_amp": "bool",
    "strip_host_prefixes": "list",
    "index_pages": "list",
    "ignore_scheme": "bool",
    "deny_extensions": "list",
    "max_url_length": "int",
    "trap_repetitions": "int",
    "strip_session_ids": "bool",
    "strip_tracking_params": "bool",
    "ignore_action_params": "bool",
    "route_fragments": "bool",
}

#: Where a crawl's default differs from :class:`Policy`'s (see ``Policy.route_fragments``).
CRAWL_DEFAULTS: dict[str, object] = {"route_fragments": False}

#: Values of ``URLUNIFY_SIGNATURE_GRANULARITY``: which pages share one page-source hash index.
SIGNATURE_GRANULARITIES = ("site", "host", "scope")


class SettingsError(ValueError):
    """A ``URLUNIFY_*`` setting has a value the plugin cannot use; the crawl must not start."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(f"{setting}: {message}")
        self.setting = setting


@dataclass(frozen=True)
class Setting:
    """One ``URLUNIFY_*`` setting. ``kind`` says how a value is checked (see :func:`get`);
    ``minimum`` bounds a number; ``choices`` lists the values of a ``choice``."""

    name: str
    default: Any
    kind: str
    doc: str
    minimum: float | None = None
    choices: tuple[str, ...] = ()
    #: the Policy field of a policy setting
    field: str | None = None


def setting_name(field: str) -> str:
    """``key_params`` -> ``URLUNIFY_KEY_PARAMS``."""
    return PREFIX + field.upper()


_INTEGRATION: tuple[Setting, ...] = (
    Setting("URLUNIFY_ENABLED", True, "bool", "False turns every component of the plugin off."),
    Setting(
        "URLUNIFY_REWRITE",
        True,
        "bool",
        "Rewrite the URL of each request the spider yields to standardize(url) (the URL "
        "fetched); False keeps the URLs as extracted (filters and dedup still apply).",
    ),
    Setting(
        "URLUNIFY_STORE",
        MEMORY,
        "store",
        '"memory": the seen set, page signatures and learned rules live in the process (and '
        "in JOBDIR files when JOBDIR is set); a redis://[:password@]host:port/db URL "
        "(rediss://, unix:///path?db=N): in Redis, shared by every crawler of the scope; "
        "redis+cluster://[:password@]host:port,host:port,... (rediss+cluster://): in a Redis "
        'Cluster, every key hash-tagged (docs/stores.md, "Redis Cluster").',
    ),
    Setting(
        "URLUNIFY_REDIS_KEY",
        DEFAULT_KEY_TEMPLATE,
        "key_template",
        "Template of the Redis keys of a scope; must hold %(scope)s. The seen set is "
        "<key>:seen, the signatures <key>:signatures, the learned rules <key>:rules.",
    ),
    Setting(
        "URLUNIFY_REDIS_TIMEOUT",
        10.0,
        "number",
        "Seconds to connect to a URLUNIFY_STORE Redis and to wait for each reply.",
        minimum=0.001,
    ),
    Setting(
        "URLUNIFY_REDIS_UNAVAILABLE_TIMEOUT",
        60.0,
        "number",
        "Seconds a store call waits through a Redis outage (blocking the crawl) before the "
        "crawl closes with the reason urlunify_store_unavailable.",
        minimum=0,
    ),
    Setting(
        "URLUNIFY_REDIS_SEEN_SIZE",
        10_000_000,
        "int",
        "At the default, a scope's Redis seen set starts small and grows in generations (~10 "
        "bytes of Redis memory per URL at any size); another value sizes its first generation "
        "for that many URLs (docs/stores.md).",
        minimum=1,
    ),
    Setting(
        "URLUNIFY_QUEUE_LEASE",
        30.0,
        "number",
        "Seconds a RedisQueue worker counts as alive without a heartbeat.",
        minimum=0.001,
    ),
    Setting(
        "URLUNIFY_QUEUE_REPLICAS",
        "auto",
        "choice",
        '"auto": a RedisQueue push returns once every replica of its master has it (WAIT, in '
        'its round trip; none without replicas): a failover loses no request; "off": no WAIT, '
        "a failover may lose the last pushes (docs/redis_queue.md).",
        choices=("auto", "off"),
    ),
    Setting(
        "URLUNIFY_SIGNATURES",
        True,
        "bool",
        "Compute page signatures (MD5 of the body text) and stop duplicate pages.",
    ),
    Setting(
        "URLUNIFY_SIGNATURE_MAX_BYTES",
        DEFAULT_MAX_BYTES,
        "int",
        "HTML bodies larger than this are hashed raw instead of as text (a memory cap), and "
        "never teach the learner.",
        minimum=0,
    ),
    Setting(
        "URLUNIFY_NEAR_DUPLICATES",
        True,
        "bool",
        "Compute a near-duplicate signature of each HTML page's main text "
        "(docs/near_duplicates.md): pages nearly the same as an earlier page are marked, verify "
        "canonicals, teach the learner.",
    ),
    Setting(
        "URLUNIFY_NEAR_DUPLICATE_RESEMBLANCE",
        0.94,
        "number",
        "Resemblance (0.94 to 1; 0.94 is 7 bits of 64) from which a page is a near-duplicate of "
        "an earlier one: meta urlunify_near_duplicate_of and urlunify_resemblance, its links "
        "still followed.",
        minimum=0.94,
    ),
    Setting(
        "URLUNIFY_NEAR_DUPLICATE_ITEM_RESEMBLANCE",
        0.985,
        "number",
        "Resemblance (0.985 is 3 bits) from which SignaturePipeline drops the items of a "
        "near-duplicate page; no two distinct articles of the calibration sites came this close.",
        minimum=0.94,
    ),
    Setting(
        "URLUNIFY_DROP_NEAR_DUPLICATE_ITEMS",
        True,
        "bool",
        "SignaturePipeline drops the items of pages within "
        "URLUNIFY_NEAR_DUPLICATE_ITEM_RESEMBLANCE of an earlier page, or whose main text equals "
        "an earlier page's up to its numbers (logged with that page). Off for a crawl whose pages "
        "differ only in their numbers (scores, prices).",
    ),
    Setting(
        "URLUNIFY_DROP_NOINDEX_ITEMS",
        True,
        "bool",
        "SignaturePipeline drops the items naming a page that declares noindex for all robots "
        "(old versions, revisions), unless its host's start page declares it (docs/rules.md).",
    ),
    Setting(
        "URLUNIFY_NEAR_DUPLICATE_CANONICAL_RESEMBLANCE",
        0.94,
        "number",
        "Resemblance from which a declared canonical's target counts as the same page.",
        minimum=0.94,
    ),
    Setting(
        "URLUNIFY_NEAR_DUPLICATE_LEARN_RESEMBLANCE",
        0.94,
        "number",
        "Resemblance from which two pages are a pair for the learner, as pages of equal text are.",
        minimum=0.94,
    ),
    Setting(
        "URLUNIFY_SIGNATURE_GRANULARITY",
        "site",
        "choice",
        'Which pages share one page-source hash index: "site" (the registrable domain after '
        'aliases), "host", or "scope" (the whole crawl scope, URLUNIFY_SCOPE).',
        choices=SIGNATURE_GRANULARITIES,
    ),
    Setting(
        "URLUNIFY_DROP_DUPLICATE_RESPONSES",
        True,
        "bool",
        "A response with the body text of another page never reaches the callback.",
    ),
    Setting(
        "URLUNIFY_CANONICALS",
        True,
        "bool",
        "A declared rel=canonical (or rel=shortlink) inside the same site marks its URL as "
        "seen, once the site's first five were verified by fetching their target (more than a "
        "fifth false: the site's are ignored).",
    ),
    Setting(
        "URLUNIFY_LEARN",
        False,
        "bool",
        "Learn which parameters, hosts and path prefixes do not matter from duplicate pages "
        "(the add-on turns it on; new rules are on probation, nothing they merge is lost).",
    ),
    Setting(
        "URLUNIFY_LEARN_MIN_PAIRS",
        3,
        "int",
        "Distinct page pairs that must agree before a rule is learned.",
        minimum=2,
    ),
    Setting(
        "URLUNIFY_LEARN_PROBATION_SAMPLES",
        3,
        "int",
        "Requests a newly learned rule merges that are fetched anyway (each on its own path) and "
        "must show the page they were merged into before the rule is trusted; one that differs "
        "revokes it. Fewer: fewer fetches, a weaker check.",
        minimum=1,
    ),
    Setting(
        "URLUNIFY_LEARN_PRESENCE",
        False,
        "bool",
        "Also learn a parameter that always has one value on its host (print=1) from pages with "
        "and without it (three times the pairs; the add-on turns it on; off: print views are "
        "fetched and judged by their signatures).",
    ),
    Setting(
        "URLUNIFY_FRONTIER",
        False,
        "bool",
        "Schedule the requests of URL patterns whose pages bring nothing new (duplicate pages, no "
        "new links) after the others, through Request.priority, and, with learning on, hold back "
        "once a request that would test a candidate rule with nothing to add; nothing is dropped "
        "(the add-on turns it on; docs/frontier.md).",
    ),
    Setting(
        "URLUNIFY_FRONTIER_PENALTY",
        10_000,
        "int",
        "Priority subtracted from a request of such a URL pattern, per level (1: a poor yield, 2: "
        "nothing new), and added to one of a pattern of new content; larger than any depth, so "
        "breadth-first they also go after (content: before) every other request.",
        minimum=1,
    ),
    Setting(
        "URLUNIFY_ROBOTS_NOFOLLOW",
        False,
        "bool",
        "Do not follow the links of an HTML page that declares nofollow for all robots (<meta "
        'name="robots">, X-Robots-Tag): urlunify/filtered/nofollow. A start page\'s links are '
        "always followed, and a host whose start page declares it is crawled whole (the add-on "
        "turns it on; docs/rules.md).",
    ),
    Setting(
        "URLUNIFY_SIGNATURE_FIELD",
        None,
        "optional_field",
        "An item field whose text identifies an item: SignaturePipeline drops items whose "
        "text was seen on another page. None: drop the items of duplicate pages.",
    ),
    Setting(
        "URLUNIFY_UNICITY_INPUT_FIELD",
        "url",
        "field",
        "The item field UnicityPipeline reads a URL from.",
    ),
    Setting(
        "URLUNIFY_STANDARDIZE_OUTPUT_FIELD",
        "url",
        "field",
        "The item field UnicityPipeline writes the standardized URL to.",
    ),
    Setting(
        "URLUNIFY_CANONICAL_URL_FIELD",
        "canonical_url",
        "optional_field",
        "The item field UnicityPipeline writes the canonical URL of the item's page to, on dict "
        'items and items declaring it (docs/rules.md, "Canonical URLs"); None or "": none.',
    ),
    Setting(
        "URLUNIFY_UNICITY_OUTPUT_FIELD",
        None,
        "optional_field",
        'An item field UnicityPipeline writes the URL\'s identifier to ("identifier", say); '
        "None (the default): the items keep the fields the spider gave them.",
    ),
    Setting(
        "URLUNIFY_UNICITY_DISCARD_MISSING",
        False,
        "bool",
        "UnicityPipeline drops items without a URL (else passes them on, with a warning).",
    ),
)

_POLICY_DOCS = {
    "scope": "A name put in front of every identifier (default: the spider's name): two scopes "
    "never filter each other's pages.",
    "remove_params": "Query parameters removed from fetched URLs and identifiers (globs, per host).",
    "ignore_params": "Query parameters ignored in identifiers only (fetched URLs keep them); a key "
    "host/path?name=value scopes them to a rule context (that path, with those items).",
    "key_params": "When a URL carries a key parameter of its host, only key parameters count.",
    "ignore_path_prefixes": "Leading path segments that do not matter (/print/x = /x), per host.",
    "ignore_path_suffixes": "Last path segments that do not matter (/x/print.html = /x/amp/ = /x/; "
    "globs: comment-page-*), per host.",
    "url_forms": "A form's URLs are another's pages (/shop/*/{s} -> /product/{s}; &*: the rest).",
    "domain_aliases": "Groups of hosts serving one site; the first names it.",
    "sister_suffixes": "True: unify a host with a site of the crawl under another public suffix.",
    "ignore_amp": "An AMP page (a last segment amp, a query parameter amp) identifies as the page.",
    "strip_host_prefixes": "Leading host labels ignored in identifiers (www, wwwN).",
    "index_pages": "Last path segments naming a directory's default document (index.html).",
    "ignore_scheme": "http and https identify the same page.",
    "deny_extensions": "Extensions of links not worth fetching.",
    "max_url_length": "Longer URLs are not followed.",
    "trap_repetitions": "A path holding one segment this many times is a crawler trap (0: off).",
    "strip_session_ids": "Remove the built-in session-id parameters.",
    "strip_tracking_params": "Remove the built-in tracking parameters (utm_*, ...).",
    "ignore_action_params": "Ignore the built-in action parameters (replytocom, add-to-cart, ...).",
    "route_fragments": "Fragments that are routes of a single-page app (#!/x) identify pages.",
}


def _policy_default(field: str) -> Any:
    if field in CRAWL_DEFAULTS:
        return CRAWL_DEFAULTS[field]
    return Policy.__dataclass_fields__[field].default


#: Every ``URLUNIFY_*`` setting, by name: the integration switches, then the policy fields.
SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        *_INTEGRATION,
        *(
            Setting(setting_name(f), _policy_default(f), "policy:" + kind, _POLICY_DOCS[f], field=f)
            for f, kind in POLICY_SETTINGS.items()
        ),
    )
}


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def _from_text(kind: str, text: str) -> Any:
    """A policy setting's value given as a string (command line)."""
    s = text.strip()
    if (kind in ("params", "groups", "list", "bool_or_list") and s[:1] in "[{") or kind == "forms":
        return json.loads(s)
    if kind == "bool" or (kind == "bool_or_list" and s.lower() in _TRUE + _FALSE):
        low = s.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"expected a boolean (true/false), got {text!r}")
    if kind == "int":
        return int(s)
    if kind in ("params", "list", "bool_or_list"):
        return [part.strip() for part in s.split(",") if part.strip()]
    if kind == "groups":  # "a.test b.test; c.test d.test"
        return [g.replace(",", " ").split() for g in s.split(";") if g.strip()]
    return s


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise SettingsError(name, f"expected a string, got {type(value).__name__} {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise SettingsError(name, f"{value!r} is not valid text (a lone surrogate)") from None
    return value


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise SettingsError(
        name, f"expected a boolean (True/False), got {type(value).__name__} {value!r}"
    )


def _number(setting: Setting, value: Any, integer: bool) -> float:
    name = setting.name
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise SettingsError(name, f"expected a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SettingsError(name, f"expected a number, got {type(value).__name__} {value!r}")
    if not math.isfinite(value):
        raise SettingsError(name, f"expected a finite number, got {value!r}")
    if integer:
        if value != int(value):
            raise SettingsError(name, f"expected an integer, got {value!r}")
        value = int(value)
    if setting.minimum is not None and value < setting.minimum:
        raise SettingsError(name, f"expected a number >= {setting.minimum:g}, got {value!r}")
    return value


def _check(setting: Setting, value: Any) -> Any:
    """``value`` of ``setting`` checked and converted; SettingsError naming it if unusable."""
    name, kind = setting.name, setting.kind
    if kind == "bool":
        return _bool(name, value)
    if kind in ("number", "int"):
        return _number(setting, value, integer=kind == "int")
    if kind == "choice":
        if value not in setting.choices:
            raise SettingsError(name, f"expected one of {setting.choices}, got {value!r}")
        return value
    if kind == "field":
        if not _text(name, value).strip():
            raise SettingsError(name, "expected an item field name, got an empty string")
        return value
    if kind == "optional_field":
        if value is None or value == "":
            return None
        return _text(name, value)
    if kind == "store":
        if value is None or value == "" or value == MEMORY:
            return MEMORY
        if is_redis_url(value):
            missing = redis_missing(value)
            if missing:
                raise SettingsError(name, missing)
            return _text(name, value).strip()
        shown = mask_url(value) if isinstance(value, str) else f"{type(value).__name__} {value!r}"
        raise SettingsError(
            name,
            f'expected "memory" or a redis://, rediss://, unix:// or redis+cluster:// URL, '
            f"got {shown!r}",
        )
    if kind == "key_template":
        try:
            redis_keys(_text(name, value), "scope")
        except ValueError as e:
            raise SettingsError(name, str(e)) from None
        return value
    raise AssertionError(f"unknown kind {kind!r} of {name}")  # pragma: no cover


def _raw(settings: Any, setting: Setting) -> Any:
    value = settings.get(setting.name)
    if hasattr(value, "copy_to_dict"):  # a BaseSettings holding a dict setting
        value = value.copy_to_dict()
    return value


def get(settings: Any, name: str) -> Any:
    """The value of the integration setting ``name`` in ``settings`` (its default when unset),
    checked: :class:`SettingsError` naming the setting when it cannot be used."""
    setting = SETTINGS[name]
    if setting.field is not None:
        raise ValueError(f"{name} is a policy setting: read it with policy_from_settings()")
    value = _raw(settings, setting)
    if value is None:  # unset, or an optional field set to None: no such field
        return None if setting.kind == "optional_field" and name in settings else setting.default
    return _check(setting, value)


def _policy_value(settings: Any, setting: Setting) -> Any:
    value = _raw(settings, setting)
    kind = setting.kind.partition(":")[2]
    if isinstance(value, str):
        _text(setting.name, value)
        if kind != "str":
            try:
                value = _from_text(kind, value)
            except ValueError as e:  # json.JSONDecodeError is a ValueError
                raise SettingsError(setting.name, f"cannot read {value!r}: {e}") from None
    return value


def crawl_sites(spider: Any) -> list[str]:
    """The hosts of a crawl: the spider's ``allowed_domains`` and the hosts of its start URLs."""
    hosts: list[str] = []
    for domain in getattr(spider, "allowed_domains", None) or ():
        if isinstance(domain, str) and domain:
            hosts.append(domain)
    for url in getattr(spider, "start_urls", None) or ():
        try:
            resolved = resolve(url)
        except (InvalidURL, TypeError):
            continue
        host = host_of(resolved)
        if host:
            hosts.append(host)
    return list(dict.fromkeys(hosts))


def policy_from_settings(
    settings: Any, spider: Any = None, spider_name: str | None = None
) -> Policy:
    """Build the policy of a crawl from its settings (and its spider, for the scope default and
    the sites of ``URLUNIFY_SISTER_SUFFIXES``). Raises :class:`SettingsError` naming the setting."""
    values: dict[str, Any] = dict(CRAWL_DEFAULTS)
    for setting in SETTINGS.values():
        if setting.field is not None and settings.get(setting.name) is not None:
            values[setting.field] = _policy_value(settings, setting)
    if values.get("scope") in (None, ""):
        values["scope"] = spider_name or getattr(spider, "name", None)
    if values.get("sister_suffixes") is True and spider is not None:
        values["sites"] = crawl_sites(spider)
    try:
        return Policy(**values)
    except PolicyError as e:
        raise SettingsError(setting_name(e.field), str(e).split(": ", 1)[1]) from None


#: ``URLUNIFY_*`` settings that are not the plugin's own: the demo crawl's proxy (demo/proxy.py)
OTHER_SETTINGS = frozenset({"URLUNIFY_DEMO_PROXY", "URLUNIFY_DEMO_HOSTS"})


def unknown_settings(settings: Any) -> dict[str, str | None]:
    """Every ``URLUNIFY_*`` name in ``settings`` the plugin does not know (a misspelling it would
    otherwise ignore in silence), with the closest known name (or None)."""
    known = [*SETTINGS, *OTHER_SETTINGS]
    return {
        name: next(iter(difflib.get_close_matches(name, known, n=1, cutoff=0.6)), None)
        for name in sorted(str(n) for n in settings)
        if name.startswith(PREFIX) and name not in SETTINGS and name not in OTHER_SETTINGS
    }


def validate(settings: Any) -> dict[str, Any]:
    """Check every integration setting of ``settings`` (the policy ones are checked by
    :func:`policy_from_settings`); return their values by name. An unknown ``URLUNIFY_*``
    name is a WARNING naming the closest known one: the crawl runs, the setting ignored."""
    for name, closest in unknown_settings(settings).items():
        hint = f"; did you mean {closest}?" if closest else ""
        logger.warning(
            "Unknown setting %s is ignored (not a scrapy-urlunify setting%s)", name, hint
        )
    return {name: get(settings, name) for name, s in SETTINGS.items() if s.field is None}
