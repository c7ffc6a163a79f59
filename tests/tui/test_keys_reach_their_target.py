"""Keys go where the operator means them: `p` and `c` take the keys to a panel (so page keys
scroll it, not the run table), and escape always hands the keys back to the table at once, even
when the key behind it arrives in the same read, as it does over a slow link."""

from __future__ import annotations

from pathlib import Path

from textual import events

from core.store.sqlite_store import SqliteStore
from jarvis_tui.app import JarvisApp
from jarvis_tui.modals.help_screen import HelpScreen
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.gate_panel import GatePanel
from jarvis_tui.widgets.progress_stream import ProgressStream
from jarvis_tui.widgets.run_table import RunTable
from jarvis_tui.widgets.steer_composer import SteerComposer
from tests.tui.helpers import console_on, settle, table, wait_for

_CHARACTERS = {"slash": "/", "escape": "\x1b", "question_mark": "?"}


def type_ahead(app: JarvisApp, *keys: str) -> None:
    """Queue ``keys`` all at once, as one read from the terminal would."""
    for key in keys:
        app.post_message(events.Key(key, _CHARACTERS.get(key, key)))


def long_history(db: Path, run_id: str, count: int = 100) -> None:
    store = SqliteStore(db)
    try:
        with store.transaction() as tx:
            for seq in range(count):
                payload = {"phase": "test", "summary": f"step {seq}"}
                tx.touch_run(run_id, changes={}, kind="progress", payload=payload, actor="w")
    finally:
        store.close()


async def test_p_at_full_width_takes_the_page_keys_to_the_progress_stream(store_db: Path) -> None:
    long_history(store_db, "run-running")
    async with console_on(store_db, "run-running", size=(160, 48)) as (app, pilot):
        stream = app.main.query_one(ProgressStream)
        await wait_for(pilot, lambda: stream.max_top > 0)
        rows_before = list(table(app).run_ids)
        await pilot.press("p")
        assert app.focused is stream
        bottom = stream.top
        await pilot.press("pageup")
        assert stream.top < bottom and not stream.following
        assert table(app).selected_run_id == "run-running"  # the table did not move
        assert table(app).run_ids == rows_before
        await pilot.press("escape")
        assert isinstance(app.focused, RunTable)
        await pilot.press("c")
        assert isinstance(app.focused, GatePanel)
        await pilot.press("escape", "up")
        assert table(app).selected_run_id != "run-running"  # the table has the keys again


async def test_p_and_c_when_folded_bring_the_panel_forward_and_focus_it(store_db: Path) -> None:
    async with console_on(store_db, "run-contract", size=(80, 24)) as (app, pilot):
        await pilot.press("c")
        gates = app.main.query_one(GatePanel)
        assert gates.display and app.focused is gates
        await pilot.press("p")
        stream = app.main.query_one(ProgressStream)
        assert stream.display and not gates.display and app.focused is stream


async def test_a_key_right_behind_escape_in_the_composer_goes_to_the_table(store_db: Path) -> None:
    async with console_on(store_db, "run-running") as (app, pilot):
        type_ahead(app, "s", "o", "k", "escape", "question_mark")
        await settle(pilot)
        assert app.main.query_one(SteerComposer).editor.text == "ok"
        assert isinstance(app.screen, HelpScreen)


async def test_a_key_right_behind_escape_in_the_filter_goes_to_the_table(store_db: Path) -> None:
    async with console_on(store_db, "run-review") as (app, pilot):
        type_ahead(app, "slash", "a", "escape", "question_mark")
        await settle(pilot)
        assert app.main.query_one("#filter", FilterLine).value == ""
        assert isinstance(app.screen, HelpScreen)
