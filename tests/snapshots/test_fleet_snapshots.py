"""The fleet view (lanes, a paused one, hosts: one live, one lost) and the quarantine view (a
hostile file's reason and content, inert), at 80×24 and 160×48."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from jarvis_tui.app import JarvisApp
from tests.snapshots.test_snapshots import SIZES, SnapCompare, console_over, no_cursor_blink
from tests.tui.fleet_store import build_fleet_workspace
from tests.tui.helpers import settle

__all__ = ["no_cursor_blink"]  # a fixture, used by name


@pytest.fixture
def fleet_console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    return console_over(build_fleet_workspace, tmp_path, monkeypatch)


def pressed(key: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press(key)
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_the_fleet_view(snap_compare: SnapCompare, fleet_console: JarvisApp,
                        size: tuple[int, int]) -> None:  # fmt: skip
    assert snap_compare(fleet_console, terminal_size=size, run_before=pressed("F"))


@pytest.mark.parametrize("size", SIZES)
def test_the_quarantine_view(snap_compare: SnapCompare, fleet_console: JarvisApp,
                             size: tuple[int, int]) -> None:  # fmt: skip
    assert snap_compare(fleet_console, terminal_size=size, run_before=pressed("Q"))
