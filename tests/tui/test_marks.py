"""Marks (space, U) and the action keys on the marked runs: keys, then the table, the toast and
the store. One question for all the runs, each run acted on once, each run's result said."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.lifecycle import Action
from core.moves import host_move
from core.service.fleet import Fleet, open_writer
from core.store.sqlite_store import SqliteStore
from jarvis_tui.bulk import Target, act_on_each
from jarvis_tui.modals.confirm_dialog import ActionConfirmDialog
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.screens.main_screen import MainScreen
from tests.tui.helpers import console_on, read_run, select, settle, table, wait_for
from tests.tui.test_type_ahead import type_ahead


def audit(db: Path, run_id: str) -> list[str]:
    store = SqliteStore(db, migrate=False)
    try:
        rows = store.rows("SELECT action FROM audit WHERE run_id = ? ORDER BY id", [run_id])
        return [str(row["action"]) for row in rows]
    finally:
        store.close()


def view_line(app: object) -> str:
    return str(app.main.query_one("#view-line").render())  # type: ignore[attr-defined]


async def test_space_marks_and_unmarks_and_U_clears(store_db: Path) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        runs = table(app)
        await pilot.press("space")
        await select(pilot, "run-contract")
        await pilot.press("space")
        assert list(runs.marked) == ["run-review", "run-contract"]
        assert "2 marked" in view_line(app)
        drawn = "".join(s.text for s in runs.render_line(runs.run_ids.index("run-review")))
        assert "+run-review" in drawn
        await pilot.press("space")  # the selected run, run-contract, unmarked
        assert list(runs.marked) == ["run-review"]
        await pilot.press("U")
        assert list(runs.marked) == [] and "marked" not in view_line(app)


async def test_a_on_marked_runs_asks_once_and_says_each_runs_result(store_db: Path) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        await pilot.press("space")
        await select(pilot, "run-contract")  # approve refuses a run that failed its contract
        await pilot.press("space", "a")
        dialog = app.screen
        assert isinstance(dialog, ActionConfirmDialog)
        body = str(dialog.query_one(".dialog-body").render())
        assert "Approve 2 marked runs?" in body and "run-review" in body and "run-contract" in body
        await pilot.press("y")
        await wait_for(pilot, lambda: read_run(store_db, "run-review")["state"] == "done")
        await settle(pilot)
        title, message, severity = app.notes[-1]
        assert (title, severity) == ("Approve: 1 of 2 runs", "warning")
        assert message.startswith("Approved run-review.\nrun-contract: ")
        assert read_run(store_db, "run-contract")["state"] == "failed_contract"
        assert audit(store_db, "run-review").count("approve") == 1
        # The run acted on is unmarked; the refused one stays marked, to look at.
        assert list(table(app).marked) == ["run-contract"]


async def test_o_on_marked_runs_asks_one_reason_for_all(store_db: Path) -> None:
    async with console_on(store_db, "run-failed") as (app, pilot):
        await pilot.press("space")
        await select(pilot, "run-contract")
        type_ahead(app, "space", "o", *"flaky infra", "enter")
        await wait_for(pilot, lambda: read_run(store_db, "run-contract")["state"] == "done")
        await wait_for(pilot, lambda: read_run(store_db, "run-failed")["state"] == "done")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        for run_id in ("run-failed", "run-contract"):
            assert read_run(store_db, run_id)["override_reason"] == "flaky infra"
            assert audit(store_db, run_id).count("override") == 1
        assert app.notes[-1][0] == "Override: 2 of 2 runs" and app.notes[-1][2] == "information"
        assert list(table(app).marked) == []


async def test_a_marked_run_out_of_the_view_is_acted_on_and_escape_asks_nothing(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-queued") as (app, pilot):
        await pilot.press("space", "5")  # only failed runs: run-queued leaves the view
        await settle(pilot)
        assert "run-queued" not in table(app).run_ids
        await pilot.press("x")
        assert isinstance(app.screen, ReasonDialog)
        await pilot.press("escape")  # backed out: nothing done
        await settle(pilot)
        assert read_run(store_db, "run-queued")["state"] == "queued"
        await pilot.press("x")
        assert isinstance(app.screen, ReasonDialog)
        await pilot.press(*"not needed", "enter")
        await wait_for(pilot, lambda: read_run(store_db, "run-queued")["state"] == "failed")
        assert audit(store_db, "run-queued").count("cancel") == 1
        assert read_run(store_db, "run-queued")["state_reason"].endswith(": not needed")


def test_each_run_is_acted_on_once_at_the_version_seen(store_db: Path) -> None:
    @contextmanager
    def writer() -> Iterator[Fleet]:
        fleet = open_writer(store_db, store_db.parent)
        try:
            yield fleet
        finally:
            fleet.close()

    review = read_run(store_db, "run-review")
    failed = read_run(store_db, "run-failed")
    targets = [
        Target("run-review", int(review["version"])),
        Target("run-review", int(review["version"])),  # named twice: acted on once
        Target("run-failed", int(failed["version"]) - 1),  # moved since it was seen
    ]
    result = act_on_each(writer, "approve", targets, "test-operator")
    assert [o.request.run_id for o in result.outcomes] == ["run-review", "run-failed"]
    assert result.done == ["run-review"]
    refusal = result.outcomes[1].refusal
    assert refusal is not None and refusal.code == "stale_version"
    assert audit(store_db, "run-review").count("approve") == 1
    title, message = result.summary()
    assert title == "Approve: 1 of 2 runs"
    assert "run-failed: Run run-failed changed since you looked at it" in message


async def test_space_colon_y_and_U_typed_in_the_filter_are_text(store_db: Path) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        type_ahead(app, "slash", *"run", "space", "colon", "y", "U")
        await settle(pilot)
        from jarvis_tui.widgets.filter_line import FilterLine

        assert app.main.query_one("#filter", FilterLine).value == "run :yU"
        assert list(table(app).marked) == [] and isinstance(app.screen, MainScreen)


async def test_a_marked_run_that_moved_is_refused_once_then_acted_on_as_it_is(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-queued") as (app, pilot):
        await pilot.press("space")
        await select(pilot, "run-failed")
        await pilot.press("5")  # out of the view and not on show: its row is the one marked
        await settle(pilot)
        assert "run-queued" not in app.main.model.rows
        store = SqliteStore(store_db)
        try:  # another process moves it on
            host_move(store, "run-queued", Action.START)
        finally:
            store.close()
        await pilot.press("x", *"not needed", "enter")
        await wait_for(pilot, lambda: bool(app.notes) and app.notes[-1][0] == "Cancel: 0 of 1 run")
        assert "changed since you looked" in app.notes[-1][1]
        assert read_run(store_db, "run-queued")["state"] == "running"
        assert list(table(app).marked) == ["run-queued"]
        await pilot.press("x", *"not needed", "enter")  # told, the operator asks again
        await wait_for(pilot, lambda: read_run(store_db, "run-queued")["state"] == "failed")
        assert audit(store_db, "run-queued").count("cancel") == 1
