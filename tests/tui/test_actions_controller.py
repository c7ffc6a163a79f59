"""The console's writes open their store in one place (`RunActionsController.open_store`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.store.api import RunStore
from jarvis_tui.screens.run_actions_controller import RunActionsController
from tests.tui.helpers import console_on, read_run, row_text, wait_for


async def test_an_action_writes_through_open_store(
    store_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[RunStore] = []
    original = RunActionsController.open_store

    @contextmanager
    def recording(self: RunActionsController) -> Iterator[RunStore]:
        with original(self) as store:
            opened.append(store)
            yield store

    monkeypatch.setattr(RunActionsController, "open_store", recording)
    async with console_on(store_db, "run-review") as (app, pilot):
        await pilot.press("a")
        await wait_for(pilot, lambda: row_text(app, "run-review")[1] == "✓ done")
        assert len(opened) == 1


async def test_a_store_that_cannot_be_opened_for_writing_fails_the_action_and_says_so(
    store_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    @contextmanager
    def failing(self: RunActionsController) -> Iterator[RunStore]:
        raise OSError("the disk went away")
        yield  # a generator, as the real one is

    monkeypatch.setattr(RunActionsController, "open_store", failing)
    before = read_run(store_db, "run-review")
    async with console_on(store_db, "run-review") as (app, pilot):
        await pilot.press("a")
        await wait_for(pilot, lambda: any(note[0] == "Action failed" for note in app.notes))
        note = next(note for note in app.notes if note[0] == "Action failed")
        assert note[1] == "Apply an operator action: the disk went away"
        assert read_run(store_db, "run-review")["version"] == before["version"]
