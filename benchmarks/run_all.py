"""Every benchmark in one run, and one table of ratios against Scrapy's own components.

``make bench`` runs this. Each benchmark runs in its own process and writes its numbers as JSON
to ``benchmarks/out/``; the table at the end reads them back. ``--quick`` uses smaller sizes
(no 10M-entry memory run, fewer rounds) for a run of a minute or two; the default takes ~6 min.
The URL benchmarks need the python3-doc corpus (``apt-get install python3-doc``); the Redis
benchmark needs ``redis-server`` on PATH. A benchmark that cannot run says why and is left out
of the table.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


def run(name: str, args: list[str]) -> dict[str, Any] | None:
    out = OUT / f"{name}.json"
    out.unlink(missing_ok=True)
    print(f"\n=== {name} " + "=" * (70 - len(name)), flush=True)
    proc = subprocess.run([sys.executable, *args, "--json", str(out)], cwd=HERE.parent)
    if proc.returncode != 0 or not out.exists():
        print(f"({name} did not complete: exit status {proc.returncode})")
        return None
    return json.loads(out.read_text())


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick", action="store_true", help="smaller sizes, for a run of a minute or two"
    )
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    quick = args.quick
    results: dict[str, Any] = {}
    corpus = Path("/usr/share/doc/python3-doc/html").is_dir()
    if corpus:
        results["unify"] = run(
            "unify", [str(HERE / "bench_unify.py"), "--rounds", "2" if quick else "3"]
        )
        results["dupefilter"] = run(
            "dupefilter",
            [
                str(HERE / "bench_dupefilter.py"),
                "-n",
                "30000" if quick else "100000",
                "--rounds",
                "2" if quick else "3",
            ],
        )
        results["linkpath"] = run(
            "linkpath", [str(HERE / "bench_linkpath.py"), "--rounds", "2" if quick else "3"]
        )
        results["crawl"] = run(
            "crawl", [str(HERE / "bench_crawl.py"), "--rounds", "1" if quick else "3"]
        )
        results["procmem"] = run(
            "procmem", [str(HERE / "bench_process_memory.py"), "-n", "50000" if quick else "200000"]
        )
        results["pageparse"] = run(
            "pageparse", [str(HERE / "bench_pageparse.py"), "--rounds", "2" if quick else "3"]
        )
    else:
        print(
            "no python3-doc corpus: install it (apt-get install python3-doc) for the URL benchmarks"
        )
    results["memory"] = run(
        "memory",
        [
            str(HERE / "bench_seen_memory.py"),
            "--sizes",
            "1000000" if quick else "1000000,3000000,10000000",
            "--dupefilter-n",
            "0",
        ],
    )
    results["whole"] = run(
        "whole",
        [
            str(HERE / "bench_seen_memory.py"),
            "--whole",
            "300000,1000000" if quick else "1000000,3000000",
        ],
    )
    if shutil.which("redis-server"):
        results["redis"] = run(
            "redis", [str(HERE / "bench_redis.py"), "--n", "20000" if quick else "100000"]
        )
    else:
        print(
            "no redis-server on PATH: the Redis benchmark is left out (apt-get install redis-server)"
        )
    results["demo"] = run(
        "demo",
        [
            "-m",
            "scrapy_urlunify.demo",
            "--size",
            "100" if quick else "300",
            "--quiet",
            "--out",
            str(OUT / "demo-report.html"),
        ],
    )
    results["layers"] = run(
        "layers", [str(HERE / "bench_layers.py"), "--size", "100" if quick else "300"]
    )
    results["bigpage"] = run(
        "bigpage", [str(HERE / "bench_bigpage.py"), "--rounds", "1" if quick else "3"]
    )
    print_table(results)
    (OUT / "all.json").write_text(json.dumps(results, indent=1))
    return 0


def print_table(r: dict[str, Any]) -> None:
    rows: list[tuple[str, str, str, str]] = []

    def row(
        what: str, ours: float, theirs: float, unit: str, higher_is_better: bool = False
    ) -> None:
        ratio = ours / theirs if higher_is_better else theirs / ours
        rows.append((what, f"{ours:,.2f} {unit}", f"{theirs:,.2f} {unit}", f"{ratio:.1f}×"))

    u = r.get("unify")
    if u:
        ident = "identify (all rules)"
        for inputs in ("distinct", "stream"):
            row(
                f"identify vs w3lib canonicalize_url, {inputs}",
                u[f"{ident}|{inputs}"],
                u[f"w3lib canonicalize_url|{inputs}"],
                "µs",
            )
            row(
                f"identify vs Scrapy fingerprint(Request), {inputs}",
                u[f"{ident}|{inputs}"],
                u[f"scrapy fingerprint(Request(url))|{inputs}"],
                "µs",
            )
    d = r.get("dupefilter")
    if d:
        for phase in ("new", "duplicate"):
            row(f"request_seen, {phase} URL, cold", d[f"ours|{phase}"], d[f"scrapy|{phase}"], "µs")
            row(
                f"request_seen, {phase} URL, in a crawl",
                d[f"ours-crawl|{phase}"],
                d[f"scrapy|{phase}"],
                "µs",
            )
    lp = r.get("linkpath")
    if lp:
        row(
            "link path, whole (spider's Request + spider middlewares + scheduler)",
            lp["whole"]["addon_us"],
            lp["whole"]["plain_us"],
            "µs",
        )
        row(
            "link path, narrow (Request + dupefilter step)",
            lp["narrow"]["addon_us"],
            lp["narrow"]["plain_us"],
            "µs",
        )
    pp = r.get("pageparse")
    if pp:
        row(
            "page signature + spider's parse (from the selector's tree)",
            pp["signature, from the tree"]["ms_per_page"],
            pp["spider alone"]["ms_per_page"],
            "ms",
        )
    c = r.get("crawl")
    if c:
        row(
            "python3-doc crawl, CPU of the crawl process", c["addon"]["cpu"], c["plain"]["cpu"], "s"
        )
        row("python3-doc crawl, max RSS", c["addon"]["maxrss_mib"], c["plain"]["maxrss_mib"], "MiB")
    pm = r.get("procmem")
    if pm:
        for key, label in (("traced_MiB", "traced retained"), ("max_rss_MiB", "max RSS")):
            row(f"link path's process memory, {label}", pm["addon"][key], pm["plain"][key], "MiB")
    m = r.get("memory")
    if m:
        for n, v in m.items():
            row(
                f"bytes per seen URL at {int(n):,} (RSS)",
                v["ours"]["rss_B"],
                v["scrapy"]["rss_B"],
                "B",
            )
        sizes = sorted(int(n) for n in m)
        for lo, hi in zip(sizes, sizes[1:]):

            def added(key: str, lo: int = lo, hi: int = hi) -> float:
                return (m[str(hi)][key]["rss_B"] * hi - m[str(lo)][key]["rss_B"] * lo) / (hi - lo)

            row(f"bytes per seen URL added {lo:,} -> {hi:,}", added("ours"), added("scrapy"), "B")
    w = r.get("whole")
    if w:
        lo, hi = sorted(int(n) for n in w["ours"])
        added = {
            k: (w[k][str(hi)]["rss_growth"] - w[k][str(lo)]["rss_growth"]) / (hi - lo) for k in w
        }
        row(
            f"whole dupefilter through request_seen, bytes per URL added {lo:,} -> {hi:,}",
            added["ours"],
            added["scrapy"],
            "B",
        )
    red = r.get("redis")
    if red:
        ours, theirs = red["ours"], red["scrapy_redis"]
        row("Redis request_seen, new URL", 1e6 / ours["new_per_s"], 1e6 / theirs["new_per_s"], "µs")
        row(
            "Redis request_seen, duplicate",
            1e6 / ours["dup_per_s"],
            1e6 / theirs["dup_per_s"],
            "µs",
        )
        row(
            "Redis memory per seen URL (MEMORY USAGE)",
            ours["bytes_memory_usage"],
            theirs["bytes_memory_usage"],
            "B",
        )
        pages = red.get("pages")
        if pages:
            row(
                "Redis link path, page batch (python3-doc pages)",
                1e6 / pages["ours_batch"]["links_per_s"],
                1e6 / pages["scrapy_redis"]["links_per_s"],
                "µs",
            )
            row(
                "Redis round trips per page",
                pages["ours_batch"]["round_trips_per_page"],
                pages["scrapy_redis"]["round_trips_per_page"],
                "",
            )
    big = r.get("bigpage")
    if big:
        for mib, v in big.items():
            row(
                f"crawl with a {mib} MiB HTML page, peak RSS",
                v["addon"]["maxrss_mib"],
                v["plain"]["maxrss_mib"],
                "MiB",
            )
    demo = r.get("demo")
    if demo:
        plain, addon = demo["plain"], demo["addon"]
        row(
            "demo crawl: requests (plain Scrapy / add-on)", addon["requests"], plain["requests"], ""
        )
        row("demo crawl: wall time", addon["seconds"], plain["seconds"], "s")
    layers = r.get("layers")
    if layers:
        print("\n=== demo site, layer by layer (bench_layers.py) " + "=" * 30)
        cols = (
            "requests",
            "redundant",
            "copies",
            "sig_dup",
            "learned",
            "content_missed",
            "false_merges",
        )
        print(f"{'':36s}" + "".join(f"{c:>15s}" for c in cols))
        for layer in layers:
            print(f"{layer['name']:36s}" + "".join(f"{layer[c]:>15}" for c in cols))
    print(
        f"\n=== summary ({platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}) " + "=" * 30
    )
    w = max(len(x[0]) for x in rows) if rows else 10
    print(f"{'':{w}}  {'ours':>16}  {'Scrapy / peer':>16}  {'ratio':>7}")
    for what, ours_s, theirs_s, ratio in rows:
        print(f"{what:{w}}  {ours_s:>16}  {theirs_s:>16}  {ratio:>7}")
    print(
        "ratio: how many times faster (or smaller) ours is than Scrapy's component (or scrapy-redis's)"
    )


if __name__ == "__main__":
    sys.exit(main())
