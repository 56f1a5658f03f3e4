"""The Scrapy side of the add-on: one folder per feature (``crawl``, ``links``, ``seen``,
``pages``, ``rules``, ``queue``), each a few thin Scrapy components over objects that ``crawl``
builds once per crawler (docs/architecture.md, "The integration layer, one folder per feature").
``addon``, ``settings`` and ``command`` are public: the ``Addon``, the ``URLUNIFY_*`` settings,
``scrapy urlunify``. The components' public paths are ``scrapy_urlunify.<Name>``.
"""
