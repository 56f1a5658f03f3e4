"""``python -m scrapy_urlunify``: the ``urlunify`` command line."""

import sys

from .cli import main

sys.exit(main())
