"""Generated URLs for property tests (hypothesis): the URL corpus the project owns, beside the
list written for it in ``tests/data/urls.txt``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hypothesis import strategies as st

SEGMENT_CHARS = "abcXYZ019-._~%2F;=()!$'*+,:@ \\"
PARAM_NAMES = (
    "id",
    "page",
    "utm_source",
    "PHPSESSID",
    "sid",
    "cfid",
    "cftoken",
    "drop_me",
    "q",
    "a",
    "b",
    "",
)


def urls(
    hosts: Sequence[str],
    userinfo: Sequence[str] = ("",),
    segment_chars: str = SEGMENT_CHARS,
    fragment_chars: str = "!/abc",
) -> st.SearchStrategy[str]:
    """http(s) URLs on ``hosts``: ports, path segments, query items (trackers, session ids, empty
    values...) and fragments (anchors and routes), each possibly absent."""
    param = st.tuples(st.sampled_from(PARAM_NAMES), st.text(alphabet="abc012%20+=&/", max_size=6))
    return st.builds(
        lambda scheme, user, host, port, segs, params, frag: (
            f"{scheme}://{user}{host}{port}/"
            + "/".join(segs)
            + (
                "?" + "&".join(f"{k}={v}" if v else k for k, v in params)
                if params is not None
                else ""
            )
            + (f"#{frag}" if frag is not None else "")
        ),
        st.sampled_from(["http", "https", "HTTP"]),
        st.sampled_from(list(userinfo)),
        st.sampled_from(list(hosts)),
        st.sampled_from(["", ":80", ":443", ":8080"]),
        st.lists(st.text(alphabet=segment_chars, max_size=8), max_size=5),
        st.none() | st.lists(param, max_size=5),
        st.none() | st.text(alphabet=fragment_chars, max_size=4),
    )


DATA = Path(__file__).parents[1] / "data"


def corpus() -> list[tuple[str, str | None]]:
    """``(href, base)`` pairs of ``tests/data/urls.txt`` (``base`` is None for a line with no tab)."""
    pairs: list[tuple[str, str | None]] = []
    for line in (DATA / "urls.txt").read_text("utf-8").split("\n"):
        if not line or line.startswith("#"):
            continue
        href, tab, base = line.partition("\t")
        pairs.append((href, base if tab else None))
    return pairs


def corpus_urls() -> list[str]:
    """Every absolute URL of the corpus: the lines without a base, and each relative line
    resolved against its base (when it resolves)."""
    import ada_url

    urls = []
    for href, base in corpus():
        if base is None:
            urls.append(href)
            continue
        try:
            urls.append(ada_url.join_url(base, href))
        except ValueError:
            pass
    return list(dict.fromkeys(urls))
