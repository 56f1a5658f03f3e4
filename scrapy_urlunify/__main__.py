"""``python -m scrapy_urlunify``: the ``urlunify`` command line."""

import sys

from scrapy_urlunify.cli import main

sys.exit(main())
