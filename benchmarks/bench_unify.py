"""identify() against Scrapy's own URL identity, on real links, in one process.

Compared, per URL, over the distinct absolute URLs of the corpus and over the link stream as a
crawl sees it (every occurrence, in document order, repetitions included):

* ``identify()`` with every rule on (session ids, trackers, www, index pages, key parameters,
  aliases, sister suffixes; a policy with per-host entries so that per-host work is exercised),
  and ``standardize()`` (the rewrite layer alone) under the same policy;
* ``w3lib.url.canonicalize_url`` (what Scrapy's fingerprint canonicalizes with);
* Scrapy's default ``RequestFingerprinter().fingerprint(Request(url))``, the Request built in the
  loop as a spider does.

Method (as in ``../shared/research/perf.md``): best of N interleaved rounds, gc disabled in the
timed loops, every cache cleared before each run (our result and host caches, Scrapy's
per-request fingerprint cache, urllib's), exceptions counted, not fatal.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_json
from corpus import load

from scrapy_urlunify import Policy, identify, standardize
from scrapy_urlunify.core._unify import unifier_for

FULL_POLICY = Policy(
    scope="bench",
    key_params={"bugs.python.org": ["bpo"], "news.acme.test": ["cid"]},
    remove_params={"*": ["ref_*"], "github.com": ["tab"]},
    domain_aliases=[["python.org", "python.com"]],
    sister_suffixes=True,
    sites=["docs.python.org", "python.org"],
)


def time_loop(
    fn: Callable[[str], object], inputs: Sequence[str], reset: Callable[[], None]
) -> tuple[float, int]:
    """µs per call over ``inputs`` and the number of exceptions."""
    reset()
    errors = 0
    gc.disable()
    try:
        t = time.perf_counter()
        for x in inputs:
            try:
                fn(x)
            except Exception:
                errors += 1
        elapsed = time.perf_counter() - t
    finally:
        gc.enable()
    return elapsed / len(inputs) * 1e6, errors


def contenders(
    ours_only: bool = False,
) -> dict[str, tuple[Callable[[str], object], Callable[[], None]]]:
    unifier = unifier_for(FULL_POLICY)
    ours: dict[str, tuple[Callable[[str], object], Callable[[], None]]] = {
        "identify (all rules)": (lambda u: identify(u, FULL_POLICY), unifier.cache_clear),
        "standardize (all rules)": (
            lambda u: standardize(u, policy=FULL_POLICY),
            unifier.cache_clear,
        ),
    }
    if ours_only:
        return ours

    from scrapy import Request
    from scrapy.utils.request import RequestFingerprinter
    from w3lib.url import canonicalize_url

    fingerprinter = RequestFingerprinter()

    def scrapy_fp(url: str) -> bytes:
        return fingerprinter.fingerprint(Request(url))

    def reset_urllib() -> None:
        urllib.parse.clear_cache()

    return {
        **ours,
        "w3lib canonicalize_url": (canonicalize_url, reset_urllib),
        "scrapy fingerprint(Request(url))": (scrapy_fp, reset_urllib),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument(
        "--ours-only",
        action="store_true",
        help="only identify() and standardize(): for A/B runs of two versions of the package",
    )
    args = ap.parse_args()
    links = load()
    stream = [link["abs"] for link in links if link["abs"]]
    distinct = list(dict.fromkeys(stream))
    print(f"corpus: {len(stream)} links, {len(distinct)} distinct absolute URLs (python3-doc)")
    cs = contenders(args.ours_only)
    best: dict[tuple[str, str], float] = {}
    errors: dict[tuple[str, str], int] = {}
    for _ in range(args.rounds):
        for inputs_name, inputs in (("distinct", distinct), ("stream", stream)):
            for name, (fn, reset) in cs.items():
                us, err = time_loop(fn, inputs, reset)
                key = (name, inputs_name)
                best[key] = min(us, best.get(key, float("inf")))
                errors[key] = err
    ours = "identify (all rules)"
    print(f"\n{'':36s} {'distinct µs':>12s} {'ratio':>7s} {'stream µs':>10s} {'ratio':>7s}  errors")
    for name in cs:
        d, s = best[(name, "distinct")], best[(name, "stream")]
        rd, rs = d / best[(ours, "distinct")], s / best[(ours, "stream")]
        print(
            f"{name:36s} {d:12.2f} {rd:6.1f}× {s:10.2f} {rs:6.1f}×  {errors[(name, 'distinct')]}/{errors[(name, 'stream')]}"
        )
    print(
        "\nratio = that row's µs per URL / identify's (higher: identify is that many times faster)"
    )
    write_json(args.json, {f"{name}|{inputs}": us for (name, inputs), us in best.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
