"""The console at the sizes an operator's terminal has, and the run on show out of the view.

Same determinism as `test_snapshots.py` (its fixtures are reused); regenerate with
``pytest tests/snapshots --snapshot-update`` and look at every changed SVG before committing it.
"""

from __future__ import annotations

import pytest

from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SIZES, SnapCompare, console, no_cursor_blink, on_run

__all__ = ["console", "no_cursor_blink"]  # fixtures, used by name


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
