"""``Policy``: the immutable, validated configuration of the unifier.

Field names are the Scrapy settings without the ``URLUNIFY_`` prefix, lower-cased
(``URLUNIFY_KEY_PARAMS`` -> ``key_params``). A wrong type raises :class:`PolicyTypeError`, a
wrong value :class:`PolicyValueError` (subclasses of ``TypeError``/``ValueError``); both carry
the offending field in ``.field`` so the Scrapy integration can name the setting.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import ada_url

from scrapy_urlunify.core._forms import FormRules, form_rules
from scrapy_urlunify.core._params import context_items

#: Directory index files of the common servers: Apache ``DirectoryIndex``, nginx ``index``,
#: IIS default documents, and the script indexes of PHP, CGI, JSP and ASP sites (Norconex
#: ``removeDirectoryIndex``, Nutch's commented-out rule). ``home.html`` is left out on purpose:
#: no server serves it for a directory by default.
DEFAULT_INDEX_PAGES: tuple[str, ...] = (
    "index.html",
    "index.htm",
    "index.shtml",
    "index.xhtml",
    "index.php",
    "index.php3",
    "index.php4",
    "index.php5",
    "index.cgi",
    "index.pl",
    "index.jsp",
    "index.asp",
    "index.aspx",
    "index.cfm",
    "default.html",
    "default.htm",
    "default.asp",
    "default.aspx",
)

#: Scrapy's ``scrapy.linkextractors.IGNORED_EXTENSIONS`` (copied: the core imports no Scrapy;
#: a test checks the two lists stay equal).
DEFAULT_DENY_EXTENSIONS: tuple[str, ...] = (
    "7z",
    "7zip",
    "bz2",
    "rar",
    "tar",
    "tar.gz",
    "xz",
    "zip",
    "mng",
    "pct",
    "bmp",
    "gif",
    "jpg",
    "jpeg",
    "png",
    "pst",
    "psp",
    "tif",
    "tiff",
    "ai",
    "drw",
    "dxf",
    "eps",
    "ps",
    "svg",
    "cdr",
    "ico",
    "webp",
    "mp3",
    "wma",
    "ogg",
    "wav",
    "ra",
    "aac",
    "mid",
    "au",
    "aiff",
    "3gp",
    "asf",
    "asx",
    "avi",
    "mov",
    "mp4",
    "mpg",
    "qt",
    "rm",
    "swf",
    "wmv",
    "m4a",
    "m4v",
    "flv",
    "webm",
    "xls",
    "xlsm",
    "xlsx",
    "xltm",
    "xltx",
    "potm",
    "potx",
    "ppt",
    "pptm",
    "pptx",
    "pps",
    "doc",
    "docb",
    "docm",
    "docx",
    "dotm",
    "dotx",
    "odt",
    "ods",
    "odg",
    "odp",
    "css",
    "pdf",
    "exe",
    "bin",
    "rss",
    "dmg",
    "iso",
    "apk",
    "jar",
    "sh",
    "rb",
    "js",
    "hta",
    "bat",
    "cpl",
    "msi",
    "msp",
    "py",
)

#: ``www`` and ``www`` + digits (``www2``, ``www10``): Heritrix/surt/urlcanon's ``www\\d*``.
DEFAULT_STRIP_HOST_PREFIXES: tuple[str, ...] = ("www", "wwwN")

#: Normalized shape of ``remove_params``/``key_params``: ``(("", names), (domain, names), ...)``;
#: ``""`` applies to every host, a domain to that host and its subdomains.
ParamRules = tuple[tuple[str, tuple[str, ...]], ...]


class PolicyError(Exception):
    """Base of the policy validation errors; ``field`` names the offending field."""

    field: str


class PolicyTypeError(PolicyError, TypeError):
    """A policy field got a value of the wrong type."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class PolicyValueError(PolicyError, ValueError):
    """A policy field got a value of the right type but not a usable one."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class Policy:
    """What the unifier treats as one page.

    Every field accepts the plain Python values a Scrapy setting holds (lists, dicts, strings)
    and is stored normalized (tuples, lower-case hosts), so a policy is hashable and two
    policies built from equal settings are equal.

    * ``scope``: a name put in front of every identifier, so the same URL in two scopes is two
      pages (one crawl job does not filter another's). ``None``: no scope.
    * ``remove_params``: parameter names or ``fnmatch`` globs (``"ref_*"``) removed from the
      fetched URL and the identifier; a list applies to all hosts, a ``{host: [names]}`` dict
      to that host and its subdomains (``"docs.example.test"`` also covers
      ``www.docs.example.test``); the key ``"*"`` means all hosts.
    * ``ignore_params``: same shapes, identity only: the parameters stay in the fetched URL
      (the server may need them) but do not tell pages apart. Learned rules go here. A dict
      key may also be a *rule context*: a host, a path and the parameters that identify the
      page there (``"wiki.test/w/index.php?title=Special:UserLogin"``): the names are then
      ignored only in URLs of that host (and its subdomains) with exactly that path and every
      one of those items (``?title=Special:UserLogin&returnto=X`` is
      ``?title=Special:UserLogin``, ``?title=Main&returnto=X`` keeps ``returnto``).
    * ``key_params``: same shapes; when a URL carries any key parameter of its host, only its
      key parameters identify it (``?cid=7&arglink=x`` and ``?cid=7`` are one page).
    * ``ignore_path_prefixes``: same shapes, path segments: a URL whose path starts with one
      of its host's segments is the page without it (``/print/x`` is ``/x``), identity only.
      Learned path rules go here.
    * ``ignore_path_suffixes``: same shapes, last path segments, ``fnmatch`` globs allowed
      (``"comment-page-*"``): a URL whose last segment (before a trailing slash) is one of its
      host's is the page of its directory (``/x/print.html``, ``/x/amp/`` and
      ``/x/comment-page-2/`` are ``/x/``), identity only. Learned suffix rules go here.
    * ``url_forms``: ``{host: {source: target}}``: a URL of the source form names the page of
      the target form (``{"shop.test": {"/shop/*/{slug}": "/product/{slug}"}}``), identity
      only (:mod:`scrapy_urlunify.core._forms`). Learned form rules go here.
    * ``domain_aliases``: groups of hosts serving one site; the first host of a group names it
      (FO-mda). A host's subdomains follow it (``shop.b.test`` -> ``shop.a.test``).
    * ``sister_suffixes``: ``True`` to unify a host with a site of the crawl (``sites``) that has
      the same registrable label under another public suffix (``termomont.co.rs`` ->
      ``termomont.rs``); or the list of sites itself. Off by default, and never applied to
      hosts that are not sisters of a site of the crawl.
    * ``sites``: the hosts of the crawl (the Scrapy integration fills it from
      ``allowed_domains`` and the start URLs).
    * ``strip_host_prefixes``: leading host labels ignored in identifiers; a trailing ``N`` means
      one or more digits. Default ``("www", "wwwN")``.
    * ``index_pages``: last path segments that name a directory's default document, ignored in
      identifiers (case-insensitive).
    * ``ignore_scheme``: ``http`` and ``https`` identify the same page (default ``True``).
    * ``deny_extensions``: extensions of links not worth fetching (``filter_reason`` gives
      ``extension:<ext>``); default Scrapy's ``IGNORED_EXTENSIONS``.
    * ``max_url_length``: longer URLs are not followed (``too-long``); default 2083 like
      Scrapy's ``URLLENGTH_LIMIT``.
    * ``trap_repetitions``: a path holding one segment this many times is a crawler trap
      (``trap``); ``0`` turns the check off. Default 3.
    * ``strip_session_ids`` / ``strip_tracking_params``: remove the built-in session-id and
      tracking-parameter lists (:mod:`scrapy_urlunify.core._params`). Default ``True``.
    * ``ignore_action_params``: leave the built-in action parameters out of identifiers
      (WordPress's ``replytocom`` and ``_wpnonce``, WooCommerce's ``add-to-cart``...:
      :data:`scrapy_urlunify.core._params.ACTION_PARAMS`); the fetched URL keeps them. Default
      ``True``.
    * ``route_fragments``: fragments that are routes of a single-page app (``#!/inbox``,
      ``#/inbox``) name content and are kept in both layers; ``False`` drops every fragment.
      Default ``True`` here; the Scrapy integration defaults to ``False``, since its HTTP
      downloader never sends a fragment (``page#!/a`` and ``page#!/b`` download the same bytes;
      set ``URLUNIFY_ROUTE_FRAGMENTS = True`` when pages are rendered by a browser).
    * ``ignore_amp``: an AMP page is the page it is the AMP version of, in identifiers: a last
      path segment ``amp`` (``/news/story/amp``) and a query parameter ``amp`` (``?amp``,
      ``?amp=1``) are left out. Default ``False``: many sites serve AMP under other spellings,
      and a few use ``amp`` for something else.
    """

    scope: str | None = None
    remove_params: ParamRules = ()
    ignore_params: ParamRules = ()
    key_params: ParamRules = ()
    ignore_path_prefixes: ParamRules = ()
    ignore_path_suffixes: ParamRules = ()
    url_forms: FormRules = ()
    domain_aliases: tuple[tuple[str, ...], ...] = ()
    sister_suffixes: bool | tuple[str, ...] = False
    sites: tuple[str, ...] = ()
    strip_host_prefixes: tuple[str, ...] = DEFAULT_STRIP_HOST_PREFIXES
    index_pages: tuple[str, ...] = DEFAULT_INDEX_PAGES
    ignore_scheme: bool = True
    deny_extensions: tuple[str, ...] = DEFAULT_DENY_EXTENSIONS
    max_url_length: int = 2083
    trap_repetitions: int = 3
    strip_session_ids: bool = True
    strip_tracking_params: bool = True
    ignore_action_params: bool = True
    route_fragments: bool = True
    ignore_amp: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "scope", _scope(self.scope))
        set_(self, "remove_params", _param_rules("remove_params", self.remove_params))
        set_(
            self, "ignore_params", _param_rules("ignore_params", self.ignore_params, contexts=True)
        )
        set_(self, "key_params", _param_rules("key_params", self.key_params))
        set_(
            self,
            "ignore_path_prefixes",
            _param_rules("ignore_path_prefixes", self.ignore_path_prefixes, segments=True),
        )
        set_(
            self,
            "ignore_path_suffixes",
            _param_rules("ignore_path_suffixes", self.ignore_path_suffixes, segments=True),
        )
        set_(self, "url_forms", _url_forms(self.url_forms))
        set_(self, "domain_aliases", _alias_groups(self.domain_aliases))
        set_(self, "sister_suffixes", _sister(self.sister_suffixes))
        set_(self, "sites", _hosts("sites", self.sites))
        set_(self, "strip_host_prefixes", _labels("strip_host_prefixes", self.strip_host_prefixes))
        set_(self, "index_pages", _names("index_pages", self.index_pages, lower=True))
        set_(self, "ignore_scheme", _bool("ignore_scheme", self.ignore_scheme))
        set_(self, "deny_extensions", _extensions(self.deny_extensions))
        set_(self, "max_url_length", _int("max_url_length", self.max_url_length, minimum=1))
        set_(self, "trap_repetitions", _int("trap_repetitions", self.trap_repetitions, minimum=0))
        if self.trap_repetitions == 1:  # every path holds each of its segments once: all traps
            raise PolicyValueError(
                "trap_repetitions",
                "1 makes every URL with a path a trap: give 0 (off) or 2 or more",
            )
        set_(self, "strip_session_ids", _bool("strip_session_ids", self.strip_session_ids))
        set_(
            self,
            "strip_tracking_params",
            _bool("strip_tracking_params", self.strip_tracking_params),
        )
        set_(
            self,
            "ignore_action_params",
            _bool("ignore_action_params", self.ignore_action_params),
        )
        set_(self, "route_fragments", _bool("route_fragments", self.route_fragments))
        set_(self, "ignore_amp", _bool("ignore_amp", self.ignore_amp))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The configurable fields, in declaration order."""
        return tuple(f.name for f in fields(cls) if f.init)

    def __getstate__(self) -> dict[str, Any]:
        # the fields only: what else the instance holds (its compiled unifier, see
        # unify.unifier_for) belongs to this object, and a copy builds its own
        return {name: self.__dict__[name] for name in self.field_names()}

    def replace(self, **changes: Any) -> Policy:
        """A copy with some fields changed (validated like the original)."""
        values = {name: getattr(self, name) for name in self.field_names()}
        values.update(changes)
        return Policy(**values)


# -- validation helpers -------------------------------------------------------------------------


def _type_name(value: object) -> str:
    return type(value).__name__


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise PolicyTypeError(name, f"expected True or False, got {_type_name(value)} {value!r}")
    return value


def _int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyTypeError(name, f"expected an integer, got {_type_name(value)} {value!r}")
    if value < minimum:
        raise PolicyValueError(name, f"expected an integer >= {minimum}, got {value}")
    return value


def _scope(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PolicyTypeError("scope", f"expected a string, got {_type_name(value)} {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PolicyValueError("scope", f"{value!r} is not valid text (a lone surrogate)") from None
    if "|" in value or any(c.isspace() for c in value):
        raise PolicyValueError("scope", f"must not contain '|' or white space, got {value!r}")
    return value


def _strings(name: str, value: object) -> list[str]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise PolicyTypeError(
            name, f"expected a list of strings, got {_type_name(value)} {value!r}"
        )
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise PolicyTypeError(name, f"expected strings, got {_type_name(item)} {item!r}")
        if not item.strip():
            raise PolicyValueError(name, "contains an empty string")
    return [item.strip() for item in items]


def _names(name: str, value: object, lower: bool = False) -> tuple[str, ...]:
    items = _strings(name, value)
    for item in items:
        if "/" in item:
            raise PolicyValueError(name, f"{item!r} must be a file name, without '/'")
    return tuple(dict.fromkeys(i.lower() if lower else i for i in items))


def _labels(name: str, value: object) -> tuple[str, ...]:
    items = _strings(name, value)
    for item in items:
        if "." in item:
            raise PolicyValueError(name, f"{item!r} must be one host label, without '.'")
    return tuple(dict.fromkeys(items))


def _extensions(value: object) -> tuple[str, ...]:
    items = _strings("deny_extensions", value)
    return tuple(dict.fromkeys(i.lstrip(".").lower() for i in items))


def normalize_host(name: str, host: str) -> str:
    """Lower-case and IDNA-encode a configured host the way a WHATWG parser serializes it."""
    if "*" in host:
        raise PolicyValueError(name, f"{host!r}: give the domain; its subdomains are included")
    candidate = host.strip().rstrip(".")
    if "://" in candidate:  # a URL pasted instead of a host: take its host
        try:
            return ada_url.URL(candidate).hostname
        except ValueError:
            raise PolicyValueError(name, f"{host!r} is not a valid URL or host name") from None
    try:
        parsed = ada_url.URL("http://" + candidate + "/")
    except ValueError:
        raise PolicyValueError(name, f"{host!r} is not a valid host name") from None
    if parsed.pathname != "/" or parsed.port or parsed.username:
        raise PolicyValueError(name, f"{host!r} is not a bare host name")
    return parsed.hostname


def _hosts(name: str, value: object) -> tuple[str, ...]:
    return tuple(dict.fromkeys(normalize_host(name, h) for h in _strings(name, value)))


def context_key(name: str, key: str) -> str:
    """A rule context as a key of ``ignore_params``: ``host/path?items``, the host normalized
    like any configured host, the items read as :func:`~.params.context_items` reads them,
    sorted (``"Wiki.test/w/index.php?b=2&a=1"`` -> ``"wiki.test/w/index.php?a=1&b=2"``)."""
    host, _, rest = key.strip().partition("/")
    path, _, query = rest.partition("?")
    if not host or "#" in rest:
        raise PolicyValueError(
            name, f"{key!r} is not a host, or a host, path and query (a rule context)"
        )
    items = sorted(dict.fromkeys(context_items(query)))
    return normalize_host(name, host) + "/" + path + ("?" + "&".join(items) if items else "")


def _param_rules(
    name: str, value: object, segments: bool = False, contexts: bool = False
) -> ParamRules:
    if value is None:
        return ()
    if (
        isinstance(value, tuple)
        and all(isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], tuple) for r in value)
        and value
    ):
        return value  # already normalized (Policy.replace)
    if isinstance(value, Mapping):
        rules: dict[str, list[str]] = {}
        for key, names in value.items():
            if not isinstance(key, str):
                raise PolicyTypeError(
                    name, f"dict keys must be host names, got {_type_name(key)} {key!r}"
                )
            if contexts and "/" in key and "://" not in key:
                host = context_key(name, key)
            else:
                host = "" if key.strip() in ("*", "") else normalize_host(name, key)
            rules.setdefault(host, []).extend(_param_names(f"{name}[{key!r}]", names, segments))
        return tuple((h, tuple(dict.fromkeys(n))) for h, n in rules.items())
    names = _param_names(name, value, segments)
    return (("", tuple(dict.fromkeys(names))),) if names else ()


def _url_forms(value: object) -> FormRules:
    name = "url_forms"
    try:
        return form_rules(value, lambda host: normalize_host(name, host))
    except PolicyError:
        raise
    except TypeError as e:
        raise PolicyTypeError(name, str(e)) from None
    except ValueError as e:
        raise PolicyValueError(name, str(e)) from None


def _param_names(name: str, value: object, segments: bool = False) -> list[str]:
    if isinstance(value, str):  # one name given alone: forgive it, it is unambiguous
        value = [value]
    try:
        items = _strings(name, value)
    except PolicyTypeError:
        raise PolicyTypeError(
            name,
            f"expected a list of parameter names or a {{host: [names]}} dict, got {_type_name(value)} {value!r}",
        ) from None
    if segments:  # path segments: case-sensitive, like the paths they match
        for item in items:
            if any(c in item for c in "/?#"):
                raise PolicyValueError(name, f"{item!r} is not one path segment")
        return items
    for item in items:
        if any(c in item for c in "&=#"):
            raise PolicyValueError(name, f"{item!r} is not a parameter name")
    return [i.lower() for i in items]


def _alias_groups(value: object) -> tuple[tuple[str, ...], ...]:
    name = "domain_aliases"
    if isinstance(value, Mapping):  # {"canonical": ["alias", ...]} is accepted too
        value = [[k, *([v] if isinstance(v, str) else v)] for k, v in value.items()]
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise PolicyTypeError(
            name, f"expected a list of host groups, got {_type_name(value)} {value!r}"
        )
    groups: list[tuple[str, ...]] = []
    seen: dict[str, int] = {}
    for i, group in enumerate(value):
        hosts = _hosts(name, group)
        if len(hosts) < 2:
            raise PolicyValueError(name, f"group {i} needs two or more hosts, got {list(hosts)!r}")
        for h in hosts:
            if h in seen:
                raise PolicyValueError(name, f"{h!r} is in groups {seen[h]} and {i}")
            seen[h] = i
        groups.append(hosts)
    return tuple(groups)


def _sister(value: object) -> bool | tuple[str, ...]:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    hosts = _hosts("sister_suffixes", value)
    return hosts if hosts else False
