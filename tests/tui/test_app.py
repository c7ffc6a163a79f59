"""The console against a real store: rows, selection, in-place updates, inert worker text."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message
from textual.pilot import Pilot

from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from jarvis_tui import cli
from jarvis_tui.app import JarvisApp
from jarvis_tui.messages import RunsSnapshotReceived
from jarvis_tui.widgets.detail_panel import DetailPanel
from jarvis_tui.widgets.run_table import RunTable
from jarvis_tui.widgets.status_header import StatusHeader
from tests.core.store_helpers import dispatch_doc
from tests.tui.conftest import HOSTILE, RUNS, fixed_clock


def make_app(db: Path) -> JarvisApp:
    return JarvisApp(db, live=False, clock=fixed_clock)


async def settle(pilot: Pilot[None]) -> None:
    """Let every store read finish and the messages it posted be handled."""
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def row_text(table: RunTable, run_id: str) -> list[str]:
    return [cell.plain for cell in table.get_row(run_id)]


async def test_one_row_per_run_with_its_state(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        table = app.query_one(RunTable)
        assert sorted(table.run_ids) == sorted(RUNS)
        # Most recently updated first, as the store lists them.
        assert table.run_ids[0] == "run-done"
        for run_id, state in RUNS.items():
            assert state.value in row_text(table, run_id)[2]
        assert row_text(table, "run-contract")[2] == "⊘ failed_contract"
        assert row_text(table, "run-done")[2] == "✓ done"
        counts = app.query_one(StatusHeader).counts
        assert counts == {state.value: 1 for state in RUNS.values()}


async def test_moving_the_cursor_loads_that_runs_detail(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        panel = app.query_one(DetailPanel)
        assert panel.run_id == "run-done"  # the first row is highlighted on load
        table = app.query_one(RunTable)
        table.focus()
        await pilot.press("down", "down")  # done → failed → failed_contract
        await settle(pilot)
        assert panel.run_id == "run-contract"
        shown = panel.shown.plain
        assert "run-contract" in shown and "failed_contract" in shown
        assert "✗ files_in_scope" in shown
        assert "✓ tests_pass  12 passed" in shown
        await pilot.press("up")
        await settle(pilot)
        assert panel.run_id == "run-failed"
        assert "none yet" in panel.shown.plain  # no gates ran for it


async def test_a_new_run_is_added_by_key_without_a_rebuild(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        table = app.query_one(RunTable)
        before = {key.value: row for key, row in table.rows.items()}
        store = SqliteStore(store_db)
        try:
            result = submit_dispatch(
                store, dispatch_doc("run-new"), source_lane="main",
                target_lane="jarvis-worker-1", actor="test",
            )  # fmt: skip
            assert result.outcome == "enqueued"
        finally:
            store.close()

        cleared: list[bool] = []
        original_clear = table.clear

        def spy_clear(columns: bool = False) -> RunTable:
            cleared.append(columns)
            return original_clear(columns)

        table.clear = spy_clear  # type: ignore[method-assign]
        await pilot.press("r")
        await settle(pilot)

        after = {key.value: row for key, row in table.rows.items()}
        assert set(after) == set(before) | {"run-new"}
        for run_id, row in before.items():
            assert after[run_id] is row  # the very same Row objects: nothing was rebuilt
        assert cleared == []
        assert row_text(table, "run-new")[2] == "○ queued"
        assert app.query_one(StatusHeader).counts["queued"] == 2


async def test_worker_text_is_shown_literally_never_interpreted(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        table = app.query_one(RunTable)
        progress = table.get_cell("run-contract", "progress")
        assert progress.plain == "[bold red]x[/] \\x1b[2J"  # markup kept as text, ESC escaped
        assert progress.spans == [] and not progress.style
        table.focus()
        await pilot.press("down", "down")
        await settle(pilot)
        shown = app.query_one(DetailPanel).shown
        assert "\x1b" not in shown.plain
        assert "[bold red]x[/] \\x1b[2J" in shown.plain
        assert all("bold red" not in str(span.style) or "✗" in shown.plain[span.start : span.end]
                   for span in shown.spans)  # fmt: skip
        assert HOSTILE not in shown.plain


async def test_layout_is_side_by_side_when_wide_and_stacked_when_narrow(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table, panel = app.query_one(RunTable), app.query_one(DetailPanel)
        assert not app.screen.has_class("-wide")
        assert panel.region.y > table.region.y and panel.region.x == table.region.x
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert app.screen.has_class("-wide")
        assert panel.region.x > table.region.x and panel.region.y == table.region.y


async def test_live_polling_rereads_only_when_the_journal_moves(store_db: Path) -> None:
    snapshots: list[RunsSnapshotReceived] = []

    def hook(message: Message) -> None:
        if isinstance(message, RunsSnapshotReceived):
            snapshots.append(message)

    app = JarvisApp(store_db, live=True, clock=fixed_clock)
    async with app.run_test(size=(160, 48), message_hook=hook) as pilot:
        await pilot.pause(1.3)  # two idle polls after the first read
        assert len(snapshots) == 1
        store = SqliteStore(store_db)
        try:
            submit_dispatch(
                store, dispatch_doc("run-live"), source_lane="main",
                target_lane="jarvis-worker-1", actor="test",
            )  # fmt: skip
        finally:
            store.close()
        await pilot.pause(0.8)
        assert len(snapshots) == 2
        assert snapshots[-1].last_seq > snapshots[0].last_seq
        assert "run-live" in app.query_one(RunTable).run_ids


def test_an_unknown_theme_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(["tui", "--theme", "neon"]) == 2
    assert "is not a console theme" in capsys.readouterr().err
