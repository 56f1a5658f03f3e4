"""Form rules from declared canonicals: a URL form whose pages declare another form canonical.

A page fetched as ``/shop/hats/red-cap/`` that declares ``/product/red-cap/`` canonical, found
true (the two are one page: ``integration/pages/_canonicals.py``), is a pair of identifiers. Its
*shape* writes the canonical in terms of the URL: each segment and parameter value of the
canonical is one of the URL's segments (``s2``), one of its parameter values, or a text of its
own (``product``). Pairs of one shape -- the same host, number of segments and parameter names,
and the same way of writing the canonical -- from ``needed`` different canonicals make a rule
(:func:`_rows`). A position is a hole only where those pairs showed ``needed`` distinct texts
(``{s2}`` when the canonical writes it, ``*`` when it does not: the category), else it is the
text of the pair at hand, and only the pairs with that text count: ``/shop/hats/{s2}`` first,
``/shop/*/{s2}`` once three categories showed it, each product in one (a *classifier*: a
segment before one the canonical writes; a second rule, the first kept). Two texts make
a hole in a *lossless* shape, whose canonical writes every text of the URL (``?paged=2``,
``?paged=3`` -> ``/page/{q0}``), and three canonicals (``min_pairs``) a rule: a respelling
merges no two URLs. A product whose canonical names
its own slug is never a shape twice (the slug is a text of its own), so ``/?p=17`` ->
``/product/red-cap/`` teaches nothing: no form can say it.

A canonical found false (another page) refutes its shape: no rule of it, ever, on that host;
nor, once a rule of it was revoked, any form at least as wide (:meth:`FormEvidence.refuse`). A
source form without a text of its own (``/{s0}``) is never a rule: it would take every URL of
its number of segments; nor a form that takes a page fetched before that named no other page
canonical (``/product/{s1}/*`` from six views of products, while ``/product/x/comment-page-2``
is a page of its own): :meth:`FormEvidence.standalone`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from scrapy_urlunify.core._forms import UrlForm, includes, query_items, with_carry

if TYPE_CHECKING:
    from scrapy_urlunify.learning._rule_types import LearnedRule

#: identity parts: host, path (no trailing slash) and query (None: none)
Parts = tuple[str, str, str | None]
#: how a canonical writes one of its texts: a position of the URL (its segments, then its
#: parameter values by name), or ``"=" + text``, a text of its own
Written = int | str
#: the shapes followed at once (the oldest forgotten first)
MAX_SHAPES = 1000
#: pairs kept per shape (the newest)
MAX_PAIRS = 128
#: URLs of pages that name no other canonical kept per host, number of segments and parameter
#: names (the newest), against which a form is checked before it is adopted
MAX_STANDALONE = 64


class FormCandidate(NamedTuple):
    """A form rule ready to adopt: ``host``, ``source`` and ``target`` forms, the distinct
    canonicals that showed it, and up to three ``(URL, canonical URL)`` examples."""

    host: str
    source: str
    target: str
    pairs: int
    examples: tuple[tuple[str, str], ...]


class ShapeKey(NamedTuple):
    """What pairs of one shape share: the host, the URL's number of segments and parameter
    names, and how the canonical writes its segments and parameter values."""

    host: str
    width: int
    names: tuple[str, ...]
    out_path: tuple[Written, ...]
    out_query: tuple[tuple[str, Written], ...]


class _Shape:
    __slots__ = ("adopted", "common", "examples", "pairs")

    def __init__(self) -> None:
        #: the texts at the URL's positions and the canonical, of each pair (the newest kept)
        self.pairs: list[tuple[list[str], str]] = []
        self.examples: list[tuple[str, str]] = []
        self.adopted: list[str] = []  # the source forms adopted from it
        #: the text every pair ever showed at each position (None where two differed)
        self.common: list[str | None] = []

    def add(self, texts: list[str], target: str) -> None:
        if (texts, target) in self.pairs:
            return
        self.pairs.append((texts, target))
        del self.pairs[:-MAX_PAIRS]
        if not self.common:
            self.common = list(texts)
        else:
            self.common = [c if c == t else None for c, t in zip(self.common, texts, strict=True)]


def shape_of(url: Parts, canonical: Parts) -> tuple[ShapeKey, list[str]] | None:
    """The shape key of a verified pair and the texts at the positions of ``url`` (its segments,
    then its parameter values by name); None when no form can say it (other hosts, a name twice
    in a query)."""
    host, path, query = url
    chost, cpath, cquery = canonical
    if host != chost:
        return None
    items, citems = query_items(query), query_items(cquery)
    if items is None or citems is None:
        return None
    segments = path.split("/")[1:]
    names = sorted(items)
    texts = segments + [items[n] for n in names]
    where = {t: i for i, t in reversed(list(enumerate(texts))) if t}

    def written(text: str) -> Written:
        i = where.get(text)
        return i if i is not None else "=" + text

    out_path = tuple(written(s) for s in cpath.split("/")[1:])
    out_query = tuple((n, written(v)) for n, v in sorted(citems.items()))
    return ShapeKey(host, len(segments), tuple(names), out_path, out_query), texts


class FormEvidence:
    """The verified pairs of declared canonicals, by shape, until one shape makes a rule."""

    def __init__(self, needed: int, min_pairs: int) -> None:
        self.needed = needed
        #: distinct texts that make a hole of a classifier whose texts partition the canonicals,
        #: and distinct canonicals that make a lossless form (:func:`_rows`)
        self.min_pairs = min_pairs
        self._shapes: OrderedDict[ShapeKey, _Shape] = OrderedDict()
        self._refuted: set[ShapeKey] = set()
        self._refused: set[tuple[str, str]] = set()  # (host, source) of rules revoked
        # (host, segments, names) -> identity parts of pages that named no other canonical
        self._standalone: OrderedDict[tuple[str, int, tuple[str, ...]], list[Parts]] = OrderedDict()
        #: the shapes by what their URLs share: host, number of segments, parameter names
        self._by_source: dict[tuple[str, int, tuple[str, ...]], set[ShapeKey]] = {}
        #: (host, source) of a form rule -> the pairs it gives once the parameters they carry
        #: are left out: their canonicals, the parameters carried, and examples
        self._carrying: OrderedDict[tuple[str, str], _Carrying] = OrderedDict()

    def standalone(self, url: Parts) -> None:
        """A page at ``url`` named no other page canonical (itself, or none): no form may take
        it, and a form that would is never adopted."""
        items = query_items(url[2])
        if items is None:
            return
        key = (url[0], url[1].count("/"), tuple(sorted(items)))
        kept = self._standalone.get(key)
        if kept is None:
            kept = self._standalone[key] = []
            if len(self._standalone) > MAX_SHAPES:
                self._standalone.popitem(last=False)
        if url not in kept:
            kept.append(url)
            del kept[:-MAX_STANDALONE]

    def _takes_standalone(self, key: ShapeKey, form: UrlForm) -> bool:
        return self._takes_any(self._standalone.get((key.host, key.width, key.names), ()), form)

    def _takes_any(self, urls: Iterable[Parts], form: UrlForm) -> bool:
        for _host, path, query in urls:
            items = query_items(query)
            if items is not None and form.apply(path.split("/")[1:], items) is not None:
                return True
        return False

    def refuse(self, host: str, source: str) -> None:
        """A rule of this form was revoked: its shape teaches nothing more."""
        self._refused.add((host, source))
        for key, shape in list(self._shapes.items()):
            if key.host == host and source in shape.adopted:
                self._refuted.add(key)
                self._drop(key)

    def _drop(self, key: ShapeKey) -> None:
        self._shapes.pop(key, None)
        keys = self._by_source.get(_source_key(key))
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_source[_source_key(key)]

    def asks(self, url: Parts) -> list[str]:
        """The shapes under way that a page at ``url`` may add a pair to, named: what fetching
        it asks (the frontier lets one such request of a shape go at a time, so that a
        category's products, linked together, are not all fetched before their first declared
        canonical is compared: docs/frontier.md, "Form rules' evidence"). A URL is of a
        shape's source when its host, number of segments and parameter names are the shape's
        and its texts are the ones every pair showed, except where the canonical writes a text
        (a hole to be) and at one classifier (``/shop/<category>/``: another category). A
        shape whose source would have no text of its own (every position a hole to be, no
        parameter name) asks nothing: it would hold every URL of that many segments."""
        if not self._by_source:  # no shape under way: asked of every request leaving the queue
            return []
        items = query_items(url[2])
        if items is None:
            return []
        host, path = url[0], url[1]
        names = tuple(sorted(items))
        segments = path.split("/")[1:]
        keys = self._by_source.get((host, len(segments), names))
        if not keys:
            return []
        texts = segments + [items[n] for n in names]
        found = []
        for key in keys:
            common = self._shapes[key].common
            if _of_source(key, common, texts):
                free, classifiers = _free_positions(key)
                own = {
                    i: t
                    for i, t in enumerate(common)
                    if t is not None and i not in free and i not in classifiers
                }
                found.append("form {} {} -> {}".format(key.host, *_forms(key, own)))
        return found

    def verified(self, url: Parts, canonical: Parts, urls: tuple[str, str]) -> FormCandidate | None:
        """A page at ``url`` declared ``canonical`` and was found the same page (``urls``: the
        two as fetched, for the log): the form rule it completes, if any."""
        found = shape_of(url, canonical)
        if found is None:
            return None
        key, texts = found
        if key in self._refuted:
            return None
        shape = self._shapes.get(key)
        if shape is None:
            shape = self._shapes[key] = _Shape()
            self._by_source.setdefault(_source_key(key), set()).add(key)
            if len(self._shapes) > MAX_SHAPES:
                self._drop(next(iter(self._shapes)))
        else:
            self._shapes.move_to_end(key)
        shape.add(texts, canonical[1] + ("?" + canonical[2] if canonical[2] else ""))
        if len(shape.examples) < 3:
            shape.examples.append(urls)
        used = _used(key)
        classifiers = _classifiers(key, used)
        # the root's empty segment (``/?product_cat=tea``) is no text the canonical could lose
        lossless = all(i in used for i, t in enumerate(texts) if t)
        found_rows = _rows(shape.pairs, texts, self.needed, lossless, classifiers, self.min_pairs)
        if found_rows is None:
            return None
        fixed, n = found_rows
        source, out = _forms(key, fixed)
        if source in shape.adopted or any(
            host == key.host and includes(source, refused) for host, refused in self._refused
        ):
            return None
        if not key.names and not any(fixed.get(i) for i in range(key.width)):
            # no text of its own ("/{s0}" -> "/product/{s0}"): it would take every URL of that
            # many segments, "/about" too
            return None
        try:
            form = UrlForm(source, out)
        except ValueError:  # a text no form can hold ("*" in a path): never a rule
            self.refuted(url, canonical)
            return None
        if self._takes_standalone(key, form):
            # a page of that form named itself canonical (/product/x/comment-page-2 beside
            # /product/x/amp): the holes take what the pairs did not show
            self.refuted(url, canonical)
            return None
        shape.adopted.append(source)
        return FormCandidate(key.host, source, out, n, tuple(shape.examples))

    def carried(
        self, rules: Iterable[LearnedRule], url: Parts, canonical: Parts, urls: tuple[str, str]
    ) -> FormCandidate | None:
        """A verified pair that a form rule of its host gives once the parameters it *carries*
        (in the URL and the canonical, one value) are left out (``?orderby=date&paged=2`` ->
        ``/page/2?orderby=date`` beside the rule ``?paged={q0}`` -> ``/page/{q0}``): toward
        that rule carrying the other parameters. ``min_pairs`` distinct canonicals, with two
        sets of parameters carried, make it (a respelling, as the rule is). None until then."""
        host, path, query = url
        items, citems = query_items(query), query_items(canonical[2])
        if host != canonical[0] or not items or not citems:
            return None
        segments = path.split("/")[1:]
        for rule in rules:
            if rule.kind != "form" or rule.host != host:
                continue
            form = _compiled(rule.name, rule.target)
            carried = frozenset(
                f"{n}={v}" for n, v in items.items() if n not in form.names and citems.get(n) == v
            )
            if form.carries or not carried:
                continue
            rest = {n: v for n, v in items.items() if f"{n}={v}" not in carried}
            crest = "&".join(
                sorted(f"{n}={v}" for n, v in citems.items() if f"{n}={v}" not in carried)
            )
            if form.apply(segments, rest) != (canonical[1], crest or None):
                continue
            return self._carrying_pair(rule, carried, canonical, urls)
        return None

    def _carrying_pair(
        self, rule: LearnedRule, carried: frozenset[str], canonical: Parts, urls: tuple[str, str]
    ) -> FormCandidate | None:
        key = (rule.host, rule.name)
        source, target = with_carry(rule.name), with_carry(rule.target)
        if any(h == rule.host and includes(source, refused) for h, refused in self._refused):
            return None
        seen = self._carrying.get(key)
        if seen is None:
            seen = self._carrying[key] = _Carrying()
            if len(self._carrying) > MAX_SHAPES:
                self._carrying.popitem(last=False)
        if seen.adopted or not seen.add(canonical, carried, urls):
            return None
        if len(seen.canonicals) < self.min_pairs or len(seen.carried) < 2:
            return None
        form = UrlForm(source, target)
        standalone = (
            urls
            for (host, n, _names), urls in self._standalone.items()
            if host == rule.host and n == form.segments
        )
        if self._takes_any((u for kept in standalone for u in kept), form):
            return None  # a page it would take named itself canonical
        seen.adopted = True
        return FormCandidate(rule.host, source, target, len(seen.canonicals), tuple(seen.examples))

    def refuted(self, url: Parts, canonical: Parts) -> None:
        """A page at ``url`` declared ``canonical``, found another page: its shape is refuted."""
        found = shape_of(url, canonical)
        if found is not None:
            self._refuted.add(found[0])
            self._drop(found[0])


class _Carrying:
    """The pairs a form rule gives once the parameters they carry are left out."""

    __slots__ = ("adopted", "canonicals", "carried", "examples")

    def __init__(self) -> None:
        self.canonicals: set[Parts] = set()
        self.carried: set[frozenset[str]] = set()
        self.examples: list[tuple[str, str]] = []
        self.adopted = False

    def add(self, canonical: Parts, carried: frozenset[str], urls: tuple[str, str]) -> bool:
        if canonical in self.canonicals or len(self.canonicals) >= MAX_PAIRS:
            return False
        self.canonicals.add(canonical)
        self.carried.add(carried)
        if len(self.examples) < 3:
            self.examples.append(urls)
        return True


def forms_taking(rules: Iterable[LearnedRule], host: str, fetched: str) -> list[LearnedRule]:
    """The form rules of ``host`` whose source form the URL ``fetched`` is of (as
    :meth:`UrlForm.covers` reads a URL as fetched)."""
    path, _, query = fetched.partition("://")[2].partition("/")[2].partition("?")
    return [
        r
        for r in rules
        if r.kind == "form" and r.host == host and _compiled(r.name, r.target).covers(path, query)
    ]


@lru_cache(maxsize=256)
def _compiled(source: str, target: str) -> UrlForm:
    return UrlForm(source, target)


def _rows(
    pairs: list[tuple[list[str], str]],
    texts: list[str],
    needed: int,
    lossless: bool,
    classifiers: set[int],
    min_pairs: int,
) -> tuple[dict[int, str], int] | None:
    """The positions a form of the pair ``texts`` keeps fixed (position -> text) and the
    distinct canonicals of the pairs that agree with it there, once ``needed``; else None. A
    position is a hole only where those pairs show ``needed`` distinct texts: two values
    (``amp``, ``comment-page-1``) say nothing of a third (``comment-page-2``). In a
    ``lossless`` shape (the canonical writes every text of the URL: a respelling, which merges
    no two URLs), two distinct texts make a hole (``paged=2``, ``paged=3``), and ``min_pairs``
    canonicals a rule: what it may get wrong is only whether the site answers each spelling
    with the page, which every pair of the shape showed and its probation checks. A *classifier*, a
    path segment the canonical leaves out before one it writes (``/shop/<category>/<slug>``),
    names what holds a page, not a part or view of it (what follows a page's slug:
    ``comment-page-2``, ``reviews``, pages of their own): where each canonical came with one
    text there (a product in one category), ``min_pairs`` distinct texts make its hole."""
    fixed: dict[int, str] = {}
    rows = pairs
    while True:
        for i, text in enumerate(texts):
            if i in fixed:
                continue
            if lossless:
                hole_at = 2
            elif i in classifiers and _partitions(rows, i):
                hole_at = min_pairs
            else:
                hole_at = needed
            if len({r[0][i] for r in rows}) < hole_at:
                fixed[i] = text
        agree = [r for r in rows if all(r[0][i] == t for i, t in fixed.items())]
        if len(agree) == len(rows):
            break
        rows = agree
    n = len({r[1] for r in rows})
    return (fixed, n) if n >= (min_pairs if lossless else needed) else None


def _used(key: ShapeKey) -> set[int]:
    """The positions of a shape's URL whose text the canonical writes."""
    return {w for w in (*key.out_path, *(w for _, w in key.out_query)) if isinstance(w, int)}


def _classifiers(key: ShapeKey, used: set[int]) -> set[int]:
    """A shape's classifiers: path segments before one the canonical writes (the category
    before a product's slug), which the canonical leaves out."""
    return {i for i in range(key.width) if i not in used and any(i < w < key.width for w in used)}


def _source_key(key: ShapeKey) -> tuple[str, int, tuple[str, ...]]:
    return (key.host, key.width, key.names)


@lru_cache(maxsize=1024)
def _free_positions(key: ShapeKey) -> tuple[frozenset[int], frozenset[int]]:
    """The positions where a URL of ``key``'s source may show a text no pair showed (the
    canonical writes it), and its classifiers after the first segment (one may differ)."""
    used = _used(key)
    return frozenset(used), frozenset(i for i in _classifiers(key, used) if i > 0)


def _of_source(key: ShapeKey, common: list[str | None], texts: list[str]) -> bool:
    """Whether ``texts`` (a URL's, of ``key``'s host, segments and names) may be of the source
    of the shape whose pairs all showed ``common`` (see :meth:`FormEvidence.asks`)."""
    free, classifiers = _free_positions(key)
    own = bool(key.names)
    differs = False
    for i, text in enumerate(common):
        if i in free or text is None:
            continue
        if i in classifiers:
            if text != texts[i]:
                if differs:
                    return False
                differs = True
            continue
        if text != texts[i]:
            return False
        own = True
    return own


def _partitions(rows: list[tuple[list[str], str]], i: int) -> bool:
    """Whether each canonical of ``rows`` came with one text at position ``i``."""
    text_of: dict[str, str] = {}
    return all(text_of.setdefault(target, texts[i]) == texts[i] for texts, target in rows)


def _forms(key: ShapeKey, fixed: dict[int, str]) -> tuple[str, str]:
    """The source and target forms of a shape: a fixed position is its text, another a hole
    (``{sN}``/``{qN}`` when the canonical writes it, else ``*``)."""
    width = key.width
    used = _used(key)
    texts = [
        fixed[i]
        if i in fixed
        else (f"{{s{i}}}" if i < width else f"{{q{i - width}}}")
        if i in used
        else "*"
        for i in range(width + len(key.names))
    ]

    def write(w: Written) -> str:
        return texts[w] if isinstance(w, int) else w[1:]

    params = "&".join(f"{n}={t}" for n, t in zip(key.names, texts[width:], strict=True))
    source = "/" + "/".join(texts[:width]) + ("?" + params if params else "")
    target = "/" + "/".join(write(w) for w in key.out_path)
    tparams = "&".join(f"{n}={write(w)}" for n, w in key.out_query)
    return source, target + ("?" + tparams if tparams else "")
