"""A real MediaWiki on loopback, generated from a fixed seed: the test site of the crawl benchmark.

Debian's ``mediawiki`` package (1.39) is the code; a *wiki* is a directory of its own (its
``LocalSettings.php``, its SQLite database, its caches) that can be built once and served many
times::

    python tools/sites/mediawiki.py install                 # apt-get what is missing (root)
    python tools/sites/mediawiki.py build /tmp/wiki --seed 1 --articles 340
    python tools/sites/mediawiki.py serve /tmp/wiki --port 8089
    python tools/sites/mediawiki.py truth /tmp/wiki          # JSON: articles and redirects

The content comes from ``random.Random(seed)``: articles (namespace 0) with links between them
(a cycle through all of them, so every article is reachable, plus random links), categories,
two templates (an infobox and a stub notice, which puts its page in a category), redirects from
old names (some articles link to the old name), and 2-4 revisions per article by four users.
It is imported with ONE ``importDump.php`` of a generated XML dump (hundreds of ``edit.php``
calls would take minutes), then the recent changes and the link tables are rebuilt. Revision
timestamps are in the 28 days before the build, so ``Special:RecentChanges`` shows them; all
else (titles, texts, links, page ids) is the same for a seed.

Served by PHP's built-in server with ``PHP_CLI_SERVER_WORKERS`` workers and a small router for
the short URLs (``/wiki/$1``): one process tree, started and stopped by the benchmark, no root,
no daemon configured in ``/etc``; with opcache and APCu (shared by the forked workers) a page
costs ~20-60 ms of CPU, which is what nginx + php-fpm would cost too (PHP is the work).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import site_tools  # tools/sites: beside this script

MW = Path("/usr/share/mediawiki")
PACKAGES = ["mediawiki", "php-cli", "php-sqlite3", "php-intl", "php-mbstring", "php-apcu"]
DEFAULT_PORT = 8089
USERS = ["Alice", "Bob", "Carol", "Dave"]
PASSWORD = "bench-wiki-password-0"  # loopback only; the users exist so edits are attributed


def _words(text: str) -> list[str]:
    return text.split()


ADJECTIVES = _words("""amber ashen azure bitter black bright broken cedar cold copper crimson dark deep
dry eastern emerald far golden granite green grey hidden high hollow iron ivory lesser little
lone low lower marble middle misty narrow new north northern old pale quiet red rocky royal
salt scarlet silent silver south southern stone summer tall upper west western white wild
windy winter yellow""")
NOUNS = _words("""abbey bay bridge brook castle cliff coast court creek crossing dale falls farm fen
ferry field ford forest fort gate glen grove harbour heath hill hollow island lake lighthouse
market marsh meadow mill moor mount orchard pass peak pond port quarry reach ridge river rock
shore spring square station tower vale valley well wharf wood""")
WORDS = _words("""the a of and in to was is for on by with as at from that which its it this were
an be are has had also first built river town village road century later north south old new
known part area near called during between after became since main local early small large
following around within under several many long county district church mill bridge railway
trade people region water stone market years built name history population council""")
CATEGORIES = [
    "Rivers and lakes",
    "Settlements",
    "Buildings",
    "Hills and mountains",
    "Coasts",
    "Transport",
    "Industry",
    "Parks",
    "History",
    "Geography",
    "Landmarks",
    "Woodland",
]
INFOBOX = """<includeonly>{| class="infobox" style="float:right; border:1px solid #aaa; margin:0 0 1em 1em"
! colspan="2" | {{{name|{{PAGENAME}}}}}
|-
| Region || {{{region|unknown}}}
|-
| Founded || {{{founded|}}}
|-
| Kind || {{{kind|}}}
|}</includeonly><noinclude>An infobox for places. Parameters: name, region, founded, kind.</noinclude>"""
STUB = """<includeonly>''This article about {{{1|a place}}} is a stub. You can help by expanding it.''\
[[Category:Stubs]]</includeonly><noinclude>Marks a short article.</noinclude>"""


# --- install ----------------------------------------------------------------------------------


def missing_packages() -> list[str]:
    return site_tools.missing_packages(PACKAGES)


def install() -> None:
    """``apt-get install`` the Debian packages that are missing."""
    site_tools.install(PACKAGES, "mediawiki")


# --- content ----------------------------------------------------------------------------------


def _title(rng: random.Random, used: set[str]) -> str:
    while True:
        title = f"{rng.choice(ADJECTIVES).capitalize()} {rng.choice(NOUNS).capitalize()}"
        if rng.random() < 0.15:
            title += f" ({rng.choice(['village', 'district', 'station', 'parish'])})"
        if title not in used:
            used.add(title)
            return title


def _sentence(rng: random.Random, links: list[str]) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 18))]
    for link in links:
        at = rng.randrange(len(words) + 1)
        words.insert(at, f"[[{link}]]" if rng.random() < 0.7 else f"[[{link}|{link.lower()}]]")
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def generate(seed: int, articles: int, redirects: int | None = None) -> dict[str, Any]:
    """The wiki's content: ``{"articles": {title: [text per revision]}, "redirects": {old: target},
    "categories": {name: text}, "templates": {name: text}, "main_page": text}``."""
    rng = random.Random(seed)
    used: set[str] = set()
    titles = [_title(rng, used) for _ in range(articles)]
    n_redirects = redirects if redirects is not None else max(1, articles // 11)
    targets = rng.sample(titles, min(n_redirects, len(titles)))
    redirect_of = {_title(rng, used): target for target in targets}
    old_name = {target: old for old, target in redirect_of.items()}
    order = titles[:]
    rng.shuffle(order)
    nxt = {t: order[(i + 1) % len(order)] for i, t in enumerate(order)}
    content: dict[str, list[str]] = {}
    for title in titles:
        cats = rng.sample(CATEGORIES, rng.randint(1, 3))
        links = [nxt[title], *rng.sample(titles, rng.randint(4, 10))]
        links = [link for link in dict.fromkeys(links) if link != title]
        # an article linking to a renamed article often still uses the old name
        links = [
            old_name[link] if link in old_name and rng.random() < 0.5 else link for link in links
        ]
        stub = rng.random() < 0.2
        infobox = (
            f"{{{{Infobox place|name={title}|region=[[{rng.choice(titles)}]]"
            f"|founded={rng.randint(1100, 1950)}|kind={rng.choice(NOUNS)}}}}}\n"
        )
        n_revisions = rng.randint(2, 4)
        sections = [f"'''{title}''' is a {rng.choice(NOUNS)}. " + _sentence(rng, links[:1])]
        rest = links[1:]
        revisions = []
        for r in range(n_revisions):
            cut = max(1, len(rest) // (n_revisions - r))
            share, rest = rest[:cut], rest[cut:]
            heading = rng.choice(
                ["History", "Geography", "Economy", "Landmarks", "Transport", "Notes"]
            )
            body = " ".join(_sentence(rng, share[i::2]) for i in range(2))
            sections.append(f"== {heading} ==\n{body}")
            text = (infobox if r else "") + "\n\n".join(sections)
            if stub and r < n_revisions - 1:
                text += "\n\n{{Stub|a " + rng.choice(NOUNS) + "}}"
            text += "\n\n" + "\n".join(f"[[Category:{c}]]" for c in cats)
            revisions.append(text)
        content[title] = revisions
    featured = rng.sample(titles, min(12, len(titles)))
    main = (
        "Welcome to the '''Bench Wiki''', a generated wiki.\n\n== Featured ==\n"
        + "\n".join(f"* [[{t}]]" for t in featured)
        + "\n\n== Categories ==\n"
        + "\n".join(f"* [[:Category:{c}]]" for c in CATEGORIES)
        + "\n\nSee also [[Special:AllPages]] and [[Special:RecentChanges]]."
    )
    return {
        "articles": content,
        "redirects": redirect_of,
        "categories": {c: f"Pages about {c.lower()}." for c in [*CATEGORIES, "Stubs"]},
        "templates": {"Infobox place": INFOBOX, "Stub": STUB},
        "main_page": main,
    }


def dump_xml(content: dict[str, Any], seed: int, now: dt.datetime) -> str:
    """A MediaWiki export (format 0.11) of ``content``: revision timestamps in the 28 days before
    ``now`` (seeded offsets), authors taken in turn from :data:`USERS`."""
    rng = random.Random(seed + 1)
    out = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">'
    ]

    def page(title: str, ns: int, texts: list[str], redirect: str | None = None) -> None:
        out.append(f"<page><title>{escape(title)}</title><ns>{ns}</ns>")
        if redirect:
            out.append(f"<redirect title={quoteattr(redirect)} />")
        start = now - dt.timedelta(days=28) + dt.timedelta(seconds=rng.randrange(0, 14 * 86400))
        for i, text in enumerate(texts):
            stamp = start + dt.timedelta(seconds=i * rng.randrange(3600, 3 * 86400))
            user = USERS[rng.randrange(len(USERS))]
            comment = (
                "Created page"
                if i == 0
                else rng.choice(["Expanded", "Copy edit", "More links", "Sections"])
            )
            out.append(
                f"<revision><timestamp>{stamp.strftime('%Y-%m-%dT%H:%M:%SZ')}</timestamp>"
                f"<contributor><username>{user}</username></contributor><comment>{comment}</comment>"
                f"<model>wikitext</model><format>text/x-wiki</format>"
                f'<text xml:space="preserve">{escape(text)}</text></revision>'
            )
        out.append("</page>")

    for name, text in content["templates"].items():
        page(f"Template:{name}", 10, [text])
    for name, text in content["categories"].items():
        page(f"Category:{name}", 14, [text])
    for title, texts in content["articles"].items():
        page(title, 0, texts)
    for old, target in content["redirects"].items():
        page(old, 0, [f"#REDIRECT [[{target}]]"], redirect=target)
    out.append("</mediawiki>\n")
    return "\n".join(out)


# --- build ------------------------------------------------------------------------------------

LOCAL_SETTINGS = r"""
# --- tools/sites/mediawiki.py: short URLs, server at serve time, caches for speed ---
$wgServer = getenv( 'MW_SERVER' ) ?: 'http://127.0.0.1:{port}';
$wgCanonicalServer = $wgServer;
$wgScriptPath = '/w';
$wgArticlePath = '/wiki/$1';
$wgUsePathInfo = true;
$wgCacheDirectory = '{dir}/cache';
$wgUploadDirectory = '{dir}/images';
$wgUploadPath = '/w/images';
$wgEnableUploads = false;
$wgMainCacheType = function_exists( 'apcu_fetch' ) ? CACHE_ACCEL : CACHE_NONE;
$wgParserCacheType = CACHE_DB;
$wgSessionCacheType = CACHE_DB;
$wgJobRunRate = 0;
$wgRCMaxAge = 90 * 86400;
$wgShowExceptionDetails = true;
$wgEnableEmail = false;
$wgRateLimits = [];
$wgUseInstantCommons = false;
$wgPingback = false;
"""


def php(
    dir_: Path,
    script: str,
    *args: str,
    conf: bool = True,
    stdin: str | None = None,
    steps: dict[str, float] | None = None,
) -> str:
    """Run a maintenance script on the wiki in ``dir_`` (its seconds added to ``steps``)."""
    started = time.monotonic()
    env = {**os.environ, "MW_INSTALL_PATH": str(MW)}
    cmd = ["php", "-d", "memory_limit=1G", str(MW / "maintenance" / script), *args]
    if conf:
        cmd[4:4] = ["--conf", str(dir_ / "LocalSettings.php")]
    out = subprocess.run(cmd, capture_output=True, text=True, input=stdin, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(
            f"{script} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
        )
    if steps is not None:
        steps[script] = round(steps.get(script, 0.0) + time.monotonic() - started, 1)
    return out.stdout


def build(
    dir_: Path, seed: int = 1, articles: int = 340, port: int = DEFAULT_PORT, force: bool = False
) -> dict[str, Any]:
    """Build a wiki in ``dir_`` (nothing done if one of the same seed and size is there, unless
    ``force``); returns its ``wiki.json`` (what it was built from and how long it took)."""
    meta_path = dir_ / "wiki.json"
    if meta_path.exists() and not force:
        meta = json.loads(meta_path.read_text())
        if meta.get("seed") == seed and meta.get("articles") == articles:
            return dict(meta)
    if missing_packages():
        raise SystemExit(
            f"missing Debian packages {missing_packages()}: run `{sys.argv[0]} install` as root"
        )
    started = time.monotonic()
    steps: dict[str, float] = {}
    if dir_.exists():
        shutil.rmtree(dir_)
    for sub in ("data", "cache", "images", "docroot"):
        (dir_ / sub).mkdir(parents=True)
    (dir_ / "docroot" / "w").symlink_to(MW)
    (dir_ / "router.php").write_text(ROUTER)
    php(
        dir_,
        "install.php",
        "--confpath",
        str(dir_),
        "--dbtype",
        "sqlite",
        "--dbpath",
        str(dir_ / "data"),
        "--dbname",
        "wiki",
        "--server",
        f"http://127.0.0.1:{port}",
        "--scriptpath",
        "/w",
        "--lang",
        "en",
        "--skins",
        "Vector",
        "--pass",
        PASSWORD,
        "Bench Wiki",
        "Admin",
        conf=False,
        steps=steps,
    )
    settings = dir_ / "LocalSettings.php"
    settings.write_text(
        settings.read_text()
        + LOCAL_SETTINGS.replace("{dir}", str(dir_)).replace("{port}", str(port))
    )
    for user in USERS:
        php(dir_, "createAndPromote.php", user, PASSWORD, steps=steps)
    content = generate(seed, articles)
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    (dir_ / "dump.xml").write_text(dump_xml(content, seed, now))
    php(dir_, "importDump.php", "--no-updates", str(dir_ / "dump.xml"), steps=steps)
    php(
        dir_,
        "edit.php",
        "--user",
        "Admin",
        "--summary",
        "Bench Wiki main page",
        "Main Page",
        stdin=content["main_page"],
        steps=steps,
    )
    php(dir_, "rebuildrecentchanges.php", steps=steps)
    php(dir_, "refreshLinks.php", steps=steps)
    php(dir_, "runJobs.php", steps=steps)
    php(dir_, "initSiteStats.php", "--update", steps=steps)
    php(dir_, "rebuildLocalisationCache.php", "--lang", "en", steps=steps)
    meta = {
        "seed": seed,
        "articles": articles,
        "redirects": len(content["redirects"]),
        "built": now.isoformat(),
        "build_seconds": round(time.monotonic() - started, 1),
        "steps": steps,
    }
    meta_path.write_text(json.dumps(meta, indent=1))
    return meta


# --- serve ------------------------------------------------------------------------------------

ROUTER = r"""<?php
// PHP's built-in server: /wiki/Title is index.php (MediaWiki reads the title from REQUEST_URI
// through $wgArticlePath); files under /w/ are served as they are (PHP scripts run).
$path = parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH );
if ( $path === '/' ) {
	header( 'Location: /wiki/Main_Page', true, 301 );
	return true;
}
if ( strncmp( $path, '/wiki/', 6 ) === 0 || $path === '/wiki' ) {
	$_SERVER['SCRIPT_NAME'] = '/w/index.php';
	$_SERVER['SCRIPT_FILENAME'] = '/usr/share/mediawiki/index.php';
	$_SERVER['PHP_SELF'] = '/w/index.php';
	chdir( '/usr/share/mediawiki' );
	require '/usr/share/mediawiki/index.php';
	return true;
}
return false;
"""


def serve(dir_: Path, port: int = DEFAULT_PORT, workers: int = 4) -> subprocess.Popen[bytes]:
    """Start PHP's built-in server for the wiki in ``dir_`` on 127.0.0.1:``port`` (its own process
    group: stop it with :func:`stop`); returns once it answers."""
    env = {
        **os.environ,
        "PHP_CLI_SERVER_WORKERS": str(workers),
        "MW_INSTALL_PATH": str(MW),
        "MW_CONFIG_FILE": str(dir_ / "LocalSettings.php"),
        "MW_SERVER": f"http://127.0.0.1:{port}",
    }
    cmd = [
        "php",
        "-d",
        "opcache.enable_cli=1",
        "-d",
        "opcache.memory_consumption=256",
        "-d",
        "opcache.validate_timestamps=0",
        "-d",
        "apc.enable_cli=1",
        "-d",
        "apc.shm_size=128M",
        "-d",
        "memory_limit=512M",
        "-d",
        "display_errors=0",
        "-d",
        "log_errors=1",
        "-d",
        f"error_log={dir_ / 'php-errors.log'}",
        "-S",
        f"127.0.0.1:{port}",
        "-t",
        str(dir_ / "docroot"),
        str(dir_ / "router.php"),
    ]
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise SystemExit(f"127.0.0.1:{port} is already in use")
    log = open(dir_ / "server.log", "ab")  # noqa: SIM115 - the server's, for its lifetime
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"php -S exited ({proc.returncode}): see {dir_ / 'server.log'}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.1)
    stop(proc)
    raise SystemExit("php -S did not start listening")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server from :func:`serve` (its process group: the workers too)."""
    site_tools.stop_group(proc, 10)


def warm(base_url: str, titles: list[str]) -> float:
    """Fetch each article once (fills the parser cache, so a crawl's timings do not include
    parsing); returns the seconds it took."""
    from urllib.parse import quote
    from urllib.request import urlopen

    started = time.monotonic()
    for title in titles:
        with urlopen(f"{base_url}/wiki/{quote(title.replace(' ', '_'))}", timeout=60) as resp:
            resp.read()
    return time.monotonic() - started


# --- truth ------------------------------------------------------------------------------------


def truth(dir_: Path) -> dict[str, Any]:
    """From the wiki's own database: ``articles`` (namespace 0, not redirects: id, title, latest
    revision id, revision count) and ``redirects`` (id, title, target title)."""
    db = sqlite3.connect(f"file:{dir_ / 'data' / 'wiki.sqlite'}?mode=ro", uri=True)
    try:
        articles = [
            {
                "id": pid,
                "title": _text(title).replace("_", " "),
                "latest": latest,
                "revisions": count,
            }
            for pid, title, latest, count in db.execute(
                "SELECT page_id, page_title, page_latest, (SELECT COUNT(*) FROM revision WHERE rev_page = page_id)"
                " FROM page WHERE page_namespace = 0 AND page_is_redirect = 0 ORDER BY page_id"
            )
        ]
        redirects = [
            {
                "id": pid,
                "title": _text(title).replace("_", " "),
                "target": _text(target).replace("_", " "),
            }
            for pid, title, target in db.execute(
                "SELECT page_id, page_title, rd_title FROM page JOIN redirect ON rd_from = page_id"
                " WHERE page_namespace = 0 ORDER BY page_id"
            )
        ]
    finally:
        db.close()
    return {"articles": articles, "redirects": redirects}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("install", help="apt-get install the missing Debian packages (root)")
    b = sub.add_parser("build", help="build a wiki in DIR")
    b.add_argument("dir", type=Path)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--articles", type=int, default=340)
    b.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="$wgServer's port when MW_SERVER is not set"
    )
    b.add_argument("--force", action="store_true", help="rebuild even if DIR holds this wiki")
    s = sub.add_parser("serve", help="serve the wiki in DIR on 127.0.0.1 until interrupted")
    s.add_argument("dir", type=Path)
    s.add_argument("--port", type=int, default=DEFAULT_PORT)
    s.add_argument("--workers", type=int, default=4)
    t = sub.add_parser("truth", help="print the articles and redirects of the wiki in DIR (JSON)")
    t.add_argument("dir", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "install":
        install()
    elif args.cmd == "build":
        print(
            json.dumps(build(args.dir.resolve(), args.seed, args.articles, args.port, args.force))
        )
    elif args.cmd == "serve":
        proc = serve(args.dir.resolve(), args.port, args.workers)
        print(
            f"serving http://127.0.0.1:{args.port}/wiki/Main_Page (pid {proc.pid}); Ctrl-C stops",
            flush=True,
        )

        def terminate(*_: object) -> None:
            # only a signal here: stop() waits for the server, which the main thread does
            # (Popen.wait holds a lock a handler waiting too would deadlock on)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)

        signal.signal(signal.SIGTERM, terminate)  # the workers are in their own group
        with contextlib.suppress(KeyboardInterrupt):
            proc.wait()
        stop(proc)
    else:
        print(json.dumps(truth(args.dir.resolve()), indent=1))


if __name__ == "__main__":
    main()
