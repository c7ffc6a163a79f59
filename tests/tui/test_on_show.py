"""The run on show: the panels, every action key and the composer are about one run, the one the
operator chose, and it never changes because the view did.

A run that leaves the view (it changed state under a state filter, or the filter changed) stays
on show, marked as out of view, until the operator moves the cursor to another run.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.pilot import Pilot

from core.lifecycle import Action, RunState
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from jarvis_tui.app import JarvisApp
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.widgets.gate_panel import GatePanel
from jarvis_tui.widgets.progress_stream import ProgressStream
from jarvis_tui.widgets.run_table import RunTable
from jarvis_tui.widgets.steer_composer import SteerComposer
from tests.core.store_helpers import make_run
from tests.tui.helpers import console_on, read_run, select, settle, table, wait_for
from tests.tui.test_type_ahead import type_ahead


def add_runs(db: Path, *runs: tuple[str, RunState]) -> None:
    store = SqliteStore(db)
    try:
        for run_id, state in runs:
            make_run(store, run_id, state)
    finally:
        store.close()


def on_show(app: JarvisApp) -> str | None:
    """The run the panels show (None before any was read)."""
    view = app.main.view
    return view.run_id if view is not None else None


def panels_show(app: JarvisApp, run_id: str) -> bool:
    screen = app.main
    gates = screen.query_one(GatePanel).shown.plain
    return (
        on_show(app) == run_id
        and gates.startswith(run_id)
        and screen.query_one(ProgressStream).run_id == run_id
        and screen.query_one(SteerComposer).view is not None
        and screen.query_one(SteerComposer).view.run_id == run_id  # type: ignore[union-attr]
    )


def view_line(app: JarvisApp) -> str:
    return str(app.main.query_one("#view-line").render())


def steers(db: Path) -> list[dict[str, Any]]:
    store = SqliteStore(db, migrate=False)
    try:
        return [dict(row) for row in store.rows("SELECT run_id, message FROM steering_events")]
    finally:
        store.close()


async def test_go_to_run_from_the_palette_shows_that_run_in_every_panel(store_db: Path) -> None:
    async with console_on(store_db, "run-contract") as (app, pilot):
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"go to run-review")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: panels_show(app, "run-review"))
        assert table(app).selected_run_id == "run-review"
        await pilot.press("a")  # acts on the run on show, which is the one gone to
        await wait_for(pilot, lambda: read_run(store_db, "run-review")["state"] == "done")
        assert read_run(store_db, "run-contract")["state"] == "failed_contract"


async def test_a_run_approved_out_of_a_state_filter_stays_on_show_so_a_second_a_approves_nothing(
    store_db: Path,
) -> None:
    add_runs(store_db, ("run-review-2", RunState.REVIEW_REQUESTED))
    async with console_on(store_db, "run-review") as (app, pilot):
        await pilot.press("3")  # only review_requested: run-review-2 and run-review
        await settle(pilot)
        assert sorted(table(app).run_ids) == ["run-review", "run-review-2"]
        assert table(app).selected_run_id == "run-review"
        await pilot.press("a")
        await wait_for(pilot, lambda: "run-review" not in table(app).run_ids)
        await settle(pilot)
        # It left the view, and stays on show: the panels, the keys and the view line say so.
        assert panels_show(app, "run-review")
        assert "run-review is done: not in this view" in view_line(app)
        assert table(app).selected_run_id is None  # no neighbour was put under the cursor
        await pilot.press("a")
        await settle(pilot)
        assert read_run(store_db, "run-review-2")["state"] == "review_requested"
        assert (
            "Approve: not possible",
            "Run run-review is done; it can be approved only when it is review_requested (not "
            "yet approved).",
            "warning",
        ) in app.notes
        # Moving the cursor is choosing: now the neighbour is on show, and `a` approves it.
        await pilot.press("down")
        await wait_for(pilot, lambda: panels_show(app, "run-review-2"))
        await pilot.press("a")
        await wait_for(pilot, lambda: read_run(store_db, "run-review-2")["state"] == "done")


async def test_a_run_that_leaves_the_view_is_still_the_one_keys_act_on(store_db: Path) -> None:
    async with console_on(store_db, "run-queued", size=(80, 24)) as (app, pilot):
        await pilot.press("1")  # only queued: run-queued alone
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press(*"duplicate", "enter")
        await wait_for(pilot, lambda: read_run(store_db, "run-queued")["state"] == "failed")
        await wait_for(pilot, lambda: table(app).run_ids == [])
        await wait_for(pilot, lambda: "failed" in app.main.query_one(GatePanel).shown.plain)
        assert panels_show(app, "run-queued")
        await pilot.press("x")
        await settle(pilot)
        messages = [message for _title, message, _severity in app.notes]
        assert "No run is selected." not in messages
        assert (
            "Run run-queued is failed; it can be cancelled only when it is queued or running."
            in messages
        ), messages
        # Enter shows the details of that run too.
        await pilot.press("enter")
        await pilot.pause()
        from jarvis_tui.modals.run_details import RunDetailsScreen

        assert isinstance(app.screen, RunDetailsScreen)
        assert app.screen.view.run_id == "run-queued"


async def type_draft(pilot: Pilot[Any], text: str) -> None:
    await pilot.press("s", *text, "escape")


async def test_a_steer_draft_belongs_to_its_run(store_db: Path) -> None:
    add_runs(store_db, ("run-running-2", RunState.RUNNING))
    async with console_on(store_db, "run-running") as (app, pilot):
        editor = app.main.query_one(SteerComposer).editor
        await type_draft(pilot, "only the unit tests")
        await select(pilot, "run-running-2")
        assert panels_show(app, "run-running-2")
        assert editor.text == ""  # another run: its own (empty) draft
        await type_draft(pilot, "second")
        await select(pilot, "run-running")
        assert editor.text == "only the unit tests"
        await pilot.press("s", "ctrl+s")
        await wait_for(pilot, lambda: len(steers(store_db)) == 3)  # two in the fixture
        assert {"run_id": "run-running", "message": "only the unit tests"} in steers(store_db)
        await wait_for(pilot, lambda: editor.text == "")  # sent: that draft is gone
        await pilot.press("escape")
        await select(pilot, "run-running-2")
        assert editor.text == "second"  # never sent, never lost


async def test_a_draft_is_not_sent_to_another_run_when_its_run_finishes(store_db: Path) -> None:
    add_runs(store_db, ("run-running-2", RunState.RUNNING))
    kwargs: dict[str, Any] = {"live": True, "poll_interval": 0.05}
    async with console_on(store_db, "run-running", **kwargs) as (app, pilot):
        await pilot.press("2")  # only running: run-running-2 and run-running
        await type_draft(pilot, "use the staging db")
        store = SqliteStore(store_db)
        try:
            host_move(store, "run-running", Action.PASS_GATES)  # the worker finished
        finally:
            store.close()
        await wait_for(pilot, lambda: "run-running" not in table(app).run_ids)
        gates = app.main.query_one(GatePanel)
        await wait_for(pilot, lambda: "review_requested" in gates.shown.plain)
        assert panels_show(app, "run-running")
        composer = app.main.query_one(SteerComposer)
        assert composer.editor.text == "use the staging db"  # kept, with its run
        assert composer.editor.read_only
        await pilot.press("s")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert all(steer["message"] != "use the staging db" for steer in steers(store_db))
        await pilot.press("escape", "down")
        await wait_for(pilot, lambda: panels_show(app, "run-running-2"))
        assert composer.editor.text == ""


async def test_enter_in_the_filter_chooses_the_first_match_when_the_run_on_show_is_not_one(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-done", size=(80, 24)) as (app, pilot):
        await pilot.press("slash", *"contract")
        await settle(pilot)
        assert table(app).run_ids == ["run-contract"]
        assert on_show(app) == "run-done"  # while typing, the panels stay where they were
        await pilot.press("enter")
        await wait_for(pilot, lambda: panels_show(app, "run-contract"))
        assert table(app).selected_run_id == "run-contract"
        await pilot.press("r")  # the run found, as `/ id enter r` means
        await pilot.pause()
        from jarvis_tui.modals.retry_dialog import RetryDialog

        assert isinstance(app.screen, RetryDialog)
        assert app.screen.run["run_id"] == "run-contract"


async def test_enter_in_the_filter_keeps_the_run_on_show_when_it_matches(store_db: Path) -> None:
    async with console_on(store_db, "run-review", size=(80, 24)) as (app, pilot):
        await pilot.press("slash", *"run-", "enter")
        await settle(pilot)
        assert table(app).selected_run_id == "run-review"
        assert panels_show(app, "run-review")


async def test_a_key_typed_right_behind_a_cursor_move_acts_on_the_run_moved_to(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-contract") as (app, pilot):
        # Newest first: run-contract, then run-review. One read from a slow link: `down a`.
        assert (
            table(app).run_ids.index("run-review") == table(app).run_ids.index("run-contract") + 1
        )
        type_ahead(app, "down", "a")
        await wait_for(pilot, lambda: read_run(store_db, "run-review")["state"] == "done")
        assert read_run(store_db, "run-contract")["state"] == "failed_contract"
        assert not any("not possible" in title for title, _message, _severity in app.notes)


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RunTable(id="runs")


def rows(*run_ids: str) -> list[dict[str, Any]]:
    return [{"run_id": run_id, "state": "failed"} for run_id in run_ids]


async def test_the_cursor_keys_move_from_where_an_unshown_current_run_would_be() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 10)) as pilot:
        runs = app.query_one(RunTable)
        runs.focus()
        now = datetime(2026, 1, 2, tzinfo=UTC)
        runs.replace_rows(rows("a", "b", "c", "d", "e"), now)
        await pilot.pause()
        assert runs.current == "a"  # nothing chosen yet: the first run
        await pilot.press("down", "down")
        assert runs.current == "c"
        runs.drop("c")  # it left the view
        assert runs.current == "c" and runs.selected_run_id is None and runs.cursor_row == -1
        runs.drop("a")  # a run before it left too: "after c" is still d
        await pilot.press("down")
        assert runs.current == "d"
        runs.drop("d")
        await pilot.press("up")
        assert runs.current == "b"  # the run before where d was
        runs.replace_rows(rows("e"), now, gap=0)  # a new view without b, b sorting first
        assert runs.current == "b" and runs.selected_run_id is None
        await pilot.press("down")
        assert runs.current == "e"
