"""A hostile URL costs time linear in its length, in every step.

Links are capped by ``URLUNIFY_MAX_URL_LENGTH``, but canonicals, redirects, ``scrapy urlunify``
and direct API calls are not: a step that is quadratic in the URL's length (``strip_index_pages``
took 1.8 s on 704 KB of ``index.html/``) lets one URL stall a crawl. For each step, URLs of
~250 KB and ~1 MB are built from repetitions of what the step looks for, and every public call
(``standardize``, ``identify``, ``filter_reason``, ``explain``, ``same``) must take at most
``RATIO`` times as long on the large one as on the small one: a linear step takes ~4x, a
quadratic one ~16x.

Robust on a loaded machine: a ratio, not an absolute time; the two sizes are timed alternately
(a burst of load hits both), each the best of up to ``TRIES`` runs, tried again only when the
first runs fail the bound; and ``SLACK`` seconds are allowed on top, so that timer noise on a call
of a few milliseconds cannot fail the test.
"""

from __future__ import annotations

import time

import pytest

from scrapy_urlunify import InvalidURL, Policy, Unifier
from scrapy_urlunify.core._explain import explain_with, same
from scrapy_urlunify.core._rules import IDENTITY_STEPS, REWRITE_STEPS

SMALL, LARGE = 250_000, 1_000_000
RATIO = 8.0
SLACK = 0.05
TRIES = 3

#: every rule on: per-host lists with globs, aliases, sister suffixes, path prefixes, AMP markers
POLICY = Policy(
    remove_params=["x*y*z*", "drop"],
    key_params=["id"],
    ignore_params={"*": ["ign*"], "h.test/?c=1": ["z"]},
    domain_aliases=[["a.test", "b.test"]],
    ignore_path_prefixes=["print"],
    ignore_path_suffixes=["comment-page-*", "amp"],
    url_forms={"h.test": {"/p/{a}": "/q/{a}", "/p/{a}/*?n={b}": "/q/{a}/{b}"}},
    sister_suffixes=["site.rs"],
    ignore_amp=True,
)

#: name -> (what comes before, the unit repeated, what comes after), and the steps it aims at
HOSTILE: dict[str, tuple[tuple[str, str, str], tuple[str, ...]]] = {
    "index pages": (
        ("http://h.test/", "index.html/", ""),
        ("drop_index_page", "drop_trailing_slash"),
    ),
    "index pages, upper case": (("http://h.test/", "INDEX.HTML/", ""), ("drop_index_page",)),
    "dot segments": (("http://h.test/", "./", "x"), ("resolve",)),
    "dot-dot segments": (("http://h.test/", "a/../", "x"), ("resolve",)),
    "escaped dot segments": (("http://h.test/", "%2e%2E/", "x"), ("resolve",)),
    "doubled slashes": (("http://h.test/", "//", "x"), ("collapse_slashes",)),
    "slashes after a colon": (("http://h.test/", "a://", ""), ("collapse_slashes",)),
    "jsessionid": (("http://h.test/", ";jsessionid=", ""), ("remove_path_session_ids",)),
    "jsessionid segments": (
        ("http://h.test/", "a;jsessionid=1/../", ""),
        ("remove_path_session_ids",),
    ),
    "ASP.NET groups": (("http://h.test/", "(S(a)", ""), ("remove_path_session_ids",)),
    "ASP.NET segments": (("http://h.test/", "/(S(a))", ""), ("remove_path_session_ids",)),
    "escaped slashes": (("http://h.test/", "%2F", ""), ("normalize_escapes",)),
    "escapes": (("http://h.test/", "%7e%41", "?%7e%41"), ("normalize_escapes",)),
    "stray percent": (("http://h.test/", "%", "?%"), ("normalize_escapes", "escape_unsafe_chars")),
    "stray percent and escaped digits": (
        ("http://h.test/", "%%36%31", ""),
        ("normalize_escapes", "escape_unsafe_chars"),
    ),
    "ampersands": (
        ("http://h.test/?", "&", ""),
        ("drop_empty_params", "sort_params", "drop_empty_query"),
    ),
    "equals signs": (("http://h.test/?", "=", ""), ("drop_empty_params",)),
    "question marks": (("http://h.test/?", "?", ""), ("drop_empty_query",)),
    "hashes": (("http://h.test/#", "#", ""), ("drop_fragment",)),
    "routes": (("http://h.test/#!", "/a", ""), ("drop_fragment",)),
    "www labels": (("http://", "www.", "h.test/"), ("unify_host",)),
    "labels": (("http://", "a.", "b.test/"), ("unify_host",)),
    "labels of a sister": (("http://", "a.", "site.com/"), ("unify_host",)),
    "upper-case host": (("http://", "AbC.", "test/"), ("unify_host", "resolve")),
    "user info": (("http://", "u:p", "@h.test/"), ("drop_userinfo",)),
    "session ids": (("http://h.test/?", "PHPSESSID=1&", ""), ("remove_session_params",)),
    "sid tokens": (("http://h.test/?", "sid=0123456789abcdef0&", ""), ("remove_session_params",)),
    "session names": (("http://h.test/?", "Bv_SessionID=", ""), ("remove_session_params",)),
    "ColdFusion pairs": (("http://h.test/?", "cfid=1&cftoken=2&", ""), ("remove_session_params",)),
    "trackers": (("http://h.test/?", "utm_source=1&", ""), ("remove_tracking_params",)),
    "tracker names": (("http://h.test/?", "utm_", ""), ("remove_tracking_params",)),
    "action parameters": (("http://h.test/?", "replytocom=1&", ""), ("drop_action_params",)),
    "glob without its end": (
        ("http://h.test/?", "xyxyxyxy", "=1"),
        ("remove_policy_params", "drop_ignored_params"),
    ),
    "glob items": (
        ("http://h.test/?", "xy&ign&", ""),
        ("remove_policy_params", "drop_ignored_params"),
    ),
    "key parameters": (("http://h.test/?", "id=1&x=2&", ""), ("keep_key_params",)),
    "context items": (("http://h.test/?c=1&", "z=1&c=2&", ""), ("drop_context_params",)),
    "path prefixes": (("http://h.test/", "print/", "x"), ("drop_path_prefix",)),
    "form segments": (("http://h.test/p/", "a/", "b"), ("apply_url_form",)),
    "form items": (("http://h.test/p/a/b?", "n=1&", "m=2"), ("apply_url_form",)),
    "path suffixes": (("http://h.test/x/", "comment-page-", "1/"), ("drop_path_suffix",)),
    "unsafe characters": (("http://h.test/", "|[", "?|[^"), ("escape_unsafe_chars",)),
    "escaped spaces": (("http://h.test/?q=", "%20", ""), ("plus_for_space",)),
    "empty values": (("http://h.test/?", "a=&", ""), ("drop_empty_params",)),
    "unsorted items": (("http://h.test/?", "b=2&a=1&", ""), ("sort_params",)),
    "HTML-escaped ampersands": (("http://h.test/?a=1", "&amp;", "b=2"), ("unescape_amp",)),
    "entity prefixes": (("http://h.test/?a=1&", "amp;", "b=2"), ("unescape_amp",)),
    "AMP segments": (("http://h.test/x/", "amp/", ""), ("drop_amp_marker",)),
    "AMP items": (("http://h.test/?", "amp&", "x=1"), ("drop_amp_marker",)),
    "scheme": (("HTTPS://", "h", ".test/"), ("ignore_scheme",)),
    "repeated segments": (("http://h.test/", "a/b/", ""), ("filter_reason: trap",)),
    "extensions": (("http://h.test/", "a.pdf.", "pdf"), ("filter_reason: extension",)),
}


def _url(shape: tuple[str, str, str], size: int) -> str:
    before, unit, after = shape
    return before + unit * (size // len(unit)) + after


def _calls(policy: Policy):
    # a fresh unifier per call: its caches would answer the second call for free
    yield "standardize", lambda u: Unifier(policy).standardize(u)
    yield "identify", lambda u: Unifier(policy).identify(u)
    yield "filter_reason", lambda u: Unifier(policy).filter_reason(u)
    yield "explain", lambda u: explain_with(Unifier(policy), u)


def _time(fn, url: str) -> float:
    t = time.perf_counter()
    try:
        fn(url)
    except InvalidURL:
        pass
    return time.perf_counter() - t


def test_every_step_has_a_hostile_shape():
    aimed = {step for _, steps in HOSTILE.values() for step in steps}
    missing = {s.name for s in REWRITE_STEPS + IDENTITY_STEPS} - aimed
    assert not missing, f"add a hostile URL for {sorted(missing)}"


def _assert_linear(name: str, shape: tuple[str, str, str], calls) -> None:
    small, large = _url(shape, SMALL), _url(shape, LARGE)
    for call, fn in calls:
        best_small = best_large = float("inf")
        for _ in range(TRIES):
            best_small = min(best_small, _time(fn, small))
            best_large = min(best_large, _time(fn, large))
            if best_large <= RATIO * best_small + SLACK:
                break
        else:
            pytest.fail(
                f"{call} on {name}: {best_small:.3f} s at {SMALL // 1000} KB, "
                f"{best_large:.3f} s at {LARGE // 1000} KB (more than {RATIO}x)"
            )


# (every rule on: the default policy's steps are a subset, each under the same guard)
@pytest.mark.parametrize("name", list(HOSTILE))
def test_time_is_linear_in_the_length(name):
    Unifier(POLICY).identify("http://warm.up.site.rs/")  # the public suffix list, loaded once
    _assert_linear(name, HOSTILE[name][0], _calls(POLICY))


@pytest.mark.parametrize(
    "name", ["index pages", "www labels", "stray percent and escaped digits", "jsessionid segments"]
)
def test_same_is_linear_in_the_length(name):
    # same() explains both URLs, then again without each rule that fired: a constant number of
    # passes, each linear
    _assert_linear(name, HOSTILE[name][0], [("same", lambda u: same(u, u + "#x", POLICY))])
