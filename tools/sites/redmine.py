"""A real Redmine issue tracker on loopback, generated from a fixed seed: the tracker test site of
the crawl benchmark.

Debian's ``redmine`` package (5.0, Rails 6.1) with ``redmine-sqlite`` is the code; a *tracker* is a
directory of its own (a Rails root of symlinks to the package with its own ``config``, ``Gemfile``
and ``Gemfile.lock``, an instance directory for its database settings, secret, logs and cache, and
a SQLite database) that can be built once and served many times::

    python tools/sites/redmine.py install                   # apt-get what is missing (root)
    python tools/sites/redmine.py build /tmp/tracker --seed 1 --issues 300
    python tools/sites/redmine.py serve /tmp/tracker --port 8091
    python tools/sites/redmine.py truth /tmp/tracker         # JSON: issues, wiki pages, news

Set up as a public tracker runs: Redmine's default data (trackers Bug/Feature/Support, statuses,
roles, priorities; the Anonymous role may view issues, wiki pages and their history, news, boards,
the calendar, the gantt chart...), login not required, self-registration and lost password on,
the default theme and Textile, every project module on (issues, wiki, news, boards, documents,
files, calendar, gantt, time tracking, repository).

The content comes from ``random.Random(seed)``: 4 public projects, 6 users (members of all
projects), 3-4 categories and 3 versions per project, ``--issues`` issues (trackers, priorities,
categories, versions, assignees, some subtasks and relations, descriptions referring to earlier
issues and the project's wiki pages) with 1-6 journal entries each (notes, status changes,
reassignments, done ratios), a wiki per project of 12 pages (its start page ``Wiki`` among them,
some pages children of others) with 2-6 versions each, 3 news per project with comments, and a
board per project with a few threads. It is inserted with ONE ``rails runner`` script reading a
generated JSON file through Redmine's own models (``Issue#init_journal``, ``WikiContent`` saves,
which make the versions); creation dates are the generated ones (2025-01-01 and the 540 days
after), so ids, URLs and dates are the same for a seed.

Served by Debian's ``puma`` (``bundle exec puma``, production environment, ``--workers``
threads, one process, static files served by Rails) on 127.0.0.1: one process group, started and
stopped by the benchmark, no root needed to serve, no daemon configured in ``/etc``. ``install``
answers dbconfig-common's question with no (the package makes no database of its own), so the
package's only trace outside ``/usr`` is its default instance's unused configuration.
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
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import site_tools  # tools/sites: beside this script

REDMINE = Path("/usr/share/redmine")
PACKAGES = ["redmine", "redmine-sqlite", "puma"]
DEFAULT_PORT = 8091
PASSWORD = "bench-tracker-password-0"  # loopback only; the users exist so work is attributed
START = dt.datetime(2025, 1, 1, 9, 0)
DAYS = 540
#: the issue trackers, statuses and priorities of Redmine's default data (English)
TRACKERS = ["Bug", "Feature", "Support"]
PRIORITIES = ["Low", "Normal", "Normal", "Normal", "High", "Urgent", "Immediate"]
#: status walks of an issue's journal entries (the first is the issue's own "New")
STATUS_WALKS = [
    ["In Progress", "Resolved", "Closed"],
    ["In Progress", "Feedback", "In Progress", "Resolved"],
    ["Feedback", "Closed"],
    ["Rejected"],
    ["In Progress"],
    ["Resolved", "Closed"],
    [],
]


def _words(text: str) -> list[str]:
    return text.split()


PROJECTS = [
    ("Harbor", "harbor", "A scheduler for ships, berths and cranes."),
    ("Lantern", "lantern", "The lighting controller firmware and its web console."),
    ("Orchard", "orchard", "Inventory and harvest planning for fruit growers."),
    ("Compass", "compass", "Route planning library and command-line tools."),
]
USERS = [
    ("alice", "Alice", "Archer"),
    ("bob", "Bob", "Brennan"),
    ("carol", "Carol", "Chen"),
    ("dave", "Dave", "Dunmore"),
    ("erin", "Erin", "Ekwueme"),
    ("frank", "Frank", "Fischer"),
]
CATEGORIES = _words("Backend Frontend Documentation Packaging Performance Security Database UI")
VERSIONS = ["0.9", "1.0", "1.1"]
COMPONENTS = _words("""scheduler parser exporter importer login dashboard report calendar
sync cache queue config installer updater printer search index API CLI logger""")
PROBLEMS = [
    "{C} crashes when {W} is empty",
    "{C} ignores the {W} setting",
    "Slow {C} with many {W}s",
    "Add {W} support to the {C}",
    "{C}: wrong {W} after restart",
    "Allow sorting {W}s in the {C}",
    "Document the {C} {W} option",
    "{C} shows a blank page for {W}",
    "Export {W}s from the {C}",
    "Cannot save {W} in the {C}",
    "Translate the {C} {W} labels",
    "{C} leaks memory on {W} reload",
]
THINGS = _words("""berth crane ship lamp schedule route tree crop field timezone date unicode
filter column user group token file folder port report image label""")
WIKI_TITLES = _words("""Installation Configuration Release_notes Roadmap FAQ Architecture
Coding_style Testing Deployment Glossary Meeting_notes Troubleshooting Upgrading Security_policy
Contributing Design_decisions""")
WORDS = _words("""the a of and in to is for on by with as at from that which it this an be are
has also first then later we our small large old new some many long short good better time way
thing people build test release patch fix change bug feature user page server client file
config option value error warning log database query index cache request response version
branch merge review docs after before again often still really quite together""")


# --- install ----------------------------------------------------------------------------------


def missing_packages() -> list[str]:
    return site_tools.missing_packages(PACKAGES)


def install() -> None:
    """``apt-get install`` the Debian packages that are missing (dbconfig-common told not to set
    up a database for the package's default instance: the trackers have their own)."""
    if missing_packages():
        subprocess.run(
            ["debconf-set-selections"],
            input="redmine redmine/dbconfig-install boolean false\n"
            "redmine redmine/instances/default/dbconfig-install boolean false\n",
            text=True,
            check=True,
        )
    site_tools.install(PACKAGES, "redmine")


# --- content ----------------------------------------------------------------------------------


def _sentence(rng: random.Random, lo: int = 6, hi: int = 16) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))
    return text[0].upper() + text[1:] + rng.choice([".", ".", ".", "!", "?"])


def _paragraph(rng: random.Random, refs: list[str] | None = None) -> str:
    sentences = [_sentence(rng) for _ in range(rng.randint(2, 5))]
    for ref in refs or []:
        at = rng.randrange(len(sentences))
        sentences[at] = sentences[at][:-1] + f" (see {ref})" + sentences[at][-1]
    return " ".join(sentences)


def _when(day: float) -> str:
    return (START + dt.timedelta(days=day)).strftime("%Y-%m-%d %H:%M:%S")


def _wiki_ref(title: str) -> str:
    return f"[[{title.replace('_', ' ')}]]"


def generate(seed: int, issues: int) -> dict[str, Any]:
    """The tracker's content: ``{"users", "projects": [{name, identifier, description,
    categories, versions: [[name, date]], wiki: [{title, parent, versions: [{author, date,
    comments, text}]}], news: [{author, date, title, summary, text, comments}], board: [{author,
    date, subject, text, replies}]}], "issues": [{...}]}``, issues in id order (the ``N`` of
    ``#N`` references), each with its journal entries."""
    rng = random.Random(seed)
    logins = [u[0] for u in USERS]
    projects: list[dict[str, Any]] = []
    for name, ident, description in PROJECTS:
        titles = ["Wiki", *rng.sample(WIKI_TITLES, 11)]
        projects.append(
            {
                "name": name,
                "identifier": ident,
                "description": description,
                "categories": rng.sample(CATEGORIES, rng.randint(3, 4)),
                "versions": [
                    [v, _when(120 + 180 * i + rng.randrange(30))] for i, v in enumerate(VERSIONS)
                ],
                "titles": titles,
            }
        )
    # issues: created in date order (ids follow), in projects weighted 4:3:2:1
    days = sorted(rng.uniform(0, DAYS - 60) for _ in range(issues))
    out_issues: list[dict[str, Any]] = []
    used: set[str] = set()
    for i, day in enumerate(days):
        p = rng.choices(range(len(projects)), weights=[4, 3, 2, 1])[0]
        project = projects[p]
        while True:
            subject = rng.choice(PROBLEMS).format(C=rng.choice(COMPONENTS), W=rng.choice(THINGS))
            subject = subject[0].upper() + subject[1:]
            if subject not in used:
                used.add(subject)
                break
        refs = []
        if i and rng.random() < 0.4:
            refs.append(f"#{rng.randrange(i) + 1}")
        if rng.random() < 0.3:
            refs.append(_wiki_ref(rng.choice(project["titles"])))
        same = [j for j in range(i) if out_issues[j]["project"] == p]
        journals = []
        when = day
        walk = list(rng.choice(STATUS_WALKS))
        for _ in range(rng.randint(1, 6)):
            when += rng.uniform(0.05, 6)
            entry: dict[str, Any] = {"author": rng.choice(logins), "date": _when(when)}
            if rng.random() < 0.7 or not walk:
                note_refs = [f"#{rng.randrange(i) + 1}"] if i and rng.random() < 0.15 else []
                entry["notes"] = _paragraph(rng, note_refs)
            if walk and rng.random() < 0.6:
                entry["status"] = walk.pop(0)
            if rng.random() < 0.2:
                entry["assigned_to"] = rng.choice(logins)
            if rng.random() < 0.25:
                entry["done_ratio"] = rng.choice([10, 30, 50, 80, 100])
            if "notes" not in entry and len(entry) == 2:
                entry["notes"] = _sentence(rng)
            journals.append(entry)
        out_issues.append(
            {
                "project": p,
                "tracker": rng.choice(TRACKERS),
                "subject": subject,
                "description": "\n\n".join(
                    [_paragraph(rng, refs)] + [_paragraph(rng) for _ in range(rng.randint(0, 2))]
                ),
                "author": rng.choice(logins),
                "priority": rng.choice(PRIORITIES),
                "category": rng.choice(project["categories"]) if rng.random() < 0.7 else None,
                "version": rng.randrange(len(VERSIONS)) if rng.random() < 0.5 else None,
                "assigned_to": rng.choice(logins) if rng.random() < 0.6 else None,
                "parent": rng.choice(same) + 1 if same and rng.random() < 0.06 else None,
                "relates": rng.choice(same) + 1 if same and rng.random() < 0.1 else None,
                "date": _when(day),
                "journals": journals,
            }
        )
    for p, project in enumerate(projects):
        mine = [i + 1 for i, issue in enumerate(out_issues) if issue["project"] == p]
        titles = project.pop("titles")
        wiki = []
        for k, title in enumerate(titles):
            others = [t for t in titles if t != title]
            when = rng.uniform(0, DAYS - 120)
            versions = []
            for v in range(rng.randint(2, 6)):
                when += rng.uniform(0.5, 20)
                refs = [_wiki_ref(t) for t in rng.sample(others, 2 if title == "Wiki" else 1)]
                if mine and rng.random() < 0.5:
                    refs.append(f"#{rng.choice(mine)}")
                sections = [f"h1. {title.replace('_', ' ')}", _paragraph(rng, refs)]
                if title == "Wiki":
                    sections.append("\n".join(f"* {_wiki_ref(t)}" for t in others[: 4 + v]))
                for _ in range(rng.randint(1, 3)):
                    sections.append(f"h2. {_sentence(rng, 2, 4)[:-1]}")
                    sections.append(_paragraph(rng))
                versions.append(
                    {
                        "author": rng.choice(logins),
                        "date": _when(when),
                        "comments": _sentence(rng, 2, 6)[:-1] if rng.random() < 0.6 else "",
                        "text": "\n\n".join(sections),
                    }
                )
            parent = titles[rng.randrange(1, k)] if k > 2 and rng.random() < 0.3 else None
            wiki.append({"title": title, "parent": parent, "versions": versions})
        project["wiki"] = wiki
        project["news"] = []
        for k in range(3):
            when = rng.uniform(30, DAYS - 30)
            project["news"].append(
                {
                    "author": rng.choice(logins),
                    "date": _when(when),
                    "title": f"{project['name']} {rng.choice(['release', 'update', 'notice'])}"
                    f" {k + 1}: {_sentence(rng, 2, 4)[:-1].lower()}",
                    "summary": _sentence(rng),
                    "text": _paragraph(rng, [f"#{rng.choice(mine)}"] if mine else None),
                    "comments": [
                        {
                            "author": rng.choice(logins),
                            "date": _when(when + c + 1),
                            "text": _sentence(rng),
                        }
                        for c in range(rng.randint(0, 3))
                    ],
                }
            )
        project["board"] = []
        for _ in range(rng.randint(3, 5)):
            when = rng.uniform(10, DAYS - 30)
            project["board"].append(
                {
                    "author": rng.choice(logins),
                    "date": _when(when),
                    "subject": _sentence(rng, 3, 6)[:-1],
                    "text": _paragraph(rng),
                    "replies": [
                        {
                            "author": rng.choice(logins),
                            "date": _when(when + r + 0.5),
                            "text": _paragraph(rng),
                        }
                        for r in range(rng.randint(0, 4))
                    ],
                }
            )
    return {
        "start": _when(0),
        "users": [{"login": u, "firstname": f, "lastname": last} for u, f, last in USERS],
        "projects": projects,
        "issues": out_issues,
    }


# --- the Ruby side ----------------------------------------------------------------------------

#: ``rails runner`` script: settings, users, projects and the generated content (ARGV[0]: the
#: JSON file, ARGV[1]: the users' password, ARGV[2]: the host name); prints counts as JSON.
POPULATE_RB = r"""
require 'json'
data = JSON.parse(File.read(ARGV[0]))
password = ARGV[1]
stamp = lambda { |s| Time.zone.parse(s) }
# save an issue on a generated date: its journal entry, and those Redmine adds to its parent
# (a subtask's change recalculates the parent), are stamped with it
save_on = lambda do |issue, date|
  before = Journal.maximum(:id) || 0
  issue.save!
  Journal.where('id > ?', before).update_all(created_on: stamp.(date))
end

Setting.app_title = 'Bench Tracker'
Setting.welcome_text = "Welcome to the *Bench Tracker*. Projects: " +
  data['projects'].map { |p| "\"#{p['name']}\":/projects/#{p['identifier']}" }.join(', ') + '.'
Setting.host_name = ARGV[2]
Setting.protocol = 'http'
Setting.login_required = '0'
Setting.self_registration = '2'
Setting.lost_password = '1'
Setting.default_language = 'en'
Setting.text_formatting = 'textile'
Setting.notified_events = []
Setting.default_projects_public = '1'
Setting.gravatar_enabled = '0'

# what a public tracker shows anyone: the default data's view permissions, and the wiki's exports
[Role.anonymous, Role.non_member].each do |role|
  role.update!(users_visibility: 'all', issues_visibility: 'all')
  role.add_permission!(:export_wiki_pages)
end
developer = Role.find_by!(name: 'Developer')
manager = Role.find_by!(name: 'Manager')

users = {}
data['users'].each do |u|
  user = User.new(firstname: u['firstname'], lastname: u['lastname'],
                  mail: "#{u['login']}@example.com", language: 'en')
  user.login = u['login']
  user.password = password
  user.password_confirmation = password
  user.mail_notification = 'none'
  user.status = User::STATUS_ACTIVE
  user.save!
  users[u['login']] = user
end
user_list = users.values

trackers = Tracker.sorted.to_a
statuses = IssueStatus.all.index_by(&:name)
priorities = IssuePriority.all.index_by(&:name)
projects = []
data['projects'].each_with_index do |p, k|
  project = Project.new(name: p['name'], identifier: p['identifier'],
                        description: p['description'], is_public: true)
  project.enabled_module_names = Redmine::AccessControl.available_project_modules.map(&:to_s)
  project.trackers = trackers
  project.save!
  user_list.each_with_index do |user, u|
    Member.create!(project: project, user: user, role_ids: [(u == k ? manager : developer).id])
  end
  cats = p['categories'].map { |c| [c, IssueCategory.create!(project: project, name: c)] }.to_h
  versions = p['versions'].map do |name, date|
    Version.create!(project: project, name: name, status: 'open', effective_date: stamp.(date).to_date)
  end
  projects << { record: project.reload, categories: cats, versions: versions, data: p }
end

data['issues'].each_with_index do |d, n|
  pr = projects[d['project']]
  User.current = users[d['author']]
  issue = Issue.new(project: pr[:record], tracker: trackers.find { |t| t.name == d['tracker'] },
                    subject: d['subject'], description: d['description'],
                    author: users[d['author']], priority: priorities.fetch(d['priority']),
                    status: statuses.fetch('New'))
  issue.category = pr[:categories][d['category']] if d['category']
  issue.fixed_version = pr[:versions][d['version']] if d['version']
  issue.assigned_to = users[d['assigned_to']] if d['assigned_to']
  # a subtask of an open issue only (Redmine refuses an open one under a closed parent)
  issue.parent_issue_id = d['parent'] if d['parent'] && !Issue.find(d['parent']).closed?
  issue.start_date = stamp.(d['date']).to_date
  save_on.(issue, d['date'])
  raise "issue #{n + 1} got id #{issue.id}" if issue.id != n + 1
  issue.update_columns(created_on: stamp.(d['date']), updated_on: stamp.(d['date']))
  if d['relates']
    IssueRelation.create!(issue_from: Issue.find(d['relates']), issue_to: issue,
                          relation_type: 'relates')
  end
  d['journals'].each do |j|
    issue = Issue.find(issue.id)
    User.current = users[j['author']]
    issue.init_journal(users[j['author']], j['notes'] || '')
    issue.status = statuses.fetch(j['status']) if j['status']
    issue.assigned_to = users[j['assigned_to']] if j['assigned_to']
    issue.done_ratio = j['done_ratio'] if j['done_ratio']
    save_on.(issue, j['date'])
    issue.update_columns(updated_on: stamp.(j['date']))
    issue.update_columns(closed_on: stamp.(j['date'])) if j['status'] && issue.closed?
  end
end

projects.each do |pr|
  project = pr[:record]
  wiki = project.wiki || Wiki.create!(project: project, start_page: 'Wiki')
  pages = {}
  pr[:data]['wiki'].each do |w|
    first = w['versions'][0]
    page = WikiPage.new(wiki: wiki, title: w['title'])
    page.parent = pages[w['parent']] if w['parent']
    page.content = WikiContent.new(text: first['text'], author: users[first['author']],
                                   comments: first['comments'])
    page.save!
    page.update_columns(created_on: stamp.(first['date']))
    w['versions'][1..].each do |v|
      content = WikiContent.find(page.content.id)
      content.text = v['text']
      content.author = users[v['author']]
      content.comments = v['comments']
      content.save!
    end
    content = WikiContent.find(page.content.id)
    content.versions.order(:version).each_with_index do |version, k|
      version.update_columns(updated_on: stamp.(w['versions'][k]['date']))
    end
    content.update_columns(updated_on: stamp.(w['versions'][-1]['date']))
    pages[w['title']] = page
  end
  pr[:data]['news'].each do |nw|
    news = News.new(project: project, author: users[nw['author']], title: nw['title'],
                    summary: nw['summary'], description: nw['text'])
    news.save!
    news.update_columns(created_on: stamp.(nw['date']))
    nw['comments'].each do |c|
      comment = Comment.new(commented: news, author: users[c['author']], content: c['text'])
      comment.save!
      comment.update_columns(created_on: stamp.(c['date']), updated_on: stamp.(c['date']))
    end
  end
  board = Board.create!(project: project, name: 'General discussion',
                        description: "Questions and ideas about #{project.name}")
  pr[:data]['board'].each do |t|
    topic = Message.new(board: board, author: users[t['author']], subject: t['subject'],
                        content: t['text'])
    topic.save!
    topic.update_columns(created_on: stamp.(t['date']), updated_on: stamp.(t['date']))
    t['replies'].each do |r|
      reply = Message.new(board: board, author: users[r['author']], subject: "RE: #{t['subject']}",
                          content: r['text'], parent: topic)
      reply.save!
      reply.update_columns(created_on: stamp.(r['date']), updated_on: stamp.(r['date']))
    end
  end
end

# what saving stamped with the build's clock: a parent's update (its subtasks recalculated), the
# projects', users', memberships' and versions' own dates
Issue.find_each do |issue|
  issue.update_columns(updated_on: issue.journals.maximum(:created_on) || issue.created_on)
end
start = stamp.(data['start'])
Project.update_all(created_on: start, updated_on: start)
Principal.update_all(created_on: start, updated_on: start)  # users, groups, Anonymous
Member.update_all(created_on: start)
Version.update_all(created_on: start, updated_on: start)

puts JSON.generate(users: users.size, projects: projects.size, issues: Issue.count,
                   journals: Journal.count, wiki_pages: WikiPage.count,
                   wiki_versions: WikiContentVersion.count, news: News.count,
                   messages: Message.count)
"""


def _rails_root(dir_: Path) -> Path:
    return dir_ / "redmine"


def _env(dir_: Path) -> dict[str, str]:
    root = _rails_root(dir_)
    return {
        **os.environ,
        "RAILS_ENV": "production",
        "REDMINE_INSTANCE": "default",
        "BUNDLE_GEMFILE": str(root / "Gemfile"),
        "RAILS_SERVE_STATIC_FILES": "1",
        "RUBYOPT": "-W0",  # the package's lib/ is loaded through a symlink too: constant warnings
    }


def _run(
    dir_: Path, cmd: list[str], name: str, steps: dict[str, float] | None = None, **env: str
) -> str:
    """Run ``cmd`` in the tracker's Rails root (its seconds added to ``steps[name]``)."""
    started = time.monotonic()
    out = subprocess.run(
        cmd,
        cwd=_rails_root(dir_),
        capture_output=True,
        text=True,
        env={**_env(dir_), **env},
        check=False,
    )
    if out.returncode != 0:
        # a Ruby error is its first line; the backtrace after it is long
        error = "\n".join(
            line for line in out.stderr.splitlines() if not line.lstrip().startswith("from ")
        )
        raise SystemExit(
            f"{name} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{error[-3000:]}"
        )
    if steps is not None:
        steps[name] = round(steps.get(name, 0.0) + time.monotonic() - started, 1)
    return out.stdout


def _rails_tree(dir_: Path, seed: int) -> None:
    """``dir_/redmine``: a Rails root of symlinks to the package (``app``, ``lib``, ``public``,
    ``db/migrate``...), but for its own copy of ``config`` (so ``Rails.root`` is this directory),
    its ``Gemfile`` (the package's, with the database adapters read from this tracker's
    ``database.yml``, and ``puma``), and ``instances/default``: the tracker's database settings,
    secret, files, logs and cache."""
    root = _rails_root(dir_)
    (root / "db").mkdir(parents=True)
    for entry in ("app", "lib", "public", "extra", "bin", "Rakefile", "config.ru"):
        (root / entry).symlink_to(REDMINE / entry)
    (root / "db" / "migrate").symlink_to(REDMINE / "db" / "migrate")
    shutil.copytree(REDMINE / "config", root / "config", symlinks=True)
    (root / "config" / "database.yml").unlink()
    gemfile = (REDMINE / "Gemfile").read_text()
    glob = "/usr/share/redmine/{config,instances/*/config}/database.yml"
    if glob not in gemfile:
        raise SystemExit(f"{REDMINE / 'Gemfile'}: no {glob} to point at this tracker")
    (root / "Gemfile").write_text(
        gemfile.replace(glob, f"{root}/{{config,instances/*/config}}/database.yml")
    )
    (root / "Gemfile.local").write_text("gem 'puma'\n")
    instance = root / "instances" / "default"
    for sub in ("config", "files", "log", "tmp", "public/plugin_assets"):
        (instance / sub).mkdir(parents=True)
    (instance / "config" / "database.yml").write_text(
        "production:\n  adapter: sqlite3\n"
        f"  database: {dir_ / 'redmine.sqlite3'}\n  timeout: 10000\n  pool: 16\n"
    )
    (instance / "config" / "secret_key.txt").write_text(
        hashlib.sha256(f"bench-tracker:{seed}".encode()).hexdigest() + "\n"
    )


def build(
    dir_: Path, seed: int = 1, issues: int = 300, port: int = DEFAULT_PORT, force: bool = False
) -> dict[str, Any]:
    """Build a tracker in ``dir_`` (nothing done if one of the same seed and size is there,
    unless ``force``); returns its ``tracker.json`` (what it was built from, what the database
    holds and how long it took)."""
    meta_path = dir_ / "tracker.json"
    if meta_path.exists() and not force:
        meta = json.loads(meta_path.read_text())
        if meta.get("seed") == seed and meta.get("issues") == issues:
            return dict(meta)
    if missing_packages():
        raise SystemExit(
            f"missing Debian packages {missing_packages()}: run `{sys.argv[0]} install` as root"
        )
    started = time.monotonic()
    steps: dict[str, float] = {}
    if dir_.exists():
        shutil.rmtree(dir_)
    dir_.mkdir(parents=True)
    _rails_tree(dir_, seed)
    _run(dir_, ["bundle", "lock", "--local"], "bundle lock", steps)
    _run(dir_, ["bundle", "exec", "rake", "db:migrate"], "db:migrate", steps)
    _run(
        dir_,
        ["bundle", "exec", "rake", "redmine:load_default_data"],
        "load_default_data",
        steps,
        REDMINE_LANG="en",
    )
    content = generate(seed, issues)
    (dir_ / "content.json").write_text(json.dumps(content))
    (dir_ / "populate.rb").write_text(POPULATE_RB)
    out = _run(
        dir_,
        [
            "bundle",
            "exec",
            "rails",
            "runner",
            str(dir_ / "populate.rb"),
            str(dir_ / "content.json"),
            PASSWORD,
            f"127.0.0.1:{port}",
        ],
        "populate",
        steps,
    )
    counts = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
    meta = {
        "seed": seed,
        "issues": issues,
        **{f"{k}_built": v for k, v in counts.items()},
        "built": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "build_seconds": round(time.monotonic() - started, 1),
        "steps": steps,
    }
    meta_path.write_text(json.dumps(meta, indent=1))
    return meta


# --- serve ------------------------------------------------------------------------------------


def serve(dir_: Path, port: int = DEFAULT_PORT, workers: int = 4) -> subprocess.Popen[bytes]:
    """Start puma for the tracker on 127.0.0.1:``port`` with ``workers`` threads (one process,
    its own process group: stop it with :func:`stop`); returns once it answers HTTP."""
    from urllib.request import urlopen

    if not (dir_ / "tracker.json").exists():
        raise SystemExit(f"no tracker in {dir_}: build it first")
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise SystemExit(f"127.0.0.1:{port} is already in use")
    cmd = [
        "bundle",
        "exec",
        "puma",
        "--environment",
        "production",
        "--bind",
        f"tcp://127.0.0.1:{port}",
        "--threads",
        f"{workers}:{workers}",
        "config.ru",
    ]
    log = open(dir_ / "server.log", "ab")  # noqa: SIM115 - the server's, for its lifetime
    proc = subprocess.Popen(
        cmd,
        cwd=_rails_root(dir_),
        env=_env(dir_),
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"puma exited ({proc.returncode}): see {dir_ / 'server.log'}")
        try:
            with urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
                resp.read()
            return proc
        except OSError:
            time.sleep(0.3)
    stop(proc)
    raise SystemExit("puma did not start answering")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a tracker from :func:`serve` (its process group: SIGTERM, SIGKILL after 20 s)."""
    site_tools.stop_group(proc, 20)


def warm(urls: list[str]) -> float:
    """Fetch each page once (Rails' view caches and SQLite's pages warm, so the first crawl is
    not the slowest); returns the seconds it took."""
    from urllib.request import urlopen

    started = time.monotonic()
    for url in urls:
        with urlopen(url, timeout=60) as resp:
            resp.read()
    return time.monotonic() - started


# --- truth ------------------------------------------------------------------------------------


def truth(dir_: Path, port: int = DEFAULT_PORT) -> dict[str, Any]:
    """From the tracker's own database: ``issues`` (id, subject, project, tracker, journal
    entries), ``wiki_pages`` (id, project, title, versions) and ``news`` (id, project, title),
    each with its URL on 127.0.0.1:``port`` and ``key``: the content id the benchmark's spider
    derives from a page showing it (``issue:N``, ``wiki:<project>:<Title>``, ``news:<title>``)."""
    base = f"http://127.0.0.1:{port}"
    db = sqlite3.connect(f"file:{dir_ / 'redmine.sqlite3'}?mode=ro", uri=True)
    try:
        issues = [
            {
                "key": f"issue:{i}",
                "id": i,
                "subject": subject,
                "project": project,
                "tracker": tracker,
                "journals": journals,
                "url": f"{base}/issues/{i}",
            }
            for i, subject, project, tracker, journals in db.execute(
                "SELECT i.id, i.subject, p.identifier, t.name,"
                " (SELECT COUNT(*) FROM journals j WHERE j.journalized_type = 'Issue'"
                "  AND j.journalized_id = i.id)"
                " FROM issues i JOIN projects p ON p.id = i.project_id"
                " JOIN trackers t ON t.id = i.tracker_id WHERE p.is_public = 1 ORDER BY i.id"
            )
        ]
        pages = [
            {
                "key": f"wiki:{project}:{title}",
                "id": i,
                "project": project,
                "title": title,
                "versions": versions,
                "url": f"{base}/projects/{project}/wiki/{title}",
            }
            for i, project, title, versions in db.execute(
                "SELECT w.id, p.identifier, w.title,"
                " (SELECT COUNT(*) FROM wiki_content_versions v JOIN wiki_contents c"
                "  ON c.id = v.wiki_content_id WHERE c.page_id = w.id)"
                " FROM wiki_pages w JOIN wikis k ON k.id = w.wiki_id"
                " JOIN projects p ON p.id = k.project_id WHERE p.is_public = 1 ORDER BY w.id"
            )
        ]
        news = [
            {
                "key": f"news:{title}",
                "id": i,
                "project": project,
                "title": title,
                "url": f"{base}/news/{i}",
            }
            for i, project, title in db.execute(
                "SELECT n.id, p.identifier, n.title FROM news n"
                " JOIN projects p ON p.id = n.project_id WHERE p.is_public = 1 ORDER BY n.id"
            )
        ]
    finally:
        db.close()
    return {"issues": issues, "wiki_pages": pages, "news": news}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("install", help="apt-get install the missing Debian packages (root)")
    b = sub.add_parser("build", help="build a tracker in DIR")
    b.add_argument("dir", type=Path)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--issues", type=int, default=300)
    b.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="the port of Redmine's host name setting"
    )
    b.add_argument("--force", action="store_true", help="rebuild even if DIR holds this tracker")
    s = sub.add_parser("serve", help="serve the tracker in DIR on 127.0.0.1 until interrupted")
    s.add_argument("dir", type=Path)
    s.add_argument("--port", type=int, default=DEFAULT_PORT)
    s.add_argument("--workers", type=int, default=4, help="puma threads")
    t = sub.add_parser(
        "truth", help="print the issues, wiki pages and news of the tracker in DIR (JSON)"
    )
    t.add_argument("dir", type=Path)
    t.add_argument("--port", type=int, default=DEFAULT_PORT, help="the URLs' port")
    args = parser.parse_args(argv)
    if args.cmd == "install":
        install()
    elif args.cmd == "build":
        print(json.dumps(build(args.dir.resolve(), args.seed, args.issues, args.port, args.force)))
    elif args.cmd == "serve":
        proc = serve(args.dir.resolve(), args.port, args.workers)
        print(f"serving http://127.0.0.1:{args.port}/ (pid {proc.pid}); Ctrl-C stops", flush=True)

        def terminate(*_: Any) -> None:
            # only a signal here: stop() waits for the server, which the main thread does
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)

        signal.signal(signal.SIGTERM, terminate)
        with contextlib.suppress(KeyboardInterrupt):
            proc.wait()
        stop(proc)
    else:
        print(json.dumps(truth(args.dir.resolve(), args.port), indent=1))


if __name__ == "__main__":
    main()
