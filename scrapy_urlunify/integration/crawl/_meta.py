"""The ``Request.meta`` keys the add-on reads and writes, in one place, and one way to read a
request's meta (:data:`meta_of`).

The keys a user may set or read come first (docs/getting-started.md, "What requests and
responses carry"); the others are the add-on's own bookkeeping, carried by a request through the
scheduler (and through a JOBDIR queue or a Redis queue, so they are plain data).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from scrapy import Request

#: ``False``: the link middleware lets the request pass untouched (the dupefilter still checks it)
OPT_OUT_META = "urlunify"
#: the request is sent as written (Scrapy 2.17+): never rewritten, identified by its URL as
#: written
VERBATIM_META = "verbatim_url"
#: the URL a link had before it was rewritten to the URL to fetch
ORIGINAL_URL_META = "urlunify_original_url"
#: the hex signature of the page's body text
SIGNATURE_META = "urlunify_signature"
#: the identifier of the page a duplicate page repeats
DUPLICATE_OF_META = "urlunify_duplicate_of"
#: the base identifier of the earlier page a near-duplicate page nearly repeats (absent when that
#: page was forgotten)
NEAR_DUPLICATE_OF_META = "urlunify_near_duplicate_of"
#: how alike a near-duplicate page and that earlier page are, 0.94 to 1
RESEMBLANCE_META = "urlunify_resemblance"
#: the URL a careful user would cite for the page (its verified declared canonical, else the
#: spelling the crawl's rules make): set on each 2xx page's meta before the callback
CANONICAL_URL_META = "urlunify_canonical_url"
#: True on a page that declares ``noindex`` for all robots, of a host whose start page does not
#: and that has shown an indexable page, when ``URLUNIFY_DROP_NOINDEX_ITEMS`` is on: the items
#: naming it are dropped
NOINDEX_META = "urlunify_noindex"
#: a probation sample: (rule key, identifier it was merged into, entry id, earlier URL, earlier
#: signature) -- fetched although the current policy merges it, to check the rule
PROBATION_META = "urlunify_probation"
#: a declared shortlink fetched to check a site's shortlinks (integration/pages/_shortlinks.py):
#: never held back by the frontier, it is the check
PROBE_META = "urlunify_shortlink_probe"
#: the root page of a new alias rule's host, asked for to be one of its samples: sampled even
#: when an earlier request for it was recorded (it may never have been fetched)
ROOT_PAGE_META = "urlunify_root_page"
#: the learned policy a request was judged under by the dupefilter (a short digest)
POLICY_META = "urlunify_policy"
#: a request scheduled again at resume (its seen key was recorded by the killed run)
RESUMED_META = "urlunify_resumed"
#: a request the frontier held back once and scheduled again: its URL (recorded already, so
#: the dupefilter lets that URL through once more; a redirect of it has another URL)
HELD_META = "urlunify_held"
#: the frontier's level a request was scheduled at, when above 0 (its pattern's penalty then)
LEVEL_META = "urlunify_level"
#: ``id(request)`` of a request the frontier let go with open questions: a redirect or a retry
#: of it, which copies its meta, says it came back (the frontier's ``landed``)
ASKED_META = "urlunify_asked"
#: a request queued while the store was unavailable: True, or "doubt" when its own store call
#: was cut off (Redis may have recorded it without answering)
UNRECORDED_META = "urlunify_unrecorded"
#: such a request whose link batch was cut off: ``"<owner> <call id> <index>"``, to ask Redis
#: what that call answered for it
BATCH_CALL_META = "urlunify_batch_call"


# The reliable Redis queue's (queue/_redis_queue.py)
#: the id of the queue entry a popped request (or its redirect, its retry) is
QUEUE_ID_META = "urlunify_queue_id"
#: the entry was given back by a worker that died with it in flight
GIVEN_BACK_META = "urlunify_queue_given_back"
#: a link of a given-back page, queued only if no worker queued it before
RESCUE_META = "urlunify_queue_rescue"


#: ``meta_of(request)``: ``request.meta``, or None when the request has none.
#:
#: ``Request.meta`` makes (and keeps) an empty dict for every request that has none: on the hot
#: paths (a link, a scheduled request) that is a fifth of the call. Scrapy's ``Request`` (and so
#: every subclass: the engine takes no other requests) keeps the dict in its ``_meta`` slot
#: (Scrapy 2.13 to 2.x, pinned by ``tests/integration/test_meta.py``); read by ``attrgetter``,
#: a C call, not one more Python frame on every request.
meta_of: Callable[[Request], dict[str, Any] | None] = attrgetter("_meta")
