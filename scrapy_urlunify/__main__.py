"""``python -m scrapy_urlunify``: the ``urlunify`` command line."""

import sys

from .cli.main import main

sys.exit(main())
