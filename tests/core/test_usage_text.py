"""Tokens and cost in words."""

from __future__ import annotations

from core.usage_text import dollars, tokens, usage_brief, usage_line


def test_tokens_and_cost_read_short() -> None:
    assert [tokens(n) for n in (0, 999, 1000, 12_345, 4_100_000)] == [
        "0", "999", "1.0k", "12.3k", "4.1M"
    ]  # fmt: skip
    assert usage_line({"tokens_in": 12_345, "tokens_out": 2_100, "cost_usd": 0.4249}) == (
        "12.3k in · 2.1k out · $0.42"
    )
    assert usage_line(None) == ""


def test_the_run_tables_short_form_adds_tokens_in_and_out_and_keeps_the_cost_whole() -> None:
    assert usage_brief({"tokens_in": 10_000, "tokens_out": 2_345, "cost_usd": 0.0449}) == (
        "12.3k · $0.04"
    )
    assert usage_brief({"tokens_in": 950, "tokens_out": 0, "cost_usd": 0.0}) == "950 · $0.00"
    assert usage_brief(None) == "" and usage_brief({}) == ""
    # Cents while they matter; from $100 whole dollars, so the figure stays short.
    assert [dollars(c) for c in (0.04, 12.3, 99.994, 100.0, 1234.56)] == [
        "$0.04", "$12.30", "$99.99", "$100", "$1,235"
    ]  # fmt: skip
    assert len(usage_brief({"tokens_in": 999_000, "tokens_out": 900, "cost_usd": 99.99})) <= 15


def test_a_computed_cost_is_shown_as_computed() -> None:
    # Codex reports no cost: Jarvis priced its tokens ([prices]), and says the figure is its own.
    computed = {"tokens_in": 30_000, "tokens_out": 1_000, "cost_usd": 0.0475, "cost_computed": True}
    assert usage_line(computed) == "30.0k in · 1.0k out · ≈$0.05"
    assert usage_brief(computed) == "31.0k · ≈$0.05"
    assert "≈" not in usage_line({**computed, "cost_computed": False})


def test_a_cost_under_a_cent_is_not_shown_as_nothing() -> None:
    # A cheap model's whole run may cost less than a cent: "$0.00" read as nothing spent, or
    # nothing priced. Under a cent, tenths of a cent; under a tenth, only that it was less.
    costs = (0.0, 0.0004, 0.001, 0.0042, 0.0049, 0.0051, 0.0094, 0.0096, 0.01)
    assert [dollars(c) for c in costs] == [
        "$0.00", "<$0.001", "$0.001", "$0.004", "$0.005", "$0.005", "$0.009", "$0.01", "$0.01"
    ]  # fmt: skip
    assert usage_line({"tokens_in": 3_400, "tokens_out": 200, "cost_usd": 0.0042}) == (
        "3.4k in · 200 out · $0.004"
    )
    assert usage_line({"tokens_in": 30, "tokens_out": 5, "cost_usd": 0.00003}) == (
        "30 in · 5 out · <$0.001"
    )
    assert usage_line({"tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}).endswith(" · $0.00")
    assert usage_brief({"tokens_in": 1_150, "tokens_out": 80, "cost_usd": 0.0042}) == (
        "1.2k · $0.004"
    )
    # The run table's spent column keeps its width (15): the longest sub-cent figures fit.
    for cost in (0.0004, 0.0042):
        assert len(usage_brief({"tokens_in": 99_000, "tokens_out": 900, "cost_usd": cost})) <= 15
