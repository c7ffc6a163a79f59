"""A console away while retention removed journal entries it had not read says so and reads
its window again: the runs those entries named are on screen, none skipped."""

from __future__ import annotations

from pathlib import Path

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.backends import StepClock
from tests.core.store_helpers import make_run
from tests.store.test_retention import DAY_S, DONE
from tests.tui.helpers import make_app, row_text, settle, wait_for


async def test_the_console_says_history_was_removed_and_reads_its_window_again(
    tmp_path: Path,
) -> None:
    clock = StepClock()
    db = tmp_path / "jarvis.db"
    store = SqliteStore(db, clock=clock)
    try:
        make_run(store, "early", RunState.RUNNING)
        app = make_app(db)  # reads only when told (`read_store`)
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            assert row_text(app, "early")
            # While the console looks away: a run finishes, ages, and its entries are removed.
            make_run(store, "old-done", RunState.DONE)
            clock.advance(10 * DAY_S)
            make_run(store, "new", RunState.QUEUED)
            with store.transaction() as tx:
                assert tx.remove_history("journal", DONE, 7).removed > 0
            app.main.read_store()
            await wait_for(pilot, lambda: any(t == "history removed" for t, _, _ in app.notes))
            await settle(pilot)
            (said,) = [m for t, m, _ in app.notes if t == "history removed"]
            assert f"before journal entry {store.journal_horizon()}" in said
            assert row_text(app, "old-done") and row_text(app, "new")
    finally:
        store.close()
