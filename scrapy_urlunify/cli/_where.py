"""Where a command finds a crawl's stores: a JOBDIR, a Redis URL (and a scope), or nowhere.

The options mirror ``JOBDIR``, ``URLUNIFY_STORE`` and ``URLUNIFY_REDIS_KEY``; ``scrapy urlunify``
fills them from a project's settings. Without them the store is the default, ``"memory"``,
which keeps nothing once a crawl ends: there is nothing to read, and the commands say so
rather than ask for an option. The standalone ``urlunify`` reads no environment variable for
them: a crawl does not either, so a store named that way would not be the crawl's.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy_urlunify.stores._location import (
    DEFAULT_KEY_TEMPLATE,
    KEY_SUFFIXES,
    MEMORY,
    mask_url,
    redis_keys,
    redis_missing,
)

if TYPE_CHECKING:
    import redis


class CommandError(Exception):
    """A command that cannot go on: one line for standard error, and the exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def add_store_options(
    p: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    jobdir_help: str,
    store_help: str,
) -> None:
    """``--jobdir DIR`` or ``--store URL``, and ``--key TEMPLATE`` for a Redis store."""
    where = p.add_mutually_exclusive_group()
    where.add_argument("--jobdir", metavar="DIR", help=jobdir_help)
    where.add_argument("--store", metavar="URL", help=store_help)
    p.add_argument(
        "--key",
        metavar="TEMPLATE",
        default=None,
        help="with --store: URLUNIFY_REDIS_KEY, the key template of the scope's stores "
        "(default urlunify:%%(scope)s)",
    )


def in_memory(args: argparse.Namespace) -> bool:
    """Whether the options name no store (or ``--store memory``): the default, which keeps
    nothing once a crawl ends."""
    return not args.jobdir and args.store in (None, "", MEMORY)


def jobdir_path(args: argparse.Namespace, command: str) -> Path:
    path = Path(args.jobdir)
    if not path.is_dir():
        raise CommandError(f"{command}: no JOBDIR at {path}", 1)
    return path


def open_redis(url: str, command: str) -> redis.Redis:
    """A client of the Redis store ``url`` (PINGed); CommandError for a URL that is not one
    (status 2) or a client that is not installed. An unreachable server raises the store's
    ``StoreUnavailable``, whose message has the password masked."""
    missing = redis_missing(url)
    if missing:
        raise CommandError(f"{command}: {missing}", 1)
    from scrapy_urlunify.stores._redis_connection import connect

    try:
        return connect(url)
    except ValueError as e:  # not a Redis URL, a bad port or db (the message is password-free)
        raise CommandError(f"{command}: {e}", 2) from None


def scope_keys(template: str | None, scope: str, command: str) -> dict[str, str]:
    try:
        return redis_keys(template or DEFAULT_KEY_TEMPLATE, scope)
    except ValueError as e:
        raise CommandError(f"{command}: --key: {e}", 2) from None


def scopes_in(client: redis.Redis, template: str | None) -> list[str]:
    """The scopes that have a store in Redis under ``template``, sorted: the scope part of each
    key named as :func:`~..stores.location.redis_keys` names them (hash-tagged or not, as a
    Redis Cluster keeps them). One ``SCAN`` of the keyspace, never ``KEYS``."""
    template = template or DEFAULT_KEY_TEMPLATE
    if "%(scope)s" not in template:
        return []
    head, _, tail = template.partition("%(scope)s")
    suffixes = "|".join(re.escape(s) for s in KEY_SUFFIXES.values())
    pattern = re.compile(f"{re.escape(head)}(.+?){re.escape(tail)}(?:{suffixes})")
    glob = "".join("\\" + c if c in "*?[]\\" else c for c in head)
    found: set[str] = set()
    for raw in client.scan_iter(match=f"*{glob}*", count=1000):
        key = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
        match = pattern.fullmatch(key)
        if match is None and key.startswith("{") and key.endswith("}"):
            match = pattern.fullmatch(key[1:-1])  # a store's key tagged whole on a cluster
        if match is not None:
            found.add(match.group(1))
    return sorted(found)


def no_scope(client: redis.Redis, url: str, template: str | None, command: str) -> CommandError:
    """The error of a command given no scope for a Redis store: the scopes it holds."""
    scopes = scopes_in(client, template)
    held = (
        "it holds the scopes " + ", ".join(repr(s) for s in scopes)
        if scopes
        else "it holds no scope under "
        + (template or DEFAULT_KEY_TEMPLATE)
        + " (another URLUNIFY_REDIS_KEY? give --key)"
    )
    return CommandError(f"{command}: give --scope for the Redis store {mask_url(url)}: {held}", 2)
