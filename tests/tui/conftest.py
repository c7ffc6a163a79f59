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
                tx.touch_run(
                    run_id,
                    changes={"last_progress_summary": summary, "last_progress_at": stamp},
                    kind="progress",
                    payload={"attempt": 1, "seq": seq, "phase": phase, "summary": summary,
                             "tool_used": None, "timestamp": stamp},
                    actor="jarvis-worker-1",
                )  # fmt: skip
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
            steers = [
                ("steer-1", "run only the unit tests", "acked", "t1", "t2", None),
                (
                    "steer-2",
                    "stop after the fix",
                    "expired",
                    "t3",
                    None,
                    "not acknowledged in 30 s",
                ),
            ]
            for steer_id, message, status, sent, acked, reason in steers:
                tx.add_steer(steer_id, "run-running", message, "night-operator")
                tx.execute(
                    "UPDATE steering_events SET status = ?, sent_at = ?, acked_at = ?, "
                    "status_reason = ? WHERE steer_id = ?",
                    [status, f"2026-01-02T09:5{sent[1]}:00.000Z",
                     f"2026-01-02T09:5{acked[1]}:30.000Z" if acked else None, reason, steer_id],
                )  # fmt: skip
            for run_id in ("run-failed", "run-contract"):
                tx.execute(
                    "INSERT INTO failures (run_id, attempt, error_class, error_code, step_id, "
                    "message, fingerprint, at) VALUES (?, 1, 'worker', 'crash', 'run', "
                    "'the worker exited with status 1', 'fp-0123456789abcdef', "
                    "'2026-01-02T09:55:00.000Z')",
                    [run_id],
                )
            tx.execute(
                "UPDATE runs SET risk_summary = 'L1 low: 3 files, all in scope' "
                "WHERE run_id = 'run-review'",
                [],
            )
            tx.execute(
                "UPDATE runs SET state_reason = 'the worker exited with status 1' "
                "WHERE run_id = 'run-failed'",
                [],
            )
    finally:
        store.close()
    return db_path


@pytest.fixture
def store_db(tmp_path: Path) -> Path:
    """A workspace's ``jarvis.db`` with a run in every state."""
    return build_store(tmp_path / "jarvis.db")
