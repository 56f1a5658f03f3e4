"""Host names of the demo site and how they group into "sites".

A *site key* names one logical web site.  Every host of a site key serves
exactly the same pages over both http and https, so ``http://site.test/x``
and ``https://www.site.test/x`` are the same page.  The hosts use the reserved
``.test`` TLD, except the sister-domain pair, which must live under two real
public suffixes (``rs`` and ``co.rs``) so that a public-suffix-aware unifier
sees the same registrable label ``termomont`` twice.

This module is pure data: no Twisted, no Scrapy.
"""

from __future__ import annotations

SITE = "site"
NEWS = "news"
TERMOMONT = "termomont"
MIRROR = "mirror"

#: Hosts per site key; the first one is the canonical host.
SITE_HOSTS: dict[str, tuple[str, ...]] = {
    SITE: ("www.site.test", "site.test"),
    NEWS: ("news.acme.test",),
    TERMOMONT: ("termomont.rs", "www.termomont.rs", "termomont.co.rs", "www.termomont.co.rs"),
    MIRROR: ("mirror.site.test",),
}

#: The canonical scheme per site key (the other scheme serves the same pages).
CANONICAL_SCHEME: dict[str, str] = {
    SITE: "https",
    NEWS: "http",
    TERMOMONT: "https",
    MIRROR: "http",
}

HOST_TO_SITE: dict[str, str] = {host: key for key, hosts in SITE_HOSTS.items() for host in hosts}

#: Every host name the demo server answers for (lower case).
DEMO_HOSTS: tuple[str, ...] = tuple(HOST_TO_SITE)

DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443}


def canonical_origin(site_key: str) -> str:
    """``scheme://host`` of the canonical form of a site key."""
    return f"{CANONICAL_SCHEME[site_key]}://{SITE_HOSTS[site_key][0]}"


def site_of_host(host: str) -> str | None:
    """The site key served under ``host`` (any case, optional trailing dot), or None."""
    return HOST_TO_SITE.get(host.lower().rstrip("."))


def mixed_case(host: str) -> str:
    """An upper/mixed-case spelling of ``host``: ``www.site.test`` -> ``WWW.Site.TEST``."""
    labels = host.split(".")
    out = [lab.upper() if lab == "www" else lab.capitalize() for lab in labels[:-1]]
    return ".".join([*out, labels[-1].upper()])
