"""The demo report as one self-contained HTML page: inline CSS and SVG charts, no script, no network."""

from __future__ import annotations

from html import escape
from typing import Any

from .measure import SECTIONS
from .report_text import CRAWLS, SHORT, crawl_keys, number, savings, table_rows

__all__ = ["render_html"]

GREEN, RED, GREY, BLUE, INK, MUTED = "#2f855a", "#c53030", "#a0aec0", "#2b6cb0", "#1a202c", "#4a5568"
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"


def _text(x: float, y: float, s: str, *, anchor: str = "start", size: int = 13, fill: str = INK,
          weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
            f'font-weight="{weight}">{escape(s)}</text>')


def _stacked_chart(report: dict[str, Any]) -> str:
    """One bar per crawl: first fetch of a page | the same page again | redirects, 404s, soft 404s, PDFs."""
    label_w, bar_w, bar_h, gap, top = 190, 640, 34, 22, 10
    crawls = [(SHORT[key], report[key]) for key in ("plain", "addon")]
    scale = bar_w / max(max(c["requests"] for _, c in crawls), 1)
    parts = []
    y = top
    for label, c in crawls:
        segments = [
            (c["distinct_pages"], GREEN, "distinct pages"),
            (c["redundant_fetches"], RED, "redundant"),
            (c["requests"] - c["pages_fetched"], GREY, "other"),
        ]
        parts.append(_text(label_w - 12, y + bar_h / 2 + 5, label, anchor="end", weight="600"))
        x = float(label_w)
        for value, color, _name in segments:
            if value <= 0:
                continue
            w = max(value * scale, 1.5)
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>')
            if w > 44:
                parts.append(_text(x + w / 2, y + bar_h / 2 + 5, number(value), anchor="middle", fill="#fff",
                                   weight="600"))
            x += w
        parts.append(_text(x + 8, y + bar_h / 2 + 5, f"{number(c['requests'])} requests", fill=MUTED))
        y += bar_h + gap
    legend = [(GREEN, "first fetch of a distinct page"), (RED, "a page fetched again (redundant)"),
              (GREY, "redirects, 404s, soft 404s, PDFs")]
    lx = float(label_w)
    for color, name in legend:
        parts.append(f'<rect x="{lx:.1f}" y="{y + 2}" width="12" height="12" rx="2" fill="{color}"/>')
        parts.append(_text(lx + 18, y + 13, name, size=12, fill=MUTED))
        lx += 18 + 5.9 * len(name) + 30
    height = y + 24
    return _svg(label_w + bar_w + 150, height, parts, "Requests of each crawl")


def _sections_chart(report: dict[str, Any]) -> str:
    """Redundant fetches per host, plain vs add-on."""
    label_w, bar_w, bar_h, top = 190, 560, 15, 6
    p, a = report["plain"]["redundant_by_section"], report["addon"]["redundant_by_section"]
    scale = bar_w / max(max(p.values(), default=0), 1)
    parts = []
    y = float(top)
    for key, name in SECTIONS.items():
        parts.append(_text(label_w - 12, y + bar_h + 4, name, anchor="end"))
        for value, color in ((p.get(key, 0), RED), (a.get(key, 0), BLUE)):
            w = max(value * scale, 1.5)
            parts.append(f'<rect x="{label_w}" y="{y:.1f}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>')
            parts.append(_text(label_w + w + 6, y + bar_h - 3, number(value), size=12, fill=MUTED))
            y += bar_h + 2
        y += 14
    parts.append(f'<rect x="{label_w}" y="{y + 2:.1f}" width="12" height="12" rx="2" fill="{RED}"/>')
    parts.append(_text(label_w + 18, y + 13, SHORT["plain"], size=12, fill=MUTED))
    parts.append(f'<rect x="{label_w + 130}" y="{y + 2:.1f}" width="12" height="12" rx="2" fill="{BLUE}"/>')
    parts.append(_text(label_w + 148, y + 13, SHORT["addon"], size=12, fill=MUTED))
    return _svg(label_w + bar_w + 110, y + 24, parts, "Redundant fetches per host")


def _savings_chart(report: dict[str, Any]) -> str:
    """What the add-on did not fetch, per rule."""
    rows = savings(report["addon"])
    label_w, bar_w, bar_h, gap, top = 250, 500, 20, 8, 4
    scale = bar_w / max(max(n for _, n in rows), 1)
    parts = []
    y = float(top)
    for label, n in rows:
        parts.append(_text(label_w - 12, y + bar_h - 5, label, anchor="end"))
        w = max(n * scale, 1.5)
        parts.append(f'<rect x="{label_w}" y="{y:.1f}" width="{w:.1f}" height="{bar_h}" fill="{BLUE}"/>')
        parts.append(_text(label_w + w + 6, y + bar_h - 5, number(n), size=12, fill=MUTED))
        y += bar_h + gap
    return _svg(label_w + bar_w + 110, y, parts, "Requests the add-on skipped, per rule")


def _svg(width: float, height: float, parts: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" width="100%" style="max-width:{width:.0f}px;{FONT}">'
            f"<title>{escape(title)}</title>{''.join(parts)}</svg>")


def _card(value: str, label: str, good: bool | None = None) -> str:
    color = {True: GREEN, False: RED, None: INK}[good]
    return (f'<div class="card"><div class="value" style="color:{color}">{escape(value)}</div>'
            f'<div class="label">{escape(label)}</div></div>')


def render_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no script, no network)."""
    site, p, a = report["site"], report["plain"], report["addon"]
    share = 100 * report["requests_saved_share"]
    cards = "".join([
        _card(f"−{share:.0f}%", f"requests: {number(p['requests'])} → {number(a['requests'])}", True),
        _card(f"{number(p['redundant_fetches'])} → {number(a['redundant_fetches'])}", "pages fetched again",
              a["redundant_fetches"] <= 0.02 * max(a["distinct_pages"], 1)),
        _card(f"{a['pages_missed']}", f"pages missed (of {site['pages']})", a["pages_missed"] == 0),
        _card(f"{a['false_merges']}", "false merges", a["false_merges"] == 0),
        _card(f"{p['seconds']:.1f} s → {a['seconds']:.1f} s", "wall time"),
    ])
    table = "".join(
        f"<tr><th>{escape(label)}</th>" + "".join(f"<td>{escape(v)}</td>" for v in values) + "</tr>"
        for label, *values in table_rows(report)
    )
    heads = "".join(f"<th>{escape(CRAWLS[k])}</th>" for k in crawl_keys(report))
    config = report["configuration"]["addon"]
    config_lines = "\n".join(
        f"{k} = {v!r}" for k, v in config.items() if k not in ("link_extractor",)
    ) + f"\n# LinkExtractor: {config['link_extractor']}"
    missed = ""
    if a["missed"] or a["merged"]:
        missed = ("<h2>What the add-on got wrong</h2><ul>"
                  + "".join(f"<li>missed <code>{escape(m)}</code></li>" for m in a["missed"][:20])
                  + "".join(f"<li>false merge: <code>{escape(m['page'])}</code> dropped as "
                            f"<code>{escape(m['dropped_url'])}</code></li>" for m in a["merged"][:20])
                  + "</ul>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scrapy-urlunify demo: {number(p['requests'])} vs {number(a['requests'])} requests</title>
<style>
body {{ {FONT}; color:{INK}; background:#f7fafc; margin:0; }}
main {{ max-width:1000px; margin:0 auto; padding:28px 32px 40px; }}
h1 {{ font-size:26px; margin:0 0 6px; }}
h2 {{ font-size:18px; margin:30px 0 4px; }}
p.lead, p.note {{ color:{MUTED}; margin:0 0 10px; line-height:1.45; }}
p.note {{ font-size:13px; }}
.cards {{ display:flex; gap:12px; flex-wrap:wrap; margin:18px 0 6px; }}
.card {{ flex:1 1 150px; background:#fff; border:1px solid #e2e8f0; border-radius:8px; padding:12px 14px; }}
.card .value {{ font-size:24px; font-weight:700; white-space:nowrap; }}
.card .label {{ color:{MUTED}; font-size:13px; margin-top:2px; }}
.panel {{ background:#fff; border:1px solid #e2e8f0; border-radius:8px; padding:16px 18px; margin-top:8px; }}
table {{ border-collapse:collapse; width:100%; font-size:14px; }}
th, td {{ padding:6px 10px; border-bottom:1px solid #edf2f7; }}
th {{ text-align:left; font-weight:500; }}
td {{ text-align:right; font-variant-numeric:tabular-nums; }}
thead th {{ text-align:right; color:{MUTED}; font-weight:600; }}
thead th:first-child {{ text-align:left; }}
pre {{ background:#edf2f7; border-radius:6px; padding:10px 12px; font-size:13px; overflow-x:auto; }}
code {{ font-size:13px; }}
</style></head>
<body><main>
<h1>scrapy-urlunify: the same site, crawled three ways</h1>
<p class="lead">A generated site of <b>{site['pages']}</b> distinct pages: {site['sites']} sites under
{site['hosts']} host names (size {site['size']}, seed {site['seed']}), whose every URL is known to serve a given page: links to it are spelled with
<code>www.</code> or not, <code>http</code> or <code>https</code>, <code>index.html</code>, session ids,
tracking parameters, <code>..</code> and <code>//</code>, noise parameters and a sister domain.
First plain Scrapy, then Scrapy with <code>ADDONS = {{"scrapy_urlunify.Addon": 0}}</code>.</p>
<div class="cards">{cards}</div>

<h2>Where the requests went</h2>
<p class="note">Every request either fetched a page for the first time, fetched a page again, or was
a redirect, a 404 or a PDF.</p>
<div class="panel">{_stacked_chart(report)}</div>

<h2>Redundant fetches per host</h2>
<p class="note">Plain Scrapy sees every spelling of a URL as a new page.</p>
<div class="panel">{_sections_chart(report)}</div>

<h2>What the add-on skipped, and why</h2>
<p class="note">From the crawl's stats (<code>urlunify/duplicates</code>,
<code>urlunify/signature/duplicates</code>, <code>urlunify/filtered/&lt;reason&gt;</code>,
<code>urlunify/learned/…</code>). It also rewrote {number(a['rewritten'])} URLs before fetching them
and let {number(a['allowed_offsite'])} sister-domain links past the offsite filter.</p>
<div class="panel">{_savings_chart(report)}</div>

<h2>Side by side</h2>
<div class="panel"><table>
<thead><tr><th></th>{heads}</tr></thead>
<tbody>{table}</tbody></table></div>
<p class="note">Pages missed: pages of the site never fetched. False merges: pages a link led to,
dropped as already seen, and never fetched. Duplicate items (same text): print views and mirror
copies, which only a page signature can recognize.</p>
{missed}
<h2>The add-on's configuration</h2>
<pre>{escape(config_lines)}</pre>
<p class="note">Plain Scrapy: the same spider with Scrapy's defaults and every host in
<code>allowed_domains</code>. Add-on, nothing configured: the add-on line alone (learning is on
by default) and every host in <code>allowed_domains</code>, as a new user would start. Re-run: <code>python -m scrapy_urlunify.demo --size {site['size']}</code>;
the same spiders are in <code>sample_project/</code>.</p>
</main></body></html>
"""

