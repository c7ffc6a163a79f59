"""Approved runs whose branch a host merges: one still merging (the table's ◈, the gates
panel's pending line), one refused by its host and back in review.

Regenerate with ``pytest tests/snapshots --snapshot-update`` on Python 3.11 and look at every
changed SVG before committing it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SIZES, SnapCompare, console_over, no_cursor_blink, on_run
from tests.tui.merge_store import build_merge_store

__all__ = ["no_cursor_blink"]  # the autouse fixture, in force here too


@pytest.fixture
def console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    return console_over(build_merge_store, tmp_path, monkeypatch)


@pytest.mark.parametrize("size", SIZES)
def test_a_run_merging_on_its_host(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    keys = ("c",) if size == (80, 24) else ()  # folded at 80 columns: bring the gates forward
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-merging", *keys))


@pytest.mark.parametrize("size", SIZES)
def test_a_run_whose_merge_was_refused(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    keys = ("c",) if size == (80, 24) else ()
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-merge-refused", *keys))
