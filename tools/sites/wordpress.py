"""A real WordPress blog on loopback, generated from a fixed seed: the blog test site of the crawl
benchmark.

Debian's ``wordpress`` package (6.1) and its ``twentytwentyone`` theme are the code; a *blog* is
a directory of its own (a MariaDB data directory, a document root of symlinks to the package with
its own ``wp-config.php`` and ``wp-content``) that can be built once and served many times::

    python tools/sites/wordpress.py install                 # apt-get what is missing (root)
    python tools/sites/wordpress.py build /tmp/blog --seed 1 --posts 300
    python tools/sites/wordpress.py serve /tmp/blog --port 8090
    python tools/sites/wordpress.py truth /tmp/blog          # JSON: posts and pages

Set up as most blogs run it: pretty permalinks (``/%year%/%monthnum%/%day%/%postname%/``), the
classic theme Twenty Twenty-One with its footer widgets (search form, recent posts, recent
comments, monthly archives, categories, a tag cloud) and a menu of the pages, comments open,
threaded (5 levels) and paged at 10 top-level comments a page (WordPress's default order: the
newest page on the post itself, ``/comment-page-N/`` for the others), categories (two of them
children), tags, author and date archives, feeds, WordPress's own "Reply" links
(``?replytocom=N``).

The content comes from ``random.Random(seed)``: ``--posts`` posts over the 18 months from
2023-01-01 by four authors, 10 categories, 40 tags, 2-20 comments per post (a third of them
replies), one sticky post, posts linking earlier (and a few later) posts, mostly by permalink,
some by shortlink (``/?p=ID``, which WordPress redirects), and six pages (one a child page, the
privacy policy WordPress drafts at install published). It is installed through PHP: one script
runs ``wp-admin/install.php``'s ``wp_install()`` and another inserts the content with
``wp_insert_user``/``wp_insert_term``/``wp_insert_post``/``wp_insert_comment`` from a generated
JSON file; post, comment and user dates are the generated ones, so all but a few timestamps
(options, the install itself) are the same for a seed, ids and URLs included.

The database is a throw-away MariaDB instance (``mariadbd`` on a Unix socket in the blog's
directory, no network, run as the calling user), started and stopped with the server; the pages
are served by PHP's built-in server with ``PHP_CLI_SERVER_WORKERS`` workers and a router (pretty
permalinks to ``index.php``, PHP files run under the blog's ``ABSPATH``): one process group each,
no root needed to serve, no daemon configured in ``/etc``. No persistent object cache (as on most
sites), WP-Cron off (no loopback requests in the middle of a crawl), no outgoing HTTP.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import site_tools  # tools/sites: beside this script

WP = Path("/usr/share/wordpress")
THEME = "twentytwentyone"
PACKAGES = [
    "wordpress",
    f"wordpress-theme-{THEME}",
    "php-cli",
    "php-mysql",
    "mariadb-server",
]
MARIADBD = "/usr/sbin/mariadbd"
DEFAULT_PORT = 8090
PASSWORD = "bench-blog-password-0"  # loopback only: the database user's and the blog users'
PERMALINKS = "/%year%/%monthnum%/%day%/%postname%/"
START = dt.datetime(2023, 1, 1)
DAYS = 547  # 18 months


def _words(text: str) -> list[str]:
    return text.split()


AUTHORS = [
    {"login": "alice", "name": "Alice Archer", "bio": "Alice writes about travel and food."},
    {"login": "bob", "name": "Bob Brennan", "bio": ""},
    {"login": "carol", "name": "Carol Chen", "bio": "Carol maintains the garden and the code."},
    {"login": "dave", "name": "Dave Dunmore", "bio": ""},
]
#: (name, parent): the first one renames WordPress's "Uncategorized" (term 1)
CATEGORIES = [
    ("Notes", None),
    ("Travel", None),
    ("Hiking", "Travel"),
    ("Food", None),
    ("Baking", "Food"),
    ("Gardening", None),
    ("Books", None),
    ("Photography", None),
    ("Software", None),
    ("Music", None),
]
TAGS = _words("""autumn winter spring summer bread coffee tea soup roses tomatoes compost trail
coast mountains rain maps trains bicycles film lenses light python linux databases testing
novels poetry history jazz piano guitar recipes weekend family friends review howto tools
notes lists ideas""")
ADJECTIVES = _words("""amber quiet bright broken cedar cold copper crimson early golden green grey
hidden hollow iron little lone narrow northern old pale patient quick rainy salt silver slow
small southern stone strange tall tiny warm western white wild windy winter yellow careful""")
NOUNS = _words("""bridge kettle garden harbour lantern market orchard notebook river station
teapot window valley journey recipe compass letter ladder meadow bicycle camera shelf
afternoon morning evening weekend winter summer story pattern habit question mistake lesson
map path kitchen library""")
TITLE_FORMS = [
    "The {A} {N}",
    "Notes on the {A} {N}",
    "A {A} {N}",
    "Why the {N} matters",
    "On {A} {N}s",
    "The {N} and the {N2}",
    "Another {A} {N}",
    "Learning from a {A} {N}",
    "In praise of the {A} {N}",
    "What the {N} taught me",
]
WORDS = _words("""the a of and in to was is for on by with as at from that which it this were an
be are has had also first then later we I my our small large old new some many long short
little good great best better morning evening day week year time place way thing people
friends garden kitchen road river coast town city house book note list idea plan trip walk
bread coffee tea rain light water stone wood paper song page code test photo camera map train
slowly quickly finally again almost always never often still really quite very together""")
GUESTS = [
    "Maya R.",
    "Tom Keller",
    "Ines",
    "Jonas",
    "Priya S.",
    "Hugo",
    "Lena Park",
    "Sam",
    "Olu A.",
    "Greta",
    "Marco Bianchi",
    "Ruth",
    "Kenji",
    "Ana Lima",
    "Pete",
    "Zoe W.",
    "Farid",
    "Nora",
    "Luis",
    "Beth",
]
#: (title, slug, parent slug, order); the privacy policy is WordPress's own draft, published
PAGES = [
    ("About", "about", None, 1),
    ("Team", "team", "about", 2),
    ("Archives", "archives", None, 3),
    ("Reading list", "reading-list", None, 4),
    ("Contact", "contact", None, 5),
]


# --- install ----------------------------------------------------------------------------------


def missing_packages() -> list[str]:
    return site_tools.missing_packages(PACKAGES)


def install() -> None:
    """``apt-get install`` the Debian packages that are missing."""
    site_tools.install(PACKAGES, "wordpress")


# --- content ----------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return "-".join("".join(c for c in w.lower() if c.isalnum()) for w in text.split())


def _title(rng: random.Random, used: set[str]) -> str:
    while True:
        adjective, noun = rng.choice(ADJECTIVES), rng.choice(NOUNS)
        form = rng.choice(TITLE_FORMS)
        if "{N}s" in form and noun.endswith(("s", "ch", "x")):
            form = form.replace("{N}s", "{N}es")
        title = form.format(A=adjective, N=noun, N2=rng.choice([n for n in NOUNS if n != noun]))
        title = title[0].upper() + title[1:]
        if _slug(title) not in used:
            used.add(_slug(title))
            return title


def _sentence(rng: random.Random, lo: int = 8, hi: int = 20) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "!", "?"])


def _paragraph(rng: random.Random, links: list[str] | None = None) -> str:
    sentences = [_sentence(rng) for _ in range(rng.randint(2, 5))]
    for link in links or []:
        at = rng.randrange(len(sentences))
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        sentences[at] = (
            sentences[at][:-1] + f', as in <a href="{link}">{words}</a>' + sentences[at][-1]
        )
    return "<!-- wp:paragraph -->\n<p>" + " ".join(sentences) + "</p>\n<!-- /wp:paragraph -->"


def _comments(rng: random.Random, post_date: dt.datetime, author: str) -> list[dict[str, Any]]:
    """2-20 comments: dates after the post's, a third of them replies (up to 4 levels deep), a
    few by the post's author."""
    out: list[dict[str, Any]] = []
    depth: list[int] = []
    when = post_date
    for i in range(rng.randint(2, 20)):
        when += dt.timedelta(minutes=rng.randint(20, 3 * 24 * 60))
        parent = -1
        if i and rng.random() < 0.35:
            candidates = [j for j in range(i) if depth[j] < 4]
            if candidates:
                parent = rng.choice(candidates)
        depth.append(depth[parent] + 1 if parent >= 0 else 0)
        by_author = parent >= 0 and rng.random() < 0.4
        guest = rng.choice(GUESTS)
        out.append(
            {
                "user": author if by_author else None,
                "author": "" if by_author else guest,
                "email": "" if by_author else f"{_slug(guest).replace('-', '.')}@example.com",
                "url": (
                    f"https://{_slug(guest)}.example.net/"
                    if not by_author and rng.random() < 0.3
                    else ""
                ),
                "date": when.strftime("%Y-%m-%d %H:%M:%S"),
                "parent": parent,
                "content": " ".join(_sentence(rng, 5, 16) for _ in range(rng.randint(1, 3))),
            }
        )
    return out


def generate(seed: int, posts: int) -> dict[str, Any]:
    """The blog's content: ``{"authors", "categories": [[name, slug, parent slug]], "tags",
    "posts": [{title, slug, date, author, categories, tags, sticky, content, comments}],
    "pages": [{title, slug, parent, order, content}]}``. A post's content links others as
    ``{{post:N}}`` (its permalink) or ``{{short:N}}`` (``/?p=ID``), N its index in ``posts``:
    the PHP side puts the URLs in once every post has its id."""
    rng = random.Random(seed)
    used: set[str] = set()
    days = sorted(rng.randrange(DAYS) for _ in range(posts))
    stamps = [
        START + dt.timedelta(days=d, hours=rng.randint(7, 21), minutes=rng.randrange(60))
        for d in days
    ]
    cats = [(name, _slug(name), _slug(parent) if parent else None) for name, parent in CATEGORIES]
    out_posts = []
    for i, when in enumerate(stamps):
        title = _title(rng, used)
        author = rng.choice(AUTHORS)["login"]
        links = []
        if i and rng.random() < 0.65:
            for _ in range(rng.randint(1, 3)):
                target = rng.randrange(i) if rng.random() < 0.85 else rng.randrange(posts)
                if target != i:
                    kind = "short" if rng.random() < 0.1 else "post"
                    links.append(f"{{{{{kind}:{target}}}}}")
        paragraphs = [_paragraph(rng) for _ in range(rng.randint(3, 7))]
        for link in links:
            at = rng.randrange(len(paragraphs))
            paragraphs[at] = _paragraph(rng, [link])
        if rng.random() < 0.3:
            paragraphs.insert(
                2,
                "<!-- wp:heading -->\n<h2>"
                + _sentence(rng, 2, 5)[:-1]
                + "</h2>\n<!-- /wp:heading -->",
            )
        if rng.random() < 0.6:
            paragraphs.insert(1, "<!-- wp:more -->\n<!--more-->\n<!-- /wp:more -->")
        out_posts.append(
            {
                "title": title,
                "slug": _slug(title),
                "date": when.strftime("%Y-%m-%d %H:%M:%S"),
                "author": author,
                "categories": [c[1] for c in rng.sample(cats, rng.choice([1, 1, 1, 2]))],
                "tags": rng.sample(TAGS, rng.randint(0, 5)),
                "sticky": False,
                "content": "\n\n".join(paragraphs),
                "comments": _comments(rng, when, author),
            }
        )
    out_posts[rng.randrange(posts)]["sticky"] = True
    reading = sorted(rng.sample(range(posts), min(15, posts)))
    texts = {
        "about": _paragraph(rng)
        + "\n\n"
        + _paragraph(rng, ["/about/team/", f"{{{{post:{rng.randrange(posts)}}}}}"]),
        "team": "\n\n".join(
            _paragraph(rng, [f"/author/{a['login']}/"]).replace(
                "<p>", f"<p><strong>{a['name']}</strong>. ", 1
            )
            for a in AUTHORS
        ),
        "archives": '<!-- wp:archives {"showPostCounts":true} /-->\n\n'
        '<!-- wp:categories {"showPostCounts":true,"showHierarchy":true} /-->',
        "reading-list": "<!-- wp:list -->\n<ul>"
        + "".join(
            f'<li><a href="{{{{post:{i}}}}}">{out_posts[i]["title"]}</a></li>' for i in reading
        )
        + "</ul>\n<!-- /wp:list -->",
        "contact": _paragraph(rng) + "\n\n" + _paragraph(rng, ["/about/"]),
    }
    pages = [
        {"title": t, "slug": s, "parent": p, "order": o, "content": texts[s]}
        for t, s, p, o in PAGES
    ]
    return {
        "authors": AUTHORS,
        "categories": [list(c) for c in cats],
        "tags": TAGS,
        "posts": out_posts,
        "pages": pages,
    }


# --- build ------------------------------------------------------------------------------------

WP_CONFIG = r"""<?php
// tools/sites/wordpress.py: the blog in {dir}; ABSPATH is its document root (the router and the
// build scripts define it, as this file is not the package's Debian wp-config.php)
define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'wordpress' );
define( 'DB_PASSWORD', '{password}' );
define( 'DB_HOST', 'localhost:{dir}/run/mysqld.sock' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
{salts}
$table_prefix = 'wp_';
$bench_server = getenv( 'WP_SERVER' ) ?: 'http://127.0.0.1:{port}';
define( 'WP_HOME', $bench_server );
define( 'WP_SITEURL', $bench_server );
define( 'WP_DEFAULT_THEME', '{theme}' );
define( 'WP_DEBUG', false );
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_AUTO_UPDATE_CORE', false );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', '{dir}/docroot/' );
}
require_once ABSPATH . 'wp-settings.php';
"""

#: run with ABSPATH defined: WordPress's own installer (tables, options, the admin user, the
#: default post, page, privacy policy draft and widgets)
INSTALL_PHP = r"""<?php
define( 'WP_INSTALLING', true );
define( 'ABSPATH', $argv[1] . '/docroot/' );
$_SERVER['HTTP_HOST'] = parse_url( getenv( 'WP_SERVER' ), PHP_URL_HOST ) . ':' . parse_url( getenv( 'WP_SERVER' ), PHP_URL_PORT );
$_SERVER['REQUEST_URI'] = '/wp-admin/install.php';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
function wp_mail() { return true; }  // pluggable: no mail about the new blog
require ABSPATH . 'wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
$result = wp_install( 'Bench Blog', 'admin', 'admin@blog.test', 1, '', $argv[2], 'en_US' );
if ( is_wp_error( $result ) ) {
	fwrite( STDERR, $result->get_error_message() );
	exit( 1 );
}
echo json_encode( array( 'user_id' => $result['user_id'] ) ), "\n";
"""

#: run with ABSPATH defined, after INSTALL_PHP: the site's settings and the generated content
#: of the JSON file $argv[2]
POPULATE_PHP = r"""<?php
define( 'ABSPATH', $argv[1] . '/docroot/' );
define( 'WP_ADMIN', true );  // as Settings > Permalinks: taxonomies register their rewrite rules
$_SERVER['HTTP_HOST'] = parse_url( getenv( 'WP_SERVER' ), PHP_URL_HOST ) . ':' . parse_url( getenv( 'WP_SERVER' ), PHP_URL_PORT );
$_SERVER['REQUEST_URI'] = '/wp-admin/';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
function wp_mail() { return true; }
require ABSPATH . 'wp-load.php';
require_once ABSPATH . 'wp-admin/includes/admin.php';
$c = json_decode( file_get_contents( $argv[2] ), true );
$password = $argv[3];
wp_set_current_user( 1 );

// settings: what a blog's owner sets in Settings > Discussion, Reading, Permalinks
foreach ( array(
	'blogdescription'       => 'Notes from a generated blog',
	'timezone_string'       => 'UTC',
	'default_pingback_flag' => 0,  // no pingbacks sent (no network)
	'comment_moderation'    => 0,
	'comment_registration'  => 0,
	'require_name_email'    => 1,
	'thread_comments'       => 1,
	'thread_comments_depth' => 5,
	'page_comments'         => 1,
	'comments_per_page'     => 10,
	'default_comments_page' => 'newest',
	'comment_order'         => 'asc',
	'posts_per_page'        => 10,
	'show_on_front'         => 'posts',
	'fresh_site'            => 0,
) as $name => $value ) {
	update_option( $name, $value );
}
global $wp_rewrite;
$wp_rewrite->set_permalink_structure( '{permalinks}' );

// WordPress's sample post and page go; its privacy policy draft is published
wp_delete_post( 1, true );
wp_delete_post( 2, true );
wp_update_post( array( 'ID' => 3, 'post_status' => 'publish', 'post_date' => '2022-12-20 10:00:00', 'post_date_gmt' => '2022-12-20 10:00:00' ) );

$users = array();
foreach ( $c['authors'] as $i => $a ) {
	$users[ $a['login'] ] = wp_insert_user( array(
		'user_login'      => $a['login'],
		'user_pass'       => $password,
		'user_email'      => $a['login'] . '@blog.test',
		'display_name'    => $a['name'],
		'nickname'        => $a['name'],
		'first_name'      => strtok( $a['name'], ' ' ),
		'description'     => $a['bio'],
		'role'            => $i ? 'author' : 'editor',
		'user_registered' => '2022-12-0' . ( $i + 1 ) . ' 09:00:00',
	) );
}
wp_defer_term_counting( true );
wp_defer_comment_counting( true );
$cats = array();
foreach ( $c['categories'] as $i => list( $name, $slug, $parent ) ) {
	$args = array( 'slug' => $slug, 'parent' => $parent ? $cats[ $parent ] : 0 );
	if ( 0 === $i ) {
		wp_update_term( 1, 'category', $args + array( 'name' => $name ) );
		$cats[ $slug ] = 1;
	} else {
		$cats[ $slug ] = wp_insert_term( $name, 'category', $args )['term_id'];
	}
}
$ids = array();
foreach ( $c['posts'] as $p ) {
	$id = wp_insert_post( array(
		'post_type'     => 'post',
		'post_status'   => 'publish',
		'post_title'    => $p['title'],
		'post_name'     => $p['slug'],
		'post_content'  => $p['content'],
		'post_author'   => $users[ $p['author'] ],
		'post_date'     => $p['date'],
		'post_date_gmt' => $p['date'],
		'post_category' => array_map( function ( $s ) use ( $cats ) { return $cats[ $s ]; }, $p['categories'] ),
		'tags_input'    => $p['tags'],
		'comment_status' => 'open',
		'ping_status'   => 'open',
	), true );
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, $id->get_error_message() );
		exit( 1 );
	}
	$ids[] = $id;
	if ( $p['sticky'] ) {
		stick_post( $id );
	}
	$comment_ids = array();
	foreach ( $p['comments'] as $k ) {
		$user = $k['user'] ? get_userdata( $users[ $k['user'] ] ) : null;
		$comment_ids[] = wp_insert_comment( array(
			'comment_post_ID'      => $id,
			'comment_author'       => $user ? $user->display_name : $k['author'],
			'comment_author_email' => $user ? $user->user_email : $k['email'],
			'comment_author_url'   => $k['url'],
			'comment_author_IP'    => '127.0.0.1',
			'comment_content'      => $k['content'],
			'comment_date'         => $k['date'],
			'comment_date_gmt'     => $k['date'],
			'comment_parent'       => $k['parent'] >= 0 ? $comment_ids[ $k['parent'] ] : 0,
			'comment_approved'     => 1,
			'comment_agent'        => 'bench-blog',
			'user_id'              => $user ? $user->ID : 0,
		) );
	}
}
$pages = array( 'privacy-policy' => 3 );
foreach ( $c['pages'] as $p ) {
	$pages[ $p['slug'] ] = wp_insert_post( array(
		'post_type'      => 'page',
		'post_status'    => 'publish',
		'post_title'     => $p['title'],
		'post_name'      => $p['slug'],
		'post_content'   => $p['content'],
		'post_parent'    => $p['parent'] ? $pages[ $p['parent'] ] : 0,
		'menu_order'     => $p['order'],
		'post_author'    => $users['alice'],
		'post_date'      => '2022-12-2' . $p['order'] . ' 10:00:00',
		'post_date_gmt'  => '2022-12-2' . $p['order'] . ' 10:00:00',
		'comment_status' => 'closed',
		'ping_status'    => 'closed',
	), true );
}
wp_defer_term_counting( false );
wp_defer_comment_counting( false );

// links between posts: now that every post has its id (straight into the table: no revision)
global $wpdb;
$fill = function ( $m ) use ( $ids ) {
	return 'post' === $m[1] ? wp_make_link_relative( get_permalink( $ids[ (int) $m[2] ] ) ) : '/?p=' . $ids[ (int) $m[2] ];
};
foreach ( array_merge( $ids, array_values( $pages ) ) as $id ) {
	$content = get_post_field( 'post_content', $id, 'raw' );
	$filled = preg_replace_callback( '/\{\{(post|short):(\d+)\}\}/', $fill, $content );
	if ( $filled !== $content ) {
		$wpdb->update( $wpdb->posts, array( 'post_content' => $filled ), array( 'ID' => $id ) );
		clean_post_cache( $id );
	}
}

// the footer widgets (Twenty Twenty-One has one area): WordPress's default blocks and a tag cloud
$blocks = get_option( 'widget_block' );
$blocks[7] = array( 'content' => '<!-- wp:group --><div class="wp-block-group"><!-- wp:heading --><h2>Tags</h2><!-- /wp:heading --><!-- wp:tag-cloud /--></div><!-- /wp:group -->' );
update_option( 'widget_block', $blocks );
update_option( 'sidebars_widgets', array(
	'wp_inactive_widgets' => array(),
	'sidebar-1'           => array( 'block-2', 'block-3', 'block-4', 'block-5', 'block-6', 'block-7' ),
	'array_version'       => 3,
) );

// the primary menu: home and the pages
$menu = wp_create_nav_menu( 'Main' );
wp_update_nav_menu_item( $menu, 0, array( 'menu-item-title' => 'Home', 'menu-item-url' => home_url( '/' ), 'menu-item-status' => 'publish', 'menu-item-type' => 'custom' ) );
$items = array();
foreach ( $c['pages'] as $p ) {
	$items[ $p['slug'] ] = wp_update_nav_menu_item( $menu, 0, array(
		'menu-item-object-id' => $pages[ $p['slug'] ],
		'menu-item-object'    => 'page',
		'menu-item-type'      => 'post_type',
		'menu-item-status'    => 'publish',
		'menu-item-parent-id' => $p['parent'] ? $items[ $p['parent'] ] : 0,
	) );
}
set_theme_mod( 'nav_menu_locations', array( 'primary' => $menu ) );
flush_rewrite_rules( false );
echo json_encode( array( 'posts' => count( $ids ), 'pages' => count( $pages ), 'comments' => (int) wp_count_comments()->approved ) ), "\n";
"""

#: run with ABSPATH defined: every published post and page, its permalink and comment count
TRUTH_PHP = r"""<?php
define( 'ABSPATH', $argv[1] . '/docroot/' );
$_SERVER['HTTP_HOST'] = parse_url( getenv( 'WP_SERVER' ), PHP_URL_HOST ) . ':' . parse_url( getenv( 'WP_SERVER' ), PHP_URL_PORT );
$_SERVER['REQUEST_URI'] = '/';
require ABSPATH . 'wp-load.php';
$out = array();
foreach ( $wpdb->get_results( "SELECT ID, post_type, post_title, post_name, post_parent, comment_count FROM $wpdb->posts WHERE post_status = 'publish' AND post_type IN ('post', 'page') ORDER BY ID" ) as $row ) {
	$top = $row->post_type === 'post' ? (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM $wpdb->comments WHERE comment_post_ID = %d AND comment_approved = '1' AND comment_parent = 0", $row->ID ) ) : 0;
	$out[] = array(
		'id'            => (int) $row->ID,
		'type'          => $row->post_type,
		'title'         => $row->post_title,
		'url'           => get_permalink( (int) $row->ID ),
		'comments'      => (int) $row->comment_count,
		'comment_pages' => max( 1, (int) ceil( $top / 10 ) ),
	);
}
echo json_encode( $out ), "\n";
"""


def _salts(seed: int) -> str:
    names = [
        "AUTH_KEY",
        "SECURE_AUTH_KEY",
        "LOGGED_IN_KEY",
        "NONCE_KEY",
        "AUTH_SALT",
        "SECURE_AUTH_SALT",
        "LOGGED_IN_SALT",
        "NONCE_SALT",
    ]
    return "\n".join(
        f"define( '{n}', '{hashlib.sha256(f'{seed}:{n}'.encode()).hexdigest()}' );" for n in names
    )


def php(
    dir_: Path,
    script: str,
    *args: str,
    port: int = DEFAULT_PORT,
    steps: dict[str, float] | None = None,
) -> str:
    """Run one of the blog's PHP scripts (``dir_/bin/script``) with ``dir_`` and ``args`` (its
    seconds added to ``steps``)."""
    started = time.monotonic()
    env = {**os.environ, "WP_SERVER": f"http://127.0.0.1:{port}"}
    cmd = ["php", "-d", "memory_limit=1G", str(dir_ / "bin" / script), str(dir_), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(
            f"{script} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
        )
    if steps is not None:
        steps[script] = round(steps.get(script, 0.0) + time.monotonic() - started, 1)
    return out.stdout


def _docroot(dir_: Path) -> None:
    """``dir_/docroot``: the package's files as symlinks, but for ``wp-config.php`` (the blog's)
    and ``wp-content`` (the blog's: the theme a symlink, no plugins, its own uploads)."""
    root = dir_ / "docroot"
    root.mkdir()
    for entry in WP.iterdir():
        if entry.name not in ("wp-config.php", "wp-content", ".htaccess"):
            (root / entry.name).symlink_to(entry)
    for sub in ("themes", "plugins", "uploads"):
        (root / "wp-content" / sub).mkdir(parents=True)
    (root / "wp-content" / "themes" / THEME).symlink_to(WP / "wp-content" / "themes" / THEME)


def build(
    dir_: Path, seed: int = 1, posts: int = 300, port: int = DEFAULT_PORT, force: bool = False
) -> dict[str, Any]:
    """Build a blog in ``dir_`` (nothing done if one of the same seed and size is there, unless
    ``force``); returns its ``blog.json`` (what it was built from and how long it took)."""
    meta_path = dir_ / "blog.json"
    if meta_path.exists() and not force:
        meta = json.loads(meta_path.read_text())
        if meta.get("seed") == seed and meta.get("posts") == posts:
            return dict(meta)
    if missing_packages():
        raise SystemExit(
            f"missing Debian packages {missing_packages()}: run `{sys.argv[0]} install` as root"
        )
    if len(str(dir_ / "run" / "mysqld.sock")) > 100:
        raise SystemExit(f"{dir_} is too long a path for a Unix socket in it")
    started = time.monotonic()
    steps: dict[str, float] = {}
    if dir_.exists():
        shutil.rmtree(dir_)
    for sub in ("run", "bin"):
        (dir_ / sub).mkdir(parents=True)
    _docroot(dir_)
    (dir_ / "docroot" / "wp-config.php").write_text(
        WP_CONFIG.replace("{dir}", str(dir_))
        .replace("{port}", str(port))
        .replace("{password}", PASSWORD)
        .replace("{theme}", THEME)
        .replace("{salts}", _salts(seed))
    )
    (dir_ / "router.php").write_text(ROUTER.replace("{dir}", str(dir_)))
    for name, text in (
        ("install.php", INSTALL_PHP),
        ("populate.php", POPULATE_PHP.replace("{permalinks}", PERMALINKS)),
        ("truth.php", TRUTH_PHP),
    ):
        (dir_ / "bin" / name).write_text(text)
    t0 = time.monotonic()
    out = subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={dir_ / 'db'}",
            "--user=" + _user(),
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"mariadb-install-db failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    steps["mariadb-install-db"] = round(time.monotonic() - t0, 1)
    db = start_db(dir_)
    try:
        _sql(
            dir_,
            "CREATE DATABASE wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci;"
            f"CREATE USER 'wordpress'@'localhost' IDENTIFIED BY '{PASSWORD}';"
            "GRANT ALL ON wordpress.* TO 'wordpress'@'localhost';",
        )
        php(dir_, "install.php", PASSWORD, port=port, steps=steps)
        content = generate(seed, posts)
        (dir_ / "content.json").write_text(json.dumps(content))
        counts = json.loads(
            php(
                dir_,
                "populate.php",
                str(dir_ / "content.json"),
                PASSWORD,
                port=port,
                steps=steps,
            ).splitlines()[-1]
        )
    finally:
        stop_db(db)
    meta = {
        "seed": seed,
        "posts": posts,
        **{f"{k}_built": v for k, v in counts.items()},
        "built": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "build_seconds": round(time.monotonic() - started, 1),
        "steps": steps,
    }
    meta_path.write_text(json.dumps(meta, indent=1))
    return meta


# --- the database -----------------------------------------------------------------------------


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def _sock(dir_: Path) -> Path:
    return dir_ / "run" / "mysqld.sock"


def _sql(dir_: Path, sql: str) -> str:
    out = subprocess.run(
        ["mariadb", "--no-defaults", "-S", str(_sock(dir_)), "-u", "root", "-e", sql],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"mariadb: {out.stderr[-2000:]}")
    return out.stdout


def db_alive(dir_: Path) -> bool:
    return (
        subprocess.run(
            ["mariadb-admin", "--no-defaults", "-S", str(_sock(dir_)), "-u", "root", "ping"],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )


def start_db(dir_: Path) -> subprocess.Popen[bytes]:
    """Start the blog's ``mariadbd`` (its data in ``dir_/db``, its socket ``dir_/run``, no TCP,
    its own process group: stop it with :func:`stop_db`); returns once it answers."""
    if db_alive(dir_):
        raise SystemExit(f"a mariadbd already answers on {_sock(dir_)}")
    cmd = [
        MARIADBD,
        "--no-defaults",
        f"--datadir={dir_ / 'db'}",
        f"--socket={_sock(dir_)}",
        f"--pid-file={dir_ / 'run' / 'mysqld.pid'}",
        f"--log-error={dir_ / 'mariadb.log'}",
        f"--user={_user()}",
        "--skip-networking",
        "--skip-name-resolve",
        "--character-set-server=utf8mb4",
        "--innodb-buffer-pool-size=256M",
        "--innodb-flush-log-at-trx-commit=2",
        "--max-connections=200",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"mariadbd exited ({proc.returncode}): see {dir_ / 'mariadb.log'}")
        if db_alive(dir_):
            return proc
        time.sleep(0.2)
    stop_db(proc)
    raise SystemExit("mariadbd did not start answering")


def stop_db(proc: subprocess.Popen[bytes]) -> None:
    """Stop a ``mariadbd`` from :func:`start_db` (a clean shutdown: SIGTERM, up to a minute)."""
    site_tools.stop_group(proc, 60)


# --- serve ------------------------------------------------------------------------------------

ROUTER = r"""<?php
// PHP's built-in server: the blog's ABSPATH is its document root (the package's wp-load.php
// would otherwise take its own directory, and Debian's wp-config.php, which reads /etc);
// existing PHP files run, other files are served as they are, anything else is a pretty
// permalink for index.php (what the .htaccess of a WordPress site does).
define( 'ABSPATH', '{dir}/docroot/' );
$root = '{dir}/docroot';
$path = rawurldecode( parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) ?? '/' );
if ( strpos( $path, '..' ) === false && file_exists( $root . $path ) ) {
	if ( is_dir( $root . $path ) ) {
		if ( substr( $path, -1 ) !== '/' ) {
			header( 'Location: ' . $path . '/', true, 301 );
			return true;
		}
		if ( ! is_file( $root . $path . 'index.php' ) ) {
			$path = null;
		} else {
			$path .= 'index.php';
		}
	}
	if ( $path !== null && substr( $path, -4 ) !== '.php' ) {
		return false;
	}
}
if ( $path === null || ! is_file( $root . $path ) ) {
	$path = '/index.php';
}
$_SERVER['SCRIPT_NAME'] = $path;
$_SERVER['PHP_SELF'] = $path;
$_SERVER['SCRIPT_FILENAME'] = $root . $path;
chdir( dirname( $root . $path ) );
require $root . $path;
return true;
"""


@dataclass
class Server:
    """A served blog: its PHP server and its database (stop both with :func:`stop`)."""

    php: subprocess.Popen[bytes]
    db: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.php.pid


def serve(dir_: Path, port: int = DEFAULT_PORT, workers: int = 4) -> Server:
    """Start the blog's database and PHP's built-in server for it on 127.0.0.1:``port`` (each
    its own process group: stop them with :func:`stop`); returns once both answer."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise SystemExit(f"127.0.0.1:{port} is already in use")
    env = {
        **os.environ,
        "PHP_CLI_SERVER_WORKERS": str(workers),
        "WP_SERVER": f"http://127.0.0.1:{port}",
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
    db = start_db(dir_)
    log = open(dir_ / "server.log", "ab")  # noqa: SIM115 - the server's, for its lifetime
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stop_db(db)
            raise SystemExit(f"php -S exited ({proc.returncode}): see {dir_ / 'server.log'}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return Server(proc, db)
        except OSError:
            time.sleep(0.1)
    stop(Server(proc, db))
    raise SystemExit("php -S did not start listening")


def stop(server: Server) -> None:
    """Stop a blog from :func:`serve`: the PHP server (its process group: the workers too),
    then the database."""
    site_tools.stop_group(server.php, 10)
    stop_db(server.db)


def warm(urls: list[str]) -> float:
    """Fetch each page once (opcache and MariaDB's buffer pool warm, so the first crawl is not
    the slowest); returns the seconds it took."""
    from urllib.request import urlopen

    started = time.monotonic()
    for url in urls:
        with urlopen(url, timeout=60) as resp:
            resp.read()
    return time.monotonic() - started


# --- truth ------------------------------------------------------------------------------------


def truth(dir_: Path, port: int = DEFAULT_PORT) -> dict[str, Any]:
    """From the blog's own database (started for the query if it is not running): ``posts`` and
    ``pages``, each published one's id, title, permalink (on 127.0.0.1:``port``), comments and
    pages of comments."""
    db = None if db_alive(dir_) else start_db(dir_)
    try:
        rows = json.loads(php(dir_, "truth.php", port=port).splitlines()[-1])
    finally:
        if db is not None:
            stop_db(db)
    return {
        "posts": [r for r in rows if r["type"] == "post"],
        "pages": [r for r in rows if r["type"] == "page"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("install", help="apt-get install the missing Debian packages (root)")
    b = sub.add_parser("build", help="build a blog in DIR")
    b.add_argument("dir", type=Path)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--posts", type=int, default=300)
    b.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help="the site URL's port when WP_SERVER is not set",
    )
    b.add_argument("--force", action="store_true", help="rebuild even if DIR holds this blog")
    s = sub.add_parser("serve", help="serve the blog in DIR on 127.0.0.1 until interrupted")
    s.add_argument("dir", type=Path)
    s.add_argument("--port", type=int, default=DEFAULT_PORT)
    s.add_argument("--workers", type=int, default=4)
    t = sub.add_parser(
        "truth", help="print the published posts and pages of the blog in DIR (JSON)"
    )
    t.add_argument("dir", type=Path)
    t.add_argument("--port", type=int, default=DEFAULT_PORT, help="the permalinks' port")
    args = parser.parse_args(argv)
    if args.cmd == "install":
        install()
    elif args.cmd == "build":
        print(json.dumps(build(args.dir.resolve(), args.seed, args.posts, args.port, args.force)))
    elif args.cmd == "serve":
        server = serve(args.dir.resolve(), args.port, args.workers)
        print(
            f"serving http://127.0.0.1:{args.port}/ (pid {server.pid}); Ctrl-C stops",
            flush=True,
        )

        def terminate(*_: Any) -> None:
            # only a signal here: stop() waits for the server, which the main thread does
            # (Popen.wait holds a lock a handler waiting too would deadlock on)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.php.pid, signal.SIGTERM)

        signal.signal(signal.SIGTERM, terminate)  # the workers are in their own group
        with contextlib.suppress(KeyboardInterrupt):
            server.php.wait()
        stop(server)
    else:
        print(json.dumps(truth(args.dir.resolve(), args.port), indent=1))


if __name__ == "__main__":
    main()
