"""The console as an operator sees it, at the smallest supported size and a large one.

The app runs with ``live=False`` and a fixed clock over a store with fixed timestamps, so every
capture is the same; regenerate with ``pytest tests/snapshots --snapshot-update`` on Python 3.11
and look at every changed SVG before committing it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from jarvis_tui.app import JarvisApp
from tests.tui.conftest import build_store, fixed_clock
from tests.tui.criteria_store import build_criteria_store
from tests.tui.helpers import select, settle

SnapCompare = Callable[..., bool]
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 48), id="160x48")]


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing blinks in a capture."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)


def console_over(
    build: Callable[[Path], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> JarvisApp:
    """The console over the store ``build`` fills, live polling off, clock fixed."""
    # The header shows the workspace path; a relative one keeps tmp_path out of the capture.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workspace").mkdir()
    db = build(Path("workspace") / "jarvis.db")
    return JarvisApp(db, live=False, clock=fixed_clock, operator="snapshot")


@pytest.fixture
def console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JarvisApp:
    """The console over the deterministic store."""
    return console_over(build_store, tmp_path, monkeypatch)


def on_run(run_id: str, *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Select ``run_id`` by keys, then press ``keys`` and let the screen settle."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await select(pilot, run_id)
        if keys:
            await pilot.press(*keys)
        # A dialog the keys opened may animate in: wait for that, not for a fixed while.
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)

    return run_before


@pytest.mark.parametrize("size", SIZES)
def test_main_screen_on_a_failed_contract_run(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-contract"))


@pytest.mark.parametrize(
    ("size", "keys"),
    [
        # Folded at 80 columns: bring the gates forward (c gives them the keys too) and page
        # down to the criteria, which the run's header and gates fill the first page.
        pytest.param((80, 24), ("c", "pagedown"), id="80x24"),
        pytest.param((160, 48), (), id="160x48"),
    ],
)
def test_gates_panel_on_a_run_failed_by_its_criteria(
    snap_compare: SnapCompare,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: tuple[int, int],
    keys: tuple[str, ...],
) -> None:
    # The console's store plus runs verified in checkouts under the (relative) workspace.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workspace").mkdir()
    db = build_criteria_store(Path("workspace") / "jarvis.db")
    app = JarvisApp(db, live=False, clock=fixed_clock, operator="snapshot")
    assert snap_compare(app, terminal_size=size, run_before=on_run("run-criteria", *keys))


@pytest.mark.parametrize("size", SIZES)
def test_help_screen(snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]) -> None:
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-done", "f1"))


@pytest.mark.parametrize("size", SIZES)
def test_retry_dialog(snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]) -> None:
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-failed", "r"))


@pytest.mark.parametrize("size", SIZES)
def test_override_dialog_refusing_a_blank_reason(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    run_before = on_run("run-contract", "o", "space", "enter")
    assert snap_compare(console, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_cancel_dialog_with_a_reason_typed(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    run_before = on_run("run-queued", "x", *"superseded by run-review")
    assert snap_compare(console, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_run_details(snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]) -> None:
    assert snap_compare(console, terminal_size=size, run_before=on_run("run-failed", "enter"))


@pytest.mark.parametrize("size", SIZES)
def test_steering_composer_on_a_running_run(
    snap_compare: SnapCompare, console: JarvisApp, size: tuple[int, int]
) -> None:
    run_before = on_run("run-running", "s", *"run only the fast tests")
    assert snap_compare(console, terminal_size=size, run_before=run_before)


def test_attention_view(snap_compare: SnapCompare, console: JarvisApp) -> None:
    assert snap_compare(console, terminal_size=(80, 24), run_before=on_run("run-done", "!"))
