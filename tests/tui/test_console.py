"""The console against a real store: what it shows, and every action flow by keys."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.message import Message

import jarvis_cli as cli
from core.intake import submit_dispatch
from core.store.sqlite_store import SqliteStore
from jarvis_tui.messages import StoreChanged
from jarvis_tui.modals.help_screen import HELP
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.modals.retry_dialog import RetryDialog
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.widgets.gate_panel import GatePanel
from jarvis_tui.widgets.progress_stream import ProgressStream
from jarvis_tui.widgets.status_header import StatusHeader
from jarvis_tui.widgets.steer_composer import SteerComposer
from tests.core.store_helpers import dispatch_doc
from tests.tui.conftest import HOSTILE, RUNS
from tests.tui.helpers import (
    console_on,
    make_app,
    read_run,
    row_text,
    select,
    settle,
    table,
    wait_for,
    wait_for_palette_hit,
    wait_for_polls,
)


async def test_one_row_per_run_with_state_symbol_receipts_and_gates(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        runs = table(app)
        assert sorted(runs.run_ids) == sorted(RUNS)
        assert runs.run_ids[0] == "run-done"  # newest first
        assert row_text(app, "run-contract")[1] == "⊘ failed_contract"
        assert row_text(app, "run-done")[1] == "✓ done"
        assert row_text(app, "run-contract")[5] == "✗1/2"
        assert row_text(app, "run-review")[5] == "✓2/2"
        assert row_text(app, "run-running")[6] == "✓1 ⊗1"
        header = app.main.query_one(StatusHeader)
        assert header.counts == {state.value: 1 for state in RUNS.values()}
        # review_requested, failed_contract, failed, and a running run with an unheard steer.
        assert header.attention == 4


async def test_selecting_a_run_fills_the_gates_stream_and_receipts(store_db: Path) -> None:
    async with console_on(store_db, "run-contract") as (app, pilot):
        gates = app.main.query_one(GatePanel).shown.plain
        assert "✗ files_in_scope" in gates and "✓ tests_pass  12 passed" in gates
        assert "shared by 1 other run" in gates  # run-failed failed the same way
        assert "r retry" in gates
        stream = app.main.query_one(ProgressStream)
        assert stream.run_id == "run-contract"
        assert any("fail_gates: running → failed_contract" in line for line in stream.shown_lines)
        await select(pilot, "run-running")
        composer = app.main.query_one(SteerComposer)
        receipts = composer.receipts_text.plain
        assert "✓ acked" in receipts and "run only the unit tests" in receipts
        assert "⊗ expired" in receipts and "not acknowledged in 30 s" in receipts
        assert not composer.editor.read_only


async def test_worker_text_is_shown_literally_never_interpreted(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        progress = table(app).get_cell("run-contract", "progress")
        assert progress.plain == "[bold red]x[/] \\x1b[2J"  # markup kept as text, ESC escaped
        assert progress.spans == [] and not progress.style
        await select(pilot, "run-contract")
        for text in (
            app.main.query_one(GatePanel).shown.plain,
            "\n".join(app.main.query_one(ProgressStream).shown_lines),
        ):
            assert "\x1b" not in text
            assert "[bold red]x[/] \\x1b[2J" in text
            assert HOSTILE not in text


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_TOKEN = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"


async def test_secrets_in_worker_progress_are_masked(store_db: Path) -> None:
    store = SqliteStore(store_db)
    with store.transaction() as tx:
        tx.touch_run(
            "run-running",
            changes={"last_progress_summary": f"exported AWS_SECRET_ACCESS_KEY={AWS_SECRET}"},
            kind="progress",
            payload={"phase": "edit", "summary": f"token {GITHUB_TOKEN}"},
            actor="jarvis-worker-1",
        )  # fmt: skip
    store.close()
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        cell = table(app).get_cell("run-running", "progress").plain
        assert "wJalrXUtnFEMI" not in cell and "****" in cell
        await select(pilot, "run-running")
        lines = "\n".join(app.main.query_one(ProgressStream).shown_lines)
        assert "ghp_1234567890abcdefghij" not in lines and "****" in lines


async def test_retry_asks_with_the_retry_count_and_retries_on_yes(store_db: Path) -> None:
    async with console_on(store_db, "run-failed") as (app, pilot):
        await pilot.press("r")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, RetryDialog)
        assert "retried 0 times; this will be retry 1" in str(
            dialog.query_one(".dialog-body").render()
        )
        await pilot.press("y")
        await wait_for(pilot, lambda: read_run(store_db, "run-failed")["state"] == "queued")
        run = read_run(store_db, "run-failed")
        assert run["retry_count"] == 1
        await wait_for(pilot, lambda: any("Retried run run-failed" in n[1] for n in app.notes))
        await wait_for(pilot, lambda: row_text(app, "run-failed")[1] == "○ queued")
        assert row_text(app, "run-failed")[2] == "1"


async def test_retry_goes_on_from_the_branch_unless_the_operator_asks_fresh(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-failed") as (app, pilot):
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RetryDialog)
        body = str(app.screen.query_one(".dialog-body").render())
        assert "goes on from where the last attempt left its branch" in body
        await pilot.press("f")
        await wait_for(pilot, lambda: read_run(store_db, "run-failed")["state"] == "queued")
        assert read_run(store_db, "run-failed")["retry_fresh"] == 1
    async with console_on(store_db, "run-contract") as (app, pilot):
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: read_run(store_db, "run-contract")["state"] == "queued")
        assert read_run(store_db, "run-contract")["retry_fresh"] == 0


async def test_retry_backed_out_changes_nothing(store_db: Path) -> None:
    async with console_on(store_db, "run-contract") as (app, pilot):
        before = read_run(store_db, "run-contract")
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RetryDialog)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert read_run(store_db, "run-contract") == before


async def test_override_is_refused_without_a_reason_and_recorded_with_one(store_db: Path) -> None:
    async with console_on(store_db, "run-contract") as (app, pilot):
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press("space", "space", "enter")  # blank
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonDialog))  # still asking
        assert "A reason is required" in str(app.screen.query_one("#reason-error").render())
        assert read_run(store_db, "run-contract")["state"] == "failed_contract"
        await pilot.press(*"scope check is wrong", "enter")
        await wait_for(pilot, lambda: read_run(store_db, "run-contract")["state"] == "done")
        run = read_run(store_db, "run-contract")
        assert run["overridden"] == 1
        assert run["override_reason"] == "scope check is wrong"
        assert run["overridden_by"] == "test-operator"
        await wait_for(pilot, lambda: "(overridden)" in app.main.query_one(GatePanel).shown.plain)
        assert row_text(app, "run-contract")[3] == "!"


async def test_escape_backs_out_of_the_reason_dialog(store_db: Path) -> None:
    async with console_on(store_db, "run-queued", size=(80, 24)) as (app, pilot):
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press(*"nope", "escape")
        await settle(pilot)
        assert isinstance(app.screen, MainScreen)
        assert read_run(store_db, "run-queued")["state"] == "queued"


async def test_approve_moves_a_reviewed_run_to_done(store_db: Path) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        await pilot.press("a")
        await wait_for(pilot, lambda: read_run(store_db, "run-review")["state"] == "done")
        await wait_for(pilot, lambda: row_text(app, "run-review")[1] == "✓ done")


async def test_cancel_records_the_reason(store_db: Path) -> None:
    async with console_on(store_db, "run-queued", size=(80, 24)) as (app, pilot):
        await pilot.press("x")
        # The reason is typed into the dialog once it is there (a loaded machine opens it late).
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press(*"duplicate of run-review", "enter")
        await wait_for(pilot, lambda: read_run(store_db, "run-queued")["state"] == "failed")
        assert "duplicate of run-review" in read_run(store_db, "run-queued")["state_reason"]


async def test_an_impossible_action_is_dimmed_and_says_why(store_db: Path) -> None:
    async with console_on(store_db, "run-done") as (app, pilot):
        bindings = app.screen.active_bindings
        assert bindings["r"].enabled is False and bindings["a"].enabled is False
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)  # no dialog
        titles = [(t, m) for t, m, _s in app.notes]
        assert ("Retry: not possible", "Run run-done is done; it can be retried only when it is "
                "failed_contract or failed.") in titles  # fmt: skip
        await select(pilot, "run-failed")
        assert app.screen.active_bindings["r"].enabled is True


async def test_a_refusal_when_another_process_moved_the_run_first(store_db: Path) -> None:
    async with console_on(store_db, "run-failed") as (app, pilot):
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RetryDialog)
        # Meanwhile another operator retries the same run from another process.
        other = subprocess.run(
            [sys.executable, "-m", "jarvis_cli", "retry", "run-failed", "--workspace",
             str(store_db.parent), "--operator", "day-operator", "--json"],
            capture_output=True, text=True, check=False, env={**os.environ},
        )  # fmt: skip
        assert other.returncode == 0, other.stdout + other.stderr
        await pilot.press("y")
        await wait_for(pilot, lambda: any(t.startswith("Refused") for t, _m, _s in app.notes))
        title, message, severity = next(n for n in app.notes if n[0].startswith("Refused"))
        assert title == "Refused (stale_version)" and severity == "error"
        assert "changed since you looked at it" in message
        run = read_run(store_db, "run-failed")
        assert run["retry_count"] == 1  # exactly one effect: the other operator's


async def test_steer_shows_its_receipt_change_as_the_host_acknowledges(store_db: Path) -> None:
    async with console_on(store_db, "run-running", live=True, poll_interval=0.05) as (app, pilot):
        await pilot.press("s")
        await pilot.pause()
        composer = app.main.query_one(SteerComposer)
        assert app.focused is composer.editor
        await pilot.press(*"use the staging db", "enter", *"then stop")
        await pilot.press("ctrl+s")
        store = SqliteStore(store_db)
        try:

            def steer_row() -> dict[str, object] | None:
                rows = store.rows(
                    "SELECT * FROM steering_events WHERE message = 'use the staging db\nthen stop'"
                )
                return rows[0] if rows else None

            await wait_for(pilot, lambda: steer_row() is not None)
            row = steer_row()
            assert (
                row is not None
                and row["status"] == "pending"
                and row["operator"] == "test-operator"
            )
            await wait_for(pilot, lambda: "… pending" in composer.receipts_text.plain)
            assert composer.editor.text == ""  # cleared once the store accepted it
            for status in ("delivered", "acked"):
                with store.transaction() as tx:
                    tx.execute(
                        "UPDATE steering_events SET status = ?, sent_at = ?, acked_at = ? "
                        "WHERE steer_id = ?",
                        [status, tx.now, tx.now if status == "acked" else None, row["steer_id"]],
                    )
                    tx.touch_run("run-running", changes={}, kind="steer",
                                 payload={"steer_id": row["steer_id"], "status": status},
                                 actor="host")  # fmt: skip
                symbol = {"delivered": "→", "acked": "✓"}[status]
                await wait_for(
                    pilot,
                    lambda s=status, y=symbol: (
                        composer.receipts_text.plain.count(f"{y} {s}") >= (2 if s == "acked" else 1)
                    ),
                )
        finally:
            store.close()


async def test_steering_is_refused_for_a_run_that_is_not_running(store_db: Path) -> None:
    async with console_on(store_db, "run-review", size=(80, 24)) as (app, pilot):
        await pilot.press("s")
        await pilot.pause()
        assert any("only a running run can be steered" in m for _t, m, _s in app.notes)
        composer = app.main.query_one(SteerComposer)
        assert composer.editor.read_only


async def test_text_filter_and_escape(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"contract")
        await settle(pilot)
        assert table(app).run_ids == ["run-contract"]
        await pilot.press("enter")  # back to the table, the filter stays
        assert table(app).run_ids == ["run-contract"]
        assert app.focused is table(app)
        await pilot.press("escape")
        await settle(pilot)
        assert sorted(table(app).run_ids) == sorted(RUNS)


async def test_state_filters_and_the_attention_view(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("5")
        assert table(app).run_ids == ["run-failed"]
        await pilot.press("0")
        assert len(table(app).run_ids) == len(RUNS)
        await pilot.press("exclamation_mark")
        store = SqliteStore(store_db)
        waiting = store.rows(
            "SELECT run_id FROM runs WHERE run_id IN "
            "('run-running', 'run-review', 'run-contract', 'run-failed') ORDER BY updated_at"
        )
        store.close()
        # Longest-waiting first; the running run is there for its unheard steer.
        assert table(app).run_ids == [row["run_id"] for row in waiting]
        await pilot.press("exclamation_mark")
        assert len(table(app).run_ids) == len(RUNS)


async def test_sort_by_column_and_reverse(store_db: Path) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        await pilot.press("S", "S", "S")  # age → updated → state → run
        assert app.main.model.view.sort == "run"
        assert table(app).run_ids == sorted(RUNS)
        assert table(app).selected_run_id == "run-review"  # the cursor stays on its run
        await pilot.press("R")
        assert table(app).run_ids == sorted(RUNS, reverse=True)


async def test_help_lists_every_key_of_the_main_screen(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        from jarvis_tui.modals.help_screen import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        listed = {token for _section, keys in HELP for key, _what in keys for token in key.split()}
        listed |= {str(n) for n in range(1, 7)} if "1-6" in listed else set()
        for binding in MainScreen.BINDINGS:
            assert not isinstance(binding, tuple)
            for one in binding.key.split(","):
                name = {"slash": "/", "exclamation_mark": "!", "question_mark": "?",
                        "colon": ":"}.get(one, one)  # fmt: skip
                assert name in listed, f"{name} is bound but not in the help"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_enter_opens_the_runs_details(store_db: Path) -> None:
    async with console_on(store_db, "run-failed", size=(80, 24)) as (app, pilot):
        await pilot.press("enter")
        await pilot.pause()
        from jarvis_tui.modals.run_details import RunDetailsScreen

        assert isinstance(app.screen, RunDetailsScreen)
        body = str(app.screen.query_one(".dialog-body").render())
        assert "audit trail" in body and "dispatch" in body
        assert "dispatch: — → queued" in body and "None" not in body
        await pilot.press("escape")


async def test_palette_goes_to_a_run_and_runs_actions(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("5")  # only failed: run-review is hidden
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"run-review")
        await wait_for_palette_hit(pilot, "run-review")
        await pilot.press("enter")
        await settle(pilot)
        assert table(app).selected_run_id == "run-review"
        assert app.main.model.view.state is None  # the view widened to show it


async def test_stream_toggles_to_all_runs(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        stream = app.main.query_one(ProgressStream)
        assert stream.all_runs
        runs_seen = {line.split()[1] for line in stream.shown_lines}
        assert set(RUNS) <= runs_seen
        await pilot.press("t")
        await settle(pilot)
        assert not stream.all_runs and stream.run_id == table(app).selected_run_id


async def test_stream_pauses_when_scrolled_up_and_follows_at_end(store_db: Path) -> None:
    store = SqliteStore(store_db)
    with store.transaction() as tx:
        for seq in range(100):
            payload = {"phase": "test", "summary": f"step {seq}"}
            tx.touch_run("run-running", changes={}, kind="progress", payload=payload, actor="w")
    store.close()
    async with console_on(store_db, "run-running", live=True, poll_interval=0.05) as (app, pilot):
        stream = app.main.query_one(ProgressStream)
        await wait_for(pilot, lambda: stream.max_top > 0)
        assert stream.following
        stream.focus()
        await pilot.press("pageup")
        await pilot.pause()
        assert not stream.following
        held = stream.top
        assert held < stream.max_top
        store = SqliteStore(store_db)
        with store.transaction() as tx:
            tx.touch_run("run-running", changes={}, kind="progress",
                         payload={"phase": "test", "summary": "one more"}, actor="w")  # fmt: skip
        store.close()
        await wait_for(pilot, lambda: any("one more" in line for line in stream.shown_lines))
        assert stream.top == held  # the reader's place is kept
        assert not stream.following
        await pilot.press("end")
        await pilot.pause()
        assert stream.following and stream.top == stream.max_top


async def test_live_changes_update_rows_in_place_and_toast_once(store_db: Path) -> None:
    reads: list[StoreChanged] = []

    def hook(message: Message) -> None:
        if isinstance(message, StoreChanged):
            reads.append(message)

    app = make_app(store_db, live=True, poll_interval=0.05)
    async with app.run_test(size=(160, 48), message_hook=hook) as pilot:
        await settle(pilot)
        await wait_for_polls(pilot, 5)
        # An idle console reads nothing more (the hook sees a message at each pump it visits).
        assert len({id(r) for r in reads}) == 1 and reads[0].read.full
        runs = table(app)
        drawn = {run_id: runs.get_row(run_id) for run_id in runs.run_ids}
        store = SqliteStore(store_db)
        try:
            submit_dispatch(store, dispatch_doc("run-new"), source_lane="main",
                            target_lane="jarvis-worker-1", actor="test")  # fmt: skip
            from core.lifecycle import Action
            from core.moves import host_move

            host_move(store, "run-running", Action.FAIL_GATES)
        finally:
            store.close()
        await wait_for(pilot, lambda: "run-new" in runs.run_ids)
        await wait_for(pilot, lambda: row_text(app, "run-running")[1] == "⊘ failed_contract")
        assert runs.run_ids[0] == "run-new"  # newest first: the store's order
        for run_id, cells in drawn.items():
            if run_id != "run-running":
                assert runs.get_row(run_id) is cells  # untouched lines keep their cells
        await wait_for_polls(pilot, 3)  # later polls must not toast it again
        toasts = [n for n in app.notes if n[0] == "Needs a human"]
        assert toasts == [("Needs a human", "Run run-running is failed_contract.", "warning")]


async def test_panels_fold_into_tabs_when_narrow(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.main
        assert not screen.has_class("-wide")
        assert screen.query_one("#stream").display and not screen.query_one("#gates").display
        await pilot.press("c")
        await pilot.pause()
        assert screen.query_one("#gates").display and not screen.query_one("#stream").display
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert screen.has_class("-wide")
        for panel in ("#stream", "#gates", "#composer"):
            assert screen.query_one(panel).display
        assert not screen.query_one("#panel-tabs").display


def test_an_unknown_theme_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run(["tui", "--theme", "neon"]) == 2
    assert "is not a console theme" in capsys.readouterr().err
