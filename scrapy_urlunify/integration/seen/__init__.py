"""The "seen?" check at the scheduler: fingerprints, keys, the dupefilters, and resume after a kill
(docs/stores.md, docs/reliability.md)."""
