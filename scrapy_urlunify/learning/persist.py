"""Where a crawl's learned state is kept between runs: a file in the JOBDIR, a Redis hash, or
nowhere (a crawl without JOBDIR nor Redis starts learning afresh).

The state itself is :meth:`Learner.to_json` text (rules, revocations, blocked candidates,
catch-all signatures, evidence toward candidates); this module only stores and loads it, so a
kill at any moment leaves either the previous state or the new one, never half of one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["LearnedRulesStore"]

_FIELD = "learner"


class LearnedRulesStore:
    """A JOBDIR file (``path``) or a Redis rules hash (``redis``: ``get_all()`` and ``set()``,
    see ``stores.redis.RedisRulesStore``), or neither."""

    def __init__(self, path: Path | None = None, redis: Any = None) -> None:
        self.path, self.redis = path, redis

    def load(self) -> str | None:
        if self.redis is not None:
            text: str | None = self.redis.get_all().get(_FIELD)
            return text
        if self.path is not None and self.path.exists():
            return self.path.read_text("utf-8")
        return None

    def save(self, text: str) -> None:
        if self.redis is not None:
            self.redis.set(_FIELD, text)
        elif self.path is not None:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(text, "utf-8")
            os.replace(tmp, self.path)  # atomic: a kill leaves the old or the new file

    def __str__(self) -> str:
        return str(self.path) if self.redis is None else f"Redis {self.redis.url} key {self.redis.key!r}"
