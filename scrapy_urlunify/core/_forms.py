"""URL forms: a URL of one form names the page of another (``URLUNIFY_URL_FORMS``), identity only.

A *form* is a path and query with holes, written as the identifier shows them (no trailing
slash, parameters that do not matter already left out): a segment or a parameter value
``{name}`` captures one non-empty value, ``*`` matches one and forgets it, any other text must
be equal. ``/shop/*/{slug}`` -> ``/product/{slug}`` says a product under its category's path is
the product; ``/product-category/{c}?paged={n}`` -> ``/product-category/{c}/page/{n}`` says the
"load more" button's page is the pager's. A URL matches a source form when it has its number of
segments and exactly its parameters (each once); its identifier is then the target form filled
with what the source captured. A form whose query ends in ``*`` (both forms: ``?paged={n}&*``
-> ``/page/{n}?*``) *carries* the other parameters: a URL with more parameters than the source's
is of it too, and they go to the target as they are (``?orderby=date&paged=2`` ->
``/page/2?orderby=date``). Forms are written per host (and its subdomains), like
``ignore_params``; declared canonicals teach them (``learning/_url_forms.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

#: a hole that captures: ``{name}``; a hole that forgets: ``*``
ANY = "*"


class _Hole(NamedTuple):
    """A captured value (``name``), or a forgotten one (``name`` empty)."""

    name: str


Piece = str | _Hole


class UrlForm:
    """One compiled ``source -> target`` form (checked as it is built)."""

    __slots__ = ("_out_path", "_out_query", "_params", "_segments", "carries", "source", "target")

    def __init__(self, source: str, target: str) -> None:
        self.source = source
        self.target = target
        self._segments, self._params, self.carries = _source(source)
        names = [p.name for p in (*self._segments, *self._params.values()) if isinstance(p, _Hole)]
        names = [n for n in names if n]
        captured = set(names)
        if len(names) != len(captured):
            raise ValueError(f"{source!r} captures one name twice")
        out_path, out_query = _split(target)
        self._out_path = tuple(_piece(s, "segment") for s in out_path.split("/")[1:])
        out_query, out_carries = _carried(out_query)
        if out_carries != self.carries:
            raise ValueError(
                f"{source!r} -> {target!r}: carrying the other parameters (a last '*' item) is "
                "written in both forms or neither"
            )
        self._out_query = tuple(_items(out_query, "target"))
        for p in (*self._out_path, *(v for _, v in self._out_query)):
            if isinstance(p, _Hole) and p.name not in captured:
                raise ValueError(
                    f"{target!r} uses {_text(p)}, which {source!r} does not capture"
                    if p.name
                    else f"{target!r}: a target has no * (it cannot write what it forgot)"
                )
        if (self._segments, self._params) == (self._out_path, dict(self._out_query)):
            raise ValueError(f"{source!r} -> {target!r} names a form as itself")

    @property
    def segments(self) -> int:
        """The number of path segments of a URL of the source form."""
        return len(self._segments)

    @property
    def names(self) -> frozenset[str]:
        """The source form's parameter names."""
        return frozenset(self._params)

    def apply(
        self, segments: list[str], items: dict[str, str], query: str = ""
    ) -> tuple[str, str | None] | None:
        """The target's path and query (None: no query) for a URL whose path has ``segments``
        (as ``path.split("/")[1:]``) and whose query has ``items`` (each name once; ``query``:
        that query as written, whose items a carrying form carries as they are); None when the
        URL is not of the source form."""
        if len(segments) != len(self._segments):
            return None
        if not self.carries:
            if items.keys() != self._params.keys():
                return None
            carried = []
        elif items.keys() >= self._params.keys():
            written = {i.partition("=")[0]: i for i in query.split("&")} if query else {}
            carried = [
                written.get(n, f"{n}={v}") for n, v in items.items() if n not in self._params
            ]
            if any(n in items and n not in self._params for n, _ in self._out_query):
                return None  # the target writes a parameter of its own that the URL has too
        else:
            return None
        got: dict[str, str] = {}
        for piece, value in zip(self._segments, segments, strict=True):
            if not _fits(piece, value, got):
                return None
        for name, piece in self._params.items():
            if not _fits(piece, items[name], got):
                return None
        path = "/" + "/".join(got[p.name] if isinstance(p, _Hole) else p for p in self._out_path)
        # sorted, as sort_params leaves a query: a form may give a URL a query it had not, and
        # the steps on queries are not asked of a URL that had none
        query = "&".join(
            sorted(
                [
                    *(
                        f"{n}={got[v.name] if isinstance(v, _Hole) else v}"
                        for n, v in self._out_query
                    ),
                    *carried,
                ]
            )
        )
        return path, query or None

    def covers(self, path: str, query: str) -> bool:
        """Whether a URL as fetched (``path`` without its leading ``/``, ``query``) may be of
        the source form: its segments fit (a trailing slash aside), and it has the source's
        parameters, fitting (the identifier may lack others: they do not matter there)."""
        segments = (path[:-1] if path.endswith("/") else path).split("/")
        if len(segments) != len(self._segments):
            return False
        got: dict[str, str] = {}
        if not all(_fits(p, v, got) for p, v in zip(self._segments, segments, strict=True)):
            return False
        items = dict(i.partition("=")[::2] for i in query.split("&") if i)
        return all(n in items and _fits(p, items[n], got) for n, p in self._params.items())

    def __repr__(self) -> str:
        return f"UrlForm({self.source!r}, {self.target!r})"


def _source(form: str) -> tuple[tuple[Piece, ...], dict[str, Piece], bool]:
    """A source form's pieces: its segments', its parameters' by name, and whether it carries
    the other parameters."""
    path, query = _split(form)
    query, carries = _carried(query)
    segments = tuple(_piece(s, "segment") for s in path.split("/")[1:])
    return segments, dict(_items(query, "source")), carries


def _carried(query: str) -> tuple[str, bool]:
    """A form's query without its last ``*`` item, and whether it had one (it carries the other
    parameters)."""
    head, _, last = query.rpartition("&")
    return (head, True) if last == ANY else (query, False)


def with_carry(form: str) -> str:
    """``form`` carrying the other parameters (``?paged={n}`` -> ``?paged={n}&*``)."""
    path, _, query = form.partition("?")
    return f"{path}?{query}&{ANY}" if query else f"{path}?{ANY}"


def includes(form: str, other: str) -> bool:
    """Whether every URL of the source form ``other`` is of the source form ``form``: the same
    segments and parameters, ``form`` a hole wherever the two differ."""
    (segments, params, carries), (theirs, their_params, their_carries) = (
        _source(form),
        _source(other),
    )
    if len(segments) != len(theirs):
        return False
    if not (
        their_params.keys() >= params.keys() if carries else params.keys() == their_params.keys()
    ):
        return False
    if their_carries and not carries:
        return False
    pairs = (*zip(segments, theirs, strict=True), *((params[n], their_params[n]) for n in params))
    return all(a == b or isinstance(a, _Hole) for a, b in pairs)


def subsumes(wide: tuple[str, str], form: tuple[str, str]) -> bool:
    """Whether the ``(source, target)`` form ``wide`` gives every URL of ``form``'s source
    the page ``form`` gives it: ``form`` merges nothing ``wide`` does not (``/shop/hats/{s2}``
    beside ``/shop/*/{s2}``, ``?paged=2`` beside ``?paged={q0}``)."""
    if wide == form or not includes(wide[0], form[0]):
        return False
    # the narrower source read as a URL whose holes are texts: where the wider form has a
    # hole, it writes what the narrower form has there, a text or the same hole
    path, query = _split(form[0])
    items = query_items(_carried(query)[0])
    out = UrlForm(*wide).apply(path.split("/")[1:], items or {})
    target_path, target_query = _split(form[1])
    target_query = _carried(target_query)[0]
    return out == (target_path, "&".join(sorted(filter(None, target_query.split("&")))) or None)


def _fits(piece: Piece, value: str, got: dict[str, str]) -> bool:
    if isinstance(piece, str):
        return value == piece
    if not value:
        return False
    if piece.name:
        got[piece.name] = value
    return True


def _text(p: Piece) -> str:
    return p if isinstance(p, str) else "{" + p.name + "}" if p.name else ANY


def _split(form: str) -> tuple[str, str]:
    """A form's path (no trailing slash: identifiers have none) and query."""
    if not isinstance(form, str) or not form.startswith("/") or "#" in form:
        raise ValueError(f"{form!r} is not a path (and query) starting with /")
    path, _, query = form.partition("?")
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return path, query


def _piece(text: str, what: str) -> Piece:
    if text == ANY:
        return _Hole("")
    if text.startswith("{") and text.endswith("}"):
        name = text[1:-1]
        if not name or not name.isidentifier():
            raise ValueError(f"{text!r}: a hole is {{name}}, name a word")
        return _Hole(name)
    if any(c in text for c in "{}*"):
        raise ValueError(f"{text!r}: a {what} is a text, {{name}} or *, not a mix")
    return text


def _items(query: str, what: str) -> Iterable[tuple[str, Piece]]:
    names: set[str] = set()
    for item in filter(None, query.split("&")):
        name, _, value = item.partition("=")
        if not name or name in names or any(c in name for c in "{}*"):
            raise ValueError(f"{item!r}: a {what} parameter is a name given once")
        names.add(name)
        yield name, _piece(value, "value")


def query_items(query: str | None) -> dict[str, str] | None:
    """The items of an identifier's query as a dict; None when a name repeats (no form has it)."""
    if not query:
        return {}
    items = {}
    for item in query.split("&"):
        name, _, value = item.partition("=")
        if name in items:
            return None
        items[name] = value
    return items


class FormTable:
    """The forms of one host, by number of path segments."""

    __slots__ = ("_by_length",)

    def __init__(self, forms: Iterable[UrlForm]) -> None:
        self._by_length: dict[int, list[UrlForm]] = {}
        for f in forms:
            self._by_length.setdefault(f.segments, []).append(f)

    def apply(self, path: str, query: str | None) -> tuple[str, str | None] | None:
        """The path and query of the first form ``path`` and ``query`` are of, filled; None."""
        segments = path.split("/")[1:]
        forms = self._by_length.get(len(segments))
        if not forms:
            return None
        items = query_items(query)
        if items is None:
            return None
        for f in forms:
            out = f.apply(segments, items, query or "")
            if out is not None:
                return out
        return None


def identity_parts(identifier: str, prefix: str) -> tuple[str, str, str | None]:
    """The host (no port), path and query (None: none) of an identifier (``prefix``: its
    scope's)."""
    text = identifier[len(prefix) :] if identifier.startswith(prefix) else identifier
    scheme, sep, rest = text.partition("://")
    if sep and "/" not in scheme:
        text = rest
    authority, _, rest = text.partition("/")
    # the host as rules name it, without a port ([::1]:8080 -> [::1])
    host = authority[: authority.index("]") + 1] if authority[:1] == "[" else authority
    host = host.partition(":")[0] if host[:1] != "[" else host
    path, q, query = rest.partition("?")
    return host, "/" + path, query if q else None


def with_host(identifier: str, prefix: str, host: str, other: str) -> str | None:
    """``identifier`` (``prefix``: its scope's) with its host ``host`` written ``other`` (the
    port kept); None when its host is not ``host``."""
    if not identifier.startswith(prefix):
        return None
    text = identifier[len(prefix) :]
    scheme, sep, rest = text.partition("://")
    head = ""
    if sep and "/" not in scheme:
        head, text = scheme + sep, rest
    if not text.startswith(host) or text[len(host) : len(host) + 1] not in ("/", ":", ""):
        return None
    return prefix + head + other + text[len(host) :]


FormRules = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def form_rules(value: object, normalize_host: object) -> FormRules:
    """``{host: {source: target}}`` (or ``{host: [[source, target], ...]}``; key ``"*"``: all
    hosts) checked and compiled once: ``(host, ((source, target), ...))``. Raises
    ``ValueError``/``TypeError`` naming the form at fault."""
    if value is None or value == ():
        return ()
    if isinstance(value, tuple) and all(
        isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], tuple) for r in value
    ):
        pairs_by_host = {h: list(p) for h, p in value}
    elif isinstance(value, Mapping):
        pairs_by_host = {}
        for key, forms in value.items():
            if not isinstance(key, str):
                raise TypeError(f"dict keys must be host names, got {key!r}")
            host = "" if key.strip() in ("*", "") else normalize_host(key)  # type: ignore[operator]
            if isinstance(forms, Mapping):
                forms = list(forms.items())
            if isinstance(forms, (str, bytes)) or not isinstance(forms, Iterable):
                raise TypeError(f"{key!r}: expected {{source: target}} forms, got {forms!r}")
            pairs_by_host.setdefault(host, []).extend(forms)
    else:
        raise TypeError(f"expected a {{host: {{source: target}}}} dict, got {value!r}")
    out = []
    for host, pairs in pairs_by_host.items():
        checked = []
        for pair in pairs:
            if isinstance(pair, (str, bytes)) or len(pair) != 2:
                raise TypeError(f"{pair!r} is not a (source, target) pair of forms")
            source, target = pair
            UrlForm(source, target)  # raises on a form it cannot read
            checked.append((source, target))
        out.append((host, tuple(dict.fromkeys(checked))))
    return tuple(out)
