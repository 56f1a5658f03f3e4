"""A line of progress on a terminal: long work (``urlunify learn``, the demo's crawls) says how
far it got, on one line that updates in place on a terminal, or a line now and then in a log."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressLine:
    """``update(text)`` shows ``text`` as the current progress: on a terminal it rewrites one
    line (at most :attr:`REDRAW` times a second); elsewhere (a pipe, a CI log) it writes a line
    every :attr:`EVERY` seconds. ``done(text)`` ends the line."""

    REDRAW = 10
    EVERY = 10.0

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stderr
        isatty = getattr(self.out, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._last = 0.0
        self._width = 0

    def update(self, text: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < (1 / self.REDRAW if self.tty else self.EVERY):
            return
        self._last = now
        if self.tty:
            self.out.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.out.write(text + "\n")
        self.out.flush()

    def done(self, text: str | None = None) -> None:
        if self.tty:
            self.out.write("\r" + (text or "").ljust(self._width) + "\n")
        elif text:
            self.out.write(text + "\n")
        self.out.flush()
        self._width = 0
