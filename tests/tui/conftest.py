"""A workspace store with one run in every state, fixed timestamps, progress and gate verdicts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run

START = datetime(2026, 1, 2, 9, 30, 0, tzinfo=UTC)

#: run id → state, in creation order.
RUNS: dict[str, RunState] = {
    "run-queued": RunState.QUEUED,
    "run-running": RunState.RUNNING,
    "run-review": RunState.REVIEW_REQUESTED,
    "run-contract": RunState.FAILED_CONTRACT,
    "run-failed": RunState.FAILED,
    "run-done": RunState.DONE,
}

#: Worker text that must reach the screen as typed, never as styling or terminal commands.
HOSTILE = "[bold red]x[/] \x1b[2J"


def ticking_clock(start: datetime = START) -> Iterator[datetime]:
    moment = start
    while True:
        yield moment
        moment += timedelta(seconds=1)


def fixed_clock() -> datetime:
    """The console's clock in tests: always the same moment."""
    return START + timedelta(hours=1)


def build_store(db_path: Path) -> Path:
    """Fill ``db_path`` deterministically and return it."""
    ticks = ticking_clock()
    store = SqliteStore(db_path, clock=lambda: next(ticks))
    try:
        for run_id, state in RUNS.items():
            make_run(store, run_id, state)
        with store.transaction() as tx:
            events = [
                ("run-running", 1, "plan", "read the failing test"),
                ("run-running", 2, "edit", "patched the handler"),
                ("run-review", 1, "test", "all tests pass"),
                ("run-contract", 1, "edit", HOSTILE),
            ]
            for index, (run_id, seq, phase, summary) in enumerate(events):
                stamp = f"2026-01-02T09:4{index}:00.000Z"
                tx.execute(
                    "INSERT INTO progress_events (run_id, attempt, seq, timestamp, phase, "
                    "summary, tool_used, ingested_at) VALUES (?, 1, ?, ?, ?, ?, NULL, ?)",
                    [run_id, seq, stamp, phase, summary, stamp],
                )
                tx.execute(
                    "UPDATE runs SET last_progress_summary = ?, last_progress_at = ? "
                    "WHERE run_id = ?",
                    [summary, stamp, run_id],
                )
            gates = [
                ("run-review", "files_in_scope", 1, "3 files, all in scope"),
                ("run-review", "tests_pass", 1, "42 passed"),
                ("run-contract", "files_in_scope", 0, f"touched {HOSTILE}"),
                ("run-contract", "tests_pass", 1, "12 passed"),
            ]
            for run_id, name, passed, detail in gates:
                tx.execute(
                    "INSERT INTO gate_results (run_id, attempt, name, passed, detail, "
                    "evaluated_at) VALUES (?, 1, ?, ?, ?, '2026-01-02T09:50:00.000Z')",
                    [run_id, name, passed, detail],
                )
    finally:
        store.close()
    return db_path


@pytest.fixture
def store_db(tmp_path: Path) -> Path:
    """A workspace's ``jarvis.db`` with a run in every state."""
    return build_store(tmp_path / "jarvis.db")
