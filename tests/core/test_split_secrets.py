"""A secret split by what a reader never sees is masked as the secret it shows.

`core.text.as_read` takes out every escape sequence, control and invisible character; the scanner
masks what is left as well as what was written, so a key split by a colour code, a title
sequence, a bell, a NUL or a zero-width space is masked, flagged and found, while a text whose
secrets were not split keeps its escapes for the console and the CLI to show.
"""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.contracts.secrets_scan import mask_secrets, redact, scan_text
from core.text import HIDDEN_START, as_read

AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ANTHROPIC = "sk-ant-api03-" + "Qx7" * 31 + "AA"
#: What splits a key for a program and never for a reader.
SPLITTERS = {
    "colour": "\x1b[0m",
    "bold and colour": "\x1b[1;31m",
    "title (BEL)": "\x1b]0;owned\x07",
    "title (ST)": "\x1b]0;owned\x1b\\",
    "hyperlink": "\x1b]8;;https://evil.example/\x1b\\",
    "one-byte CSI": "\x9b31m",
    "charset": "\x1b(B",
    "bell": "\x07",
    "NUL": "\x00",
    "carriage return": "\r",
    "backspace": "\x08",
    "zero-width space": "\u200b",
    "word joiner": "\u2060",
    "soft hyphen": "\u00ad",
    "bidi override": "\u202e",
    "byte order mark": "\ufeff",
    "variation selector": "\ufe0f",
    "two at once": "\x1b[0m\u200b",
}
COLOUR, BELL = SPLITTERS["colour"], SPLITTERS["bell"]
SECRETS = {
    AWS: ("AKIA****", "AWS access key id"),
    GITHUB: ("ghp_****", "GitHub token"),
    ANTHROPIC: ("sk-a****", "Anthropic API key"),
}


def split(secret: str, splitter: str, at: int = 8) -> str:
    return secret[:at] + splitter + secret[at:]


def test_every_control_and_invisible_character_is_taken_out_but_line_feeds_and_tabs() -> None:
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char) in ("Cc", "Cf") and char not in "\n\t":
            assert HIDDEN_START.match(char), f"U+{code:04X} is not taken out"
            assert as_read(f"a{char}\nb") == "a\nb", f"U+{code:04X}"
    assert as_read("one\n\ttwo") == "one\n\ttwo"
    assert as_read("plain text") == "plain text"


def test_escape_sequences_go_whole_and_lines_stay_where_they_were() -> None:
    assert as_read("a\x1b]8;;https://x.example/\x1b\\link\x1b]8;;\x1b\\ b") == "alink b"
    assert as_read("\x1b[2J\x1b[Hcleared \x9b31mred") == "cleared red"
    # A string sequence never runs across a line: only its two-byte introducer goes.
    assert as_read("a\x1b]0;title\nb\x07") == "a0;title\nb"


@pytest.mark.parametrize("splitter", SPLITTERS.values(), ids=SPLITTERS.keys())
@pytest.mark.parametrize("secret", SECRETS, ids=["aws", "github", "anthropic"])
def test_a_split_secret_is_masked_and_flagged(secret: str, splitter: str) -> None:
    masked, kind = SECRETS[secret]
    found = redact(f"key {split(secret, splitter)} done")
    assert found.text == f"key {masked} done"
    assert found.kinds == (kind,)
    assert mask_secrets(found.text) == found.text  # masking again changes nothing


def test_a_text_whose_secrets_were_not_split_keeps_its_escapes() -> None:
    text = f"\x1b]0;owned\x07 \x1b[31mred\x1b[0m key {AWS}"
    assert redact(text).text == "\x1b]0;owned\x07 \x1b[31mred\x1b[0m key AKIA****"
    assert redact("\x1b[31mred\x1b[0m \u202eevil").text == "\x1b[31mred\x1b[0m \u202eevil"


def test_a_text_with_a_split_secret_is_kept_as_read() -> None:
    # The escapes around a split key go with it: what is left is what a reader reads, masked.
    text = f"\x1b]0;owned\x07 key {split(AWS, COLOUR)} and {GITHUB}"
    found = redact(text)
    assert found.text == " key AKIA**** and ghp_****"
    assert found.kinds == ("AWS access key id", "GitHub token")


def test_an_assignment_split_by_a_colour_code_is_masked() -> None:
    assert mask_secrets('pass\x1b[1mword = "hunter22x"') == 'password = "hun****"'
    assert mask_secrets('password = "hunter\u200b22x"') == 'password = "hun****"'


def test_scan_finds_a_split_secret_on_its_own_line() -> None:
    text = f"line one\nline two {split(AWS, COLOUR)}\nline three {split(GITHUB, BELL)}\n"
    findings = scan_text(text, "report.md")
    assert [(f.code, f.line) for f in findings] == [
        ("secret_aws_key", 2),
        ("secret_forge_token", 3),
    ]
    assert all(AWS[8:] not in f.excerpt and GITHUB[10:] not in f.excerpt for f in findings)


_SPLITTER = st.lists(st.sampled_from(list(SPLITTERS.values())), min_size=1, max_size=3).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    secret=st.sampled_from(list(SECRETS)),
    at=st.integers(min_value=1, max_value=19),
    splitter=_SPLITTER,
    before=st.sampled_from(["", "key ", "x=", "\x1b[33mwarn\x1b[0m "]),
)
def test_no_split_leaves_a_piece_of_a_secret_past_its_mask(
    secret: str, at: int, splitter: str, before: str
) -> None:
    found = redact(before + split(secret, splitter, at))
    assert as_read(found.text).endswith(SECRETS[secret][0])
    assert secret[max(at, 4) :] not in found.text
    assert found.kinds == (SECRETS[secret][1],)
