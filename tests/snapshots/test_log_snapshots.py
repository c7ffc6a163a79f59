"""The worker log (``l``) as an operator sees it: the end of a run's stdout with worker text
shown inert and a key masked, its stderr, a search's match, and a run with no logs.

Only runs that have stopped are captured: their log is read to its end and the reading is over,
so every capture is the same. Regenerate with ``pytest tests/snapshots --snapshot-update`` on
Python 3.11 and look at every changed SVG before committing it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from jarvis_tui.app import JarvisApp
from jarvis_tui.modals.log_screen import LogScreen
from tests.snapshots.test_snapshots import SIZES, SnapCompare, no_cursor_blink
from tests.tui.conftest import fixed_clock
from tests.tui.helpers import select, settle, wait_for
from tests.tui.log_store import build_log_store

__all__ = ["no_cursor_blink"]  # the autouse fixture, in force here too


@pytest.fixture
def console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workspace").mkdir()
    db = build_log_store(Path("workspace") / "jarvis.db")
    return JarvisApp(db, live=False, clock=fixed_clock, operator="snapshot")


def log_of(run_id: str, *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Select ``run_id``, open its log, wait until it is read to its end, press ``keys``."""

    def read(app: Any) -> bool:
        screen = app.screen
        return isinstance(screen, LogScreen) and screen.opened and not screen.running

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await settle(pilot)
        await select(pilot, run_id)
        await pilot.press("l")
        await wait_for(pilot, lambda: read(app))
        for key in keys:
            await pilot.press(key)
            await wait_for(pilot, lambda: read(app))
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_the_log_of_a_run_opens_on_its_end(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    assert snap_compare(console, terminal_size=size, run_before=log_of("run-failed"))


def test_t_shows_the_workers_stderr(snap_compare: SnapCompare, console: JarvisApp) -> None:
    assert snap_compare(console, terminal_size=(80, 24), run_before=log_of("run-failed", "t"))


def test_a_search_marks_its_match_in_worker_text_shown_inert(
    snap_compare: SnapCompare, console: JarvisApp
) -> None:
    keys = ("slash", *"pwned", "enter")
    assert snap_compare(console, terminal_size=(160, 48), run_before=log_of("run-failed", *keys))


def test_a_run_with_no_logs_says_why(snap_compare: SnapCompare, console: JarvisApp) -> None:
    assert snap_compare(console, terminal_size=(80, 24), run_before=log_of("run-queued"))
