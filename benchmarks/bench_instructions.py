"""Instructions per URL under valgrind (callgrind): stable figures on a loaded machine.

Timings on a machine shared by several processes move by 2x from one run to the next; the
number of instructions a call executes does not. For each contender, a fresh process under
``valgrind --tool=callgrind`` loops over the URLs inside ``functools.reduce``, and only what runs
inside that call is counted (``--toggle-collect=functools_reduce``): imports, corpus loading,
setup and one-time warm-ups (the public suffix list's trie, first calls) are outside.

Contenders (``--what``, default all), over python3-doc's distinct URLs (or ``--stream``: every
link occurrence):

* ``identify``: ``identify(url, FULL_POLICY)`` of ``bench_unify.py``, every cache cleared first;
* ``w3lib``: ``w3lib.url.canonicalize_url(url)``;
* ``ada``: the WHATWG parse and serialization alone (our ada binding);
* ``dupefilter``, ``rfpdupefilter``: ``request_seen`` on prebuilt requests of ``bench_dupefilter.py``
  (ours cold, Scrapy's ``RFPDupeFilter``), distinct URLs only.

Usage: python benchmarks/bench_instructions.py [--what identify,w3lib] [--stream] [--json out.json]
Needs valgrind; about a minute per contender.
"""

from __future__ import annotations

import argparse
import gc
import re
import shutil
import subprocess
import sys
import tempfile
from functools import reduce
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import write_json

CONTENDERS = ("identify", "w3lib", "ada", "dupefilter", "rfpdupefilter")


def inputs(stream: bool) -> list[str]:
    from corpus import load

    links = [link["abs"] for link in load() if link["abs"]]
    return links if stream else list(dict.fromkeys(links))


def worker(what: str, stream: bool) -> None:
    """The loop valgrind counts (inside functools.reduce); everything else is setup."""
    step: Any
    if what in ("dupefilter", "rfpdupefilter"):
        import bench_dupefilter
        from scrapy import Request

        urls = bench_dupefilter.urls(26047)  # as many as python3-doc has distinct links
        df = bench_dupefilter.make_filter("ours" if what == "dupefilter" else "scrapy")
        df.request_seen(Request("https://warm.example.com/up?x=1#f"))
        if what == "dupefilter":
            df.check.policies.unifier.cache_clear()
        items: list[Any] = [Request(u) for u in urls]

        def step(_: object, r: Any) -> None:
            df.request_seen(r)
    else:
        items = inputs(stream)
        if what == "identify":
            from bench_unify import FULL_POLICY

            from scrapy_urlunify import identify
            from scrapy_urlunify.core._unify import unifier_for

            identify("https://warm.example.com/up?x=1#f", FULL_POLICY)
            unifier_for(FULL_POLICY).cache_clear()
            fn: Any = lambda u: identify(u, FULL_POLICY)
        elif what == "w3lib":
            from w3lib.url import canonicalize_url as fn
        else:
            from scrapy_urlunify.core._ada import ada_normalize as fn

        def step(_: object, u: str) -> None:
            try:
                fn(u)
            except ValueError:
                pass

    gc.disable()
    reduce(step, items, None)
    print(len(items))


def count(what: str, stream: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "valgrind",
            "--tool=callgrind",
            "--collect-atstart=no",
            "--toggle-collect=functools_reduce",
            f"--callgrind-out-file={tmp}/out",
            sys.executable,
            __file__,
            "--worker",
            what,
        ]
        proc = subprocess.run(
            args + (["--stream"] if stream else []), capture_output=True, text=True, check=True
        )
    collected = int(re.search(r"Collected : (\d+)", proc.stderr).group(1))  # type: ignore[union-attr]
    n = int(proc.stdout.strip().splitlines()[-1])
    return {"instructions_per_url": collected / n, "urls": n}


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--what", default=",".join(CONTENDERS))
    ap.add_argument(
        "--stream", action="store_true", help="every link occurrence, not the distinct URLs"
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.stream)
        return 0
    if not shutil.which("valgrind"):
        print("valgrind not found (apt-get install valgrind)")
        return 1
    results = {what: count(what, args.stream) for what in args.what.split(",")}
    print(
        f"instructions per URL ({'link stream' if args.stream else 'distinct URLs'} of python3-doc)\n"
    )
    for what, r in results.items():
        print(f"{what:16s} {r['instructions_per_url']:10,.0f}  ({r['urls']} URLs)")
    if "identify" in results and "w3lib" in results:
        print(
            f"\nw3lib / identify: {results['w3lib']['instructions_per_url'] / results['identify']['instructions_per_url']:.2f}×"
        )
    if "dupefilter" in results and "rfpdupefilter" in results:
        ratio = (
            results["rfpdupefilter"]["instructions_per_url"]
            / results["dupefilter"]["instructions_per_url"]
        )
        print(f"RFPDupeFilter / DupeFilter (cold): {ratio:.2f}×")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
