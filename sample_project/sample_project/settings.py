"""Settings of the sample project.

The one line that turns scrapy-urlunify on is ``ADDONS`` below; every spider configures the
plugin for its own site through ``custom_settings`` (see ``spiders/``). The block marked "demo
only" routes requests to the demo site (``python -m scrapy_urlunify.demo.server``); drop it in a
real project.
"""

import os

BOT_NAME = "sample_project"
SPIDER_MODULES = ["sample_project.spiders"]
NEWSPIDER_MODULE = "sample_project.spiders"

# --- scrapy-urlunify: the whole set-up ---------------------------------------------------------
ADDONS = {"scrapy_urlunify.Addon": 0}

# --- demo only: reach the demo site through the demo server, which is also a forward proxy ---
# Start it with `python -m scrapy_urlunify.demo.server`; it prints its "proxy_url". Then:
#   URLUNIFY_DEMO_PROXY=http://127.0.0.1:PORT scrapy crawl news
# Without the variable the middleware turns itself off and the demo hosts (*.test, termomont.rs)
# do not resolve.
URLUNIFY_DEMO_PROXY = os.environ.get("URLUNIFY_DEMO_PROXY", "")
DOWNLOADER_MIDDLEWARES = {"scrapy_urlunify.demo.proxy.DemoProxyMiddleware": 740}

# --- politeness: fine for a site on your own machine --------------------------------------------
# For a real site keep Scrapy's project defaults instead (ROBOTSTXT_OBEY = True,
# CONCURRENT_REQUESTS_PER_DOMAIN = 1, DOWNLOAD_DELAY = 1) or turn AUTOTHROTTLE_ENABLED on.
ROBOTSTXT_OBEY = False
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
DOWNLOAD_DELAY = 0
DOWNLOAD_TIMEOUT = 15
RETRY_TIMES = 1
TELNETCONSOLE_ENABLED = False

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
