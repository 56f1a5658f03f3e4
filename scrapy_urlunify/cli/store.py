"""``urlunify store info|clear``: what a scope has seen, in Redis or in a JOBDIR.

``info`` prints counts: seen requests, page signatures, learned rules (and, in a JOBDIR, the
scheduled and handled requests of the resume log). ``clear`` deletes them, after asking for the
scope's name (or the JOBDIR's path) to be typed back, unless ``--yes``: a shared Redis scope is
every crawler's memory of what it fetched, and clearing it makes the next crawl fetch
everything again.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from ..core.policy import Policy
from ..stores import (
    ITEMS_FILENAME,
    JOBDIR_FILENAMES,
    LEARNED_FILENAME,
    REQUESTS_FILENAME,
    SEEN_FILENAME,
    SIGNATURES_FILENAME,
    RecordLog,
    StoreError,
    VarRecordLog,
)
from ..stores.location import redis_missing

__all__ = ["run_store"]


def run_store(args: argparse.Namespace, policy: Policy | None, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    try:
        if args.jobdir:
            return _jobdir(Path(args.jobdir), args, out, err, stdin)
        return _redis(args, (args.scope or (policy.scope if policy else None)), out, err, stdin)
    except StoreError as e:
        err.write(f"urlunify store: {e}\n")
        return 1
    except OSError as e:  # an unreadable JOBDIR file
        err.write(f"urlunify store: {e}\n")
        return 1


def _confirm(what: str, expected: str, args: argparse.Namespace, out: TextIO, stdin: TextIO) -> bool:
    if args.yes:
        return True
    out.write(f"This deletes {what}. Type {expected!r} to confirm: ")
    out.flush()
    return stdin.readline().strip() == expected


def _jobdir(path: Path, args: argparse.Namespace, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    if not path.is_dir():
        err.write(f"urlunify store: no JOBDIR at {path}\n")
        return 1
    counts: dict[str, int | str] = {}
    seen = path / SEEN_FILENAME
    counts["seen requests"] = 0
    if seen.exists():
        with RecordLog(seen, 8, readonly=True) as log:
            counts["seen requests"] = log.record_count
    requests = path / REQUESTS_FILENAME
    if requests.exists():
        kinds = [p[:1] for p in VarRecordLog.read(requests)]
        counts["scheduled (resume log)"] = kinds.count(b"S")
        counts["handled (resume log)"] = kinds.count(b"D")
        counts["last run ended"] = "cleanly" if kinds and kinds[-1] == b"C" else "killed (will resume)"
    signatures = path / SIGNATURES_FILENAME
    counts["page signatures"] = sum(1 for _ in VarRecordLog.read(signatures)) if signatures.exists() else 0
    items = path / ITEMS_FILENAME
    counts["item identifiers"] = sum(1 for _ in VarRecordLog.read(items)) if items.exists() else 0
    learned = path / LEARNED_FILENAME
    counts["learned rules"] = _learned_rules(learned) if learned.exists() else 0
    if args.action == "info":
        out.write(f"JOBDIR {path}\n")
        out.writelines(f"  {name:<24} {value}\n" for name, value in counts.items())
        return 0
    if not _confirm(f"scrapy-urlunify's files in {path} ({counts['seen requests']} seen requests)",
                    str(path), args, out, stdin):
        out.write("Nothing deleted.\n")
        return 1
    for name in JOBDIR_FILENAMES:
        (path / name).unlink(missing_ok=True)
    out.write(f"Deleted scrapy-urlunify's files in {path} (Scrapy's own queue is left alone).\n")
    return 0


def _learned_rules(path: Path) -> int:
    try:
        rules = json.loads(path.read_text("utf-8")).get("rules", [])
    except (ValueError, AttributeError) as e:  # corrupt JSON, or JSON of another shape
        raise StoreError(f"{path}: not a learned-rules file ({type(e).__name__}: {e})") from None
    if not isinstance(rules, list):
        raise StoreError(f"{path}: not a learned-rules file (its rules are not a list)")
    return len(rules)


def _redis(args: argparse.Namespace, scope: str | None, out: TextIO, err: TextIO, stdin: TextIO) -> int:
    missing = redis_missing(args.store)
    if missing:
        err.write(f"urlunify store: {missing}\n")
        return 1
    import redis

    from ..stores.location import (
        DEFAULT_KEY_TEMPLATE,
        mask_url,
        redis_keys,
        without_secret,
    )
    from ..stores.redis_connection import connect

    if not scope:
        err.write("urlunify store: give --scope (or --spider with scrapy urlunify)\n")
        return 2
    try:
        keys = redis_keys(args.key or DEFAULT_KEY_TEMPLATE, scope)
    except ValueError as e:
        err.write(f"urlunify store: --key: {e}\n")
        return 2
    try:
        client = connect(args.store)
    except ValueError as e:  # not a Redis URL, a bad port or db (the message is password-free)
        err.write(f"urlunify store: {e}\n")
        return 2
    try:
        counts = {
            "seen requests": client.scard(keys["seen"]),
            "page signatures": client.hlen(keys["signatures"]),
            "learned-rule records": client.hlen(keys["rules"]),
        }
    except redis.RedisError as e:  # WRONGTYPE: another program's key at ours
        err.write(f"urlunify store: Redis {mask_url(args.store)}: {without_secret(str(e), args.store)} "
                  f"(keys {keys['seen']}, {keys['signatures']}, {keys['rules']})\n")
        return 1
    if args.action == "info":
        out.write(f"Redis {mask_url(args.store)}, scope {scope!r} (keys {keys['seen']}, ...)\n")
        out.writelines(f"  {name:<24} {value}\n" for name, value in counts.items())
        return 0
    if not _confirm(f"what scope {scope!r} has seen in {mask_url(args.store)} "
                    f"({counts['seen requests']} seen requests, {counts['page signatures']} signatures), "
                    "for every crawler that uses it", scope, args, out, stdin):
        out.write("Nothing deleted.\n")
        return 1
    client.delete(*keys.values(), keys["seen"] + ":marker", keys["seen"] + ":owners")
    out.write(f"Deleted the keys of scope {scope!r}.\n")
    return 0
