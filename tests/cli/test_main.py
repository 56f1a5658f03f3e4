"""The ``urlunify`` command line, run as a user runs it (a real subprocess)."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scrapy_urlunify", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_explain_prints_rules_fetch_url_and_identifier():
    r = run("explain", "http://www.Example.com/a/index.html?utm_source=x&PHPSESSID=abc#top")
    assert r.returncode == 0
    for text in ("drop_fragment", "remove_session_params", "remove_tracking_params", "strip_host_prefix",
                 "drop_index_page", "fetch URL   http://www.example.com/a/index.html", "identifier  example.com/a",
                 "filter      followed"):
        assert text in r.stdout, text


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
    r = run("identify", stdin="http://www.a.test/x/\nhttp://bad host/\nhttps://a.test/x\n/relative\n")
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
