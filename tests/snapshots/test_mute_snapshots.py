"""The header once the operator muted the bell and desktop notifications (``Z``): until when,
beside the count of runs that need a human."""

from __future__ import annotations

from pathlib import Path

import pytest

from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SIZES, SnapCompare, console_over, no_cursor_blink, on_run
from tests.tui.conftest import build_store

__all__ = ["no_cursor_blink"]  # a fixture, used by name


@pytest.mark.parametrize("size", SIZES)
def test_the_header_says_notifications_are_muted(
    snap_compare: SnapCompare,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
) -> None:
    app: JarvisApp = console_over(build_store, tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=size, run_before=on_run("run-running", "Z"))
