"""The main screen as an operator sees it, at the smallest supported size and a large one.

The app runs with ``live=False`` and a fixed clock over a store with fixed timestamps, so every
capture is the same; regenerate with ``pytest tests/snapshots --snapshot-update`` on Python 3.11.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from jarvis_tui.app import JarvisApp
from tests.tui.conftest import build_store, fixed_clock

SnapCompare = Callable[..., bool]


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing blinks in a capture (the table has no text cursor today; inputs will)."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


@pytest.fixture
def console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    """The console over the deterministic store, live polling off, clock fixed."""
    # The header shows the workspace path; a relative one keeps tmp_path out of the capture.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workspace").mkdir()
    db = build_store(Path("workspace") / "jarvis.db")
    return JarvisApp(db, live=False, clock=fixed_clock)


async def loaded(pilot: Pilot[Any]) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def second_row(pilot: Pilot[Any]) -> None:
    await loaded(pilot)
    pilot.app.query_one(DataTable).focus()
    await pilot.press("down", "down")
    await loaded(pilot)


def test_main_screen_80x24(snap_compare: SnapCompare, console: JarvisApp) -> None:
    assert snap_compare(console, terminal_size=(80, 24), run_before=loaded)


def test_main_screen_160x48_with_a_failed_contract_run_selected(
    snap_compare: SnapCompare, console: JarvisApp
) -> None:
    assert snap_compare(console, terminal_size=(160, 48), run_before=second_row)
