"""Reference pages generated from the package at build time, so that they cannot drift from it.

``{urlunify-settings} integration`` / ``{urlunify-settings} policy``: one section per setting of
:data:`scrapy_urlunify.integration.settings.SETTINGS` (the one table every component reads its
settings through), with its default, the values it takes and its doc. A setting without a doc,
or of a kind this page does not know how to describe, stops the build: the table is the
reference, so it must say everything the page shows.

``{urlunify-cli-help}``: the ``--help`` text of ``urlunify`` and of each of its commands, from
the parser the console script runs.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import sys
import textwrap
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

GROUPS = ("integration", "policy")

#: what each kind of setting takes, as a reader would write it in settings.py
VALUES = {
    "bool": "a boolean",
    "number": "a number of seconds",
    "int": "an integer",
    "choice": "one of {choices}",
    "store": '"memory", or a redis://, rediss:// or unix:// URL',
    "key_template": "a string holding %(scope)s",
    "field": "an item field name",
    "optional_field": "an item field name, or None",
    "policy:str": "a string",
    "policy:params": "a list of names or globs, or a dict {host: [names]} (the host and its subdomains)",
    "policy:forms": 'a dict {host: {source form: target form}}, e.g. {"shop.test": {"/shop/*/{slug}": "/product/{slug}"}}',
    "policy:groups": 'a list of groups of hosts, e.g. [["site.com", "site.net"]]',
    "policy:bool_or_list": "a boolean, or a list of the crawl's sites",
    "policy:list": "a list of strings",
    "policy:bool": "a boolean",
    "policy:int": "an integer",
}

#: a default longer than this is shown as a block rather than inline
INLINE_WIDTH = 60


def literal(value: Any) -> str:
    """``value`` as it would be written in a project's settings.py."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def describe_value(setting: Any) -> str:
    if setting.kind not in VALUES:
        raise ExtensionError(
            f"{setting.name}: kind {setting.kind!r} is not described in docs/_ext/urlunify_reference.py VALUES"
        )
    if setting.kind == "choice" and not setting.choices:
        raise ExtensionError(f"{setting.name}: a choice setting without choices")
    text = VALUES[setting.kind].replace("{choices}", ", ".join(literal(c) for c in setting.choices))
    if setting.minimum is not None:
        text += f", at least {setting.minimum:g}"
    return text


def field(label: str, *body: nodes.Node) -> nodes.paragraph:
    return nodes.paragraph("", "", nodes.strong(text=label + ":"), nodes.Text(" "), *body)


def setting_section(setting: Any, document: Any) -> nodes.section:
    doc = (setting.doc or "").strip()
    if not doc:
        raise ExtensionError(
            f"{setting.name} has no doc in scrapy_urlunify.integration.settings.SETTINGS"
        )
    section = nodes.section(
        ids=[nodes.make_id(setting.name)], names=[nodes.fully_normalize_name(setting.name)]
    )
    section += nodes.title("", "", nodes.literal(text=setting.name))
    document.note_implicit_target(section, section)
    section += nodes.paragraph(text=doc)
    default = literal(setting.default)
    if len(default) <= INLINE_WIDTH:
        section += field("Default", nodes.literal(text=default))
    else:
        section += field("Default", nodes.Text(""))
        wrapped = textwrap.fill(default, width=88, subsequent_indent=" ", break_on_hyphens=False)
        section += nodes.literal_block(wrapped, wrapped, language="python")
    section += field("Value", nodes.Text(describe_value(setting)))
    if setting.field is not None:
        section += field("Policy field", nodes.literal(text=setting.field))
    return section


class SettingsDirective(SphinxDirective):
    """The settings of one group, in the table's order."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        from scrapy_urlunify.integration.settings import SETTINGS

        # the page is rebuilt when the table (or the policy defaults it reads) changes
        for module in ("scrapy_urlunify.integration.settings", "scrapy_urlunify.core._policy"):
            self.env.note_dependency(inspect.getfile(sys.modules[module]))
        group = self.arguments[0]
        if group not in GROUPS:
            raise self.error(f"group must be one of {GROUPS}, not {group!r}")
        wanted = [s for s in SETTINGS.values() if (s.field is not None) == (group == "policy")]
        if not wanted:
            raise ExtensionError(f"no {group} settings in SETTINGS")
        return [setting_section(s, self.state.document) for s in wanted]


def help_text(args: list[str]) -> str:
    """What ``urlunify ARGS --help`` prints, at a fixed width so the page does not depend on the
    terminal the docs were built in."""
    from scrapy_urlunify.cli._main import build_parser

    out = io.StringIO()
    width = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            build_parser().parse_args([*args, "--help"])
    finally:
        if width is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = width
    text = out.getvalue()
    if not text.strip():
        raise ExtensionError(f"urlunify {' '.join(args)} --help printed nothing")
    return text


class CliHelpDirective(SphinxDirective):
    """``urlunify [COMMAND] --help``; the argument is the command (none: the top level)."""

    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        import scrapy_urlunify.cli._main as main

        self.env.note_dependency(inspect.getfile(main))
        text = help_text(self.arguments[:1])
        block = nodes.literal_block(text, text, language="text")
        return [block]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("urlunify-settings", SettingsDirective)
    app.add_directive("urlunify-cli-help", CliHelpDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
