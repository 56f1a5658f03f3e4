"""The ``urlunify`` command line, run as a user runs it (a real subprocess)."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy_urlunify", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_explain_prints_rules_fetch_url_and_identifier():
    r = run("explain", "http://www.Example.com/a/index.html?utm_source=x&PHPSESSID=abc#top")
    assert r.returncode == 0
    for text in (
        "drop_fragment",
        "remove_session_params",
        "remove_tracking_params",
        "strip_host_prefix",
        "drop_index_page",
        "fetch URL   http://www.example.com/a/index.html",
        "identifier  example.com/a",
        "filter      followed",
    ):
        assert text in r.stdout, text


def test_explain_names_the_action_parameters_and_keeps_them_on_request():
    r = run("explain", "http://b.test/p/?replytocom=4")
    assert "drop_action_params" in r.stdout
    assert "fetch URL   http://b.test/p/?replytocom=4" in r.stdout  # identity only
    assert "identifier  b.test/p\n" in r.stdout
    r = run("explain", "http://b.test/p/?replytocom=4", "--keep-action-params")
    assert "identifier  b.test/p?replytocom=4\n" in r.stdout


def test_explain_with_base_and_filter_reason():
    r = run("explain", "../files/a.pdf", "--base", "http://example.com/docs/x/")
    assert "fetch URL   http://example.com/docs/files/a.pdf" in r.stdout
    assert "not followed: extension:pdf" in r.stdout


def test_same_exit_status_and_deciding_rules():
    r = run("same", "http://www.example.com/a/", "https://example.com/a")
    assert r.returncode == 0
    assert "same page: decided by" in r.stdout and "ignore_scheme" in r.stdout
    r = run("same", "http://example.com/a?page=1", "http://example.com/a?page=2")
    assert r.returncode == 1 and "different pages" in r.stdout


def test_same_with_policy_options():
    a = "http://news.acme.test/servlet/ContentServer?inifile=futuretense.ini&cid=11&arglink=nolink"
    b = "http://news.acme.test/servlet/ContentServer?cid=11&arglink=x"
    assert run("same", a, b).returncode == 1
    r = run("same", a, b, "--key-param", "news.acme.test:cid", "--scope", "acme")
    assert r.returncode == 0 and "keep_key_params" in r.stdout
    assert "acme|news.acme.test/servlet/ContentServer?cid=11" in r.stdout


def test_identify_reads_stdin_and_goes_on_after_bad_lines():
    r = run(
        "identify", stdin="http://www.a.test/x/\nhttp://bad host/\nhttps://a.test/x\n/relative\n"
    )
    assert r.stdout.splitlines() == ["a.test/x", "", "a.test/x", ""]
    assert "line 2: invalid URL" in r.stderr and "line 4: invalid URL" in r.stderr
    assert r.returncode == 1


def test_standardize_with_base():
    r = run("standardize", "--base", "http://a.test/d/", stdin="x.html#f\n../y?utm_medium=z\n")
    assert r.stdout.splitlines() == ["http://a.test/d/x.html", "http://a.test/y"]
    assert r.returncode == 0


def test_bad_policy_option_is_a_usage_error():
    r = run("explain", "http://a.test/", "--max-url-length", "0")
    assert r.returncode == 2 and "max_url_length" in r.stderr


def test_same_fetch_says_how_alike_the_pages_are():
    """``same --fetch`` downloads both pages and reads them as a crawl does: a revision banner
    above an article is a near-duplicate whose items a crawl drops, another article is not."""
    import random
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    vocabulary = [
        f"{a}{b}"
        for a in ("ka", "lo", "mi", "ne", "su", "ta", "ri")
        for b in ("ben", "dor", "fil", "gan", "hut")
    ]

    def article(seed: int) -> str:
        # a long article: a 4-word banner moves its fingerprint by a bit or two
        rng = random.Random(seed)
        return " ".join(
            " ".join(rng.choice(vocabulary) for _ in range(5)) + "." for _ in range(1500)
        )

    pages = {
        "/a": f"<html><body><nav>Menu</nav><main><p>{article(5)}</p></main></body></html>",
        "/a-rev": f"<html><body><nav>Menu</nav><main><p>Revision as of 12:00.</p><p>{article(5)}</p></main></body></html>",
        "/b": f"<html><body><nav>Menu</nav><main><p>{article(11)}</p></main></body></html>",
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages[self.path].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        near = run("same", f"{base}/a", f"{base}/a-rev", "--fetch")
        other = run("same", f"{base}/a", f"{base}/b", "--fetch")
        itself = run("same", f"{base}/a", f"{base}/a#top", "--fetch")
        gone = run("same", f"{base}/a", "http://127.0.0.1:9/x", "--fetch", "--timeout", "5")
    finally:
        httpd.shutdown()
    # URL identity decides the exit status: /a and /a-rev are two URLs whatever their pages say
    assert near.returncode == 1 and "different pages" in near.stdout
    assert "alike" in near.stdout and "a near-duplicate page, its items dropped" in near.stdout
    assert (
        other.returncode == 1
        and "different texts" in other.stdout
        and "near-duplicate" not in other.stdout
    )
    assert itself.returncode == 0 and "the same text (one exact signature)" in itself.stdout
    assert "cannot fetch the pages" in gone.stderr
