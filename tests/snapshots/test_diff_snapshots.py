"""The diff (``d``) as an operator sees it: the files, the patch coloured and inert, a finding's
file gone to, and a run with no diff.

The repository's commits carry fixed dates, so their shas in the title are the same everywhere.
Regenerate with ``pytest tests/snapshots --snapshot-update`` on Python 3.11 and look at every
changed SVG before committing it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from jarvis_tui.app import JarvisApp
from jarvis_tui.modals.diff_screen import DiffScreen
from tests.snapshots.test_snapshots import SIZES, SnapCompare, console_over, no_cursor_blink
from tests.tui.diff_store import build_diff_store
from tests.tui.helpers import select, settle, wait_for

__all__ = ["no_cursor_blink"]  # the autouse fixture, in force here too


@pytest.fixture
def console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    return console_over(build_diff_store, tmp_path, monkeypatch)


def diff_of(run_id: str, *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Select ``run_id``, open its diff, wait until it is read and counted, press ``keys``."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await settle(pilot)
        await select(pilot, run_id)
        await pilot.press("d")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, DiffScreen)
                and app.screen.opening is not None
                and (app.screen.index is not None or app.screen.source is None)
            ),
        )
        if keys:
            await pilot.press(*keys)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        await wait_for(pilot, lambda: not screen.diff_view.wanted)
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_the_diff_of_a_run_opens_on_its_files(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    assert snap_compare(console, terminal_size=size, run_before=diff_of("run-contract"))


@pytest.mark.parametrize("size", SIZES)
def test_f_goes_to_the_file_a_finding_names(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    assert snap_compare(console, terminal_size=size, run_before=diff_of("run-contract", "f"))


def test_a_search_marks_its_matches_in_worker_text_shown_inert(
    snap_compare: SnapCompare, console: JarvisApp
) -> None:
    # Wide enough for the whole hostile line: escapes shown, markup as typed, the key masked.
    keys = ("slash", *"pwned", "enter")
    assert snap_compare(console, terminal_size=(160, 48), run_before=diff_of("run-review", *keys))


def test_a_run_with_no_diff_says_why(snap_compare: SnapCompare, console: JarvisApp) -> None:
    assert snap_compare(console, terminal_size=(80, 24), run_before=diff_of("run-running"))
