"""The numbers of a demo crawl, counted from ground truth rather than estimated.

The demo site knows which distinct page every URL serves, so "redundant fetches" (a page
fetched again), "pages missed" and "false merges" (a page dropped as already seen although
neither it nor its content twin -- a print view, a mirror copy -- was fetched) come from the
server's log and the site, beside the crawl's own stats. Pure Python: a report can be rebuilt and
re-rendered without Scrapy.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from scrapy_urlunify.demo.hosts import MIRROR, NEWS, SITE, TERMOMONT
from scrapy_urlunify.demo.site import DemoSite

__all__ = ["SECTIONS", "build_report", "measure", "pages_read"]

SECTIONS: dict[str, str] = {
    SITE: "www.site.test",
    NEWS: "news.acme.test",
    TERMOMONT: "termomont.rs + .co.rs",
    MIRROR: "mirror.site.test",
}


def pages_read(site: DemoSite, fetched: set[str]) -> set[str]:
    """The pages whose body text a crawl that fetched the pages ``fetched`` has: those, and
    their content twins (a print view and its article, a mirror copy: the same body text by
    construction, so the seed's signature says they are one page, whichever came first)."""
    twins = site.content_duplicates
    return (
        fetched
        | {p for p, original in twins.items() if original in fetched}
        | {twins[p] for p in fetched if p in twins}
    )


def measure(site: DemoSite, raw: dict[str, Any]) -> dict[str, Any]:
    """The numbers of one crawl, from the server's log, the crawl's stats and ground truth."""
    gets = [r for r in raw["records"] if r.method == "GET"]
    page_fetches = Counter(r.page_id for r in gets if r.status == 200 and r.page_id)
    fetched = set(page_fetches)
    stats = raw["stats"]

    statuses = Counter(r.status for r in gets)
    redirects = sum(n for s, n in statuses.items() if 300 <= s < 400)
    not_found = sum(n for s, n in statuses.items() if s >= 400)
    pages_fetched = sum(page_fetches.values())
    soft_404s = sum(
        1 for r in gets if r.status == 200 and not r.page_id and site.resolve(r.url).soft_404
    )
    other_200 = statuses.get(200, 0) - pages_fetched - soft_404s  # PDFs, robots.txt

    redundant_by_section = dict.fromkeys(SECTIONS, 0)
    for pid, n in page_fetches.items():
        section = pid.split(":", 1)[0]
        redundant_by_section[section] = redundant_by_section.get(section, 0) + n - 1

    item_pages = Counter(
        site.page_id(i.get("url", ""), follow_redirects=True) for i in raw["items"]
    )
    same_text = sorted(p for p in item_pages if p and site.content_duplicates.get(p) in item_pages)

    read = pages_read(site, fetched)
    missed = sorted(site.pages - read)
    merged: dict[str, str] = {}
    for url in raw["dropped"]:
        pid = site.page_id(url, follow_redirects=True)
        if pid is not None and pid not in read:
            merged.setdefault(pid, url)

    prefix = "urlunify/"
    filtered = {
        k[len(prefix + "filtered/") :]: v
        for k, v in stats.items()
        if k.startswith(prefix + "filtered/")
    }
    learned = {
        k[len(prefix + "learned/") :]: v
        for k, v in stats.items()
        if k.startswith(prefix + "learned/")
    }
    return {
        "requests": stats.get("downloader/request_count", len(gets)),
        "responses": {str(s): n for s, n in sorted(statuses.items())},
        "pages_fetched": pages_fetched,
        "distinct_pages": len(fetched),
        "redundant_fetches": pages_fetched - len(fetched),
        "redundant_by_section": redundant_by_section,
        "redundant_pages": sorted(p for p, n in page_fetches.items() if n > 1),
        "redirects": redirects,
        "not_found": not_found,
        "soft_404s": soft_404s,
        "documents": other_200,
        "items": len(raw["items"]),
        "duplicate_items": sum(n - 1 for n in item_pages.values()),
        "duplicate_items_same_text": len(same_text),
        "canonical_items": sum(_cites(site, i) for i in raw["items"]),
        "not_canonical": [
            {"url": i.get("url"), "cited": i.get("canonical_url"), "canonical": _canonical(site, i)}
            for i in raw["items"]
            if not _cites(site, i)
        ][:50],
        "pages_missed": len(missed),
        "missed": missed,
        "false_merges": len(merged),
        "merged": [{"page": p, "dropped_url": u} for p, u in sorted(merged.items())],
        "bytes": stats.get("downloader/response_bytes", 0),
        "seconds": round(raw["seconds"], 2),
        "finish_reason": stats.get("finish_reason"),
        "saved_by": {
            "duplicates": stats.get(prefix + "duplicates", 0),
            "signature_duplicates": stats.get(prefix + "signature/duplicates", 0),
            "filtered": dict(sorted(filtered.items())),
            "learned": dict(sorted(learned.items())),
        },
        # the near-duplicate pages the crawl found (a page near an earlier one of another
        # identifier), with how alike: the report lists them
        "near_duplicates": [
            {"url": n["url"], "of": n["of"], "resemblance": n["resemblance"]}
            for n in raw.get("near_duplicates", [])
        ],
        "stats_near_duplicates": stats.get(prefix + "signature/near_duplicates", 0),
        "near_duplicate_items_dropped": stats.get(
            prefix + "signature/dropped_near_duplicate_items", 0
        ),
        "rewritten": stats.get(prefix + "rewritten", 0),
        # the requests plain Scrapy would have made, as the add-on's summary estimates them
        "plain_estimate": stats.get(prefix + "plain_requests", 0),
        "allowed_offsite": stats.get(prefix + "allowed_offsite", 0),
        "scrapy_dupefilter_filtered": stats.get("dupefilter/filtered", 0),
        "offsite_filtered": stats.get("offsite/filtered", 0),
    }


def build_report(
    site: DemoSite,
    plain: dict[str, Any],
    addon: dict[str, Any],
    configuration: dict[str, Any],
    unconfigured: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of the crawls of ``site``: their numbers side by side and how each was
    configured (``unconfigured``: the add-on with nothing configured, when it was crawled)."""
    saved = plain["requests"] - addon["requests"]
    extra = (
        {}
        if unconfigured is None
        else {
            "unconfigured": unconfigured,
            "unconfigured_extra_share": round(unconfigured["requests"] / addon["requests"] - 1, 4)
            if addon["requests"]
            else 0.0,
        }
    )
    return {
        "site": {
            "size": site.size,
            "seed": site.seed,
            "pages": len(site.pages),
            "items": len(site.items),
            "content_duplicates": len(site.content_duplicates),
            "sites": len({pid.split(":", 1)[0] for pid in site.pages}),
            "hosts": len(site.hosts),
            "start_urls": list(site.start_urls),
        },
        "plain": plain,
        "addon": addon,
        "requests_saved": saved,
        "requests_saved_share": round(saved / plain["requests"], 4) if plain["requests"] else 0.0,
        "configuration": configuration,
        **extra,
    }


def _canonical(site: DemoSite, item: dict[str, Any]) -> str | None:
    """The canonical URL of ``item``'s page (of the article, for a print view or a mirror
    copy)."""
    pid = site.page_id(item.get("url", ""), follow_redirects=True)
    if pid is None:
        return None
    return site.canonical_url(site.content_duplicates.get(pid, pid))


def _cites(site: DemoSite, item: dict[str, Any]) -> bool:
    """Whether ``item`` is under its page's canonical URL: its ``canonical_url`` (the
    add-on's), else its ``url``."""
    canonical = _canonical(site, item)
    return canonical is not None and (item.get("canonical_url") or item.get("url")) == canonical
