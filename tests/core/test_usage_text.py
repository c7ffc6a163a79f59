"""Tokens and cost in words."""

from __future__ import annotations

from core.usage_text import tokens, usage_line


def test_tokens_and_cost_read_short() -> None:
    assert [tokens(n) for n in (0, 999, 1000, 12_345, 4_100_000)] == [
        "0", "999", "1.0k", "12.3k", "4.1M"
    ]  # fmt: skip
    assert usage_line({"tokens_in": 12_345, "tokens_out": 2_100, "cost_usd": 0.4249}) == (
        "12.3k in · 2.1k out · $0.42"
    )
    assert usage_line(None) == ""
