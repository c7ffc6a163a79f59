"""The console's store (`build_store`) with what some runs' agents reported spending.

Recorded as the host records it (`core.host.ingest`): the agent's cumulative figures for its
attempt come with a progress event, in the same transaction as that event's journal entry, so
a live console reads the run again on its next poll.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from core.ipc.payloads import Usage
from core.store.sqlite_store import SqliteStore
from tests.tui.conftest import START, build_store, ticking_clock

#: run id → (attempt, seq, the attempt's figures so far), in the order reported.
SPENDING: dict[str, list[tuple[int, int, Usage]]] = {
    # Two attempts: 12,345 tokens and $0.0399 in all, "12.3k · $0.04".
    "run-contract": [
        (1, 2, Usage(tokens_in=9_000, tokens_out=1_000, cost_usd=0.025)),
        (2, 1, Usage(tokens_in=2_000, tokens_out=345, cost_usd=0.0149)),
    ],
    # "1.0k · $0.01"
    "run-running": [(1, 3, Usage(tokens_in=950, tokens_out=50, cost_usd=0.0123))],
    # Under a cent, as a cheap model's whole run may be: "3.6k · $0.004", never "$0.00".
    "run-review": [(1, 2, Usage(tokens_in=3_400, tokens_out=200, cost_usd=0.0042))],
}


def report_usage(db_path: Path, run_id: str, attempt: int, seq: int, usage: Usage) -> None:
    """Record ``usage`` for the run's attempt with a progress event, as ingesting one does."""
    ticks = ticking_clock(START + timedelta(minutes=40))
    store = SqliteStore(db_path, clock=lambda: next(ticks))
    try:
        with store.transaction() as tx:
            payload = {"attempt": attempt, "seq": seq, "phase": "test",
                       "summary": "ran the test suite", "tool_used": None,
                       "timestamp": "2026-01-02T10:10:00.000Z"}  # fmt: skip
            tx.touch_run(run_id, changes={}, kind="progress", payload=payload,
                         actor="jarvis-worker-1")  # fmt: skip
            tx.record_usage(run_id, attempt, seq, usage)
    finally:
        store.close()


def build_usage_store(db_path: Path) -> Path:
    """`build_store`'s runs, then `SPENDING` reported."""
    build_store(db_path)
    for run_id, reports in SPENDING.items():
        for attempt, seq, usage in reports:
            report_usage(db_path, run_id, attempt, seq, usage)
    return db_path
