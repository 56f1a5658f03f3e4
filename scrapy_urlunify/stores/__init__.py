"""Storage behind the dupefilter (the seen set), the page-signature index and the requests
merged by rules on probation: pure Python, no Scrapy import.

:mod:`.base` says what a store is, and how it fails; then one module per backend:
:mod:`.memory`, :mod:`.jobdir` (its files are :mod:`.log`'s record logs; both keep the seen set
in :mod:`.fingerprints`), and Redis in :mod:`.redis_connection`, :mod:`.redis_seen` and
:mod:`.redis_tables`. :mod:`.location` checks where the stores live, :mod:`.factory` builds
them. The package re-exports the public names of the modules that need no ``redis`` client.
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
    NEAR_DUPLICATES_FILENAME,
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
    "NEAR_DUPLICATES_FILENAME",
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
