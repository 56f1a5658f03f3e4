"""Storage behind the dupefilter (the seen set), the page-signature index and the requests
merged by rules on probation: pure Python, no Scrapy import. A crawl picks its stores with
``URLUNIFY_STORE`` (docs/stores.md); the modules are private.

``_base`` says what a store is, and how it fails; then one module per backend: ``_memory``,
``_jobdir`` (its files are ``_log``'s record logs; both keep the seen set in ``_fingerprints``),
and Redis in ``_redis_connection``, ``_redis_seen`` and ``_redis_tables``. ``_location`` checks
where the stores live, ``_factory`` builds them.
"""
