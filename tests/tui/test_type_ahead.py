"""Keys typed faster than the console handles them go where the operator meant them to.

A terminal delivers a fast typist's keys (or a paste) in one read, and they are queued before
the key that moves the focus has been handled. Text typed right behind `/` or `s` must land in
the filter or the steer, and a reason typed right behind `x` or `o` in the reason dialog, never
act on the table: there `a` approves, `r` retries, `x` cancels, `d` opens the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from jarvis_tui.app import JarvisApp
from jarvis_tui.modals.help_screen import HelpScreen
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.run_model import View
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.progress_stream import ProgressStream
from jarvis_tui.widgets.steer_composer import SteerComposer
from tests.tui.helpers import console_on, read_run, settle, table, wait_for

_CHARACTERS = {
    "slash": "/",
    "escape": "\x1b",
    "space": " ",
    "exclamation_mark": "!",
    "question_mark": "?",
    "colon": ":",
    "enter": "\r",
}


def type_ahead(app: JarvisApp, *keys: str) -> None:
    """Queue ``keys`` all at once, as one read from the terminal would."""
    for key in keys:
        app.post_message(events.Key(key, _CHARACTERS.get(key, key)))


async def test_text_typed_right_behind_slash_filters_and_approves_nothing(store_db: Path) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        type_ahead(app, "slash", "a", "p", "p")
        await settle(pilot)
        assert app.main.query_one("#filter", FilterLine).value == "app"
        assert read_run(store_db, "run-review")["state"] == "review_requested"
        assert not any(title.startswith("Approve") for title, _msg, _sev in app.notes), app.notes


async def test_text_typed_right_behind_s_is_the_steer_not_actions(store_db: Path) -> None:
    async with console_on(store_db, "run-running") as (app, pilot):
        type_ahead(app, "s", "r", "a", "x")
        await settle(pilot)
        screen: Any = app.screen
        assert isinstance(screen, MainScreen), screen  # no retry or cancel dialog opened
        assert app.main.query_one(SteerComposer).editor.text == "rax"
        assert read_run(store_db, "run-running")["state"] == "running"


async def test_escape_typed_ahead_closes_the_filter_and_gives_the_table_its_keys(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        type_ahead(app, "slash", "a", "x", "escape")
        await settle(pilot)
        assert app.main.query_one("#filter", FilterLine).value == ""
        assert not app.main.has_class("-filtering")
        assert app.main.focused is table(app)
        assert read_run(store_db, "run-review")["state"] == "review_requested"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)


async def test_a_reason_typed_right_behind_o_never_acts_on_the_table(store_db: Path) -> None:
    async with console_on(store_db, "run-failed") as (app, pilot):
        # 'r' would retry it, 'a' is refused on a failed run, 'x' would cancel it.
        type_ahead(app, "o", *"rerun all x")
        await settle(pilot)
        assert isinstance(app.screen, ReasonDialog)
        assert len(app.screen_stack) == 2  # the override dialog alone, nothing behind it
        assert app.screen.query_one("#reason", Input).value == "rerun all x"
        assert read_run(store_db, "run-failed")["state"] == "failed"
        assert not any("not possible" in title for title, _msg, _sev in app.notes), app.notes


#: Keys the main screen acts on, typed ahead as a reason: d opens the diff, l the log, S sorts,
#: t turns the stream to all runs, 5 filters by state, ! shows the attention view, ? the help,
#: r retries, a approves, v verifies.
BOUND_KEYS = ("d", "l", "space", "S", "t", "5", "exclamation_mark", "question_mark",
              "r", "a", "v")  # fmt: skip
BOUND_TEXT = "dl St5!?rav"


@pytest.mark.parametrize(
    ("key", "run_id", "after"),
    [
        pytest.param("x", "run-running", "failed", id="cancel"),
        pytest.param("o", "run-contract", "done", id="override"),
    ],
)
async def test_bound_keys_typed_right_behind_x_or_o_are_the_reason_and_nothing_else(
    store_db: Path, key: str, run_id: str, after: str
) -> None:
    async with console_on(store_db, run_id) as (app, pilot):
        before = read_run(store_db, run_id)
        type_ahead(app, key, *BOUND_KEYS)
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ReasonDialog), dialog
        assert len(app.screen_stack) == 2  # no diff, log or help screen opened behind it
        assert dialog.query_one("#reason", Input).value == BOUND_TEXT
        # Nothing of the main screen's ran: the view, the stream, the run, the notifications.
        assert app.main.model.view == View()
        assert not app.main.query_one(ProgressStream).all_runs
        assert read_run(store_db, run_id)["version"] == before["version"]
        assert app.notes == []
        type_ahead(app, "enter")
        await wait_for(pilot, lambda: read_run(store_db, run_id)["state"] == after)
        run = read_run(store_db, run_id)
        reason = run["override_reason"] if key == "o" else run["state_reason"]
        assert reason is not None and BOUND_TEXT in reason, reason
        assert run["retry_count"] == before["retry_count"]  # the 'r' typed ahead retried nothing
