"""The Scrapy side of the add-on: one folder per feature, each a few thin Scrapy components over
objects that ``crawl`` builds once per crawler (docs/architecture.md).

``crawl`` builds and shares them (settings read once, stats, the stores and what a failing one
does); ``links`` handles a page's links before they are scheduled; ``seen`` is the "seen?" check
at the scheduler (fingerprints, keys, the dupefilters, resume after a kill); ``pages`` checks
each downloaded page (signatures, near-duplicates, declared canonicals, the item pipelines);
``rules`` learns URL rules from duplicate pages and keeps them on probation; ``queue`` orders
requests (the frontier) and makes scrapy-redis's shared queue safe. ``addon``, ``settings`` and
``command`` are public: the ``Addon``, the ``URLUNIFY_*`` settings, ``scrapy urlunify``.
The components' public paths are ``scrapy_urlunify.<Name>``.
"""
