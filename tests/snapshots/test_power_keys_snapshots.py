"""The power user's keys as an operator sees them: marked runs in the table, the ``:`` dialog
completing a run id from the store, a search's matches in the progress stream, and the values
``y`` copies.

Regenerate with ``pytest tests/snapshots/test_power_keys_snapshots.py --snapshot-update`` and
look at every changed SVG before committing it.
"""

from __future__ import annotations

import pytest

from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SIZES, SnapCompare, console, no_cursor_blink, on_run

__all__ = ["console", "no_cursor_blink"]  # the fixtures, in force here too


@pytest.mark.parametrize("size", SIZES)
def test_marked_runs_in_the_table(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    # Two runs marked (a + before the id, their own colour), the cursor on a third; the view
    # line counts them.
    keys = ("space", "j", "space", "j")
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-done", *keys))


@pytest.mark.parametrize("size", SIZES)
def test_colon_completes_a_run_id(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    # "run-r" typed: the store's first id completes it (dim), the runs found listed below.
    keys = ("colon", *"run-r")
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-queued", *keys))


@pytest.mark.parametrize("size", SIZES)
def test_a_search_in_the_progress_stream(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    # Both entries hold "the": highlighted; the second, gone to with n, marked; the subtitle
    # says which match of how many.
    keys = ("p", "slash", *"the", "enter", "n")
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-running", *keys))


@pytest.mark.parametrize("size", SIZES)
def test_y_lists_what_can_be_copied(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    # Each value with its key, and "none yet" for what the run does not have.
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-review", "y"))
