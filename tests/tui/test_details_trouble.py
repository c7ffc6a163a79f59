"""The run details modal shows a run's worker trouble (refused files, the end of stderr) and
keeps up with its run while open."""

from __future__ import annotations

from pathlib import Path

from core import operator_actions
from core.store.sqlite_store import SqliteStore
from jarvis_tui.modals.run_details import RunDetailsScreen
from tests.tui.helpers import console_on, wait_for
from tests.tui.trouble_store import LAST, TOKEN, build_trouble_store


async def test_details_show_refused_files_and_stderr_masked_and_inert(tmp_path: Path) -> None:
    db = build_trouble_store(tmp_path / "jarvis.db")
    async with console_on(db, "run-failed", size=(80, 24)) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunDetailsScreen)
        body = str(app.screen.query_one(".dialog-body").render())
        # The stderr's token flagged the run when it was stored: the kind, never the value.
        assert "⚠ secrets masked: GitHub token" in body
        assert "refused files (2)" in body
        assert "not_json from jarvis-worker-1" in body and "unknown_steer" in body
        assert "data/ipc/errors/20260102T095100.000000Z-jarvis-worker-1-00000007-7.json" in body
        assert "worker stderr (attempt 1, exit 1, the end of 10,2" in body
        assert f"│ {LAST}" in body  # each stderr line behind its gutter
        assert TOKEN not in body and "ghp_****" in body
        # Markup shows as typed; the screen-clearing escape was dropped from the stored stderr
        # with the colour codes, and the one in the refused file's message is shown escaped.
        assert "\x1b" not in body and "[bold red]x[/]" in body and "\\x1b[2J" in body
        await pilot.press("escape")


async def test_details_of_a_run_without_trouble_say_nothing_of_it(tmp_path: Path) -> None:
    db = build_trouble_store(tmp_path / "jarvis.db")
    async with console_on(db, "run-done", size=(80, 24)) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        body = str(app.screen.query_one(".dialog-body").render())
        assert "refused files" not in body and "worker stderr" not in body
        assert "secrets masked" not in body
        await pilot.press("escape")


async def test_an_open_details_page_keeps_up_with_its_run(tmp_path: Path) -> None:
    """The page opened on a read that may be behind the table (a merge the row already
    showed); it reads its run again while open, so what it says is the run as it is now."""
    db = build_trouble_store(tmp_path / "jarvis.db")
    async with console_on(db, "run-running", size=(80, 24)) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunDetailsScreen)

        def body() -> str:
            return str(app.screen.query_one(".dialog-body").render())

        assert "▶ running" in body() and "cancelled by another-operator" not in body()
        store = SqliteStore(db)
        try:  # another operator, from another terminal
            operator_actions.cancel(store, "run-running", "another-operator", "stuck on a lock")
        finally:
            store.close()
        await wait_for(pilot, lambda: "stuck on a lock" in body())
        assert "▶ running" not in body()
        await pilot.press("escape")
