"""The keys power users bring from less, vim and k9s: keys pressed, then what the console shows
and what the store holds.

j k g G and half pages in the run table and the progress stream; ``:`` to go to a run by id;
``y`` to copy a run's value (OSC 52); ``/`` ``n`` ``N`` in the progress stream, which never
moves away from a match while new entries arrive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Input

from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from jarvis_tui.modals.copy_dialog import CopyDialog, clipboard_text
from jarvis_tui.modals.jump_dialog import JumpDialog
from jarvis_tui.modals.search_prompt import SearchPrompt
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.progress_stream import ProgressStream
from tests.tui.helpers import console_on, make_app, settle, table, wait_for
from tests.tui.test_keys_reach_their_target import long_history
from tests.tui.test_on_show import add_runs
from tests.tui.test_type_ahead import type_ahead

MANY = 40


def _set(db: Path, run_id: str, **fields: Any) -> None:
    store = SqliteStore(db)
    try:
        with store.transaction() as tx:
            names = ", ".join(f"{name} = ?" for name in fields)
            tx.execute(f"UPDATE runs SET {names} WHERE run_id = ?", [*fields.values(), run_id])
    finally:
        store.close()


def _index(app: Any) -> int:
    runs = table(app)
    assert runs.selected_run_id is not None
    return runs.run_ids.index(runs.selected_run_id)


# -- moving --------------------------------------------------------------------------------------


async def test_j_k_g_G_and_half_pages_move_the_table_cursor(store_db: Path) -> None:
    add_runs(store_db, *((f"run-more-{n:02}", RunState.QUEUED) for n in range(MANY)))
    app = make_app(store_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        runs = table(app)
        await pilot.press("g")
        assert _index(app) == 0
        await pilot.press("j", "j", "j")
        assert _index(app) == 3
        await pilot.press("k")
        assert _index(app) == 2
        half = runs.size.height // 2
        await pilot.press("ctrl+d")
        assert _index(app) == 2 + half
        await pilot.press("ctrl+u")
        assert _index(app) == 2
        await pilot.press("G")
        assert _index(app) == runs.row_count - 1 == MANY + 5
        await pilot.press("g")
        assert _index(app) == 0


async def test_j_k_g_G_and_half_pages_scroll_the_progress_stream(store_db: Path) -> None:
    long_history(store_db, "run-running")
    async with console_on(store_db, "run-running", size=(160, 48)) as (app, pilot):
        stream = app.main.query_one(ProgressStream)
        await wait_for(pilot, lambda: stream.max_top > 0)
        await pilot.press("p")
        assert app.focused is stream and stream.top == stream.max_top
        await pilot.press("g")
        assert stream.top == 0 and not stream.following
        await pilot.press("j", "j")
        assert stream.top == 2
        await pilot.press("k")
        assert stream.top == 1
        await pilot.press("ctrl+d")
        assert stream.top == 1 + stream.size.height // 2
        await pilot.press("ctrl+u")
        assert stream.top == 1
        await pilot.press("G")
        assert stream.top == stream.max_top and stream.following
        assert table(app).selected_run_id == "run-running"  # the table never moved


# -- going to a run ----------------------------------------------------------------------------


async def test_colon_completes_a_run_id_from_the_store_and_goes_to_it(store_db: Path) -> None:
    async with console_on(store_db, "run-queued") as (app, pilot):
        await pilot.press("5")  # only failed runs: run-review is hidden
        await settle(pilot)
        await pilot.press("colon", *"run-rev")
        dialog = app.screen
        assert isinstance(dialog, JumpDialog)
        box = dialog.query_one("#jump-id", Input)
        await wait_for(pilot, lambda: box._suggestion == "run-review")
        await wait_for(pilot, lambda: [r["run_id"] for r in dialog.found] == ["run-review"])
        await pilot.press("tab")
        assert box.value == "run-review"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await settle(pilot)
        assert table(app).selected_run_id == "run-review"
        # The state filter hid it: the view widened to every state to show it.
        assert app.main.model.view.state is None
        await pilot.press("a")  # the keys act on the run gone to
        await wait_for(pilot, lambda: app.main.model.rows["run-review"]["state"] == "done")


async def test_keys_typed_right_behind_colon_are_the_id(store_db: Path) -> None:
    async with console_on(store_db, "run-queued") as (app, pilot):
        type_ahead(app, "colon", *"run-failed", "enter")
        await wait_for(pilot, lambda: table(app).selected_run_id == "run-failed")
        assert isinstance(app.screen, MainScreen)


async def test_colon_with_an_unknown_id_says_so_and_stays_open(store_db: Path) -> None:
    async with console_on(store_db, "run-queued") as (app, pilot):
        await pilot.press("colon", *"run-nope", "enter")
        dialog = app.screen
        assert isinstance(dialog, JumpDialog)
        error = dialog.query_one("#jump-error")
        await wait_for(pilot, lambda: "There is no run run-nope" in str(error.render()))
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        assert table(app).selected_run_id == "run-queued"


# -- copying -------------------------------------------------------------------------------------


async def test_y_copies_the_runs_id_branch_commit_and_pr_url(store_db: Path) -> None:
    _set(store_db, "run-review", branch_name="jarvis/run-review", commit_sha="0123abcd",
         pr_url=None)  # fmt: skip
    async with console_on(store_db, "run-review") as (app, pilot):
        for key, value in (("i", "run-review"), ("b", "jarvis/run-review"), ("c", "0123abcd")):
            await pilot.press("y")
            assert isinstance(app.screen, CopyDialog)
            await pilot.press(key)
            assert isinstance(app.screen, MainScreen)
            assert app.clipboard == value
            assert app.notes[-1][1] == value
        await pilot.press("y", "p")  # no PR yet: said, and the clipboard kept
        assert app.clipboard == "0123abcd"
        assert app.notes[-1] == (
            "Nothing copied",
            "Run run-review has no PR URL yet: nothing was copied.",
            "warning",
        )


async def test_a_copied_value_from_a_worker_carries_no_control_character(store_db: Path) -> None:
    hostile = "jarvis/x\x1b]52;c;cm0gLXJmIC8=\x07\nrm -rf /\r"
    _set(store_db, "run-review", branch_name=hostile)
    async with console_on(store_db, "run-review") as (app, pilot):
        await pilot.press("y", "b")
        copied = app.clipboard
        assert copied == "jarvis/x]52;c;cm0gLXJmIC8=rm -rf /"
        assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in copied)
        assert "control characters left out" in app.notes[-1][1]
    assert clipboard_text("plain") == ("plain", False)


# -- searching the progress stream ------------------------------------------------------------


async def test_slash_in_the_progress_stream_searches_it_and_n_N_go_round(store_db: Path) -> None:
    long_history(store_db, "run-running")
    async with console_on(store_db, "run-running", size=(160, 48)) as (app, pilot):
        stream = app.main.query_one(ProgressStream)
        await wait_for(pilot, lambda: stream.max_top > 0)
        await pilot.press("p", "slash")
        assert isinstance(app.screen, SearchPrompt)
        await pilot.press(*"STEP 5", "enter")  # any case
        assert isinstance(app.screen, MainScreen)
        assert app.main.query_one("#filter", FilterLine).value == ""  # not the table filter
        current = stream.current
        assert current is not None and "step 5" in stream.shown_lines[current]
        assert stream.search_note == "match 1 of 11 for STEP 5"
        assert stream.top <= current < stream.top + stream.size.height  # in view
        await pilot.press("n")
        assert stream.current is not None and "step 50" in stream.shown_lines[stream.current]
        await pilot.press("N", "N")
        assert stream.current is not None and "step 59" in stream.shown_lines[stream.current]
        assert stream.search_note == "match 11 of 11 for STEP 5"  # round the start
        assert "match 11 of 11 for STEP 5" in str(stream.border_subtitle)
        await pilot.press("slash", *"zzz", "enter")
        assert stream.search_note == "no match for zzz" and stream.current is None
        assert "no match for zzz" in str(stream.border_subtitle)
        await pilot.press("escape", "slash")  # from the table, / is the filter again
        assert app.main.has_class("-filtering")


async def test_new_entries_never_move_the_stream_off_a_match_until_G(store_db: Path) -> None:
    long_history(store_db, "run-running")
    async with console_on(store_db, "run-running", live=True, poll_interval=0.05) as (
        app,
        pilot,
    ):
        stream = app.main.query_one(ProgressStream)
        await wait_for(pilot, lambda: stream.max_top > 0)
        # The newest entry: its match is on the last screen, where the stream followed.
        await pilot.press("p", "slash", *"step 99", "enter")
        assert stream.current is not None and not stream.following
        top, held = stream.top, stream.shown_lines[stream.current]
        count = len(stream.shown_lines)
        long_history(store_db, "run-running", count=30)
        await wait_for(pilot, lambda: len(stream.shown_lines) == count + 30)
        assert stream.top == top and stream.shown_lines[stream.current] == held
        assert not stream.following
        await pilot.press("G")
        assert stream.following and stream.top == stream.max_top and stream.current is None
        long_history(store_db, "run-running", count=5)
        await wait_for(pilot, lambda: len(stream.shown_lines) == count + 35)
        assert stream.top == stream.max_top  # following again
