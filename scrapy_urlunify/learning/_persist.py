"""Where a crawl's learned state is kept between runs: a file in the JOBDIR, a Redis hash, or
nowhere (a crawl without JOBDIR nor Redis starts learning afresh).

The state is :meth:`Learner.to_json` text (rules, revocations, blocked candidates, catch-all
signatures, evidence toward candidates) and, beside it, the probation of the rules adopted
but not yet confirmed (``{"kind|host|name": {"sampled": n, "confirmed": n, "paths": [...]}}``):
a resumed crawl finds each rule as it left it, on probation, confirmed or revoked. Both are
written in one step (one file renamed into place, one ``HSET``), so a kill at any moment leaves
either the previous state or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

_FIELD = "learner"
_PROBATION = "probation"


class LearnedState:
    """What :meth:`LearnedRulesStore.load` read: the learner's text, and the probation of its
    rules (None when the state predates probation being kept: its rules count as confirmed)."""

    __slots__ = ("learner", "probation")

    def __init__(self, learner: str | None, probation: dict[str, Any] | None) -> None:
        self.learner, self.probation = learner, probation


class LearnedRulesStore:
    """A JOBDIR file (``path``) or a Redis rules hash (``redis``: ``get_all()`` and
    ``set_many()``, see ``stores.redis_tables.RedisRulesStore``), or neither."""

    def __init__(self, path: Path | None = None, redis: Any = None) -> None:
        self.path, self.redis = path, redis

    def load(self) -> str | None:
        return self.load_state().learner

    def load_state(self) -> LearnedState:
        """The saved state; ``ValueError`` when its probation is not what :meth:`save` wrote."""
        if self.redis is not None:
            fields = self.redis.get_all()
            text, probation = fields.get(_FIELD), fields.get(_PROBATION)
            return LearnedState(
                text, _probation(json.loads(probation)) if probation is not None else None
            )
        if self.path is not None and self.path.exists():
            text = self.path.read_text("utf-8")
            try:
                data = json.loads(text)
            except ValueError:
                return LearnedState(text, None)  # the learner names what is wrong with it
            saved = data.get(_PROBATION) if isinstance(data, dict) else None
            return LearnedState(text, _probation(saved) if saved is not None else None)
        return LearnedState(None, None)

    def save(self, text: str, probation: dict[str, Any] | None = None) -> None:
        """Save the learner's ``text`` and, when given, the probation of its rules with it."""
        if self.redis is not None:
            fields = {_FIELD: text}
            if probation is not None:
                fields[_PROBATION] = json.dumps(probation, separators=(",", ":"))
            self.redis.set_many(fields)
        elif self.path is not None:
            if probation is not None:  # a key of the learner's JSON object, which ignores it
                data = json.loads(text)
                data[_PROBATION] = probation
                text = json.dumps(data, separators=(",", ":"))
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(text, "utf-8")
            os.replace(tmp, self.path)  # atomic: a kill leaves the old or the new file

    def __str__(self) -> str:
        return (
            str(self.path)
            if self.redis is None
            else f"Redis {self.redis.url} key {self.redis.key!r}"
        )


def _probation(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise ValueError(
            f"the probation of learned rules is not an object of objects: {value!r:.100}"
        )
    return value
