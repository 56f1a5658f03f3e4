"""``python -m scrapy_urlunify.demo``: the side-by-side demo crawl (see :mod:`.compare`)."""

import sys

from scrapy_urlunify.demo.compare import main

sys.exit(main())
