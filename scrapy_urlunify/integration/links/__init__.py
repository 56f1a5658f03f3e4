"""A page's links before they are scheduled: filtered, standardized, known duplicates dropped
(docs/rules.md)."""
