"""The pure core, no Scrapy, behind the package root's functions (``scrapy_urlunify.identify``,
``standardize``...): resolution (``_url``), the rules of the two layers (``_rules``: each step
tagged *rewrite* or *identity*, its guard in ``_guards``, its string work in ``_text``),
parameter lists (``_params``), hosts and registrable domains (``_domains``, ``_hosts``), link
filters (``_filters``), the validated configuration (``_policy``) and the unifier that runs the
steps (``_unify``)."""
