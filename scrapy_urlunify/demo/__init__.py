"""A generated demo web site with exact ground truth, served over real HTTP.

* :class:`scrapy_urlunify.demo.site.DemoSite` - the site and its ground truth
  (pure Python, importable without Twisted running);
* :class:`scrapy_urlunify.demo.server.DemoServer` - a Twisted HTTP/HTTPS
  server that is also a forward proxy (absolute-form and ``CONNECT``), so
  Scrapy reaches the fake hosts through ``request.meta["proxy"]``;
* :class:`scrapy_urlunify.demo.proxy.DemoProxyMiddleware` - sets that meta key;
* :class:`scrapy_urlunify.demo.spider.DemoSpider` - a follow-everything spider.

The side-by-side demo (``python -m scrapy_urlunify.demo``, :mod:`.compare`): :mod:`.crawl`
runs the two crawls, :mod:`.measure` counts them against the site's ground truth,
:mod:`.report_text` and :mod:`.report_html` render the report. Run the server alone with
``python -m scrapy_urlunify.demo.server --size N``.
"""
