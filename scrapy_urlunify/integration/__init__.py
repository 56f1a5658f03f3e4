"""Everything that imports Scrapy: the thin adapters between a crawl and the pure core.

``settings`` (the ``URLUNIFY_*`` settings), ``context`` (one unifier per crawler), ``links``
(the link middleware) and ``downstream`` (the spider middlewares after it), ``fingerprinter``, ``dupefilter`` and ``redis_dupefilter``,
``signatures`` (the page-signature middleware; the pages go on to ``learning_session``,
``fetched``, ``probation`` and ``canonicals``), ``stats``, ``resume`` (JOBDIR resume after a kill),
``pipelines``, ``addon``, ``command`` (``scrapy urlunify``), ``crawl_stores`` (what a crawl
does when its store fails) and ``refusal`` (a crawl refused at start: one ERROR line)."""
