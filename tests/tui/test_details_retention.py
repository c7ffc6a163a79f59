"""The run details page says what retention removed of the run's history, as `jarvis show`
does: its progress stream and audit no longer go back to its start, and the page says why."""

from __future__ import annotations

from pathlib import Path

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from jarvis_tui.modals.run_details import RunDetailsScreen
from tests.backends import StepClock
from tests.core.store_helpers import make_run
from tests.tui.helpers import console_on

DAY_S = 86400.0


def store_with_old_history(db: Path) -> None:
    clock = StepClock()
    store = SqliteStore(db, clock=clock)
    try:
        make_run(store, "run-old", RunState.DONE)
        with store.transaction() as tx:
            for seq in range(1, 13):
                tx.add_progress_event("run-old", 1, seq, f"{seq}.json", timestamp=tx.now,
                                      at_utc=tx.now, phase="p", summary=f"step {seq}",
                                      tool_used=None)  # fmt: skip
        make_run(store, "run-new", RunState.DONE)
        clock.advance(10 * DAY_S)
        for table in ("progress", "journal"):
            with store.transaction() as tx:
                assert not tx.remove_history(table, RunState.DONE.value, 7).more  # type: ignore[arg-type]
    finally:
        store.close()


async def test_the_details_page_says_what_retention_removed(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    store_with_old_history(db)
    async with console_on(db, "run-old", size=(80, 24)) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunDetailsScreen)
        body = str(app.screen.query_one(".dialog-body").render())
        assert "12 progress events up to 2026-11-26 removed by retention (keep 7 days)" in body
        assert "journal entries up to 2026-11-26 removed by retention (keep 7 days)" in body
        await pilot.press("escape")
