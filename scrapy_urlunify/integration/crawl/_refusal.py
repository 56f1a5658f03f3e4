"""A crawl scrapy-urlunify refuses to start (a :class:`SettingsError` or a :class:`StoreError`
while it starts): one ERROR line naming the cause, no traceback, a failed run (docs/reliability.md).

:func:`install` replaces Twisted's and asyncio's reports of an unhandled failure by that line when,
and only when, a refusal is in it; it runs before anything of ours can refuse
(``Addon.update_settings``, ``UnifyCrawl``). A component that logs a refusal itself, with what it
was doing, calls :func:`report` before raising, so the line is not repeated.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from scrapy_urlunify.integration.crawl._internals import twisted_stderr_printer
from scrapy_urlunify.integration.settings import SettingsError
from scrapy_urlunify.stores._base import StoreError

logger = logging.getLogger("scrapy_urlunify")

#: what Twisted logs, as a separate event, before the traceback of an unhandled failure
_HEADER = "Unhandled error in Deferred:"
_REPORTED = "_urlunify_reported"

#: what a refusal is
REFUSALS: tuple[type[BaseException], ...] = (SettingsError, StoreError)
_lock = threading.Lock()
_installed = False


def refusal_in(exc: BaseException | None) -> BaseException | None:
    """The refusal among ``exc``, its cause and the exceptions it was raised while handling; or
    None. (A refusal raised in ``from_crawler`` makes Scrapy's clean-up raise again, e.g.
    ``RuntimeError: Engine slot not assigned``, with the refusal as its context.)"""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, REFUSALS):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def report(
    exc: BaseException,
    doing: str = "scrapy-urlunify cannot start the crawl",
    log: logging.Logger = logger,
) -> None:
    """Log the refusal ``exc`` as one ERROR line on ``log``, once."""
    if getattr(exc, _REPORTED, False):
        return
    setattr(exc, _REPORTED, True)
    log.error("%s: %s", doing, exc)


def install() -> None:
    """Put the filters in place (once per process; any later call does nothing)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    logging.getLogger("asyncio").addFilter(_RecordFilter())
    logging.getLogger("twisted").addFilter(_RecordFilter())
    _gate_twisted_stderr()


class _RecordFilter(logging.Filter):
    """On the ``asyncio`` and ``twisted`` loggers (what they log goes there directly): a record
    whose exception holds a refusal becomes the refusal's one line. Twisted's header line comes
    first, as a record of its own: it is held until the next record shows whose failure it was."""

    def __init__(self) -> None:
        super().__init__()
        self._held: logging.LogRecord | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        held, self._held = self._held, None
        exc = record.exc_info[1] if record.exc_info else None
        refusal = refusal_in(exc)
        if refusal is not None:
            report(refusal)
            return False
        if held is not None:
            _emit(held)
        if exc is None and record.levelno >= logging.CRITICAL and record.getMessage() == _HEADER:
            self._held = record
            return False
        return True


def _emit(record: logging.LogRecord) -> None:
    # past the filters (this one held it), to the handlers, as Logger.handle would
    log = logging.getLogger(record.name)
    if not log.disabled:
        log.callHandlers(record)


class _EventGate:
    """Twisted's stderr printer of critical events (used until someone begins Twisted's logging,
    which Scrapy never does), behind the same rule as :class:`_RecordFilter`."""

    def __init__(self, observer: Any) -> None:
        self.observer = observer
        self._held: dict[str, Any] | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        held, self._held = self._held, None
        failure = event.get("log_failure")
        refusal = refusal_in(getattr(failure, "value", None))
        if refusal is not None:
            report(refusal)  # once: Scrapy's "twisted" logger gets the same failure
            return
        if held is not None:
            self.observer(held)
        if failure is None and event.get("log_format") == _HEADER:
            self._held = event
            return
        self.observer(event)


def _gate_twisted_stderr() -> None:
    printer = twisted_stderr_printer()
    if printer is None or isinstance(printer, _EventGate):  # logging begun, or gated already
        return
    twisted_stderr_printer(replace=_EventGate)
