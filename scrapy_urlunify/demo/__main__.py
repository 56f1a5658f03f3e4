"""``python -m scrapy_urlunify.demo``: the side-by-side demo crawl (see :mod:`.compare`)."""

import sys

from .compare import main

sys.exit(main())
