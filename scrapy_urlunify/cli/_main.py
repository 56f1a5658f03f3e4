"""The ``urlunify`` command line: ask the unifier about URLs without running a crawl.

``urlunify explain URL`` prints every rule that fired, the URL to fetch and the identifier;
``urlunify same URL1 URL2`` says whether two URLs are one page and which rules decide it (exit
status 0 when they are, 1 when not); ``urlunify identify`` and ``urlunify standardize`` read URLs
from stdin, one per line, and write one result per line (a bad line gets an empty output line,
so outputs stay aligned with inputs, and an error on stderr; the exit status is then 1).

Policy options (``--scope``, ``--remove-param``...) mirror the ``URLUNIFY_*`` settings. The
``scrapy urlunify`` command runs this same code with a project's (or a spider's) settings.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import scrapy_urlunify.cli._learned as learned
from scrapy_urlunify import __version__
from scrapy_urlunify.cli._learned import Learned
from scrapy_urlunify.cli._store import add_store_parser, run_store
from scrapy_urlunify.cli._where import (
    CommandError,
    add_store_options,
    in_memory,
    jobdir_path,
    no_scope,
    open_redis,
    scope_keys,
)
from scrapy_urlunify.core._explain import Explanation, explain_with, same
from scrapy_urlunify.core._policy import Policy, PolicyError
from scrapy_urlunify.core._unify import unifier_for
from scrapy_urlunify.core._url import InvalidURL
from scrapy_urlunify.stores._base import StoreError


def build_parser(prog: str = "urlunify") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Resolve, standardize and identify URLs the way scrapy-urlunify does in a crawl."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("explain", help="show every rule that fires on a URL")
    p.add_argument("url")
    p.add_argument("--base", help="resolve URL against this page URL first")
    add_learned_options(p)
    add_policy_options(p)

    p = sub.add_parser("same", help="are two URLs one page? (exit status 0: yes, 1: no)")
    p.add_argument("url1")
    p.add_argument("url2")
    p.add_argument(
        "--fetch",
        action="store_true",
        help="also download both pages and say how alike they are (exact signature, resemblance) "
        "as a crawl measures them; the exit status stays the URLs' verdict",
    )
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per download with --fetch")
    add_learned_options(p)
    add_policy_options(p)

    for name, what in (("identify", "identifiers"), ("standardize", "URLs to fetch")):
        p = sub.add_parser(name, help=f"read URLs from stdin, write their {what}")
        p.add_argument("--base", help="resolve each line against this page URL first")
        if name == "identify":  # learned rules change identifiers only, never a URL to fetch
            add_learned_options(p)
        add_policy_options(p)

    add_store_parser(sub)
    return parser


def add_learned_options(p: argparse.ArgumentParser) -> None:
    """Where a crawl kept the rules it learned, to apply them on top of the policy."""
    g = p.add_argument_group(
        "learned rules (URLUNIFY_LEARN): apply those a crawl kept, on top of the policy"
    )
    add_store_options(
        g,
        jobdir_help="the crawl's JOBDIR (its urlunify-learned.json)",
        store_help="the crawl's Redis store (URLUNIFY_STORE), with --scope: the scope's rules",
    )


def add_policy_options(p: argparse.ArgumentParser) -> None:
    """The options that build a :class:`Policy` (one per ``URLUNIFY_*`` setting)."""
    g = p.add_argument_group("policy (each option mirrors a URLUNIFY_* setting)")
    g.add_argument(
        "--scope",
        help="scope put in front of identifiers (URLUNIFY_SCOPE); with --store, the scope "
        "whose learned rules apply",
    )
    g.add_argument(
        "--remove-param",
        action="append",
        metavar="[HOST:]NAME",
        help=(
            "parameter name or glob to remove, optionally for one host and its subdomains; "
            "repeatable"
        ),
    )
    g.add_argument(
        "--ignore-param",
        action="append",
        metavar="[HOST:]NAME",
        help="parameter kept in the fetched URL but not part of the identifier; repeatable",
    )
    g.add_argument(
        "--ignore-path-prefix",
        action="append",
        metavar="[HOST:]SEGMENT",
        help="leading path segment not part of the identifier (/print/x = /x); repeatable",
    )
    g.add_argument(
        "--ignore-path-suffix",
        action="append",
        metavar="[HOST:]SEGMENT",
        help="last path segment or glob not part of the identifier (/x/print.html = /x/); "
        "repeatable",
    )
    g.add_argument(
        "--key-param",
        action="append",
        metavar="[HOST:]NAME",
        help="key parameter (only key parameters identify a URL that has one); repeatable",
    )
    g.add_argument(
        "--alias",
        action="append",
        metavar="HOST,HOST[,...]",
        help="a group of hosts serving one site, the first naming it; repeatable",
    )
    g.add_argument(
        "--sister-site",
        action="append",
        metavar="HOST",
        help="unify hosts with this site's name under another public suffix; repeatable",
    )
    g.add_argument(
        "--strip-host-prefix",
        action="append",
        metavar="LABEL",
        help="host label ignored in identifiers (replaces the default www, wwwN); repeatable",
    )
    g.add_argument(
        "--index-page",
        action="append",
        metavar="NAME",
        help="directory index file name (replaces the default list); repeatable",
    )
    g.add_argument("--keep-scheme", action="store_true", help="http and https are different pages")
    g.add_argument(
        "--deny-extension",
        action="append",
        metavar="EXT",
        help="extension not followed (replaces Scrapy's IGNORED_EXTENSIONS); repeatable",
    )
    g.add_argument("--max-url-length", type=int, metavar="N")
    g.add_argument("--trap-repetitions", type=int, metavar="N")
    g.add_argument("--keep-session-ids", action="store_true", help="do not remove session ids")
    g.add_argument(
        "--keep-tracking-params", action="store_true", help="do not remove tracking parameters"
    )
    g.add_argument(
        "--keep-action-params",
        action="store_true",
        help="identify replytocom, add-to-cart... apart (action parameters)",
    )
    g.add_argument(
        "--no-route-fragments",
        action="store_true",
        help="drop #!... and #/... fragments too (what a crawl without a browser sees)",
    )


def _param_spec(values: list[str]) -> dict[str, list[str]]:
    spec: dict[str, list[str]] = {}
    for v in values:
        host, sep, name = v.rpartition(":")
        spec.setdefault(host if sep else "*", []).append(name)
    return spec


def policy_from_args(args: argparse.Namespace, base: Policy | None = None) -> Policy:
    """A policy from the parsed options; options given override ``base`` (default: defaults)."""
    changes: dict[str, Any] = {}
    if args.scope is not None:
        changes["scope"] = args.scope
    if args.remove_param:
        changes["remove_params"] = _merge(
            base.remove_params if base else (), _param_spec(args.remove_param)
        )
    if args.ignore_param:
        changes["ignore_params"] = _merge(
            base.ignore_params if base else (), _param_spec(args.ignore_param)
        )
    if args.ignore_path_prefix:
        changes["ignore_path_prefixes"] = _merge(
            base.ignore_path_prefixes if base else (), _param_spec(args.ignore_path_prefix)
        )
    if args.ignore_path_suffix:
        changes["ignore_path_suffixes"] = _merge(
            base.ignore_path_suffixes if base else (), _param_spec(args.ignore_path_suffix)
        )
    if args.key_param:
        changes["key_params"] = _merge(base.key_params if base else (), _param_spec(args.key_param))
    if args.alias:
        changes["domain_aliases"] = [a.split(",") for a in args.alias]
    if args.sister_site:
        changes["sister_suffixes"] = args.sister_site
    if args.strip_host_prefix:
        changes["strip_host_prefixes"] = args.strip_host_prefix
    if args.index_page:
        changes["index_pages"] = args.index_page
    if args.keep_scheme:
        changes["ignore_scheme"] = False
    if args.deny_extension:
        changes["deny_extensions"] = args.deny_extension
    if args.max_url_length is not None:
        changes["max_url_length"] = args.max_url_length
    if args.trap_repetitions is not None:
        changes["trap_repetitions"] = args.trap_repetitions
    if args.keep_session_ids:
        changes["strip_session_ids"] = False
    if args.keep_tracking_params:
        changes["strip_tracking_params"] = False
    if args.keep_action_params:
        changes["ignore_action_params"] = False
    if args.no_route_fragments:
        changes["route_fragments"] = False
    return (base or Policy()).replace(**changes)


def _merge(
    rules: tuple[tuple[str, tuple[str, ...]], ...], extra: dict[str, list[str]]
) -> dict[str, list[str]]:
    merged = {h or "*": list(names) for h, names in rules}
    for host, names in extra.items():
        merged.setdefault(host, []).extend(names)
    return merged


def format_explanation(e: Explanation) -> str:
    lines = [f"input       {e.url}"]
    if e.base:
        lines.append(f"base        {e.base}")
    if e.error:
        lines.append(f"error       {e.error}")
    for f in e.fired:
        name = f.rule if f.names == (f.rule,) else f"{f.rule} ({', '.join(f.names)})"
        lines.append(f"  {f.layer:<9} {name}")
        lines.append(f"            {f.before}")
        lines.append(f"         -> {f.after}")
    if not e.fired and not e.error:
        lines.append("  (no rule changed the URL)")
    r = e.result
    lines.append(f"fetch URL   {r.fetch_url if r.fetch_url is not None else '-'}")
    lines.append(f"identifier  {r.identifier if r.identifier is not None else '-'}")
    reason = r.filter_reason
    lines.append(f"filter      {'not followed: ' + reason if reason else 'followed'}")
    return "\n".join(lines)


def _stream(lines: TextIO, out: TextIO, err: TextIO, fn: Any) -> int:
    status = 0
    for n, line in enumerate(lines, 1):
        url = line.rstrip("\r\n")
        try:
            out.write(fn(url) + "\n")
        except InvalidURL as e:
            out.write("\n")
            err.write(f"line {n}: {e}\n")
            status = 1
    return status


def run(
    args: argparse.Namespace, policy: Policy | None, out: TextIO, err: TextIO, stdin: TextIO
) -> int:
    """Run a parsed command with a built policy (optional for ``store``); returns the exit
    status."""
    if args.command == "store":
        return run_store(args, policy, out, err, stdin)
    assert policy is not None, f"{args.command} needs a policy"
    found = None
    effective = policy
    if getattr(args, "jobdir", None) is not None or getattr(args, "store", None) is not None:
        try:
            found = read_learned(args, policy)
            effective = found.policy(policy)
        except (CommandError, StoreError, PolicyError) as problem:
            prefix = "" if isinstance(problem, CommandError) else f"urlunify {args.command}: "
            if isinstance(problem, PolicyError):  # a rule the policy refuses (a hand-edited file)
                prefix += f"the learned rules of {found.where if found else 'the store'}: "
            err.write(f"{prefix}{problem}\n")
            return 2  # not 1: for ``same``, 1 means "different pages"
    u = unifier_for(effective)
    if found is not None and args.command in ("explain", "same"):
        out.write(f"learned     {found.summary()}\n\n")
    elif found is not None and not found.found:
        err.write(f"urlunify {args.command}: no learned rule applied: {found.summary()}\n")
    if args.command == "explain":
        e = explain_with(u, args.url, args.base)
        out.write(format_explanation(e) + "\n")
        if found is not None and found.rules:
            alone = explain_with(unifier_for(policy), args.url, args.base).result.identifier
            if alone != e.result.identifier:
                out.write(f"learned     changed the identifier (the policy alone: {alone})\n")
        return 0 if e.error is None else 1
    if args.command == "same":
        c = same(args.url1, args.url2, effective)
        out.write(format_explanation(c.first) + "\n\n" + format_explanation(c.second) + "\n\n")
        if c.same:
            reasons = ", ".join(c.deciding)
            if c.any_of:
                reasons = (reasons + " and " if reasons else "") + "any of " + ", ".join(c.any_of)
            out.write(f"same page: decided by {reasons}\n")
        else:
            out.write("different pages\n")
        if found is not None and found.rules:
            _write_learned_verdict(found, args.url1, args.url2, policy, c.same, out)
        if args.fetch:
            _write_pages(args, out, err)
        return 0 if c.same else 1
    fn = u.identify if args.command == "identify" else u.standardize
    base = args.base
    return _stream(stdin, out, err, (lambda url: fn(url, base)) if base else fn)


def read_learned(args: argparse.Namespace, policy: Policy) -> Learned:
    """The learned rules of the store the options name: a JOBDIR's file, or the Redis hash of
    the policy's scope (``--scope``, as the crawl's scope names its keys)."""
    command = f"urlunify {args.command}"
    if in_memory(args):
        return Learned("the memory store", found=False)
    if args.jobdir:
        return learned.from_jobdir(jobdir_path(args, command))
    from scrapy_urlunify.stores._location import mask_url

    client = open_redis(args.store, command)
    try:
        if not policy.scope:
            raise no_scope(client, args.store, args.key, command)
        keys = scope_keys(args.key, policy.scope, command)
        return learned.from_redis(client, keys["rules"], mask_url(args.store))
    finally:
        client.close()


def _write_learned_verdict(
    found: Learned, a: str, b: str, policy: Policy, verdict: bool, out: TextIO
) -> None:
    """Say when the learned rules make the verdict, and which of them."""
    if same(a, b, policy).same == verdict:
        return
    alone = "one page" if not verdict else "different pages"
    deciding = found.deciding(a, b, policy) if verdict else []
    out.write(f"learned     decided by the learned rules (the policy alone: {alone})")
    if deciding:
        out.write(":")
        out.writelines(
            "\n            "
            f"{learned.describe(r)}{' (on probation)' if found.probation_of(r) else ''}"
            for r in deciding
        )
    elif verdict:
        out.write(": by several of them together")
    out.write("\n")


def _write_pages(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    from scrapy_urlunify.cli._pages import compare_pages, describe

    try:
        out.write("\n" + describe(compare_pages(args.url1, args.url2, args.timeout)) + "\n")
    except (OSError, ValueError) as e:
        err.write(f"cannot fetch the pages: {e}\n")


def main(
    argv: Sequence[str] | None = None, policy: Policy | None = None, prog: str = "urlunify"
) -> int:
    """Entry point of the ``urlunify`` script; ``policy`` is the base the options refine."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        effective = policy if args.command == "store" else policy_from_args(args, policy)
    except PolicyError as e:
        parser.error(f"bad policy option: {e}")
    return run(args, effective, sys.stdout, sys.stderr, sys.stdin)
