"""The demo site's layout: its parts built in a fixed order from one seed, then checked.

Four site keys (see :mod:`.hosts`):

``site``       the main site's sections (:mod:`.sections`), with the variant gallery on its
               home page (:mod:`.variants`) and, unless ``traps=False``, the traps a URL
               learner must survive (:mod:`.traps`, :mod:`.search`);
``news``       a ContentServer news section and
``termomont``  a catalogue on a sister domain pair (:mod:`.partners`);
``mirror``     ``mirror.site.test`` serving copies of some docs and articles, beside the
               ``?print=1`` views of some articles (:mod:`.duplicates`).

Links are spelled in every variant style (:mod:`.hrefs`).  The layout then marks which links
are *plain* (already canonical), checks that every page is reachable from the start page and
records which pages are reachable only through variant links.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import ada_url

from scrapy_urlunify.demo.builder import SiteBuilder
from scrapy_urlunify.demo.duplicates import build_mirror, build_print_views, copy_mirror
from scrapy_urlunify.demo.hosts import canonical_origin
from scrapy_urlunify.demo.hrefs import canonical_url
from scrapy_urlunify.demo.model import SID_PLACEHOLDER, Document, Page, Redirect
from scrapy_urlunify.demo.partners import build_news, build_termomont
from scrapy_urlunify.demo.plan import Plan
from scrapy_urlunify.demo.sections import build_sections, share_nav
from scrapy_urlunify.demo.traps import build_traps


@dataclass
class Layout:
    """Everything the builder produced (consumed by :class:`~.site.DemoSite`)."""

    pages: dict[str, Page]
    documents: dict[str, Document]
    redirects: dict[tuple[str, str], Redirect]
    param_defaults: dict[tuple[str, str], dict[str, str]]
    start_page: str
    variant_only: frozenset[str]


def build_layout(size: int = 300, seed: int = 20240601, traps: bool = True) -> Layout:
    """The layout of a site of about ``size`` pages; the same arguments, the same layout (the
    parts draw from one random stream, so their order is part of the seed's meaning)."""
    plan = Plan.for_size(size, traps)
    builder = SiteBuilder(seed, traps)
    sections = build_sections(builder, plan)
    if traps:
        build_traps(builder, sections, plan)
    home = sections.home
    news_index = build_news(builder, home, plan.news)
    build_termomont(builder, home, plan.products)
    mirror = build_mirror(builder, home, plan.mirrors)
    share_nav(builder, sections, news_index)
    build_print_views(builder, plan.prints)
    copy_mirror(builder, mirror)

    mark_plain_links(builder.pages, builder.documents)
    reachable = reachable_pages(builder.pages, home.id, plain_only=False)
    missing = set(builder.pages) - reachable
    if missing:
        raise AssertionError(f"unreachable demo pages: {sorted(missing)}")
    variant_only = frozenset(
        set(builder.pages) - reachable_pages(builder.pages, home.id, plain_only=True)
    )
    return Layout(
        pages=builder.pages,
        documents=builder.documents,
        redirects=builder.redirects,
        param_defaults=builder.param_defaults,
        start_page=home.id,
        variant_only=variant_only,
    )


def mark_plain_links(pages: dict[str, Page], documents: dict[str, Document]) -> None:
    """Flag links whose WHATWG-resolved href is exactly the target's canonical URL."""
    for page in pages.values():
        base = canonical_origin(page.site) + page.base
        for link in page.all_links:
            if link.kind in ("external", "missing") or SID_PLACEHOLDER in link.href:
                continue
            target = pages.get(link.target) or documents.get(link.target)  # type: ignore[arg-type]
            if target is None:
                raise AssertionError(f"dangling link {link} on {page.id}")
            query = target.query if isinstance(target, Page) else ()
            link.plain = ada_url.join_url(base, link.href) == canonical_url(
                target.site, target.path, query
            )


def reachable_pages(pages: dict[str, Page], start: str, *, plain_only: bool) -> set[str]:
    """The pages reachable from ``start`` by page links (only plain ones when ``plain_only``)."""
    seen = {start}
    todo = deque([start])
    while todo:
        for link in pages[todo.popleft()].all_links:
            if link.kind != "page" or (plain_only and not link.plain):
                continue
            if link.target not in seen:
                seen.add(link.target)  # type: ignore[arg-type]
                todo.append(link.target)  # type: ignore[arg-type]
    return seen
