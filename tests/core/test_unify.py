"""The public core API: resolve, standardize, identify, filter_reason, explain, same.

Examples come from the seed documents (the frontier paper's unification and resolution rules,
the crawler manual's standardization and unicity filters) and from the peers' known pitfalls.
"""

from __future__ import annotations

import pytest

from scrapy_urlunify import (
    InvalidURL,
    Policy,
    explain,
    filter_reason,
    identify,
    resolve,
    same,
    standardize,
)

# -- the mission statement's example ------------------------------------------------------------


def test_mission_example_is_one_page():
    a = "http://www.Site.com:80/a/../b/index.html;jsessionid=0AF3B2C1D4E5F60718293A4B5C6D7E8F#top"
    assert identify(a) == identify("https://site.com/b/") == "site.com/b"
    # the fetched URL only changes in ways the server answers identically
    assert standardize(a) == "http://www.site.com/b/index.html"


# -- unification and resolution examples from the frontier paper ---------------------------------


@pytest.mark.parametrize(
    "a, b",
    [
        ("http://www.ibc.rs", "http://ibc.rs"),
        ("https://www.unimet.rs/", "http://www.unimet.rs"),
        ("http://x.rs/en/index.html", "http://x.rs/en/"),
        ("http://x.rs/sr/index.html#site", "http://x.rs/sr/index.html"),
        ("http://x.rs/en/products/../index.html", "http://x.rs/en/index.html"),
    ],
)
def test_frontier_paper_equalizations(a, b):
    assert identify(a) == identify(b)


def test_frontier_paper_relative_paths_resolve_like_a_browser():
    # "/en/about/./contact.html" is /en/about/contact.html (the paper's "/contact.html" reading
    # is not what a browser does; we follow the browser)
    assert (
        resolve("/en/about/./contact.html", "http://www.eef.rs/sr/")
        == "http://www.eef.rs/en/about/contact.html"
    )
    assert (
        resolve("contact.html", "http://www.eef.rs/sr/index.html")
        == "http://www.eef.rs/sr/contact.html"
    )
    # "obviously invalid forms ... double or triple back-slashes in directory path"
    assert standardize("..\\\\en\\\\\\a.html", "http://x.rs/sr/b/") == "http://x.rs/sr/en/a.html"


# -- the crawler manual's standardization and unicity filters ----------------------------------


def test_standardization_filter_rules():
    url = "HTTP://News.ACME.com:80/a/../b/page.jsp;jsessionid=A1B2C3D4E5F6A7B8C9D0?PHPSESSID=9f8e7d6c5b4a39281716#ref"
    assert standardize(url) == "http://news.acme.com/b/page.jsp"


def test_unicity_filter_example_with_key_parameter_and_scope():
    policy = Policy(scope="acme", key_params=["cid"], remove_params=["inifile", "arglink"])
    a = "http://news.acme.com/servlet/ContentServer?inifile=futuretense.ini&cid=1145997360218&arglink=nolink"
    b = "http://news.acme.com/servlet/ContentServer?inifile=futuretense.ini&cid=1145997361017&arglink=nolink"
    c = "http://news.acme.com/servlet/ContentServer?cid=1145997360218&arglink=other"
    assert identify(a, policy) == "acme|news.acme.com/servlet/ContentServer?cid=1145997360218"
    assert identify(a, policy) != identify(b, policy)
    assert identify(a, policy) == identify(c, policy)
    # another scope: another identifier for the same URL
    assert identify(a, policy) != identify(a, policy.replace(scope="other"))


def test_key_params_only_when_present_and_per_host():
    policy = Policy(key_params={"shop.test": ["id"]})
    assert identify("http://shop.test/p?id=3&color=red", policy) == identify(
        "http://shop.test/p?color=blue&id=3", policy
    )
    # no key parameter in the URL: all parameters identify it
    assert identify("http://shop.test/p?color=red", policy) != identify(
        "http://shop.test/p?color=blue", policy
    )
    # another host is not covered
    assert identify("http://other.test/p?id=3&color=red", policy) != identify(
        "http://other.test/p?id=3", policy
    )
    # subdomains are
    assert identify("http://www.shop.test/p?id=3&x=1", policy) == identify(
        "http://shop.test/p?id=3", policy
    )


def test_remove_params_globs_and_hosts():
    policy = Policy(remove_params={"*": ["ref_*"], "docs.example.test": ["lang"]})
    assert standardize("http://a.test/x?ref_src=tw&q=1", policy=policy) == "http://a.test/x?q=1"
    assert (
        standardize("http://www.docs.example.test/x?lang=en&q=1", policy=policy)
        == "http://www.docs.example.test/x?q=1"
    )
    assert (
        standardize("http://example.test/x?lang=en", policy=policy)
        == "http://example.test/x?lang=en"
    )


# -- rewrite layer: what a server answers identically ------------------------------------------


@pytest.mark.parametrize(
    "url, fetched",
    [
        ("http://EXAMPLE.com:80/", "http://example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("http://example.com/a//b///c", "http://example.com/a/b/c"),
        # an embedded URL keeps its "//" (Wayback links)
        (
            "https://web.archive.org/web/2022/http://www.netlib.org/a",
            "https://web.archive.org/web/2022/http://www.netlib.org/a",
        ),
        ("http://example.com/%7euser/a%2fb%3f", "http://example.com/~user/a%2Fb%3F"),
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/#!/inbox", "http://example.com/#!/inbox"),
        ("http://example.com/app#/settings", "http://example.com/app#/settings"),
        ("http://example.com/a?", "http://example.com/a"),
        # never "?a" -> "?a=" (scrapy#1982), never reordered, never re-encoded
        ("http://example.com/a?b&a=1&c=%2F", "http://example.com/a?b&a=1&c=%2F"),
        (
            "http://example.com/a?utm_source=x&utm_medium=y&id=1&fbclid=abc&gclid=z",
            "http://example.com/a?id=1",
        ),
        (
            "http://example.com/a?x=1&mc_cid=1&mc_eid=2&_ga=3&_gl=4&msclkid=5&igshid=6&yclid=7&dclid=8",
            "http://example.com/a?x=1",
        ),
        (
            "http://example.com/a;jsessionid=0123456789abcdef0123456789abcdef.node01/b",
            "http://example.com/a/b",
        ),
        (
            "http://legislature.mi.gov/(S(4hqa0555fwsecu455xqckv45))/mileg.aspx",
            "http://legislature.mi.gov/mileg.aspx",
        ),
        (
            "http://example.com/(X(1)S(4hqa0555fwsecu455xqckv45))/a.aspx",
            "http://example.com/a.aspx",
        ),
        ("http://example.com/a?PHPSESSID=abc123&page=2", "http://example.com/a?page=2"),
        (
            "http://example.com/a?ASPSESSIONIDQADTTCSS=GPCBGCLBOLDKFDJHNFMLCBHM&x=1",
            "http://example.com/a?x=1",
        ),
        ("http://example.com/a?CFID=123456&CFTOKEN=abc-def-123&x=1", "http://example.com/a?x=1"),
        ("http://example.com/a?sid=0123456789abcdef0123&x=1", "http://example.com/a?x=1"),
    ],
)
def test_standardize(url, fetched):
    assert standardize(url) == fetched


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/a?sid=3",  # a section id, not a session
        "http://example.com/a?sid=documentationpages",  # a word
        "http://example.com/a?cfid=123",  # half a ColdFusion pair
        "http://example.com/a?xfbclid=1",  # anchored names only (urlnorm's negative case)
        "http://example.com/a?cid=7&source=rss&uid=3",  # courlan's false positives
        "http://example.com/a?page=2",
    ],
)
def test_standardize_keeps_parameters_that_may_matter(url):
    assert standardize(url) == url


def test_policy_switches_for_session_ids_and_trackers():
    url = "http://example.com/a?PHPSESSID=abc&utm_source=x"
    assert (
        standardize(url, policy=Policy(strip_session_ids=False))
        == "http://example.com/a?PHPSESSID=abc"
    )
    assert (
        standardize(url, policy=Policy(strip_tracking_params=False))
        == "http://example.com/a?utm_source=x"
    )


# -- identity layer ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, fetched, identifier",
    [
        # WordPress's comment "Reply" link: the post, its form under comment 41
        (
            "https://blog.test/2026/05/a-post/?replytocom=41#respond",
            "https://blog.test/2026/05/a-post/?replytocom=41",
            "blog.test/2026/05/a-post",
        ),
        # WooCommerce's add-to-cart and YITH's wishlist buttons on a listing and a product
        (
            "http://shop.test/product-category/tea/?orderby=price&add-to-cart=12",
            "http://shop.test/product-category/tea/?orderby=price&add-to-cart=12",
            "shop.test/product-category/tea?orderby=price",
        ),
        (
            "http://shop.test/product/oolong/?add_to_wishlist=12",
            "http://shop.test/product/oolong/?add_to_wishlist=12",
            "shop.test/product/oolong",
        ),
        # a nonce, in any case and past a doubled &amp;
        (
            "http://shop.test/compare/?products=3&amp;_WPNONCE=ab12cd",
            "http://shop.test/compare/?products=3&amp;_WPNONCE=ab12cd",
            "shop.test/compare?products=3",
        ),
    ],
)
def test_action_parameters_are_identity_only(url, fetched, identifier):
    assert standardize(url) == fetched  # the server acts on them: the URL fetched keeps them
    assert identify(url) == identifier
    assert identify(url, Policy(ignore_action_params=False)) != identifier


@pytest.mark.parametrize(
    "url",
    [
        "http://shop.test/?replytocom2=1",
        "http://shop.test/?add=1",
        "http://shop.test/?cart=5",
        "http://shop.test/?wpnonce=1",
        "http://shop.test/?x_replytocom=1",
    ],
)
def test_names_like_action_parameters_are_kept(url):
    assert identify(url) == url.removeprefix("http://")


@pytest.mark.parametrize(
    "a, b",
    [
        ("http://example.com/a", "https://example.com/a"),
        ("http://www.example.com/a", "http://example.com/a"),
        ("http://www2.example.com/a", "http://example.com/a"),
        ("http://example.com/a/", "http://example.com/a"),
        ("http://example.com/a/index.php", "http://example.com/a"),
        ("http://example.com/a/Default.aspx", "http://example.com/a/"),
        ("http://example.com/index.html?x=1", "http://example.com/?x=1"),
        ("http://example.com/a?b=2&a=1", "http://example.com/a?a=1&b=2"),
        ("http://example.com/a?a=1&b=", "http://example.com/a?a=1"),
        ("http://example.com/a?q=x%20y", "http://example.com/a?q=x+y"),
        ("http://user:pw@example.com/a", "http://example.com/a"),
        ("http://example.com./a", "http://example.com/a"),
    ],
)
def test_identity_merges(a, b):
    assert identify(a) == identify(b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("http://example.com/a?page=1", "http://example.com/a?page=2"),
        ("http://example.com/a", "http://example.com/b"),
        ("http://example.com/A", "http://example.com/a"),
        ("http://example.com/a.html", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com/a"),
        ("http://m.example.com/a", "http://example.com/a"),
        ("http://www.co.uk/a", "http://co.uk/a"),
        ("http://example.com/#!/a", "http://example.com/#!/b"),
        ("http://example.com/a?print", "http://example.com/a"),
        ("http://example.com/home.html", "http://example.com/"),
        ("http://sub.example.com/", "http://example.com/"),
    ],
)
def test_identity_keeps_apart(a, b):
    assert identify(a) != identify(b)


def test_keep_scheme_and_custom_prefixes_and_index_pages():
    p = Policy(ignore_scheme=False, strip_host_prefixes=["www", "m"], index_pages=["start.htm"])
    assert identify("http://m.example.com/", p) == "http://example.com/"
    assert identify("https://example.com/", p) == "https://example.com/"
    assert identify("http://example.com/d/start.htm", p) == "http://example.com/d"
    assert identify("http://example.com/d/index.html", p) == "http://example.com/d/index.html"


def test_domain_aliases_map_hosts_and_their_subdomains():
    p = Policy(domain_aliases=[["site.test", "site-mirror.test", "oldsite.test"]])
    assert identify("http://www.site-mirror.test/a", p) == "site.test/a"
    assert identify("http://shop.oldsite.test/a", p) == "shop.site.test/a"
    assert identify("http://unrelated.test/a", p) == "unrelated.test/a"
    # identity only: the fetched URL keeps the host the link named
    assert standardize("http://site-mirror.test/a", policy=p) == "http://site-mirror.test/a"


def test_sister_suffixes_only_within_the_sites_of_the_crawl():
    p = Policy(sister_suffixes=True, sites=["termomont.rs", "www.euromodul.rs"])
    assert (
        identify("http://termomont.co.rs/x", p)
        == identify("http://www.termomont.rs/x", p)
        == "termomont.rs/x"
    )
    assert identify("http://euromodul.hr/x", p) == "euromodul.rs/x"
    # not a sister of a site of the crawl: never merged (ural's strip_suffix bug)
    assert identify("http://example.co.rs/x", p) == "example.co.rs/x"
    assert identify("http://example.com/x", p) != identify("http://example.co.rs/x", p)
    # off by default
    assert identify("http://termomont.co.rs/x") == "termomont.co.rs/x"
    # an explicit list turns it on with those sites
    assert (
        identify("http://termomont.co.rs/x", Policy(sister_suffixes=["termomont.rs"]))
        == "termomont.rs/x"
    )


# -- filters: special links and blacklisted extensions -------------------------------------------


@pytest.mark.parametrize(
    "url, reason",
    [
        ("mailto:someone@example.com", "scheme:mailto"),
        ("javascript:void(0)", "scheme:javascript"),
        ("tel:+381111", "scheme:tel"),
        ("data:text/plain,hi", "scheme:data"),
        ("ftp://example.com/f", "scheme:ftp"),
        ("http://example.com/report.PDF", "extension:pdf"),
        ("http://example.com/a.tar.gz", "extension:tar.gz"),
        ("http://example.com/img.jpg?w=100", "extension:jpg"),
        ("http://example.com/a/b/a/b/a/b", "trap"),
        ("http://example.com/" + "x" * 2100, "too-long"),
        ("http://exa mple.com/", "invalid"),
        ("", "invalid"),
        ("/relative/without/base", "invalid"),
        ("http://example.com/page.html", None),
        ("http://example.com/a/a/b", None),
        ("http://example.com/pdf/", None),
    ],
)
def test_filter_reason(url, reason):
    assert filter_reason(url) == reason


def test_filter_reason_policy_knobs():
    assert filter_reason("http://example.com/a.pdf", Policy(deny_extensions=["zip"])) is None
    assert (
        filter_reason("http://example.com/a.zip", Policy(deny_extensions=[".ZIP"]))
        == "extension:zip"
    )
    assert filter_reason("http://example.com/aaaa", Policy(max_url_length=20)) == "too-long"
    assert filter_reason("http://example.com/a/b/a/b/a/b", Policy(trap_repetitions=0)) is None
    assert filter_reason("http://example.com/a/a", Policy(trap_repetitions=2)) == "trap"
    assert filter_reason("page.pdf", base="http://example.com/") == "extension:pdf"


def test_filter_reason_is_about_the_fetched_url():
    # a denied extension hidden behind a session id is still seen
    assert filter_reason("http://example.com/a.pdf;jsessionid=0123456789ABCDEF") == "extension:pdf"


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["", "http://", "http://[::1/", "http://a b/", "//no-scheme", "\ud800", "http://\x00/"]
)
def test_invalid_urls_raise_invalid_url(bad):
    with pytest.raises(InvalidURL):
        standardize(bad)
    with pytest.raises(InvalidURL):
        identify(bad)
    assert issubclass(InvalidURL, ValueError)


def test_non_http_urls_are_kept_verbatim():
    assert standardize("mailto:a@b.c") == "mailto:a@b.c"
    assert identify("mailto:a@b.c", Policy(scope="s")) == "s|mailto:a@b.c"


# -- explain and same ------------------------------------------------------------------------------


def test_explain_names_each_rule_and_its_layer():
    e = explain("http://www.example.com/a/index.html?utm_source=x#top")
    fired = {(f.rule, f.layer) for f in e.fired}
    assert {
        ("drop_fragment", "rewrite"),
        ("remove_tracking_params", "rewrite"),
        ("ignore_scheme", "identity"),
        ("unify_host", "identity"),
        ("drop_index_page", "identity"),
    } <= fired
    assert "strip_host_prefix" in e.rule_names
    assert e.result.fetch_url == "http://www.example.com/a/index.html"
    assert e.result.identifier == "example.com/a"


def test_same_names_the_deciding_rules():
    c = same("http://www.example.com/a/", "https://example.com/a")
    assert c.same
    assert set(c.deciding) == {"ignore_scheme", "strip_host_prefix", "drop_trailing_slash"}
    c = same("http://example.com/a?page=1", "http://example.com/a?page=2")
    assert not c.same and c.deciding == ()
    c = same("http://example.com/a/./b", "http://example.com/a/b")
    assert c.same and c.deciding == ("resolve",)


def test_same_reports_rules_that_are_each_enough():
    # remove_params and key_params both drop "arglink": neither is needed alone, both together are
    p = Policy(key_params=["cid"], remove_params=["inifile", "arglink"])
    c = same("http://n.test/s?inifile=x&cid=11&arglink=a", "http://n.test/s?cid=11&arglink=b", p)
    assert c.same and c.deciding == ()
    assert set(c.any_of) == {"remove_policy_params", "keep_key_params"}


def test_route_fragments_off_drops_every_fragment():
    p = Policy(route_fragments=False)
    assert standardize("http://example.com/a#!/x", policy=p) == "http://example.com/a"
    assert identify("http://example.com/a#!/x", p) == identify("http://example.com/a#/y", p)


def test_ignore_path_prefixes_is_identity_only():
    p = Policy(ignore_path_prefixes={"docs.test": ["print", "index.php"]})
    assert identify("http://docs.test/print/a/b.html", p) == identify(
        "http://docs.test/a/b.html", p
    )
    assert identify("http://www.docs.test/index.php/a", p) == "docs.test/a"
    assert identify("http://docs.test/print/", p) == "docs.test/print"  # the segment alone stays
    assert identify("http://docs.test/printer/a", p) == "docs.test/printer/a"
    assert identify("http://other.test/print/a", p) == "other.test/print/a"
    assert standardize("http://docs.test/print/a", policy=p) == "http://docs.test/print/a"


# -- what peers' normalization suites showed -----------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("http://a.test/?q=foobar|", "http://a.test/?q=foobar%7C"),
        ("http://a.test/?q=foobar|", "http://a.test/?q=foobar%7c"),
        ("http://a.test/x[y]", "http://a.test/x%5By%5D"),
        ("http://a.test/form?a[]=1&a[]=2", "http://a.test/form?a%5B%5D=1&a%5B%5D=2"),
        ("http://a.test/a^b", "http://a.test/a%5Eb"),
        ("http://a.test/?a=`b`", "http://a.test/?a=%60b%60"),
        ("http://a.test/{x}?{y}", "http://a.test/%7Bx%7D?%7By%7D"),
        ('http://a.test/?q="x"', "http://a.test/?q=%22x%22"),
    ],
)
def test_characters_servers_decode_alike_have_one_identifier(raw, escaped):
    assert identify(raw) == identify(escaped)
    # identity layer only: the URL to fetch keeps the link's spelling (as a browser writes it)
    assert standardize(raw) == resolve(raw)
    assert "%" in identify(raw)  # the identifier writes them escaped (docs/rules.md)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://a.test/a%2Fb", "http://a.test/a/b"),
        ("http://a.test/?a=1%26b=2", "http://a.test/?a=1&b=2"),
        ("http://a.test/?a%3D1", "http://a.test/?a=1"),
        ("http://a.test/?q=a%2Bb", "http://a.test/?q=a+b"),
        ("http://a.test/a%3Bb", "http://a.test/a;b"),
        ("http://a.test/a%3Fb", "http://a.test/a?b"),
    ],
)
def test_reserved_characters_keep_their_meaning(a, b):
    assert identify(a) != identify(b)


@pytest.mark.parametrize(
    "url",
    [
        "http://a.test/page?_sessionid=e36902d5bb2d0d922fc24b43",
        "http://a.test/page?_sid=e36902d5bb2d0d922fc24b43",
        "http://a.test/page?_sessionID=824A6C0A13a7e11205wxN28F44E3",
        "http://a.test/page?_session_id=824A6C0A13a7e11205wxN28F44E3",
        "http://a.test/(a(ckmmbxr4ts5s4la55rsk2tu5)s(a4ja1u55cqakcn55sws24vni)f(1))/page",
        "http://a.test/(s(a4ja1u55cqakcn55sws24vni))/page",
        "http://a.test/(4hqa0555fwsecu455xqckv45)/page",
    ],
)
def test_session_ids_peers_strip(url):
    assert standardize(url) == "http://a.test/page"
    assert standardize(url, policy=Policy(strip_session_ids=False)) != "http://a.test/page"


@pytest.mark.parametrize(
    "url",
    [
        "http://a.test/page?_sid=3",  # not a token: a real identifier
        "http://a.test/page?_sessionid=documentation",
        "http://a.test/(notasession)/page",
        "http://a.test/(4hqa0555fwsecu455xqckv4)/page",  # 23 characters
        "http://a.test/(4HQA0555FWSECU455XQCKV45)/page",  # 1.x ids are lower-case
    ],
)
def test_look_alikes_of_session_ids_are_kept(url):
    assert standardize(url) == url


@pytest.mark.parametrize("fragment", ["#!", "#!/", "#/"])
def test_empty_routes_are_the_page_itself(fragment):
    assert standardize("http://a.test/app" + fragment) == "http://a.test/app"
    assert identify("http://a.test/app" + fragment) == identify("http://a.test/app")
    # a route with something after it stays a route
    assert identify(f"http://a.test/app{fragment}x") != identify("http://a.test/app")


def test_the_result_cache_is_bounded_and_grows_with_the_crawl():
    import scrapy_urlunify.core._unify as unify
    from scrapy_urlunify import Unifier

    u = Unifier(Policy())
    held = []
    for i in range(400_000):
        u.identify(f"https://a.test/p{i}")
        held.append(len(u._cache) + len(u._old))
    # never more than two generations of the limit reached, which grew past the minimum
    assert u._cache_limit > unify._CACHE_MIN
    assert max(held) <= 2 * u._cache_limit
    assert max(held[: unify._CACHE_MIN * 4]) <= 2 * unify._CACHE_MIN
    # an URL seen again is found in the old generation and kept
    u.identify("https://a.test/p399999")
    recent = "https://a.test/p399998"
    assert recent in u._cache or recent in u._old


def test_a_link_seen_over_and_over_stays_cached():
    from scrapy_urlunify import Unifier

    u = Unifier(Policy())
    nav = "https://a.test/index.html"
    first = u.result(nav)
    for i in range(50_000):
        u.result(f"https://a.test/p{i}")
        if i % 1000 == 0:
            assert u.result(nav) is first


# -- gaps other projects' suites show -------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a stray "%" and the "%25" written for it, in path and query
        ("http://h.test/100%", "http://h.test/100%25"),
        ("http://h.test/a%zz/b", "http://h.test/a%25zz/b"),
        ("http://h.test/?q=5%", "http://h.test/?q=5%25"),
        ("http://h.test/?q=%&r=1", "http://h.test/?r=1&q=%25"),
        # the escaped digits the rewrite layer keeps after a stray "%" are decoded with it
        ("http://h.test/%%36%31", "http://h.test/%25%36%31"),
        ("http://h.test/%%36%31", "http://h.test/%2561"),
        # "&amp;" left by a page that escaped its HTML twice (also three times)
        ("http://h.test/p?a=1&amp;b=2", "http://h.test/p?a=1&b=2"),
        ("http://h.test/p?a=1&amp;amp;b=2", "http://h.test/p?b=2&a=1"),
        # ... between the halves of ColdFusion's session pair (found by test_properties)
        ("http://h.test/?cfid=0&amp;cftoken=0", "http://h.test/"),
        ("http://h.test/p?cfid=12&amp;amp;CFTOKEN=ab-1&x=1", "http://h.test/p?x=1"),
        # more session ids: BroadVision, a UUID under a session name
        ("http://h.test/p?BV_SessionID=@@@@1234567890.1234567890@@@@&x=1", "http://h.test/p?x=1"),
        ("http://h.test/p?Bv_SessionID=@@@@0203452745.1190132405@@@@", "http://h.test/p"),
        ("http://h.test/p?sid=3f2b8c1e-9d4a-4e6b-8f0a-1c2d3e4f5a6b&x=1", "http://h.test/p?x=1"),
        ("http://h.test/p?jsid=0123456789abcdef0123&x=1", "http://h.test/p?x=1"),
        ("http://h.test/p?sid=a1b2c3d4e5f6a7b8c9d0", "http://h.test/p"),
        # trackers: AT Internet, Echobox, Google Ads, Meta, Yahoo, internal campaigns
        ("http://h.test/p?xtor=RSS-8&id=1", "http://h.test/p?id=1"),
        ("http://h.test/p?echobox=1580000000", "http://h.test/p"),
        ("http://h.test/p?gad_source=1&id=1", "http://h.test/p?id=1"),
        ("http://h.test/p?fb_action_ids=1&fb_action_types=og.likes&fb_source=x", "http://h.test/p"),
        ("http://h.test/p?guccounter=1", "http://h.test/p"),
        ("http://h.test/p?itm_source=home&itm_medium=tile", "http://h.test/p"),
    ],
)
def test_more_spellings_of_one_page(a, b):
    assert identify(a) == identify(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # "sid" with a value that is no session: a site or section id, a word, a short code
        ("http://h.test/p?sid=3", "http://h.test/p"),
        ("http://h.test/p?sid=3", "http://h.test/p?sid=4"),
        ("http://h.test/p?sid=news", "http://h.test/p"),
        ("http://h.test/p?sid=a1b2c3", "http://h.test/p"),
        ("http://h.test/p?sid=documentationpages", "http://h.test/p"),
        # "%" that starts an escape is not stray; "%2525" is one level more
        ("http://h.test/%41", "http://h.test/%2541"),
        ("http://h.test/100%", "http://h.test/100%2525"),
        # "amp;" inside a name, or an item named "amp" without the option
        ("http://h.test/p?ramp;=1", "http://h.test/p?r=1"),
        ("http://h.test/p?amp=1", "http://h.test/p"),
        ("http://h.test/p/amp", "http://h.test/p"),
        # xtor-like names that are not AT Internet's
        ("http://h.test/p?xtors=1", "http://h.test/p"),
        ("http://h.test/p?itm_id=1", "http://h.test/p"),
    ],
)
def test_still_different_pages(a, b):
    assert identify(a) != identify(b)


def test_stray_percent_and_amp_entities_are_identity_only():
    # a browser sends a stray "%" as it is, and a server reads "amp;b" as a parameter of that
    # name: the URL to fetch keeps what the page wrote
    assert standardize("http://h.test/100%?q=5%") == "http://h.test/100%?q=5%"
    assert standardize("http://h.test/p?a=1&amp;b=2") == "http://h.test/p?a=1&amp;b=2"
    assert [
        (f.rule, f.layer) for f in explain("http://h.test/100%").fired if f.rule != "ignore_scheme"
    ] == [("escape_unsafe_chars", "identity")]
    assert [
        (f.rule, f.layer)
        for f in explain("http://h.test/p?a=1&amp;b=2").fired
        if f.rule != "ignore_scheme"
    ] == [("unescape_amp", "identity")]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://h.test/news/story/amp", "http://h.test/news/story"),
        ("http://h.test/news/story/amp/", "http://h.test/news/story/"),
        ("http://h.test/news/story/AMP", "http://h.test/news/story"),
        ("http://h.test/news/index.html/amp", "http://h.test/news/"),
        ("http://h.test/news/amp/index.html", "http://h.test/news"),
        ("http://h.test/amp", "http://h.test/"),
        ("http://h.test/news/story?amp", "http://h.test/news/story"),
        ("http://h.test/news/story?amp=1&page=2", "http://h.test/news/story?page=2"),
        ("http://h.test/news/story?AMP=true", "http://h.test/news/story"),
        # an item named "amp" once "&amp;" is read as "&", as the other names are
        ("http://h.test/news/story?a=1&amp;amp", "http://h.test/news/story?a=1"),
        ("http://h.test/?&amp;amp", "http://h.test/"),
    ],
)
def test_amp_markers_with_ignore_amp(a, b):
    p = Policy(ignore_amp=True)
    assert identify(a, p) == identify(b, p)
    # identity only: the AMP page is what is fetched
    assert standardize(a, policy=p) != standardize(b, policy=p)


def test_amp_markers_are_only_markers():
    p = Policy(ignore_amp=True)
    assert identify("http://h.test/amplifiers", p) == "h.test/amplifiers"
    assert identify("http://h.test/amp/story", p) == "h.test/amp/story"
    assert identify("http://h.test/p?ampere=1&amp2=3", p) == "h.test/p?amp2=3&ampere=1"
    assert "drop_amp_marker" in same("http://h.test/a/amp", "http://h.test/a", p).deciding
