"""``urlunify store info|clear|migrate``: what a scope has seen, in Redis or in a JOBDIR.

``info`` prints counts: seen requests, page signatures, learned rules (and, in a JOBDIR, the
scheduled and handled requests of the resume log); on a Redis store without ``--scope``, those
of every scope it holds. ``clear`` deletes them, after asking for the scope's name (or the
JOBDIR's path) to be typed back, unless ``--yes``: a shared Redis scope is every crawler's memory
of what it fetched, and clearing it makes the next crawl fetch everything again. ``migrate``
copies a Redis seen set of the layout of earlier versions (one SET) into the buckets of
``stores/_redis_buckets.py``; a crawl refuses to start on the old one. With no store named, the
store is the default, memory, which keeps nothing once a crawl ends: each action says so.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import scrapy_urlunify.cli._learned as learned
from scrapy_urlunify.cli._where import (
    CommandError,
    add_store_options,
    in_memory,
    jobdir_path,
    no_scope,
    open_redis,
    scope_keys,
    scopes_in,
)
from scrapy_urlunify.core._policy import Policy
from scrapy_urlunify.stores._base import StoreError
from scrapy_urlunify.stores._jobdir import (
    ITEMS_FILENAME,
    JOBDIR_FILENAMES,
    REQUESTS_FILENAME,
    SEEN_FILENAME,
    SIGNATURES_FILENAME,
)
from scrapy_urlunify.stores._location import DEFAULT_KEY_TEMPLATE, mask_url
from scrapy_urlunify.stores._log import RecordLog, VarRecordLog

if TYPE_CHECKING:
    import redis

    from scrapy_urlunify.stores._redis_seen import RedisSeenStore


COMMAND = "urlunify store"

_ACTIONS = {
    "info": "count what a scope has seen: requests, page signatures, learned rules",
    "clear": "delete what a scope has seen (asks to type its name back)",
    "migrate": "copy a Redis seen set of the layout of earlier versions (one SET) into buckets",
}


def add_store_parser(sub: Any) -> None:
    """The ``store`` command and its actions, each with its own ``--help``."""
    p = sub.add_parser(
        "store",
        help="inspect or clear what a scope has seen, in Redis or a JOBDIR",
        description="Inspect or clear what a scope has seen, in Redis or a JOBDIR.\n\n"
        "With --jobdir or --store, that store; with neither, the default store (memory), which\n"
        "keeps nothing once a crawl ends. 'scrapy urlunify store' in a project uses its\n"
        "URLUNIFY_STORE (a Redis URL), else its JOBDIR, unless --store or --jobdir is given.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    usages = []
    for action, what in _ACTIONS.items():
        a = actions.add_parser(action, help=what, description=what[:1].upper() + what[1:] + ".")
        add_store_options(
            a,
            jobdir_help="a crawl's JOBDIR",
            store_help=(
                "a Redis URL (URLUNIFY_STORE: redis://, rediss://, unix://, redis+cluster://)"
            ),
        )
        a.add_argument(
            "--scope",
            help="with --store: the scope (URLUNIFY_SCOPE; by default the spider's name)"
            + ("; without it, every scope the store holds" if action == "info" else ""),
        )
        if action == "clear":
            a.add_argument("--yes", action="store_true", help="clear without asking")
        if action == "migrate":
            a.add_argument(
                "--size",
                type=int,
                default=None,
                metavar="URLS",
                help="URLs the new seen set is sized for (URLUNIFY_REDIS_SEEN_SIZE; "
                "default the larger of 10,000,000 and twice what it holds); stop the scope's "
                "crawls first",
            )
        usages.append("  " + a.format_usage().removeprefix("usage: ").strip())
    p.epilog = "actions (each has its own --help):\n" + "\n".join(usages)


def run_store(
    args: argparse.Namespace, policy: Policy | None, out: TextIO, err: TextIO, stdin: TextIO
) -> int:
    try:
        if in_memory(args):
            out.write(_memory_line(args.action))
            return 0
        if args.jobdir:
            path = jobdir_path(args, COMMAND)
            if args.action == "migrate":
                out.write(
                    f"Nothing to migrate in the JOBDIR {path}: only a Redis seen set of the "
                    "layout of earlier versions is migrated.\n"
                )
                return 0
            return _jobdir(path, args, out, stdin)
        return _redis(args, (args.scope or (policy.scope if policy else None)), out, err, stdin)
    except CommandError as e:
        err.write(f"{e}\n")
        return e.status
    except StoreError as e:
        err.write(f"{COMMAND}: {e}\n")
        return 1
    except OSError as e:  # an unreadable JOBDIR file
        err.write(f"{COMMAND}: {e}\n")
        return 1


def _memory_line(action: str) -> str:
    nothing = {
        "info": "nothing to show",
        "clear": "nothing to clear",
        "migrate": "nothing to migrate",
    }
    return (
        f"The store is memory (URLUNIFY_STORE's default, and no JOBDIR), which keeps nothing once "
        f"a crawl ends: {nothing[action]}. Name a store with --jobdir DIR or --store redis://...\n"
    )


def _confirm(
    what: str, expected: str, args: argparse.Namespace, out: TextIO, stdin: TextIO
) -> bool:
    if args.yes:
        return True
    out.write(f"This deletes {what}. Type {expected!r} to confirm: ")
    out.flush()
    return stdin.readline().strip() == expected


def _jobdir(path: Path, args: argparse.Namespace, out: TextIO, stdin: TextIO) -> int:
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
    counts["learned rules"] = _rules_count(learned.from_jobdir(path))
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


def _rules_count(found: learned.Learned) -> str:
    """``3``, or ``3 (1 on probation)``."""
    count = str(len(found.rules))
    return count + (f" ({found.probation_count} on probation)" if found.probation_count else "")


def _seen_count(seen: RedisSeenStore, client: redis.Redis) -> int:
    """The seen requests of a scope, in either layout (info tells a set of the old one)."""
    old = client.type(seen.key)
    return int(client.scard(seen.key)) if old in (b"set", "set") else len(seen)


def _migrate(
    seen: RedisSeenStore, args: argparse.Namespace, scope: str, out: TextIO, err: TextIO
) -> int:
    from scrapy_urlunify.stores._redis_buckets import DEFAULT_SEEN_SIZE
    from scrapy_urlunify.stores._redis_seen import MIGRATING_SUFFIX

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
    client = open_redis(args.store, COMMAND)
    try:
        if scope:
            return _redis_scope(client, args, scope, out, err, stdin)
        if args.action != "info":
            raise no_scope(client, args.store, args.key, COMMAND)
        scopes = scopes_in(client, args.key)
        if not scopes:
            out.write(
                f"Redis {mask_url(args.store)}: no scope has a store under "
                f"{args.key or DEFAULT_KEY_TEMPLATE} (if URLUNIFY_REDIS_KEY is set, give it as "
                "--key).\n"
            )
            return 0
        for each in scopes:
            _redis_scope(client, args, each, out, err, stdin)
        return 0
    finally:
        client.close()


def _redis_scope(
    client: redis.Redis,
    args: argparse.Namespace,
    scope: str,
    out: TextIO,
    err: TextIO,
    stdin: TextIO,
) -> int:
    import redis

    from scrapy_urlunify.stores._location import without_secret
    from scrapy_urlunify.stores._redis_connection import store_key
    from scrapy_urlunify.stores._redis_seen import RedisSeenStore

    url = mask_url(args.store)
    keys = scope_keys(args.key, scope, COMMAND)
    seen = RedisSeenStore(client, keys["seen"], unavailable_timeout=0)
    if args.action == "migrate":
        return _migrate(seen, args, scope, out, err)
    # on a Redis Cluster the other stores' keys are hash-tagged, as the crawl's stores tag them
    signatures = store_key(client, keys["signatures"])
    try:
        counts = {
            "seen requests": _seen_count(seen, client),
            "page signatures": int(client.hlen(signatures)),  # type: ignore[arg-type]
            "learned rules": _rules_count(learned.from_redis(client, keys["rules"], url)),
        }
    except redis.RedisError as e:  # WRONGTYPE: another program's key at ours
        raise CommandError(
            f"{COMMAND}: Redis {url}: {without_secret(str(e), args.store)} "
            f"(keys {keys['seen']}, {signatures}, {store_key(client, keys['rules'])})"
        ) from None
    if args.action == "info":
        out.write(f"Redis {url}, scope {scope!r} (keys {keys['seen']}, ...)\n")
        out.writelines(f"  {name:<24} {value}\n" for name, value in counts.items())
        return 0
    if not _confirm(
        f"what scope {scope!r} has seen in {url} "
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
    others = [key for name, key in keys.items() if name != "seen"]
    # the near-duplicate records of the scope's pages live beside its signatures
    for key in [*others, keys["signatures"] + ":near"]:
        client.unlink(store_key(client, key))  # one key a command: a cluster may spread them
    out.write(f"Deleted the keys of scope {scope!r}.\n")
    return 0
