"""Near-duplicate fingerprints and their index: what a crawl would notice.

A view of a page with a banner, a redirect line, another counter, another "last edited" date,
another form token, or without its navigation is a near-duplicate of the page; two distinct
articles, even two stubs of one template, are not; the index finds the nearest page, survives a
bytes round trip with the same answers, stays bounded, and fingerprints do not depend on the
process that computed them (they persist in a JOBDIR or Redis)."""

from __future__ import annotations

import subprocess
import sys
import time
import tracemalloc

import pytest
from lxml import html
from wikisite import article_text

from scrapy_urlunify.learning._near_duplicate_index import MAX_DISTANCE, Match, NearDuplicateIndex
from scrapy_urlunify.learning._near_duplicates import (
    ITEM_DISTANCE,
    MIN_FEATURES,
    PAGE_DISTANCE,
    distance,
    fingerprint,
    folded_fingerprint,
    main_text,
    page_fingerprint,
    resemblance,
    short_fingerprint,
)

ARTICLE = """
The river rises in the northern hills, where a dozen small streams meet below the old quarry
village. For most of its course it runs through farmland, and its banks were drained in the
nineteenth century to make room for pasture and orchards. A canal built in 1823 links it to the
neighbouring valley; barges carried coal and timber on it until the railway arrived in 1871.
The lower reaches flood almost every winter. Since the great flood of 1953, earthworks and a
tidal barrier protect the market town at its mouth, where the river widens into a marshy estuary
that is home to wading birds, seals in the cold months, and a small fishing fleet.
Water quality improved sharply after the paper mills closed, and salmon returned in the 1990s.
Anglers now need a permit from the conservation trust, which also runs guided walks along the
towpath, a visitor centre in the former lock keeper's cottage, and a programme of volunteer days.
The name is thought to come from an old word for swift or bright water, though local historians
disagree, and some argue that it derives from the name of a landowner recorded in the survey.
"""

OTHER_ARTICLE = """
The castle stands on a rocky spur above the harbour and was begun by a Norman lord soon after the
conquest. It was rebuilt in stone during the twelfth century, besieged twice during the civil war,
and partly demolished by order of parliament so that it could never again be held against the
crown. The great hall survives without its roof; the gatehouse was restored in the Victorian era
and now houses a small museum of arms, coins and pottery found on the site by excavators. Every
summer a festival of music and theatre fills the inner ward, and the walls are lit at night.
Visitors reach it by a steep lane from the quay or by a path through the woods from the church.
"""

STUB_NOTICE = "This article is a stub. You can help Example Wiki by expanding it."


def page(
    content: str, *, top: str = "", bottom: str = "", nav: bool = True, title: str = "River"
) -> bytes:
    """A MediaWiki-like page: navigation, sidebar and footer around a ``main`` content."""
    chrome = """<div id="mw-navigation"><a href="/wiki/Main_Page">Main page</a> | <a href="/wiki/Special:Random">
        Random article</a> | <a href="/wiki/Help:Contents">Help</a> | Recent changes | Upload file |
        What links here | Related changes | Special pages | Printable version | Page information</div>
        <div id="mw-panel">Tools Languages Deutsch Français Español Italiano Nederlands Polski</div>"""
    footer = """<div id="footer">Content is available under Creative Commons Attribution-ShareAlike
        unless otherwise noted. Privacy policy | About Example Wiki | Disclaimers | Mobile view</div>"""
    return f"""<!DOCTYPE html><html><head><title>{title}</title><style>p {{margin: 0}}</style>
        <script>var wgRevisionId = 4521;</script></head><body>{chrome if nav else ""}
        <div id="content" role="main"><h1>{title}</h1>{top}<div id="mw-content-text">
        {"".join(f"<p>{p}</p>" for p in content.strip().split(chr(10) * 2))}</div>{bottom}</div>
        {footer if nav else ""}</body></html>""".encode()


def fp(document: bytes) -> int:
    found = fingerprint(main_text(html.document_fromstring(document)))
    assert found is not None
    return found


BANNER = (
    '<div id="contentSub">Revision as of 12:34, 5 May 2024 by Example (talk | contribs) '
    "(diff) ← Older revision | Latest revision (diff) | Newer revision → (diff)</div>"
)


@pytest.mark.parametrize(
    ("top_a", "bottom_a", "top_b", "bottom_b", "nav_b"),
    [
        pytest.param("", "", BANNER, "", True, id="permanent link banner"),
        pytest.param(
            "",
            "",
            '<span class="mw-redirectedfrom">(Redirected from Old river)</span>',
            "",
            True,
            id="redirect view",
        ),
        pytest.param(
            "",
            "<p>This page was last edited on 5 May 2024, at 12:34.</p>",
            "",
            "<p>This page was last edited on 17 November 2025, at 09:01.</p>",
            True,
            id="last edited",
        ),
        pytest.param(
            "",
            "<p>This page has been accessed 999 times.</p>",
            "",
            "<p>This page has been accessed 1,000 times.</p>",
            True,
            id="view counter",
        ),
        pytest.param(
            "",
            '<form><input type="hidden" name="wpEditToken" value="a1b2c3+\\"></form>',
            "",
            '<form><input type="hidden" name="wpEditToken" value="f9e8d7+\\"></form>',
            True,
            id="token",
        ),
        pytest.param("", "", "", "", False, id="print view"),
    ],
)
def test_a_view_of_a_page_is_a_near_duplicate_of_it(top_a, bottom_a, top_b, bottom_b, nav_b):
    a = fp(page(ARTICLE, top=top_a, bottom=bottom_a))
    b = fp(page(ARTICLE, top=top_b, bottom=bottom_b, nav=nav_b))
    assert distance(a, b) <= PAGE_DISTANCE
    index = NearDuplicateIndex()
    index.add(a, 1)
    found = index.nearest(b, PAGE_DISTANCE)
    assert found is not None
    assert found.key == 1
    assert found.resemblance >= resemblance(PAGE_DISTANCE)


def test_a_mediawiki_printable_view_has_the_fingerprint_of_its_article():
    # the printable view: no "[edit]" links, a message box inside the article text, no navigation
    def view(printable: bool) -> bytes:
        edit = (
            ""
            if printable
            else '<span class="mw-editsection">[<a href="?action=edit">edit</a>]</span>'
        )
        box = (
            (
                '<div class="mw-message-box-warning mw-message-box">The printable version is no longer '
                "supported and may have rendering errors.</div>"
            )
            if printable
            else ""
        )
        nav = "" if printable else "<div id='mw-navigation'>Main page | Random article | Help</div>"
        return (
            f"<html><body>{nav}<div id='content' role='main'><h1>River</h1>"
            f"<div id='mw-content-text'>{box}<h2>History{edit}</h2><p>{ARTICLE}</p>"
            f"<h2>Castle{edit}</h2><p>{OTHER_ARTICLE}</p></div></div></body></html>"
        ).encode()

    assert fp(view(False)) == fp(view(True))


def test_a_banner_inside_the_content_of_a_long_article_leaves_it_a_near_duplicate():
    import random

    words = (ARTICLE + OTHER_ARTICLE).split()
    rng = random.Random(5)  # a long article of distinct sentences, ~2,000 words; the banner ~25
    long_article = "\n\n".join(" ".join(rng.sample(words, 200)) + "." for _ in range(10))
    plain = fp(page(long_article).replace(b'id="mw-content-text"', b""))
    with_banner = fp(page(long_article, top=BANNER).replace(b'id="mw-content-text"', b""))
    assert distance(plain, with_banner) <= PAGE_DISTANCE


def test_distinct_articles_are_not_near_duplicates_not_even_two_stubs_of_one_template():
    assert ITEM_DISTANCE <= PAGE_DISTANCE <= MAX_DISTANCE
    assert distance(fp(page(ARTICLE)), fp(page(OTHER_ARTICLE, title="Castle"))) > PAGE_DISTANCE
    stub_a = page(
        "The Oldbrook is a tributary of the river. It joins it below the quarry village.",
        bottom=f"<p>{STUB_NOTICE}</p><p>Categories: Rivers | Stubs</p>",
        title="Oldbrook",
    )
    stub_b = page(
        "Millford is a hamlet on the canal. Its mill closed in the 1930s.",
        bottom=f"<p>{STUB_NOTICE}</p><p>Categories: Villages | Stubs</p>",
        title="Millford",
    )
    assert distance(fp(stub_a), fp(stub_b)) > PAGE_DISTANCE
    index = NearDuplicateIndex()
    index.add(fp(stub_a), 1)
    assert index.nearest(fp(stub_b)) is None


def test_main_text_reads_the_main_content_else_the_body():
    document = html.document_fromstring(
        "<html><body><nav>Home | About</nav><main>Hello <b>world</b><script>x=1</script></main>"
        "<footer>(c) 2024</footer></body></html>"
    )
    assert main_text(document).split() == ["Hello", "world"]
    document = html.document_fromstring(
        "<html><body><p>Just <i>text</i></p><style>p{}</style></body></html>"
    )
    assert main_text(document).split() == ["Just", "text"]


ISSUE = (
    "<html><body><div id='header'><h1>Harbor</h1></div><div id='content'>{nav}<h2>Bug #12</h2>"
    "<div class='description'><p>{text}</p></div></div></body></html>"
)


@pytest.mark.parametrize(
    "nav",
    [
        # Redmine, when the session's last list holds the issue
        "<div class='next-prev-links contextual'>« Previous | <span class='position'>"
        "<a href='/projects/harbor/issues?set_filter=1'>3 of 55</a></span> | "
        "<a href='/issues/11'>Next »</a></div>",
        "<nav class='navigation post-navigation'><a href='/a'>Previous post: On lakes</a></nav>",
        "<div role='navigation'><a href='/b'>Up</a></div>",
        "<ul class='pagination'><li><a href='?page=2'>2</a></li><li>Next</li></ul>",
        "<ol class='breadcrumb'><li>Home</li><li>Issues</li></ol>",
        # Redmine marks the session's last list in its sidebar, with a "Clear" link
        "<div id='sidebar'><h3>Custom queries</h3><ul class='queries'><li><a class='query "
        "selected' href='/projects/harbor/issues?query_id=3'>Updated issues</a><a title='Clear'"
        " href='/issues/12?project_id=harbor&amp;set_filter=1'>Clear</a></li></ul></div>",
        "<aside class='widget-area'><h2>Recent posts</h2><a href='/p/9'>On lakes</a></aside>",
    ],
)
def test_the_frame_inside_a_page_is_not_its_text(nav: str) -> None:
    # the block names other pages and changes with them (and with the session), not with this
    # page: an issue under "3 of 55" and under no list is one page
    text = article_text("issue", 120)
    plain, with_nav = (
        main_text(html.document_fromstring(ISSUE.format(nav=n, text=text))) for n in ("", nav)
    )
    assert plain == with_nav
    assert "Bug #12" in plain


def test_a_page_too_short_without_its_frame_keeps_it() -> None:
    # a photo's page: "Gallery" and its navigation are all its words; without the navigation
    # every photo would be one page (equal short texts), and its items dropped
    page = (
        "<html><body><main><h1>Gallery</h1><img src='/p/{n}.jpg'>"
        "<div class='next-prev-links'>« Previous | {n} of 55 | Next »</div></main></body></html>"
    )
    three, four = (main_text(html.document_fromstring(page.format(n=n))) for n in (3, 4))
    assert "3 of 55" in three
    assert page_fingerprint(three) != page_fingerprint(four)
    # however deep its markup is indented: white space is no text
    indented = page.replace("<img", "\n" + " " * 6000 + "<img")
    assert "3 of 55" in main_text(html.document_fromstring(indented.format(n=3)))


def test_a_class_that_only_contains_a_navigation_name_is_text() -> None:
    # whole class names only: "navbar-text", "pages" and "paging-note" are not navigation
    nav = "<div class='navbar-text pages paging-note'>Signed in as Alice</div>"
    text = main_text(html.document_fromstring(ISSUE.format(nav=nav, text="x")))
    assert "Signed in as Alice" in text


POST = (
    "<html><body><nav>Home | About</nav><main><h1>On rivers</h1><p>{article}</p>"
    "<div id='comments'><h2>12 comments</h2><ol>{comments}</ol><script>x=1</script></div>"
    "</main></body></html>"
)


def _comments(page: int) -> str:
    return "".join(
        f"<li>Reader {page}-{i} says: {article_text(f'c{page}-{i}', 22)}</li>" for i in range(10)
    )


def test_a_post_under_other_comments_is_the_same_main_text():
    article = article_text("post", 220)
    first, last = (
        main_text(html.document_fromstring(POST.format(article=article, comments=_comments(p))))
        for p in (1, 2)
    )
    # the comments are not the article: both comment pages read as the post alone
    assert first == last
    assert "Reader" not in first
    assert "On rivers" in first
    assert page_fingerprint(first) == page_fingerprint(
        main_text(html.document_fromstring(POST.format(article=article, comments="")))
    )


def test_a_page_that_is_little_but_comments_keeps_them():
    # a guest book: a line of its own, too short for a SimHash without its entries; without
    # them its pages would all read "Guest book" and be one page
    first, second = (
        main_text(
            html.document_fromstring(
                POST.format(article="Sign our guest book.", comments=_comments(p))
            )
        )
        for p in (1, 2)
    )
    assert "Reader 1-0 says" in first
    assert "Reader 2-0 says" in second
    assert "x=1" not in first
    assert page_fingerprint(first) != page_fingerprint(second)


def test_a_comments_element_outside_the_main_content_changes_nothing():
    document = html.document_fromstring(
        "<html><body><div id='comments'>Latest: a reader wrote</div><main>Hello <b>world</b>"
        "</main></body></html>"
    )
    assert main_text(document).split() == ["Hello", "world"]


def test_a_text_without_words_has_no_fingerprint():
    assert fingerprint("") is None
    assert fingerprint(" \n\t ") is None


def test_white_space_case_and_numbers_do_not_change_a_fingerprint():
    assert fingerprint("Viewed 999 times by   the\nReaders") == fingerprint(
        "viewed 123 times by the readers"
    )


def test_the_index_finds_the_nearest_page_and_its_resemblance():
    base = fp(page(ARTICLE))
    index = NearDuplicateIndex()
    index.add(base ^ 0b111, 7)  # 3 bits away
    index.add(base ^ 0b1, 8)  # 1 bit away
    index.add(base ^ (0xFFFF << 20), 9)  # 16 bits away
    assert index.nearest(base) == Match(8, 1, resemblance(1))
    assert index.nearest(base, max_distance=0) is None
    assert index.nearest(base ^ (0xFFFF << 20), 0) == Match(9, 0, 1.0)
    with pytest.raises(ValueError, match="max_distance"):
        index.nearest(base, MAX_DISTANCE + 1)


def test_seen_remembers_new_pages_and_near_duplicates_but_not_the_same_fingerprint_twice():
    index = NearDuplicateIndex()
    assert index.seen(0xABCD << 30, 1) is None
    assert index.seen(0xABCD << 30, 2) == Match(1, 0, 1.0)
    assert len(index) == 1
    assert index.seen((0xABCD << 30) ^ 0b11, 3) == Match(1, 2, resemblance(2))
    assert len(index) == 2


def test_every_page_within_the_reach_is_found_at_any_size():
    import random

    rng = random.Random(20)
    index = NearDuplicateIndex()
    fingerprints = [rng.getrandbits(64) for _ in range(5000)]
    for key, value in enumerate(fingerprints):
        index.add(value, key)
    for key in range(0, 5000, 7):
        bits = rng.randrange(MAX_DISTANCE + 1)
        probe = fingerprints[key]
        for bit in rng.sample(range(64), bits):
            probe ^= 1 << bit
        found = index.nearest(probe)
        assert found is not None
        assert found.distance <= bits


def test_the_index_persists_as_bytes_and_answers_the_same_after_reloading():
    import random

    rng = random.Random(3)
    index = NearDuplicateIndex(capacity=1000)
    added = [rng.getrandbits(64) for _ in range(600)]
    for key, value in enumerate(added):
        index.add(value, key)
    data = index.to_bytes()
    reloaded = NearDuplicateIndex.from_bytes(data)
    assert reloaded == index
    assert reloaded.to_bytes() == data
    probes = [rng.getrandbits(64) for _ in range(200)] + [f ^ 0b101 for f in added[:200]]
    assert [reloaded.nearest(p) for p in probes] == [index.nearest(p) for p in probes]
    assert len(data) == len(index.to_bytes()) < 16 * 600 + 64
    for broken in (b"", data[:-1], b"XXXX" + data[4:]):
        with pytest.raises(ValueError, match="near-duplicate index"):
            NearDuplicateIndex.from_bytes(broken)


def test_a_full_index_still_answers_and_adds_nothing():
    index = NearDuplicateIndex(capacity=2)
    assert index.add(1, 1)
    assert index.add(1 << 40, 2)
    assert index.full
    assert not index.add(0xFFFF << 8, 3)
    assert len(index) == 2
    assert index.nearest(0xFFFF << 8) is None
    assert index.nearest(1) == Match(1, 0, 1.0)


def test_a_huge_text_is_bounded_in_time_and_memory():
    head = ARTICLE * 2000  # ~2.4 MB, more than the first megabyte read
    huge = head + "filler words " * 4_000_000  # ~52 MB more
    assert fingerprint(huge) == fingerprint(head + "something else entirely")
    tracemalloc.start()
    started = time.perf_counter()
    fingerprint(huge)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 12 * 2**20, peak  # a few copies of the first MiB, never the 52 MB
    assert elapsed < 2.0  # ~30 ms idle; a loaded machine gets a wide margin


FIXED_TEXT = "Revision as of 12:34, 5 May 2024. The river rises in the northern hills, " * 3


def test_fingerprints_are_the_same_in_another_process_and_pinned():
    here = fingerprint(FIXED_TEXT)
    script = (
        "from scrapy_urlunify.learning._near_duplicates import fingerprint;"
        f"print(fingerprint({FIXED_TEXT!r}))"
    )
    for seed in ("0", "12345"):
        out = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": ":".join(sys.path)},
        )
        assert int(out.stdout) == here
    # persisted fingerprints are compared with new ones: a change of the algorithm shows here
    assert here == PINNED


PINNED = 0x5D1511831AEF4C80


SHORT = "<html><body>{banner}<main><h1>Red kettle</h1><p>Steel, 1.7 litres. {price} EUR.</p></main></body></html>"


def test_a_page_too_short_for_simhash_is_alike_only_when_its_main_text_is_equal():
    page = main_text(html.document_fromstring(SHORT.format(banner="", price="29")))
    printed = main_text(
        html.document_fromstring(SHORT.format(banner="<p>Printer-friendly version</p>", price="29"))
    )
    other = main_text(html.document_fromstring(SHORT.format(banner="", price="39")))
    assert fingerprint(page, min_features=MIN_FEATURES) is None  # too few chunks for SimHash
    assert page_fingerprint(page) == page_fingerprint(printed) == (short_fingerprint(page), True)
    # digits and case count here: one price, one word, is another page
    assert page_fingerprint(other) != page_fingerprint(page)
    assert short_fingerprint(page.upper()) != short_fingerprint(page)
    assert short_fingerprint(" \n ") is None
    assert page_fingerprint("") is None
    assert page_fingerprint(ARTICLE) == (fingerprint(ARTICLE, min_features=MIN_FEATURES), False)


def test_a_digest_up_to_numbers_is_equal_only_for_texts_that_differ_in_their_numbers():
    rows = [
        f"Product {name}: a long description of it, {price} EUR."
        for name, price in (
            ("lamp", "12.50"),
            ("kettle", "7.99"),
            ("rug", "120.00"),
            ("desk", "89.00"),
        )
    ]
    listing = " ".join(["Showing 9 to 12 of 12 (3 pages)", *rows, "Sort: name Show 24 1 2 3"])
    # another count, another pager: equal, whatever the number of digits
    assert folded_fingerprint(listing) == folded_fingerprint(
        listing.replace("(3 pages)", "(12 pages)").replace("1 2 3", "1 2 3 4 5 6 7 8 9 10 11 12")
    )
    # the same rows in another order, or a row fewer, or a word changed: another text
    assert folded_fingerprint(listing) != folded_fingerprint(
        listing.replace(rows[0] + " " + rows[1], rows[1] + " " + rows[0])
    )
    assert folded_fingerprint(listing) != folded_fingerprint(listing.replace(rows[3], ""))
    assert folded_fingerprint(listing) != folded_fingerprint(listing.replace("kettle", "kettles"))
    # white space and ASCII case are no change, as for the fingerprint
    assert folded_fingerprint(listing) == folded_fingerprint(listing.upper().replace(" ", "\n  "))


def test_main_content_reads_what_the_main_content_links_to_and_shows() -> None:
    from scrapy_urlunify.learning._near_duplicates import main_content

    def main_links(root: html.HtmlElement) -> int | None:
        return main_content(root)[1]

    intro = article_text("Lamps", 120)

    def page(rows: str, around: str = "") -> html.HtmlElement:
        return html.fromstring(
            f"<html><body><nav><a href='/cart?sessionid={around}'>Cart</a></nav>{around}<main>"
            f"<h1>Lamps</h1><p>{intro}</p><ul>{rows}</ul><img src='/i/lamps.jpg'>"
            f"<div class='pagination'><a href='?page=2&v={around}'>2</a></div>"
            f"<div id='comments'><a href='/reply?to={around}'>Reply</a></div></main></body></html>"
        )

    rows = "<li><a href='/p/1'>Desk lamp</a></li><li><a href='/p/2'>Floor lamp</a></li>"
    # the frame, the readers' comments and what is outside the main content do not count
    assert main_links(page(rows)) == main_links(page(rows, "<p>Printer-friendly</p>"))
    assert main_links(page(rows)) != main_links(page(rows + "<li><a href='/p/3'>x</a></li>"))
    assert main_links(page(rows)) != main_links(page(rows.replace("/p/2", "/p/4")))
    assert main_links(html.fromstring("<html><body><p>No links.</p></body></html>")) is None
    # the text is the main text, without the targets read in the same pass
    text, links = main_content(page(rows))
    assert "/p/1" not in text and "Desk lamp" in text and links == main_links(page(rows))


def test_a_session_id_in_every_link_or_an_alias_host_links_the_same_rows() -> None:
    from scrapy_urlunify.learning._near_duplicates import (
        main_content,
        main_targets,
        other_rows,
        other_targets,
    )

    intro = article_text("Lamps", 120)

    def links(rows: str) -> int | None:
        page = f"<html><body><main><h1>Lamps</h1><p>{intro}</p><ul>{rows}</ul></main></body></html>"
        return main_content(html.fromstring(page))[1]

    plain = links("<li><a href='/p/1'>Desk</a></li><li><a href='/p/2'>Floor</a></li>")
    # a session id as a path parameter in every link of one view: the same pages
    with_session = links(
        "<li><a href='/p/1;jsessionid=A1B2'>Desk</a></li><li><a href='/p/2;jsessionid=A1B2'>"
        "Floor</a></li>"
    )
    assert with_session == plain
    # the same paths under an alias host's name: other targets, the same rows
    mobile = links(
        "<li><a href='https://m.shop.test/p/1'>Desk</a></li>"
        "<li><a href='//m.shop.test/p/2'>Floor</a></li>"
    )
    assert other_targets(mobile, plain) and not other_rows(mobile, plain, 0)
    # another row is other rows; a page without links leads nowhere; one with links where the
    # earlier had none does
    more = links("<li><a href='/p/1'>Desk</a></li><li><a href='/p/3'>Wall</a></li>")
    assert other_targets(more, plain) and other_rows(more, plain, 0)
    assert not other_targets(None, plain) and other_targets(plain, None)
    assert not other_targets(plain, plain)
    # the targets as written, for the crawl to look up
    page = html.fromstring(
        f"<html><body><main><p>{intro}</p><a href='/p/1;jsessionid=A1B2'>Desk</a></main>"
        "</body></html>"
    )
    assert main_targets(page)[2] == ("/p/1;jsessionid=A1B2",)


def test_a_list_sorted_otherwise_shows_other_rows_one_under_another_pager_does_not() -> None:
    from scrapy_urlunify.learning._near_duplicates import main_content, other_rows

    intro = article_text("Lamps", 120)
    products = ["/p/1", "/p/2", "/p/3"]

    def links(order: list[str], query: str) -> int | None:
        # each row's "add to cart" button and the pager link the list's own path with its query
        rows = "".join(
            f"<li><a href='{p}'>{p}</a> <a href='?{query}&add={p[3:]}'>Add</a></li>" for p in order
        )
        page = html.fromstring(
            f"<html><body><main><h1>Lamps</h1><p>{intro}</p><ul>{rows}</ul>"
            f"<a href='?{query}&page=2'>2</a></main></body></html>"
        )
        return main_content(page)[1]

    listed = links(products, "sort=price")
    # the same products in another order: another list, even at 0 bits (the same features)
    reordered = links(products[::-1], "sort=name")
    assert other_rows(reordered, listed, 0) and other_rows(reordered, listed, 2)
    # the same products in the same order under another pager's query: one list at 0 bits
    repaged = links(products, "limit=24")
    assert not other_rows(repaged, listed, 0) and other_rows(repaged, listed, 2)
    # other products: other rows at 1 bit or more, as before
    other = links(["/p/1", "/p/2", "/p/4"], "sort=price")
    assert other_rows(other, listed, 1)
    # the same page again, or an earlier page whose links are unknown: its text decides
    assert not other_rows(listed, listed, 0) and not other_rows(listed, listed, 3)
    assert not other_rows(listed, None, 0) and other_rows(listed, None, 2)
