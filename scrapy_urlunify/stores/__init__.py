"""Storage behind the dupefilter (the seen set), the page-signature index and the requests
merged by rules on probation: pure Python, no Scrapy import.

One module per backend: :mod:`.base` (what a store is, and its errors), :mod:`.memory`,
:mod:`.jobdir` (with its record logs, :mod:`.log`, and the in-memory set of keys,
:mod:`.fingerprints`), :mod:`.redis_connection`, :mod:`.redis_seen` and :mod:`.redis_tables`;
:mod:`.location` checks where the stores live and :mod:`.factory` builds them. Here are the
names of the backends without the optional ``redis`` client.
"""

from __future__ import annotations

from .base import KeptEntry, KeptStore, SeenStore, SignatureStore, StoreError, StoreUnavailable
from .factory import Stores
from .fingerprints import FingerprintSet
from .jobdir import (
    ITEMS_FILENAME,
    JOBDIR_FILENAMES,
    KEPT_FILENAME,
    LEARNED_FILENAME,
    REQUESTS_FILENAME,
    SEEN_FILENAME,
    SIGNATURES_FILENAME,
    JobdirKeptStore,
    JobdirSeenStore,
    JobdirSignatureStore,
)
from .log import RecordLog, VarRecordLog
from .memory import MemoryKeptStore, MemorySeenStore, MemorySignatureStore

__all__ = [
    "ITEMS_FILENAME",
    "JOBDIR_FILENAMES",
    "KEPT_FILENAME",
    "LEARNED_FILENAME",
    "REQUESTS_FILENAME",
    "SEEN_FILENAME",
    "SIGNATURES_FILENAME",
    "FingerprintSet",
    "JobdirKeptStore",
    "JobdirSeenStore",
    "JobdirSignatureStore",
    "KeptEntry",
    "KeptStore",
    "MemoryKeptStore",
    "MemorySeenStore",
    "MemorySignatureStore",
    "RecordLog",
    "SeenStore",
    "SignatureStore",
    "StoreError",
    "StoreUnavailable",
    "Stores",
    "VarRecordLog",
]
