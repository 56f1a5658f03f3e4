"""``DequeueMiddleware``: a request queued before a learned rule is checked again as it leaves
the scheduler.

Scrapy's queues hold requests checked by the dupefilter under the policy of the moment they
were queued. Rules are learned in the first seconds of a crawl, while thousands of other
spellings of the pages that taught them already wait in the queue (LIFO by default: fetched
last). A downloader middleware at the engine end of the chain (the add-on enables it at 15,
with ``URLUNIFY_LEARN``) sees each request as it is about to be downloaded: when a page with
its identifier *under the current policy* was fetched already, the request is dropped (stats
``urlunify/dropped_at_dequeue``, one debug line). Memory, JOBDIR and Redis crawls alike: the
check asks the signature middleware, which keeps the identifiers of recently fetched pages and
recomputes them whenever a rule is adopted or revoked.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest, NotConfigured

from ..core.url import InvalidURL
from .context import UnifyContext

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

__all__ = ["DequeueMiddleware", "DroppedAtDequeue"]

logger = logging.getLogger(__name__)


class DroppedAtDequeue(IgnoreRequest):
    """A queued request whose page was fetched (under another spelling) while it waited."""


class DequeueMiddleware:
    """Downloader middleware: drop a queued request whose page a learned rule says was fetched."""

    def __init__(self, context: UnifyContext) -> None:
        self.context = context

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DequeueMiddleware:
        context = UnifyContext.of(crawler)
        if not context.enabled or not context.settings["URLUNIFY_LEARN"]:
            raise NotConfigured
        return cls(context)

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        ctx = self.context
        signatures = ctx.signatures
        # identifiers only change under learned rules; redirects and retries are the same fetch
        if ctx.policy is ctx.base_policy or signatures is None or request.method != "GET":
            return
        meta = request.meta
        if meta.get("urlunify") is False or request.dont_filter or "redirect_urls" in meta or meta.get("retry_times"):
            return
        try:
            identifier = ctx.unifier.identify(request.url)
        except InvalidURL:
            return
        if not signatures.fetched(identifier) or signatures.merged(request):
            return  # new, or a sample of a rule on probation
        ctx.inc("dropped_at_dequeue")
        logger.debug("Dropped at dequeue: %s (its page %s was fetched while it waited)", request.url, identifier)
        df = ctx.dupefilter
        if df is not None and df.resume_log is not None:
            df.mark_done(request)  # handled: a resume must not fetch it again
        raise DroppedAtDequeue(f"{request.url}: its page {identifier} was fetched while it waited")
