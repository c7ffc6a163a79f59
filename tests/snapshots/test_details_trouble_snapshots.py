"""The run details modal on a run with worker trouble: refused files and the end of stderr.

Regenerate with ``pytest tests/snapshots --snapshot-update`` on Python 3.11 and look at every
changed SVG before committing it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SnapCompare, console_over, no_cursor_blink, on_run
from tests.tui.trouble_store import build_trouble_store

__all__ = ["no_cursor_blink"]  # the autouse fixture, in force here too


@pytest.fixture
def console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    return console_over(build_trouble_store, tmp_path, monkeypatch)


@pytest.mark.parametrize(
    ("size", "keys"),
    [
        # At 80x24 the gates and failures fill the first page: page down to the trouble.
        pytest.param((80, 24), ("enter", "pagedown"), id="80x24"),
        pytest.param((160, 48), ("enter",), id="160x48"),
    ],
)
def test_run_details_with_worker_trouble(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int], keys: tuple[str, ...]
) -> None:
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-failed", *keys))
