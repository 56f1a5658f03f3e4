"""Pure, no Scrapy: page signatures (``page_signature``: MD5 of a page's body text) and the learner
that turns pages sharing a signature into URL rules (``learner``)."""
