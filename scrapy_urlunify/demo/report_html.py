"""The demo report as one self-contained HTML page: inline CSS and SVG charts, no script, no
network.

Every chart shows every crawl the demo ran. Each is drawn twice, for a wide screen (labels left
of the bars) and for a phone (labels above them, at a width whose text stays readable), and CSS
shows the one that fits: an SVG scales its text with its width, so one drawing cannot serve both.
"""

from __future__ import annotations

from html import escape
from typing import Any

from scrapy_urlunify.demo.measure import SECTIONS
from scrapy_urlunify.demo.report_text import (
    CRAWLS,
    SHORT,
    crawl_keys,
    learned_rules,
    learning_outcome,
    number,
    savings,
    table_rows,
)

__all__ = ["render_html"]

GREEN, RED, GREY, BLUE, PURPLE, INK, MUTED = (
    "#2f855a",
    "#c53030",
    "#a0aec0",
    "#2b6cb0",
    "#6b46c1",
    "#1a202c",
    "#4a5568",
)
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
#: each crawl's colour where crawls are compared
COLORS = {"plain": RED, "addon": BLUE, "unconfigured": PURPLE}
#: drawing widths: a wide screen, and a phone (about 330 px of panel at 390 px)
WIDE, NARROW = 900, 340


def _text(
    x: float,
    y: float,
    s: str,
    *,
    anchor: str = "start",
    size: int = 13,
    fill: str = INK,
    weight: str = "normal",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
        f'font-weight="{weight}">{escape(s)}</text>'
    )


def _rect(x: float, y: float, w: float, h: float, color: str) -> str:
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{color}"/>'


def _legend(
    entries: list[tuple[str, str]], x: float, y: float, width: float
) -> tuple[list[str], float]:
    """Colour keys, in rows that fit ``width``; the parts and the y below them."""
    parts, lx = [], x
    for color, name in entries:
        w = 18 + 6.5 * len(name) + 22
        if lx > x and lx + w > width:
            lx, y = x, y + 20
        parts += [
            f'<rect x="{lx:.1f}" y="{y + 2:.1f}" width="12" height="12" rx="2" fill="{color}"/>',
            _text(lx + 18, y + 13, name, size=12, fill=MUTED),
        ]
        lx += w
    return parts, y + 24


def _stacked_chart(report: dict[str, Any], width: int) -> str:
    """One bar per crawl: first fetch of a page | the same page again | redirects, 404s, soft
    404s, PDFs."""
    narrow = width < WIDE
    label_w = 0 if narrow else 240
    bar_w = width - label_w - (0 if narrow else 120)
    bar_h = 26 if narrow else 32
    keys = crawl_keys(report)
    scale = bar_w / max(max(report[k]["requests"] for k in keys), 1)
    parts: list[str] = []
    y = 4.0
    for key in keys:
        c = report[key]
        total = f"{number(c['requests'])} requests"
        if narrow:  # the crawl's name and its total on a line of their own, the bar under them
            parts += [
                _text(0, y + 14, SHORT[key], weight="600"),
                _text(width, y + 14, total, anchor="end", fill=MUTED),
            ]
            y += 20
        else:
            parts.append(
                _text(label_w - 12, y + bar_h / 2 + 5, SHORT[key], anchor="end", weight="600")
            )
        x = float(label_w)
        for value, color in (
            (c["distinct_pages"], GREEN),
            (c["redundant_fetches"], RED),
            (c["requests"] - c["pages_fetched"], GREY),
        ):
            if value <= 0:
                continue
            w = max(value * scale, 1.5)
            parts.append(_rect(x, y, w, bar_h, color))
            if w > 8 * len(number(value)) + 8:
                parts.append(
                    _text(
                        x + w / 2,
                        y + bar_h / 2 + 5,
                        number(value),
                        anchor="middle",
                        fill="#fff",
                        weight="600",
                    )
                )
            x += w
        if not narrow:
            parts.append(_text(x + 8, y + bar_h / 2 + 5, total, fill=MUTED))
        y += bar_h + (14 if narrow else 18)
    legend, y = _legend(
        [
            (GREEN, "first fetch of a distinct page"),
            (RED, "a page fetched again"),
            (GREY, "redirects, 404s, soft 404s, PDFs"),
        ],
        label_w,
        y,
        width,
    )
    return _svg(width, y, parts + legend, "Requests of each crawl")


def _grouped_chart(
    rows: list[tuple[str, list[int]]], keys: tuple[str, ...], width: int, title: str
) -> str:
    """For each row, one bar per crawl of ``keys`` (its colour in :data:`COLORS`)."""
    narrow = width < WIDE
    label_w = 0 if narrow else 260
    bar_w = width - label_w - 60
    bar_h = 13 if narrow else 15
    scale = bar_w / max(max((max(values, default=0) for _, values in rows), default=0), 1)
    parts: list[str] = []
    y = 4.0
    for label, values in rows:
        if narrow:
            parts.append(_text(0, y + 13, label, weight="600"))
            y += 19
        else:
            parts.append(
                _text(label_w - 12, y + len(values) * (bar_h + 2) / 2 + 4, label, anchor="end")
            )
        for key, value in zip(keys, values, strict=True):
            w = max(value * scale, 1.5)
            parts += [
                _rect(label_w, y, w, bar_h, COLORS[key]),
                _text(label_w + w + 6, y + bar_h - 3, number(value), size=12, fill=MUTED),
            ]
            y += bar_h + 2
        y += 12
    legend, y = _legend([(COLORS[k], SHORT[k]) for k in keys], label_w, y, width)
    return _svg(width, y, parts + legend, title)


def _sections_chart(report: dict[str, Any], width: int) -> str:
    """Redundant fetches per host, every crawl."""
    keys = crawl_keys(report)
    rows = [
        (name, [report[k]["redundant_by_section"].get(section, 0) for k in keys])
        for section, name in SECTIONS.items()
    ]
    return _grouped_chart(rows, keys, width, "Redundant fetches per host")


def _savings_chart(report: dict[str, Any], width: int) -> str:
    """The requests each crawl with the add-on did not make, per reason."""
    keys = crawl_keys(report)[1:]
    per_crawl = [dict(savings(report[k])) for k in keys]
    labels = list(dict.fromkeys(label for counts in per_crawl for label in counts))
    rows = [(label, [counts.get(label, 0) for counts in per_crawl]) for label in labels]
    return _grouped_chart(rows, keys, width, "Requests the add-on skipped, per reason")


def _svg(width: float, height: float, parts: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="100%" '
        f'style="max-width:{width:.0f}px;{FONT}">'
        f"<title>{escape(title)}</title>{''.join(parts)}</svg>"
    )


def _chart(draw: Any, report: dict[str, Any]) -> str:
    """The chart for a wide screen and for a phone; the stylesheet shows one."""
    return (
        f'<div class="panel"><div class="wide">{draw(report, WIDE)}</div>'
        f'<div class="narrow">{draw(report, NARROW)}</div></div>'
    )


def _card(value: str, label: str, good: bool | None = None) -> str:
    color = {True: GREEN, False: RED, None: INK}[good]
    return (
        f'<div class="card"><div class="value" style="color:{color}">{escape(value)}</div>'
        f'<div class="label">{escape(label)}</div></div>'
    )


def _learned(report: dict[str, Any]) -> str:
    """The rules each crawl with the add-on learned, with the evidence that taught them."""
    out = []
    for key in crawl_keys(report)[1:]:
        rules = learned_rules(report[key])
        revoked = learned_rules(report[key], revoked=True)
        out.append(f"<h3>{escape(SHORT[key])}</h3>")
        if not rules and not revoked:
            out.append(
                '<p class="note">Nothing learned: its settings already say what a learner would '
                "find on this site.</p>"
            )
            continue
        out.append(
            "<ul>"
            + "".join(
                f"<li>{escape(says)}: <b>{pairs}</b> page pair{'' if pairs == 1 else 's'} with one "
                "page signature</li>"
                for says, pairs in rules
            )
            + "".join(
                f"<li><s>{escape(says)}</s>: revoked, a counter-example showed it matters</li>"
                for says, _ in revoked
            )
            + "</ul>"
        )
        out.append(f'<p class="note">{escape(learning_outcome(report[key]))}.</p>')
    return "".join(out)


STYLE = f"""
body {{ {FONT}; color:{INK}; background:#f7fafc; margin:0; }}
main {{ max-width:1000px; margin:0 auto; padding:28px 32px 40px; }}
h1 {{ font-size:26px; margin:0 0 6px; }}
h2 {{ font-size:18px; margin:30px 0 4px; }}
h3 {{ font-size:15px; margin:14px 0 2px; }}
p.lead, p.note {{ color:{MUTED}; margin:0 0 10px; line-height:1.45; }}
p.note {{ font-size:13px; }}
ul {{ margin:4px 0 8px; padding-left:20px; line-height:1.5; }}
.cards {{ display:flex; gap:12px; flex-wrap:wrap; margin:18px 0 6px; }}
.card {{ flex:1 1 150px; background:#fff; border:1px solid #e2e8f0; border-radius:8px; padding:12px 14px; }}
.card .value {{ font-size:24px; font-weight:700; white-space:nowrap; }}
.card .label {{ color:{MUTED}; font-size:13px; margin-top:2px; }}
.panel {{ background:#fff; border:1px solid #e2e8f0; border-radius:8px; padding:16px 18px; margin-top:8px; }}
.scroll {{ overflow-x:auto; }}
.narrow {{ display:none; }}
table {{ border-collapse:collapse; width:100%; font-size:14px; }}
th, td {{ padding:6px 10px; border-bottom:1px solid #edf2f7; }}
th {{ text-align:left; font-weight:500; }}
td {{ text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }}
thead th {{ text-align:right; color:{MUTED}; font-weight:600; }}
thead th:first-child {{ text-align:left; }}
pre {{ background:#edf2f7; border-radius:6px; padding:10px 12px; font-size:13px; overflow-x:auto; }}
code {{ font-size:13px; }}
@media (max-width: 640px) {{
  main {{ padding:18px 14px 30px; }}
  h1 {{ font-size:21px; }}
  .cards {{ gap:8px; }}
  .card {{ flex:1 1 130px; padding:10px 12px; }}
  .card .value {{ font-size:20px; }}
  .panel {{ padding:12px 10px; }}
  .wide {{ display:none; }}
  .narrow {{ display:block; }}
  table {{ font-size:13px; }}
  th, td {{ padding:5px 6px; }}
}}
"""


def _near_duplicates(report: dict[str, Any]) -> str:
    """The near-duplicate pages the add-on's crawls found, most alike first: the same page under
    a few changed words (a clock, a banner), which an exact signature cannot see."""
    out = []
    for key in crawl_keys(report)[1:]:
        found = report[key].get("near_duplicates", [])
        dropped = report[key].get("near_duplicate_items_dropped", 0)
        out.append(f"<h3>{escape(SHORT[key])}</h3>")
        if not found:
            out.append('<p class="note">No near-duplicate page.</p>')
            continue
        out.append(
            f'<p class="note">{len(found)} near-duplicate page{"" if len(found) == 1 else "s"}; '
            f"{dropped} item{'' if dropped == 1 else 's'} dropped as near-duplicates.</p><ul>"
        )
        for n in sorted(found, key=lambda n: -n["resemblance"])[:10]:
            of = f"<code>{escape(n['of'])}</code>" if n["of"] else "a page forgotten since"
            out.append(
                f"<li><code>{escape(n['url'])}</code>: {n['resemblance']:.1%} alike to {of}</li>"
            )
        out.append("</ul>")
    return "".join(out)


def render_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page (inline CSS and SVG, no script, no network)."""
    site, p, a = report["site"], report["plain"], report["addon"]
    keys = crawl_keys(report)
    share = 100 * report["requests_saved_share"]
    cards = "".join(
        [
            _card(
                f"−{share:.0f}%",
                f"requests: {number(p['requests'])} → {number(a['requests'])}",
                True,
            ),
            _card(
                f"{number(p['redundant_fetches'])} → {number(a['redundant_fetches'])}",
                "pages fetched again",
                a["redundant_fetches"] <= 0.02 * max(a["distinct_pages"], 1),
            ),
            _card(
                f"{a['pages_missed']}", f"pages missed (of {site['pages']})", a["pages_missed"] == 0
            ),
            _card(f"{a['false_merges']}", "false merges", a["false_merges"] == 0),
            _card(f"{p['seconds']:.1f} s → {a['seconds']:.1f} s", "wall time"),
        ]
    )
    table = "".join(
        f"<tr><th>{escape(label)}</th>" + "".join(f"<td>{escape(v)}</td>" for v in values) + "</tr>"
        for label, *values in table_rows(report)
    )
    heads = "".join(f"<th>{escape(SHORT[k])}</th>" for k in keys)
    config = "\n\n".join(
        f"# {CRAWLS[k]}\n"
        + "\n".join(
            f"{name} = {value!r}"
            for name, value in report["configuration"][k].items()
            if name != "link_extractor"
        )
        + f"\n# LinkExtractor: {report['configuration'][k]['link_extractor']}"
        for k in keys[1:]
        if k in report["configuration"]
    )
    missed = ""
    if a["missed"] or a["merged"]:
        missed = (
            "<h2>What the add-on got wrong</h2><ul>"
            + "".join(f"<li>missed <code>{escape(m)}</code></li>" for m in a["missed"][:20])
            + "".join(
                f"<li>false merge: <code>{escape(m['page'])}</code> dropped as "
                f"<code>{escape(m['dropped_url'])}</code></li>"
                for m in a["merged"][:20]
            )
            + "</ul>"
        )
    ways = {3: "three", 2: "two"}.get(len(keys), str(len(keys)))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scrapy-urlunify demo: {number(p["requests"])} vs {number(a["requests"])} requests</title>
<style>{STYLE}</style></head>
<body><main>
<h1>scrapy-urlunify: the same site, crawled {ways} ways</h1>
<p class="lead">A generated site of <b>{site["pages"]}</b> distinct pages: {site["sites"]} sites under
{site["hosts"]} host names (size {site["size"]}, seed {site["seed"]}), whose every URL is known to serve a given page: links to it are spelled with
<code>www.</code> or not, <code>http</code> or <code>https</code>, <code>index.html</code>, session ids,
tracking parameters, <code>..</code> and <code>//</code>, noise parameters and a sister domain.
First plain Scrapy, then Scrapy with <code>ADDONS = {{"scrapy_urlunify.Addon": 0}}</code> and
three per-host settings{", then that line alone, nothing configured" if "unconfigured" in report else ""}.</p>
<div class="cards">{cards}</div>

<h2>Where the requests went</h2>
<p class="note">Every request either fetched a page for the first time, fetched a page again, or was
a redirect, a 404, a soft 404 or a PDF.</p>
{_chart(_stacked_chart, report)}

<h2>Redundant fetches per host</h2>
<p class="note">Plain Scrapy sees every spelling of a URL as a new page.</p>
{_chart(_sections_chart, report)}

<h2>What the add-on skipped, and why</h2>
<p class="note">From each crawl's stats (<code>urlunify/duplicates</code>,
<code>urlunify/signature/duplicates</code>, <code>urlunify/filtered/&lt;reason&gt;</code>). The
configured crawl also rewrote {number(a["rewritten"])} URLs before fetching them and let
{number(a["allowed_offsite"])} sister-domain links past the offsite filter.</p>
{_chart(_savings_chart, report)}

<h2>What the crawls learned</h2>
<p class="note">Pages that share a page signature (their body text) under different URLs teach the
learner which parameters, hosts and path prefixes do not matter. A rule starts on probation: the
requests it merges are checked by fetching a few and kept until it is confirmed.</p>
<div class="panel">{_learned(report)}</div>

<h2>Near-duplicate pages</h2>
<p class="note">Pages whose main text is nearly that of a page fetched before under another URL
(a 64-bit SimHash of the text; <code>urlunify same URL1 URL2 --fetch</code> measures any two).
Their links are still followed; their items are dropped at 98.5% alike or more.</p>
<div class="panel">{_near_duplicates(report)}</div>

<h2>Side by side</h2>
<div class="panel scroll"><table>
<thead><tr><th></th>{heads}</tr></thead>
<tbody>{table}</tbody></table></div>
<p class="note">Pages missed: pages of the site never fetched. False merges: pages a link led to,
dropped as already seen, and never fetched. Duplicate items (same text): print views and mirror
copies, which only a page signature can recognize.</p>
{missed}
<h2>The add-on's configuration</h2>
<pre>{escape(config)}</pre>
<p class="note">Plain Scrapy: the same spider with Scrapy's defaults and every host in
<code>allowed_domains</code>. Add-on, nothing configured: the add-on line alone (learning is on
by default) and every host in <code>allowed_domains</code>, as a new user would start. Re-run:
<code>python -m scrapy_urlunify.demo --size {site["size"]}</code>; the same spiders are in
<code>sample_project/</code>.</p>
</main></body></html>
"""
