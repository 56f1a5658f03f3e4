"""The ``urlunify`` command line (no Scrapy): ``main`` (explain, same, identify, standardize)
and ``store`` (``urlunify store info|clear``)."""
