"""Pure, no Scrapy: page signatures (``page_signature``: MD5 of a page's body text), the
learner that turns pages sharing a signature into URL rules (``learner``, built on
``rule_types``, ``page_index``, ``pairs``, ``candidates``, ``unstable``, ``rule_settings``), and
where its state is kept between runs (``persist``)."""
