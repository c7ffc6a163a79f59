"""Usage figures in the store, on both backends: each attempt's figures are the largest reported,
whatever the order or the dates of the reports; a report that could not be read marks the
attempt; and sums never overflow, even over figures a store kept before they were bounded."""

from __future__ import annotations

from core.ipc.payloads import Usage
from core.lifecycle import RunState
from core.store.api import RunStore
from tests.core.store_helpers import make_run


def test_each_figure_keeps_the_largest_report_in_any_order(any_store: RunStore) -> None:
    make_run(any_store, "r1", RunState.RUNNING)
    reports = [
        # A first report dated far ahead, with nothing spent: it pins nothing.
        ("2099-01-01T00:00:00.000Z", 1, Usage(tokens_in=0, tokens_out=0, cost_usd=0)),
        ("2026-11-28T00:00:01.000Z", 2, Usage(tokens_in=900, tokens_out=50, cost_usd=12.5)),
        # Arrives late: smaller figures never move a figure back.
        ("2026-11-28T00:00:00.500Z", 3, Usage(tokens_in=400, tokens_out=80, cost_usd=3)),
        ("2026-11-28T00:00:02.000Z", 4, Usage(tokens_in=1000, tokens_out=60, cost_usd=50)),
    ]
    for at_utc, seq, usage in reports:
        with any_store.transaction() as tx:
            tx.record_usage("r1", 1, seq, usage, at_utc=at_utc, name=f"{seq}.json")
    assert any_store.run_usage("r1") == {
        "tokens_in": 1000, "tokens_out": 80, "cost_usd": 50.0, "cost_computed": False,
        "unreadable": None,
    }  # fmt: skip
    assert any_store.attempt_usage(["r1"])["r1"]["cost_usd"] == 50.0


def test_an_unreadable_report_marks_the_attempt_and_keeps_what_was_read(
    any_store: RunStore,
) -> None:
    make_run(any_store, "r1", RunState.RUNNING)
    with any_store.transaction() as tx:
        tx.record_unreadable_usage("r1", 1, 1, "usage.tokens_in is 2^63")
        tx.record_usage("r1", 1, 2, Usage(tokens_in=10, tokens_out=5, cost_usd=0.5))
        tx.record_unreadable_usage("r1", 1, 3, "a second reason")
    used = any_store.attempt_usage(["r1"])["r1"]
    assert (used["tokens_in"], used["unreadable"]) == (10, "usage.tokens_in is 2^63")
    assert (any_store.run_usage("r1") or {})["unreadable"] == "usage.tokens_in is 2^63"


def test_sums_of_figures_past_64_bits_do_not_overflow(any_store: RunStore) -> None:
    # Two attempts of 2^62 each, as a store written before figures were bounded may hold:
    # an integer SUM of them overflowed, and every reader of the store failed.
    make_run(any_store, "r1", RunState.RUNNING)
    make_run(any_store, "r2", RunState.RUNNING)
    with any_store.transaction() as tx:
        for run_id, attempt in (("r1", 1), ("r1", 2), ("r2", 1)):
            tx.execute(
                "INSERT INTO run_usage (run_id, attempt, seq, tokens_in, tokens_out, cost_usd, "
                "updated_at) VALUES (?, ?, 1, ?, 0, 0, '2026-11-28T00:00:00.000Z')",
                [run_id, attempt, 2**62],
            )
    assert (any_store.run_usage("r1") or {})["tokens_in"] == 2**63
    assert any_store.usage_by_run()["r2"]["tokens_in"] == 2**62
    assert any_store.workspace_usage()["tokens_in"] == 3 * 2**62


def test_a_computed_cost_is_kept_as_computed_and_said_so_in_every_sum(
    any_store: RunStore,
) -> None:
    # An agent that reports no cost (Codex): the runner priced its tokens, and said so.
    make_run(any_store, "r1", RunState.RUNNING)
    make_run(any_store, "r2", RunState.RUNNING)
    with any_store.transaction() as tx:
        tx.record_usage("r1", 1, 1, Usage(tokens_in=1000, tokens_out=10, cost_usd=0.00135,
                                          cost_computed=True))  # fmt: skip
        tx.record_usage("r1", 1, 2, Usage(tokens_in=3000, tokens_out=30, cost_usd=0.00405,
                                          cost_computed=True))  # fmt: skip
        # An agent that reports its own cost.
        tx.record_usage("r2", 1, 1, Usage(tokens_in=10, tokens_out=5, cost_usd=0.5))
    assert any_store.run_usage("r1") == {
        "tokens_in": 3000, "tokens_out": 30, "cost_usd": 0.00405, "cost_computed": True,
        "unreadable": None,
    }  # fmt: skip
    assert (any_store.run_usage("r2") or {})["cost_computed"] is False
    assert any_store.attempt_usage(["r1"])["r1"]["cost_computed"] in (1, True)
    # A second attempt whose agent reported its cost: the run's total still holds a computed
    # figure, so it is still shown as computed.
    with any_store.transaction() as tx:
        tx.record_usage("r1", 2, 1, Usage(tokens_in=5, tokens_out=5, cost_usd=1.0))
    assert (any_store.run_usage("r1") or {})["cost_computed"] is True
    # So is the workspace's, which sums it.
    assert any_store.workspace_usage()["cost_computed"] is True
