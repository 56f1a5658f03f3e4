"""A small MediaWiki-like site on loopback for the near-duplicate tests: articles, and views of
them whose body text differs but whose article does not (a permanent link with a "Revision as
of" banner, a printable view without the navigation, a redirect view with "(Redirected from
...)": 0 bits from their article), an article with three sentences more (5 bits), and declared canonicals (``/claims/N`` names ``/wiki/A<N>``, the ones in ``wrong``
another article; with ``copies``, ``/claims`` links a copy of each article too, and the claims
name the copies)."""

from __future__ import annotations

import random

from minisite import CountingSite, listen

#: the articles of the site
ARTICLES = [f"A{i}" for i in range(10)]
_WORDS = [
    "river",
    "mountain",
    "city",
    "language",
    "history",
    "music",
    "science",
    "painting",
    "village",
    "railway",
    "castle",
    "bridge",
    "poet",
    "battle",
    "island",
    "church",
    "novel",
    "theatre",
    "harbour",
    "festival",
    "garden",
    "winter",
    "empire",
    "market",
    "forest",
    "school",
    "temple",
    "valley",
    "library",
    "engine",
]


def article_text(name: str, words: int = 220) -> str:
    """The text of an article: ``words`` words of its own (a deterministic draw)."""
    draw = random.Random(name)
    sentences = []
    for _ in range(words // 11):
        sentences.append(" ".join(draw.choice(_WORDS) for _ in range(11)).capitalize() + ".")
    return " ".join(sentences)


def wiki_page(
    name: str, banner: str = "", nav: bool = True, links: str = "", head: str = ""
) -> bytes:
    navigation = (
        "<nav>Main page Recent changes Random article Help Tools What links here "
        "Related changes Special pages</nav>"
        if nav
        else ""
    )
    return (
        f"<!DOCTYPE html><html><head><title>{name}</title>{head}</head><body>{navigation}"
        f"<h1>{name}</h1>{banner}<main><p>{article_text(name)}</p>{links}</main>"
        f"<footer>This page was last edited today.</footer></body></html>"
    ).encode()


class WikiSite(CountingSite):
    def __init__(
        self, wrong: tuple[int, ...] = (), later: int = 1236, copies: bool = False
    ) -> None:
        super().__init__()
        self.wrong = wrong
        #: /claims links a copy of each article too (``/copy/A<N>``, the same bytes), and
        #: /claims/N names the copy canonical
        self.copies = copies
        #: the oldid of the permanent links of /later (1000: an old revision, another text)
        self.later = later

    def render_GET(self, request):  # type: ignore[no-untyped-def]
        base, params = self.count(request)
        if base == "/":
            links = "".join(f"<a href='/wiki/{a}'>{a}</a>" for a in ARTICLES[:4])
            links += "".join(
                f"<a href='/index.php?title={a}&amp;oldid=1234'>p</a>" for a in ARTICLES[:2]
            )
            links += "<a href='/index.php?title=A2&amp;printable=yes'>print</a>"
            links += "<a href='/wiki/Old_A3'>old</a><a href='/wiki/A3?notes=1'>notes</a><a href='/claims'>claims</a>"
            return wiki_page("Home", links=links)
        if base == "/index.php":
            name = params.get("title", "")
            if params.get("printable"):  # no navigation; the only link to /wiki/Only_in_print
                return wiki_page(name, nav=False, links="<a href='/wiki/Only_in_print'>x</a>")
            if params.get("oldid") == "1000":  # an old revision: another text
                return wiki_page(name + " (old)")
            if not params.get("oldid"):
                return wiki_page(name)
            return wiki_page(
                name,
                banner=f"<div>Revision as of 12:00, 1 May 2024 by Someone (talk), revision "
                f"{params['oldid']}: Older revision | Latest revision</div>",
            )
        if (
            base == "/learn"
        ):  # two permanent links of each article (its latest revision): teach oldid
            links = "".join(
                f"<a href='/index.php?title={a}&amp;oldid=1234'>{a}</a><a href='/index.php?"
                f"title={a}&amp;oldid=1235'>p</a>"
                for a in ARTICLES[:6]
            )
            links += "<a href='/later'>later</a>"
            return wiki_page("Learn", links=links)
        if (
            base == "/later"
        ):  # permanent links once oldid is learned: merged, some fetched as samples
            links = "".join(
                f"<a href='/index.php?title={a}&amp;oldid={self.later}'>p</a>" for a in ARTICLES
            )
            return wiki_page("Later", links=links)
        if base == "/wiki/Old_A3":
            return wiki_page("A3", banner="<div>(Redirected from Old A3)</div>")
        if base == "/claims":
            links = "".join(f"<a href='/wiki/{a}'>{a}</a>" for a in ARTICLES)
            if self.copies:  # fetched after the articles: each an exact duplicate of one
                links += "".join(f"<a href='/copy/{a}'>{a}</a>" for a in ARTICLES)
            return wiki_page(
                "Claims", links=links + "".join(f"<a href='/claims/{i}'>c</a>" for i in range(10))
            )
        if base.startswith("/claims/"):
            i = int(base.rsplit("/", 1)[1])
            target = ARTICLES[(i + 1) % 10] if i in self.wrong else ARTICLES[i]
            return wiki_page(
                ARTICLES[i],
                banner="<div>Revision as of today</div>",
                head=f"<link rel='canonical' href='/{'copy' if self.copies else 'wiki'}/{target}'>",
            )
        if base == "/wiki/A3" and params.get(
            "notes"
        ):  # three sentences more in the article: 5 bits
            return wiki_page(
                "A3",
                links="<p>Added note about the river crossing, built of stone. Later repaired by the town guild. Fish market nearby.</p>",
            )
        if base.startswith(("/wiki/", "/copy/")):
            return wiki_page(base.rsplit("/", 1)[1])
        request.setResponseCode(404)
        return b"not found"


def start(
    wrong: tuple[int, ...] = (), later: int = 1236, copies: bool = False
) -> tuple[WikiSite, object, str]:
    site = WikiSite(wrong, later, copies)
    return (site, *listen(site))
