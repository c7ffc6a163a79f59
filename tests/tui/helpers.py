"""Driving the console in tests: wait for reads to land, poll for a condition, read the store.

Nothing here sleeps for a while and hopes: every wait is on a condition (a read landed, a number
of polls happened, the palette found a command), under a deadline that only stops a hung test.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerFailed

from core.store.api import Row
from core.store.sqlite_store import SqliteStore
from jarvis_tui.app import JarvisApp
from jarvis_tui.widgets.run_table import RunTable
from tests.processes import HANG_GUARD_S
from tests.tui.conftest import fixed_clock


class RecordingApp(JarvisApp):
    """The console, remembering every notification it showed (title, message, severity)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[tuple[str, str, str]] = []

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:  # fmt: skip
        self.notes.append((title, message, str(severity)))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)


def make_app(db: Path, *, live: bool = False, **kwargs: Any) -> RecordingApp:
    return RecordingApp(db, live=live, clock=fixed_clock, operator="test-operator", **kwargs)


async def settle(pilot: Pilot[Any]) -> None:
    """Let every store read finish and the messages it posted be handled."""
    for _ in range(4):
        try:
            await pilot.app.workers.wait_for_complete()
        except (WorkerCancelled, WorkerFailed):
            pass  # an exclusive read replaced by a newer one
        await pilot.pause()


async def wait_for(
    pilot: Pilot[Any], condition: Callable[[], bool], timeout: float = HANG_GUARD_S
) -> None:
    """Poll ``condition`` while the app runs; fail with a clear message at the deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(0.05)


async def wait_for_polls(pilot: Pilot[Any], count: int) -> None:
    """Let a live console read the store ``count`` more times, and handle what those posted.

    Counted where the reads happen (the feed), so "several idle polls" means several polls on
    any machine, where a pause of some tenths of a second meant however many fitted in.
    """
    app = pilot.app
    assert isinstance(app, JarvisApp)
    feed = app.main.feed
    done = 0
    own = "read" in vars(feed)
    original = feed.read

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal done
        try:
            return original(*args, **kwargs)
        finally:
            done += 1

    feed.read = counted  # type: ignore[method-assign]
    try:
        await wait_for(pilot, lambda: done >= count)
    finally:
        if own:
            feed.read = original  # type: ignore[method-assign]
        else:
            del feed.read
    await settle(pilot)


async def wait_for_palette_hit(pilot: Pilot[Any], text: str) -> None:
    """Wait until the command palette has finished searching and highlights a command whose
    prompt holds ``text`` (its search runs in a worker, in batches, after each keystroke)."""

    def found() -> bool:
        palette = pilot.app.screen
        if not isinstance(palette, CommandPalette):
            return False
        group = CommandPalette._GATHER_COMMANDS_GROUP
        if any(w.group == group and not w.is_finished for w in pilot.app.workers):
            return False
        commands = palette.query_one(CommandList)
        if commands.highlighted is None:
            return False
        prompt = commands.get_option_at_index(commands.highlighted).prompt
        return text in getattr(prompt, "plain", str(prompt))

    await wait_for(pilot, found)


def table(app: JarvisApp) -> RunTable:
    return app.main.query_one(RunTable)


def row_text(app: JarvisApp, run_id: str) -> list[str]:
    return [cell.plain for cell in table(app).get_row(run_id)]


async def select(pilot: Pilot[Any], run_id: str) -> None:
    """Put the cursor on ``run_id`` by keys, as an operator would, and wait for its panels."""
    app = pilot.app
    assert isinstance(app, JarvisApp)
    runs = table(app)
    runs.focus()
    await pilot.press("home")
    for _ in range(runs.row_count):
        if runs.selected_run_id == run_id:
            break
        await pilot.press("down")
    assert runs.selected_run_id == run_id, f"{run_id} is not in the table"
    await settle(pilot)
    await wait_for(pilot, lambda: app.main.view is not None and app.main.view.run_id == run_id)


def read_run(db: Path, run_id: str) -> Row:
    store = SqliteStore(db, migrate=False)
    try:
        run = store.get_run(run_id)
        assert run is not None
        return run
    finally:
        store.close()


@asynccontextmanager
async def console_on(
    db: Path, run_id: str, *, size: tuple[int, int] = (160, 48), **kwargs: Any
) -> AsyncIterator[tuple[RecordingApp, Pilot[Any]]]:
    """The console on ``db`` (see `make_app`) with ``run_id`` selected by keys, its panels read."""
    app = make_app(db, **kwargs)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await select(pilot, run_id)
        yield app, pilot
