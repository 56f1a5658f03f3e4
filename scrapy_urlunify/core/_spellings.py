"""What another spelling of a page looks like before any page is fetched: a referral or view
parameter (``?ref=sidebar``, ``?output=print``) or a view segment in the path (``/print/x``,
``/x/amp/``, ``/x/print.html``, ``/x/comment-page-2/``).

Only the frontier reads these, to fetch the plain spelling of a page first: nothing is merged or
dropped because of them (docs/frontier.md, "Plain spellings first"). The names are those peers
strip or that sites use for views of one page (courlan's and ural's lists in
``../shared/research/peers.md``), kept apart from the tracker and session lists of ``_params``,
which the identity rules remove anyway.
"""

from __future__ import annotations

import re

#: Parameters that say where a link was (``ref``, ``from``, ``via``, ``source``) or which view of
#: the page it asks for (``print``, ``amp``): courlan's word list (``ref``, ``referrer``,
#: ``source``), ural's ``fref``/``refid``/``spref``/``fromref``, and the view switches of common
#: CMSs (MediaWiki ``printable``, WordPress AMP ``amp``). Not WordPress's ``replytocom`` (a
#: post's reply-form views): an action parameter, left out of identifiers anyway
#: (``_params.ACTION_PARAMS``); with that list off it is learned, and pushed back together its
#: views came one post at a time, so each post's were learned as a rule of that post's context
#: (88 rules where one of the blog does, 3 of them wrong: docs/test_sites.md).
VARIANT_PARAMS: frozenset[str] = frozenset(
    {
        "ref",
        "refid",
        "ref_src",
        "ref_url",
        "fref",
        "spref",
        "fromref",
        "referrer",
        "referer",
        "source",
        "src",
        "from",
        "via",
        "share",
        "shared",
        "origin",
        "nav",
        "print",
        "printable",
        "printer",
        "amp",
        "mobile",
    }
)

#: The names of :data:`VARIANT_PARAMS` that only tag a link (where it was, which print view it
#: asks for) and never choose content, so that a page with one and the page without it showing
#: one text are evidence like two values are: none of them has a default value that is also a
#: choice (``?page=1`` = the list, ``?lang=en`` = the page, the learner's default-value trap).
#: Not ``from``, ``source``, ``src``, ``origin``, ``nav``, ``mobile``, ``printer``: a date
#: filter, a file, a section, a product may be called so.
LINK_TAG_PARAMS: frozenset[str] = frozenset(
    {
        "ref",
        "refid",
        "ref_src",
        "ref_url",
        "fref",
        "spref",
        "fromref",
        "referrer",
        "referer",
        "via",
        "share",
        "shared",
        "print",
        "printable",
        "amp",
    }
)
assert LINK_TAG_PARAMS <= VARIANT_PARAMS

#: Values that ask for a view of the page whatever the parameter is called (``?output=amp``,
#: ``?view=print``, ``?mode=mobile``: ural's value-conditional ``mode|output|outputtype=amp``).
VARIANT_VALUES: frozenset[str] = frozenset({"print", "printable", "printer", "amp", "mobile"})

#: Path segments of a page's views: a print or AMP copy as a directory (``/print/x``, ``/x/amp/``)
#: or as a last segment (``/x/print.html``).
VARIANT_SEGMENTS: frozenset[str] = frozenset(
    {
        "print",
        "printable",
        "printer",
        "print.html",
        "print.htm",
        "amp",
        "amp.html",
        "mobile",
    }
)

#: Extensions of a last path segment that ask for a page or a list in another format: a feed,
#: an export, a page's source (``/issues/5.atom``, ``/issues.csv?sort=id``, ``/wiki/FAQ.txt``).
#: Scrapy's ``LinkExtractor`` ignores ``.rss`` and ``.pdf`` for the same reason; ``.html`` and
#: ``.pdf`` are not here: they are pages (and papers) of their own on many sites.
FORMAT_EXTENSIONS: frozenset[str] = frozenset(
    {"atom", "rss", "rdf", "csv", "tsv", "ics", "vcf", "txt", "json", "xml", "md", "diff", "patch"}
)

#: First labels of a host that serves a site's pages again (``mirror.site.test``, ``m.``, ``amp.``,
#: ``www2.``, ``old.``): urlnorm's ``(old)?(www?[0-9]*|m|mobile)`` and ural's ``amp`` prefixes, and
#: the names of mirrors and origins. Only beside a crawl's start host (see ``CanonicalURLs``).
_VARIANT_HOST_LABEL = re.compile(
    r"(?:www?\d*|m|mobile|amp|wap|mirror\d*|old|legacy|origin|print|web\d*)\Z", re.IGNORECASE
)

#: WordPress's paged comments: ``/post/comment-page-2/`` repeats the post with other comments.
_COMMENT_PAGE = re.compile(r"comment-page-\d+\Z", re.IGNORECASE)


def is_variant_host_label(label: str) -> bool:
    """Whether a host's first label (``mirror``, ``m``, ``www2``) names another copy of a site."""
    return _VARIANT_HOST_LABEL.match(label) is not None


def looks_like_variant(path: str, query: str) -> bool:
    """Whether the path and query of a URL (``/doc/3/``, ``ref=sidebar``) look like another
    spelling of a page: a :data:`VARIANT_PARAMS` name or :data:`VARIANT_VALUES` value in the
    query, a :data:`VARIANT_SEGMENTS` segment or a comment page in the path, or a last segment
    with a :data:`FORMAT_EXTENSIONS` extension. Case-insensitive."""
    if query:
        for item in query.split("&"):
            name, _, value = item.partition("=")
            if name.lower() in VARIANT_PARAMS or value.lower() in VARIANT_VALUES:
                return True
    segments = path.split("/")
    for segment in segments:
        if segment and (segment.lower() in VARIANT_SEGMENTS or _COMMENT_PAGE.match(segment)):
            return True
    name, dot, extension = segments[-1].rpartition(".")
    return bool(dot and name and extension.lower() in FORMAT_EXTENSIONS)
