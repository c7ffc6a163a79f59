"""The console at the sizes an operator's terminal has, and the run on show out of the view.

Same determinism as `test_snapshots.py` (its fixtures are reused); regenerate with
``pytest tests/snapshots --snapshot-update`` and look at every changed SVG before committing it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from core.lifecycle import Action
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SIZES, SnapCompare, console, no_cursor_blink, on_run
from tests.tui.conftest import fixed_clock
from tests.tui.helpers import select, settle, wait_for
from tests.tui.usage_store import build_usage_store

__all__ = ["console", "no_cursor_blink"]  # fixtures, used by name

RunBefore = Callable[[Pilot[Any]], Awaitable[None]]


def test_main_screen_at_60x20(snap_compare: SnapCompare, console: JarvisApp) -> None:
    # The header's two lines (the attention count on the second), the key bar's help and quit.
    assert snap_compare(console, terminal_size=(60, 20), run_before=on_run("run-running"))


@pytest.mark.parametrize("size", [*SIZES, pytest.param((200, 50), id="200x50")])
def test_a_run_on_show_outside_the_view(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    # run-done stays on show under "only failed_contract": no row is highlighted, the view line
    # says so, the panels still show it.
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-done", "4"))


def two_runs_start_waiting(console: JarvisApp, run_id: str, *keys: str) -> RunBefore:
    """On ``run_id``, two runs move into states that need a human, read at once; then
    ``keys``."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await select(pilot, run_id)
        store = SqliteStore(console.workspace_db)
        try:
            host_move(store, "run-running", Action.FAIL)
            host_move(store, "run-queued", Action.START)
            host_move(store, "run-queued", Action.FAIL_GATES)
        finally:
            store.close()
        console.main.read_store()  # as an action's own read does
        await wait_for(pilot, lambda: console.main.counts.get("failed_contract") == 2)
        await settle(pilot)
        if keys:
            await pilot.press(*keys)
            await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_runs_needing_a_human_at_once_raise_one_collapsed_toast(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    run_before = two_runs_start_waiting(console, "run-review")
    assert snap_compare(console, terminal_size=size, run_before=run_before)


def test_a_toast_stays_under_a_dialog(snap_compare: SnapCompare, console: JarvisApp) -> None:
    run_before = two_runs_start_waiting(console, "run-failed", "r")
    assert snap_compare(console, terminal_size=(80, 24), run_before=run_before)


@pytest.fixture
def spending_console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    """`console`'s store, with what three runs' agents reported spending."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workspace").mkdir()
    db = build_usage_store(Path("workspace") / "jarvis.db")
    return JarvisApp(db, live=False, clock=fixed_clock, operator="snapshot")


@pytest.mark.parametrize("size", [SIZES[0], pytest.param((200, 50), id="200x50")])
def test_the_run_table_shows_what_each_run_spent(
    snap_compare: SnapCompare, spending_console: JarvisApp, size: tuple[int, int]
) -> None:
    # At 80 columns the spent column gives way to the last progress (a run's figures are in its
    # gates panel); at 200 it stands where lane and task stood, blank for the runs whose agents
    # reported nothing.
    run_before = on_run("run-contract")
    assert snap_compare(spending_console, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_a_run_that_spent_under_a_cent_says_how_much(
    snap_compare: SnapCompare, spending_console: JarvisApp, size: tuple[int, int]
) -> None:
    # "$0.004" in its gates panel's "used" line (brought forward by c where the panels fold
    # into tabs), never "$0.00": a cheap model's run is not a run that spent nothing.
    run_before = on_run("run-review", "c")
    assert snap_compare(spending_console, terminal_size=size, run_before=run_before)
