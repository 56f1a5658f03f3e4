"""Pure, no Scrapy: page signatures (``_page_signature``: MD5 of a page's body text), the
learner that turns pages sharing a signature into URL rules (``_learner``, built on
``_rule_types``, ``_page_index``, ``_pairs``, ``_candidates``, ``_unstable``,
``_rule_settings``), and where its state is kept between runs (``_persist``)."""
