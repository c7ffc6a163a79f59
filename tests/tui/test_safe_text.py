"""Worker text made safe to show: the short texts remembered and the long ones alike."""

from __future__ import annotations

import pytest

from jarvis_tui.safe_text import CACHED_UP_TO, one_line, shown

TOKEN = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"


@pytest.mark.parametrize("pad", [0, CACHED_UP_TO])  # remembered, and too long to remember
def test_secrets_are_masked_and_controls_escaped_every_time(pad: int) -> None:
    text = "x" * pad + f"\x1b]0;owned\x07 token {TOKEN}\x9b2J"
    first = shown(text)
    assert first == shown(text)  # the same answer from the cache as from the scan
    for out in (first, one_line(text, limit=10_000)):
        assert TOKEN not in out and "ghp_****" in out
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
        assert "\\x1b]0;owned\\x07" in out


def test_a_remembered_text_is_not_confused_with_another() -> None:
    assert shown("run-1") == "run-1"
    assert shown(f"run-1 {TOKEN}") != shown("run-1")
    assert shown(42) == "42"  # not text: shown as its str
