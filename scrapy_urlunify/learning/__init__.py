"""Pure, no Scrapy: page signatures (``signatures``: MD5 of a page's body text) and the learner
that turns pages sharing a signature into URL rules (``learner``)."""
