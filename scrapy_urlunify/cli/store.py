"""``urlunify store info|clear|migrate``: what a scope has seen, in Redis or in a JOBDIR.

``info`` prints counts: seen requests, page signatures, learned rules (and, in a JOBDIR, the
scheduled and handled requests of the resume log). ``clear`` deletes them, after asking for the
scope's name (or the JOBDIR's path) to be typed back, unless ``--yes``: a shared Redis scope is
every crawler's memory of what it fetched, and clearing it makes the next crawl fetch
everything again. ``migrate`` copies a Redis seen set of the layout of earlier versions (one
SET) into the buckets of ``stores/redis_buckets.py``; a crawl refuses to start on the old one.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

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

if TYPE_CHECKING:
    import redis

    from ..stores.redis_seen import RedisSeenStore

__all__ = ["run_store"]


def run_store(
    args: argparse.Namespace, policy: Policy | None, out: TextIO, err: TextIO, stdin: TextIO
) -> int:
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


def _confirm(
    what: str, expected: str, args: argparse.Namespace, out: TextIO, stdin: TextIO
) -> bool:
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
        counts["last run ended"] = (
            "cleanly" if kinds and kinds[-1] == b"C" else "killed (will resume)"
        )
    signatures = path / SIGNATURES_FILENAME
    counts["page signatures"] = (
        sum(1 for _ in VarRecordLog.read(signatures)) if signatures.exists() else 0
    )
    items = path / ITEMS_FILENAME
    counts["item identifiers"] = sum(1 for _ in VarRecordLog.read(items)) if items.exists() else 0
    learned = path / LEARNED_FILENAME
    counts["learned rules"] = _learned_rules(learned) if learned.exists() else 0
    if args.action == "info":
        out.write(f"JOBDIR {path}\n")
        out.writelines(f"  {name:<24} {value}\n" for name, value in counts.items())
        return 0
    if not _confirm(
        f"scrapy-urlunify's files in {path} ({counts['seen requests']} seen requests)",
        str(path),
        args,
        out,
        stdin,
    ):
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


def _seen_count(seen: RedisSeenStore, client: redis.Redis) -> int:
    """The seen requests of a scope, in either layout (info tells a set of the old one)."""
    old = client.type(seen.key)
    return int(client.scard(seen.key)) if old in (b"set", "set") else len(seen)


def _migrate(
    seen: RedisSeenStore, args: argparse.Namespace, scope: str, out: TextIO, err: TextIO
) -> int:
    from ..stores.redis_buckets import DEFAULT_SEEN_SIZE
    from ..stores.redis_seen import MIGRATING_SUFFIX

    client = seen.client
    if args.size is not None and args.size < 1:
        err.write(f"urlunify store: --size must be a positive integer, got {args.size}\n")
        return 2
    old = seen.key if client.type(seen.key) in (b"set", "set") else seen.key + MIGRATING_SUFFIX
    held = int(client.scard(old)) if client.exists(old) else 0
    if not held and not client.exists(old):
        out.write(
            f"Scope {scope!r}: no seen set of the old layout at {seen.key} (nothing to migrate).\n"
        )
        return 0
    seen.size = args.size or max(DEFAULT_SEEN_SIZE, 2 * held)
    copied, skipped = seen.migrate()
    layout = seen.layout(create=False)
    assert layout is not None
    out.write(
        f"Migrated {copied} seen requests of scope {scope!r} into {layout.buckets} buckets "
        f"({layout.shards} shards), sized for {layout.size} URLs"
    )
    out.write(f"; skipped {skipped} members that were not 8-byte keys.\n" if skipped else ".\n")
    return 0


def _redis(
    args: argparse.Namespace, scope: str | None, out: TextIO, err: TextIO, stdin: TextIO
) -> int:
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
    from ..stores.redis_seen import RedisSeenStore

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
    seen = RedisSeenStore(client, keys["seen"], unavailable_timeout=0)
    if args.action == "migrate":
        return _migrate(seen, args, scope, out, err)
    try:
        counts = {
            "seen requests": _seen_count(seen, client),
            "page signatures": client.hlen(keys["signatures"]),
            "learned-rule records": client.hlen(keys["rules"]),
        }
    except redis.RedisError as e:  # WRONGTYPE: another program's key at ours
        err.write(
            f"urlunify store: Redis {mask_url(args.store)}: {without_secret(str(e), args.store)} "
            f"(keys {keys['seen']}, {keys['signatures']}, {keys['rules']})\n"
        )
        return 1
    if args.action == "info":
        out.write(f"Redis {mask_url(args.store)}, scope {scope!r} (keys {keys['seen']}, ...)\n")
        out.writelines(f"  {name:<24} {value}\n" for name, value in counts.items())
        return 0
    if not _confirm(
        f"what scope {scope!r} has seen in {mask_url(args.store)} "
        f"({counts['seen requests']} seen requests, {counts['page signatures']} signatures), "
        "for every crawler that uses it",
        scope,
        args,
        out,
        stdin,
    ):
        out.write("Nothing deleted.\n")
        return 1
    seen.clear()
    client.delete(*(key for name, key in keys.items() if name != "seen"))
    out.write(f"Deleted the keys of scope {scope!r}.\n")
    return 0
