"""Retention's deletions in the store, on both backends: exactly the old history of finished
runs, a batch of at most `BATCH_ROWS` rows per transaction; the journal's horizon, which the
database itself enforces; what a reader from below it is told."""

from __future__ import annotations

import pytest

from core.lifecycle import RunState
from core.store.api import RunStore
from core.store.errors import StoreError
from core.store.retention import BATCH_ROWS, Batch, cutoff
from tests.backends import StepClock
from tests.core.store_helpers import make_run

DONE = RunState.DONE.value
DAY_S = 86400.0
LANE = "jarvis-worker-1"


def add_events(store: RunStore, run_id: str, count: int) -> None:
    with store.transaction() as tx:
        for seq in range(count):
            tx.add_progress_event(
                run_id, 1, seq, f"e{seq}", timestamp=tx.now, at_utc=tx.now, phase="p",
                summary=f"step {seq}", tool_used=None,
            )  # fmt: skip


def progress_of(store: RunStore, run_id: str) -> int:
    rows = store.rows("SELECT COUNT(*) AS n FROM progress_events WHERE run_id = ?", [run_id])
    return int(rows[0]["n"])


def journal_seqs(store: RunStore, run_id: str) -> list[int]:
    rows = store.rows("SELECT seq FROM journal WHERE run_id = ? ORDER BY seq", [run_id])
    return [int(r["seq"]) for r in rows]


def drain(store: RunStore, table: str, days: int) -> list[Batch]:
    batches = []
    while True:
        with store.transaction() as tx:
            batch = tx.remove_history(table, DONE, days)  # type: ignore[arg-type]
        batches.append(batch)
        if not batch.more:
            return batches


@pytest.fixture
def aged(any_store: RunStore, clock: StepClock) -> RunStore:
    """Runs ten days old (one running, one failed waiting on an operator, one finished with
    2,500 events), then one finished now."""
    make_run(any_store, "old-running", RunState.RUNNING)
    add_events(any_store, "old-running", 30)
    make_run(any_store, "old-failed", RunState.FAILED)
    add_events(any_store, "old-failed", 20)
    make_run(any_store, "old-done", RunState.DONE)
    add_events(any_store, "old-done", 2500)
    clock.advance(10 * DAY_S)
    make_run(any_store, "new-done", RunState.DONE)
    add_events(any_store, "new-done", 10)
    return any_store


def test_the_policy_removes_exactly_the_old_progress_of_finished_runs_in_batches(
    aged: RunStore,
) -> None:
    batches = drain(aged, "progress", 7)
    assert sum(b.removed for b in batches) == 2500
    assert all(b.removed <= BATCH_ROWS for b in batches) and len(batches) >= 3
    assert progress_of(aged, "old-done") == 0
    assert progress_of(aged, "old-running") == 30
    assert progress_of(aged, "old-failed") == 20
    assert progress_of(aged, "new-done") == 10
    summary = aged.retention_of("old-done")
    assert summary is not None
    assert summary["progress_removed"] == 2500 and summary["progress_keep_days"] == 7
    assert summary["progress_last_at"] < cutoff(aged.now(), 7)
    assert summary["journal_removed"] == 0
    # The run stays, with its last progress.
    run = aged.get_run("old-done")
    assert run is not None and run["state"] == DONE
    # Nothing more to do: a second pass removes nothing and looks at no run already cleared.
    assert drain(aged, "progress", 7) == [Batch(0, False)]


def test_a_longer_policy_keeps_what_a_shorter_one_would_remove(aged: RunStore) -> None:
    assert sum(b.removed for b in drain(aged, "progress", 30)) == 0
    assert progress_of(aged, "old-done") == 2500


def test_the_journal_of_old_finished_runs_goes_below_a_horizon_the_database_holds(
    aged: RunStore,
) -> None:
    old = journal_seqs(aged, "old-done")
    running = journal_seqs(aged, "old-running")
    newer = journal_seqs(aged, "new-done")
    assert aged.journal_horizon() == 0 and aged.cut_below(0) is None
    removed = sum(b.removed for b in drain(aged, "journal", 7))
    assert removed == len(old) > 0
    assert journal_seqs(aged, "old-done") == []
    assert journal_seqs(aged, "old-running") == running
    assert journal_seqs(aged, "new-done") == newer
    horizon = aged.journal_horizon()
    assert horizon == max(old) + 1
    summary = aged.retention_of("old-done")
    assert summary is not None and summary["journal_removed"] == len(old)
    # A reader that had seen less than the horizon's eve is told; one past it is not.
    assert aged.cut_below(0) == horizon
    assert aged.cut_below(horizon - 2) == horizon
    assert aged.cut_below(horizon - 1) is None
    assert aged.cut_below(max(newer)) is None


def test_the_database_refuses_deleting_what_consoles_may_tail(aged: RunStore) -> None:
    drain(aged, "journal", 7)
    horizon = aged.journal_horizon()
    below_live = [s for s in journal_seqs(aged, "old-running") if s < horizon]
    assert below_live
    above = journal_seqs(aged, "new-done")  # a finished run's, at or above the horizon
    assert min(above) >= horizon
    for sql, seq in (
        ("DELETE FROM journal WHERE seq = ?", above[0]),
        ("DELETE FROM journal WHERE seq = ?", below_live[0]),
        ("UPDATE journal SET kind = 'x' WHERE seq = ?", below_live[0]),
        ("UPDATE journal SET kind = 'x' WHERE seq = ?", above[0]),
    ):
        with pytest.raises(StoreError), aged.transaction() as tx:
            tx.execute(sql, [seq])
    assert journal_seqs(aged, "new-done") == above
    assert set(below_live) <= set(journal_seqs(aged, "old-running"))
    # Below a raised horizon too, an entry of a run not finished is refused.
    with pytest.raises(StoreError), aged.transaction() as tx:
        tx.execute("UPDATE retention_marks SET seq = ? WHERE name = 'journal'", [max(above) + 1])
        tx.execute("UPDATE runs SET state = 'running' WHERE run_id = 'new-done'", [])
        tx.execute("DELETE FROM journal WHERE seq = ?", [above[0]])


def test_old_receipts_are_found_by_time_and_removed_by_key(
    any_store: RunStore, clock: StepClock
) -> None:
    with any_store.transaction() as tx:
        for n in range(5):
            tx.put_receipt(f"{LANE}/progress/old-{n}.json:abc", LANE, "progress")
    clock.advance(3 * DAY_S)
    with any_store.transaction() as tx:
        tx.put_receipt("jarvis-worker-1/progress/new.json:abc", "jarvis-worker-1", "progress")
    before = cutoff(any_store.now(), 2)
    first = any_store.old_receipts(before, 0, 3)
    rest = any_store.old_receipts(before, 3, 3)
    assert sorted(first + rest) == [f"{LANE}/progress/old-{n}.json:abc" for n in range(5)]
    assert any_store.count_old_receipts(before) == 5
    assert any_store.count_old_receipts(before, "jarvis-worker-1/progress/old-1.json") == 1
    with any_store.transaction() as tx:
        assert tx.remove_receipts(first) == 3
    assert any_store.count_old_receipts(before) == 2
    assert any_store.count_old_receipts(cutoff(any_store.now(), -1)) == 3


def test_an_entry_written_for_an_old_finished_run_today_stays(aged: RunStore) -> None:
    with aged.transaction() as tx:  # a refused file naming the run, say: no update of the run
        fresh = tx.journal("old-done", "quarantined", {"code": "too_big"}, "host")
    before = aged.rows("SELECT updated_at FROM runs WHERE run_id = 'old-done'")
    assert (
        aged.removable("journal", DONE, cutoff(aged.now(), 7))
        == len(journal_seqs(aged, "old-done")) - 1
    )
    drain(aged, "journal", 7)
    assert journal_seqs(aged, "old-done") == [fresh]
    assert aged.journal_horizon() <= fresh
    assert aged.rows("SELECT updated_at FROM runs WHERE run_id = 'old-done'") == before
