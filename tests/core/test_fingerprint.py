"""URL normalisation and error.v1 fingerprints."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.contracts.fingerprint import fingerprint, fingerprint_input, normalize_url


def test_contract_example_verbatim() -> None:
    assert normalize_url("https://www.linkedin.com/feed/?trk=xyz#top") == "www.linkedin.com/feed"


def test_hostname_is_lowercased_but_path_case_is_kept() -> None:
    assert normalize_url("https://WWW.Example.COM/Feed/Item") == "www.example.com/Feed/Item"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://a.com/x", "a.com/x"),
        ("http://a.com/x", "a.com/x"),
        ("HTTPS://a.com/x", "a.com/x"),
        ("ftp://a.com/x", "a.com/x"),
    ],
)
def test_scheme_is_dropped(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_port_and_userinfo_are_dropped() -> None:
    assert normalize_url("https://user:p%40ss@a.com:8443/x") == "a.com/x"


def test_query_and_fragment_are_stripped() -> None:
    assert normalize_url("https://a.com/x?q=1&r=2") == "a.com/x"
    assert normalize_url("https://a.com/x#frag") == "a.com/x"
    # A "/" inside the query must not survive as part of the path.
    assert normalize_url("https://a.com/x?next=/y/") == "a.com/x"


def test_trailing_slash_is_stripped_except_root() -> None:
    assert normalize_url("https://a.com/feed/") == "a.com/feed"
    assert normalize_url("https://a.com/") == "a.com/"


def test_several_trailing_slashes_are_all_stripped() -> None:
    assert normalize_url("https://a.com/feed///") == "a.com/feed"
    assert normalize_url("https://a.com///") == "a.com/"


def test_empty_path_is_the_root() -> None:
    assert normalize_url("https://a.com") == "a.com/"
    assert normalize_url("https://a.com") == normalize_url("https://a.com/")
    assert normalize_url("https://a.com?q=1") == "a.com/"


@pytest.mark.parametrize("url", [None, "", "   ", "\t\n"])
def test_no_url_normalises_to_empty(url: str | None) -> None:
    assert normalize_url(url) == ""


def test_surrounding_white_space_is_ignored() -> None:
    assert normalize_url("  https://a.com/x/  ") == "a.com/x"


def test_input_without_scheme_is_host_and_path() -> None:
    assert normalize_url("www.x.com/feed/") == "www.x.com/feed"
    assert normalize_url("WWW.X.com") == "www.x.com/"
    assert normalize_url("localhost:8080/x/") == "localhost/x"
    assert normalize_url("//cdn.x.com/a/") == "cdn.x.com/a"


def test_ipv6_host_keeps_brackets_and_drops_port() -> None:
    assert normalize_url("http://[::1]:8080/x") == "[::1]/x"


@pytest.mark.parametrize(
    "url",
    [
        "https://a.com:99999999/x",
        "https://a.com:notaport/x",
        "http://[::1/x",
        "http://]/",
        "::::",
        "https://",
        "\x00\x1b[31m",
    ],
)
def test_unparseable_urls_do_not_raise(url: str) -> None:
    assert isinstance(normalize_url(url), str)


def test_bad_port_still_gives_host_and_path() -> None:
    assert normalize_url("https://A.com:99999999/x/") == "a.com/x"


def test_url_without_authority_keeps_its_scheme() -> None:
    assert normalize_url("about:blank") == "about:blank"
    assert normalize_url("ABOUT:blank#x") == "about:blank"


def test_percent_escapes_are_kept_as_given() -> None:
    assert normalize_url("https://a.com/a%2Fb/") == "a.com/a%2Fb"


def test_fingerprint_known_value() -> None:
    expected = hashlib.sha256(
        b"selector_not_found|E_SEL|4|#login|www.linkedin.com/feed"
    ).hexdigest()
    assert (
        fingerprint(
            "selector_not_found",
            "E_SEL",
            "4",
            "#login",
            "https://www.linkedin.com/feed/?trk=xyz#top",
        )
        == expected
    )


def test_fingerprint_without_selector_or_url_uses_empty_parts() -> None:
    expected = hashlib.sha256(b"timeout|T1|7||").hexdigest()
    assert fingerprint("timeout", "T1", "7") == expected
    assert fingerprint("timeout", "T1", "7", "", "") == expected


def test_fingerprint_input_is_utf8() -> None:
    expected = hashlib.sha256("interaction_failed|E|é|#ü|a.com/ß".encode()).hexdigest()
    assert fingerprint("interaction_failed", "E", "é", "#ü", "https://A.com/ß/") == expected


def test_fingerprint_input_joins_with_pipes() -> None:
    assert fingerprint_input("a", "b", "c", None, "https://x.com/y/") == "a|b|c||x.com/y"


def test_fingerprint_is_64_lowercase_hex() -> None:
    value = fingerprint("timeout", "T", "1", None, None)
    assert len(value) == 64
    assert value == value.lower()
    int(value, 16)


def test_fingerprint_of_lone_surrogate_does_not_raise() -> None:
    assert len(fingerprint("timeout", "\ud800", "1", "\udfff", "https://a.com/\ud800")) == 64


@given(st.text())
def test_normalize_url_never_raises_and_drops_query_and_fragment(url: str) -> None:
    result = normalize_url(url)
    assert isinstance(result, str)
    assert "?" not in result
    assert "#" not in result


@given(st.text(), st.text(), st.text(), st.none() | st.text(), st.none() | st.text())
def test_fingerprint_never_raises(a: str, b: str, c: str, d: str | None, e: str | None) -> None:
    assert len(fingerprint(a, b, c, d, e)) == 64
