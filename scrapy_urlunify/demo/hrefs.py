"""Spelling one link target in the many ways real sites do.

Every function here returns an href string that the demo server resolves to
the intended target; the variant styles are what a URL unifier has to see
through.  All randomness comes from the ``random.Random`` handed in, so a
seeded site is reproducible.
"""

from __future__ import annotations

import posixpath
import random
import string
from urllib.parse import urlencode

from scrapy_urlunify.demo.hosts import SITE_HOSTS, canonical_origin, mixed_case

#: Styles usable for a link to a page of the same site, with weights.
SAME_SITE_STYLES: tuple[tuple[str, int], ...] = (
    ("root", 4),
    ("relative", 5),
    ("dot", 2),
    ("backslash", 1),
    ("double_slash", 1),
    ("index", 2),
    ("fragment", 2),
    ("hashbang", 1),
    ("tracking", 2),
    ("protocol_relative", 1),
    ("absolute", 3),
)

#: Styles usable for a link to another site key (always absolute).
CROSS_SITE_STYLES: tuple[tuple[str, int], ...] = (
    ("absolute", 6),
    ("absolute_tracking", 2),
    ("absolute_fragment", 1),
)

FRAGMENTS = ("top", "main", "comments", "section-2")
HASHBANGS = ("!/view", "!/tab/details", "!/gallery/2")


def query_string(pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> str:
    """``?a=1&b=2`` for non-empty ``pairs``, else the empty string."""
    return "?" + urlencode(list(pairs)) if pairs else ""


def relative_path(base_dir: str, path: str) -> str:
    """Relative reference from directory ``base_dir`` (ends with /) to ``path``.

    Directory targets keep their trailing slash; the same directory is ``./``.
    """
    is_dir = path.endswith("/")
    rel = posixpath.relpath(path.rstrip("/") or "/", base_dir.rstrip("/") or "/")
    if rel == ".":
        return "./"
    return rel + "/" if is_dir else rel


class Hrefs:
    """Builds hrefs in a chosen variant style from a seeded random stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    # -- building blocks -------------------------------------------------
    def token(self, length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        """A random token (tracking ids, arglink values)."""
        return "".join(self.rng.choice(alphabet) for _ in range(length))

    def pick(self, weighted: tuple[tuple[str, int], ...]) -> str:
        names, weights = zip(*weighted, strict=True)
        return self.rng.choices(names, weights=weights)[0]

    def origin_variant(self, site_key: str) -> str:
        """``scheme://host[:port]`` in one of the spellings serving ``site_key``.

        Mixes http/https, every host (www / bare / sister domain), explicit
        default ports and upper-case host names.
        """
        scheme = self.rng.choice(("http", "https"))
        host = self.rng.choice(SITE_HOSTS[site_key])
        roll = self.rng.random()
        if roll < 0.2:
            host = mixed_case(host)
        elif roll < 0.4:
            host += ":80" if scheme == "http" else ":443"
        return f"{scheme}://{host}"

    def tracking_params(self) -> list[tuple[str, str]]:
        """One realistic set of tracking parameters (values fixed per link)."""
        kind = self.rng.choice(("utm", "utm", "fbclid", "gclid"))
        if kind == "utm":
            pairs = [
                ("utm_source", self.rng.choice(("newsletter", "twitter", "homepage", "partner"))),
                ("utm_medium", self.rng.choice(("email", "social", "web", "cpc"))),
            ]
            if self.rng.random() < 0.5:
                pairs.append(("utm_campaign", self.rng.choice(("spring", "launch", "promo-7"))))
            return pairs
        if kind == "fbclid":
            return [("fbclid", "IwAR" + self.token(28))]
        return [("gclid", "Cj0K" + self.token(24))]

    def with_tracking(self, query: tuple[tuple[str, str], ...]) -> str:
        """Query string of ``query`` plus tracking parameters, shuffled."""
        pairs = [*query, *self.tracking_params()]
        self.rng.shuffle(pairs)
        return query_string(pairs)

    # -- whole hrefs -----------------------------------------------------
    def same_site(
        self,
        base_dir: str,
        site_key: str,
        path: str,
        query: tuple[tuple[str, str], ...],
        style: str,
    ) -> str:
        """An href to ``path``+``query`` on ``site_key`` from a page whose base is ``base_dir``."""
        qs = query_string(query)
        rel = relative_path(base_dir, path)
        if style == "root":
            return path + qs
        if style == "relative":
            # A bare "?page=3" is a valid reference to the base directory.
            return qs if qs and rel == "./" else rel + qs
        if style == "dot":
            options = ["./" + rel]
            if base_dir != "/":
                last = base_dir.rstrip("/").rsplit("/", 1)[-1]
                options.append(f"../{last}/{rel}")
            first, _, rest = path[1:].partition("/")
            if rest:
                options.append(f"/{first}/./{rest}")
                options.append(f"/{first}/../{first}/{rest}")
            return self.rng.choice(options) + qs
        if style == "backslash":
            # Only relative, never a leading "\": browsers treat "\x" as "/x"
            # (root) while urljoin-based crawlers treat it as relative.
            if "/" in rel.rstrip("/"):
                return rel.replace("/", "\\") + qs
            return rel + qs
        if style == "double_slash":
            first, _, rest = path[1:].partition("/")
            if first and (rest or path.endswith("/")):
                return f"/{first}//{rest}" + qs
            # A leading "//" would be protocol-relative: go absolute instead.
            return canonical_origin(site_key) + "/" + path + qs
        if style == "index":
            if path.endswith("/"):
                return path + "index.html" + qs
            return path + qs
        if style == "fragment":
            return path + qs + "#" + self.rng.choice(FRAGMENTS)
        if style == "hashbang":
            return rel + qs + "#" + self.rng.choice(HASHBANGS)
        if style == "tracking":
            return path + self.with_tracking(query)
        if style == "protocol_relative":
            return "//" + self.rng.choice(SITE_HOSTS[site_key]) + path + qs
        if style == "absolute":
            return self.origin_variant(site_key) + path + qs
        raise ValueError(f"unknown href style {style!r}")

    def cross_site(
        self, site_key: str, path: str, query: tuple[tuple[str, str], ...], style: str
    ) -> str:
        """An absolute href to ``path``+``query`` on another site key."""
        origin = self.origin_variant(site_key)
        if style == "absolute":
            return origin + path + query_string(query)
        if style == "absolute_tracking":
            return origin + path + self.with_tracking(query)
        if style == "absolute_fragment":
            return origin + path + query_string(query) + "#" + self.rng.choice(FRAGMENTS)
        raise ValueError(f"unknown cross-site style {style!r}")


def canonical_url(site_key: str, path: str, query: tuple[tuple[str, str], ...] = ()) -> str:
    """The canonical absolute URL of a page or document."""
    return canonical_origin(site_key) + path + query_string(query)


__all__ = [
    "CROSS_SITE_STYLES",
    "SAME_SITE_STYLES",
    "Hrefs",
    "canonical_url",
    "query_string",
    "relative_path",
]
