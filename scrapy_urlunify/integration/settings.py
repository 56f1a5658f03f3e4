"""The ``URLUNIFY_*`` Scrapy settings, read once per crawler into a :class:`~scrapy_urlunify.Policy`.

Every policy field has a setting of the same name in upper case with the ``URLUNIFY_`` prefix
(``key_params`` <- ``URLUNIFY_KEY_PARAMS``); all are read through the crawler's settings, so
``custom_settings`` of a spider and ``-s`` on the command line apply per spider. Values given
on the command line are strings: lists may be comma-separated or JSON, dicts JSON.

Integration switches (not policy):

* ``URLUNIFY_ENABLED`` (default ``True``): ``False`` turns every component of the plugin off.
* ``URLUNIFY_REWRITE`` (default ``True``): rewrite the URL of each request the spider yields to
  ``standardize(url)``; ``False`` keeps the URLs as extracted (filters and dedup still apply).
* ``URLUNIFY_SCOPE`` defaults to the spider's name.
* ``URLUNIFY_SISTER_SUFFIXES = True`` takes "the sites of the crawl" from the spider's
  ``allowed_domains`` and start URLs.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.policy import Policy, PolicyError
from ..core.rules import InvalidURL, resolve

__all__ = ["POLICY_SETTINGS", "SettingsError", "policy_from_settings", "setting_name"]

PREFIX = "URLUNIFY_"

#: policy field -> kind of value (for conversion of command-line strings)
POLICY_SETTINGS: dict[str, str] = {
    "scope": "str",
    "remove_params": "params",
    "ignore_params": "params",
    "key_params": "params",
    "ignore_path_prefixes": "params",
    "domain_aliases": "groups",
    "sister_suffixes": "bool_or_list",
    "strip_host_prefixes": "list",
    "index_pages": "list",
    "ignore_scheme": "bool",
    "deny_extensions": "list",
    "max_url_length": "int",
    "trap_repetitions": "int",
    "strip_session_ids": "bool",
    "strip_tracking_params": "bool",
    "route_fragments": "bool",
}

#: Where a crawl's default differs from :class:`Policy`'s (see ``Policy.route_fragments``).
CRAWL_DEFAULTS: dict[str, object] = {"route_fragments": False}


class SettingsError(ValueError):
    """A ``URLUNIFY_*`` setting has a value the plugin cannot use; the crawl must not start."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(f"{setting}: {message}")
        self.setting = setting


def setting_name(field: str) -> str:
    """``key_params`` -> ``URLUNIFY_KEY_PARAMS``."""
    return PREFIX + field.upper()


def _from_text(kind: str, text: str) -> Any:
    s = text.strip()
    if kind in ("params", "groups", "list", "bool_or_list") and s[:1] in "[{":
        return json.loads(s)
    if kind == "bool" or (kind == "bool_or_list" and s.lower() in ("true", "false", "1", "0", "yes", "no", "")):
        low = s.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"expected a boolean (true/false), got {text!r}")
    if kind == "int":
        return int(s)
    if kind in ("params", "list", "bool_or_list"):
        return [part.strip() for part in s.split(",") if part.strip()]
    if kind == "groups":  # "a.test b.test; c.test d.test"
        return [g.replace(",", " ").split() for g in s.split(";") if g.strip()]
    return s


def _value(settings: Any, field: str) -> Any:
    name = setting_name(field)
    value = settings.get(name)
    if isinstance(value, str) and POLICY_SETTINGS[field] != "str":
        try:
            value = _from_text(POLICY_SETTINGS[field], value)
        except ValueError as e:  # json.JSONDecodeError is a ValueError
            raise SettingsError(name, f"cannot read {value!r}: {e}") from None
    if hasattr(value, "copy_to_dict"):  # a BaseSettings holding a dict setting
        value = value.copy_to_dict()
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
        if resolved.startswith(("http://", "https://")):
            hosts.append(resolved.split("/", 3)[2].rpartition("@")[2].split(":")[0])
    return list(dict.fromkeys(hosts))


def policy_from_settings(settings: Any, spider: Any = None, spider_name: str | None = None) -> Policy:
    """Build the policy of a crawl from its settings (and its spider, for the scope default and
    the sites of ``URLUNIFY_SISTER_SUFFIXES``). Raises :class:`SettingsError` naming the setting."""
    values: dict[str, Any] = dict(CRAWL_DEFAULTS)
    for field in POLICY_SETTINGS:
        if settings.get(setting_name(field)) is not None:
            values[field] = _value(settings, field)
    if values.get("scope") in (None, ""):
        values["scope"] = spider_name or getattr(spider, "name", None)
    if values.get("sister_suffixes") is True and spider is not None:
        values["sites"] = crawl_sites(spider)
    try:
        return Policy(**values)
    except PolicyError as e:
        raise SettingsError(setting_name(e.field), str(e).split(": ", 1)[1]) from None


def flag(settings: Any, name: str, default: bool) -> bool:
    """A boolean integration setting, with a start-up error naming it on a bad value."""
    try:
        return settings.getbool(name, default)
    except ValueError:
        raise SettingsError(name, f"expected a boolean (True/False), got {settings.get(name)!r}") from None


def number(settings: Any, name: str, default: float, minimum: float = 0) -> float:
    """A numeric integration setting, with a start-up error naming it on a bad value."""
    try:
        value = settings.getfloat(name, default)
    except ValueError:
        raise SettingsError(name, f"expected a number, got {settings.get(name)!r}") from None
    if value < minimum:
        raise SettingsError(name, f"expected a number >= {minimum}, got {value}")
    return value

