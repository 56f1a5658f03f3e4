"""The pure core, no Scrapy: resolution (``rules.resolve``), the rules of the two layers
(``rules``: each step tagged *rewrite* or *identity*), parameter lists (``params``), hosts and
registrable domains (``domains``), link filters (``filters``), the validated configuration
(``policy``) and the unifier that runs the steps (``unify``)."""
