"""The stores' two errors, in a module of their own so every store module can import them
without importing the package (``stores/__init__`` imports the stores)."""

from __future__ import annotations

__all__ = ["StoreError", "StoreUnavailable"]


class StoreError(Exception):
    """A store cannot be used: a file that is foreign, from another format version, corrupted
    or locked by another writer; a write that failed (disk full); a Redis error that waiting
    does not cure (out of memory, a key of the wrong type). The message names the file or key."""


class StoreUnavailable(StoreError):
    """A shared store (Redis) does not answer: nothing may be counted as seen or new meanwhile;
    the Scrapy layer closes the crawl with the reason ``urlunify_store_unavailable``."""
