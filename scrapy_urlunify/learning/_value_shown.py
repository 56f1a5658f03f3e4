"""A near-duplicate page that shows the parameter value its URL differs by.

MediaWiki's edit view of a page nobody wrote (``/w/index.php?title=Talk:X&action=edit&redlink=1``)
is a large form under "Creating Talk:X": two of them are near-duplicates (docs/near_duplicates.md),
yet ``title`` names what each is. Taken for one text, a dozen of them taught the learner that
``title`` does not matter there, and five more agreed, near-duplicates too; further pages of the
set, with longer titles, were not near-duplicates of the first. A page whose body text shows
the value of a query parameter its URL has (MediaWiki's heading is outside the main text the
near-duplicate signature reads), where the page it is a near-duplicate of has another value
there, and does not show that one, is told apart by that value: for learning it is its own
text, so the value is no evidence that the parameter does not matter, and a probation sample
like it disagrees. Values are compared as a reader sees them (decoded, ``_`` and ``+`` as
spaces, case and runs of white space ignored); a value with no letter or under three characters
(``page=2``, ``print=1``) is never looked for: numbers are everywhere in a page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote_plus

from scrapy_urlunify.learning._rule_types import param_value

_SPACE = re.compile(r"\s+")


def _readable(value: str) -> str:
    return _SPACE.sub(" ", value.replace("_", " ")).strip().lower()


def shows_own_value(url: str, other: str, text: Callable[[], str]) -> bool:
    """Whether the page of ``url``, of body text ``text()`` (read only when a value is to be
    looked for), shows a value of a parameter that ``other`` (the URL, or the identifier, of
    the page it is a near-duplicate of) has with another value, and does not show that one."""
    shown = None
    for item in url.split("#", 1)[0].partition("?")[2].split("&"):
        name, eq, raw = item.partition("=")
        if not eq:
            continue
        value = _readable(unquote_plus(raw))
        if len(value) < 3 or not any(c.isalpha() for c in value):
            continue
        their = param_value(other, name.lower())
        if their is None or _readable(their) == value:
            continue
        if shown is None:
            shown = _SPACE.sub(" ", text()).lower()
        if value in shown and _readable(their) not in shown:
            return True
    return False
