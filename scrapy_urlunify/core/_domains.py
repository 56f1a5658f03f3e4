"""Host names: registrable domains, ``www``-like prefixes, aliases and sister suffixes (FO-mda).

Everything here works on one host at a time and is meant to be computed once per host and
cached by the caller (:class:`scrapy_urlunify.core._unify.Unifier` keeps a per-host table).
The public suffix list is tldextract's bundled snapshot: nothing here touches the network.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple


class Domain(NamedTuple):
    """A host split at its public suffix: ``shop.termomont.co.rs`` -> ``("shop", "termomont", "co.rs")``."""

    subdomain: str
    label: str
    suffix: str


@lru_cache(maxsize=1)
def _extractor():  # type: ignore[no-untyped-def]
    import tldextract

    # suffix_list_urls=() and cache_dir=None: use the snapshot shipped in the wheel, never fetch
    # or write anything (a crawler must be deterministic and work offline).
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


_IPV4 = re.compile(r"[0-9]+(?:\.[0-9]+){3}\Z")


def is_ip(host: str) -> bool:
    """True for an IPv4 address or a bracketed IPv6 address (as a WHATWG parser serializes them)."""
    return host.startswith("[") or _IPV4.match(host) is not None


def within(host: str, domain: str) -> bool:
    """True when ``host`` is ``domain`` or one of its subdomains (``a.b.test`` is within ``b.test``;
    ``ab.test`` is not)."""
    return host == domain or host.endswith("." + domain)


def split_domain(host: str) -> Domain:
    """Split ``host`` at its public suffix (ICANN section of the PSL).

    ``suffix`` is empty when the host has no known public suffix (an IP address, ``localhost``,
    a reserved TLD such as ``.test``); ``label`` is empty when the host *is* a public suffix.
    """
    if is_ip(host):
        return Domain("", host, "")
    r = _extractor().extract_str(host)
    return Domain(r.subdomain, r.domain, r.suffix)


def is_public_suffix(host: str) -> bool:
    """True when ``host`` is itself a public suffix (``co.uk``, ``com``): never a site."""
    d = split_domain(host)
    return d.label == "" and d.suffix != ""


def prefix_matcher(prefixes: Iterable[str]) -> re.Pattern[str] | None:
    """Compile host-prefix labels into one regex matching a leading label and its dot.

    A trailing upper-case ``N`` stands for one or more digits (``wwwN`` matches ``www2``,
    ``www10``); host labels are lower-case after parsing, so it cannot clash with a real label.
    """
    alts = []
    for p in prefixes:
        if p.endswith("N"):
            alts.append(re.escape(p[:-1].lower()) + "[0-9]+")
        else:
            alts.append(re.escape(p.lower()))
    if not alts:
        return None
    return re.compile(r"(?:{})\.".format("|".join(alts)))


#: more labels than any public suffix has (the longest rules of the list have five): a rest with
#: this many dots is a site, without asking the list
_SITE_DOTS = 6


def strip_prefixes(host: str, matcher: re.Pattern[str] | None) -> str:
    """Drop leading ``www``-like labels while what remains is still a site.

    ``www.example.com`` -> ``example.com``; ``www.co.uk`` is kept (``co.uk`` is a public suffix),
    ``www.test`` is kept (one label left), IP addresses are never touched.

    Linear in the host's length (``www.`` repeated a million times): it walks an index over the
    prefixes and asks the public suffix list only about the last few rests, the only ones short
    enough to be a public suffix.
    """
    if matcher is None or is_ip(host):
        return host
    dots = host.count(".")
    start = 0
    while True:
        m = matcher.match(host, start)
        if m is None:
            break
        # a prefix is one label and its dot
        dots -= host.count(".", start, m.end())
        if dots == 0 or (dots < _SITE_DOTS and is_public_suffix(host[m.end() :])):
            break
        start = m.end()
    return host[start:] if start else host
