"""The main screen's controllers decide and return what should happen; they drive no screen.

Without any screen at all: asking for an action returns the dialog to open or the worker to
start, the worker writes through the engine's `act` on a real store, and its outcome becomes
the note to raise and the read to start.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.message import Message

from jarvis_tui.messages import ActionFinished
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.modals.retry_dialog import RetryDialog
from jarvis_tui.run_model import RunModel, WindowAsk
from jarvis_tui.screens.effects import Dialog, Focus, Note, Work
from jarvis_tui.screens.run_actions_controller import RunActionsController
from jarvis_tui.screens.store_sync import StoreSync
from tests.tui.helpers import read_run


class Shown:
    """What the controllers need of a view, and nothing that draws."""

    def __init__(self, rows: dict[str, dict[str, Any]]) -> None:
        self.rows = rows
        self.run_on_show: str | None = None
        self.view: Any = None
        self.steers: list[tuple[str, str]] = []

    def selected_row(self) -> dict[str, Any] | None:
        return self.rows.get(self.run_on_show or "")

    def steer_sent(self, run_id: str, text: str) -> None:
        self.steers.append((run_id, text))

    def window_ask(self) -> WindowAsk:
        return RunModel().ask()


def _controller(store_db: Path) -> tuple[RunActionsController, Shown]:
    rows = {run_id: read_run(store_db, run_id) for run_id in ("run-review", "run-failed")}
    shown = Shown(rows)
    started: list[Any] = []
    sync = StoreSync(
        shown,  # type: ignore[arg-type]
        started.extend,
        store_db,
        live=False,
        poll_interval=1.0,
        clock=lambda: datetime(2026, 1, 1, tzinfo=UTC),
    )
    return RunActionsController(shown, sync, "test-operator"), shown  # type: ignore[arg-type]


def _run(work: Work) -> list[Message]:
    posted: list[Message] = []
    work.run(posted.append)
    return posted


def test_asking_returns_the_dialog_or_the_worker_and_the_worker_acts(store_db: Path) -> None:
    controller, shown = _controller(store_db)
    shown.run_on_show = "run-failed"
    [override] = controller.asked("override")
    assert isinstance(override, Dialog) and isinstance(override.screen, ReasonDialog)
    [retry] = controller.asked("retry")
    assert isinstance(retry, Dialog) and isinstance(retry.screen, RetryDialog)
    assert retry.then(False) == []  # kept as it was: nothing to do
    assert controller.asked("steer") == [Focus("steer")]
    before = read_run(store_db, "run-review")["version"]
    shown.run_on_show = "run-review"
    [approve] = controller.asked("approve")
    assert isinstance(approve, Work) and approve.description == "Apply an operator action"
    assert read_run(store_db, "run-review")["version"] == before  # deciding wrote nothing
    [finished] = _run(approve)
    assert isinstance(finished, ActionFinished) and finished.outcome.ok
    assert read_run(store_db, "run-review")["state"] == "done"
    note, read = controller.finished(finished)
    assert note == Note("Approved run run-review: now done.", "Done")
    assert isinstance(read, Work) and read.name == "read-store"


def test_a_refusal_is_the_engines_sentence_as_a_note(store_db: Path) -> None:
    controller, shown = _controller(store_db)
    shown.run_on_show = "run-review"
    shown.rows["run-review"] = {**shown.rows["run-review"], "version": 0}  # looked long ago
    [approve] = controller.asked("approve")
    assert isinstance(approve, Work)
    [finished] = _run(approve)
    assert isinstance(finished, ActionFinished)
    note, _read = controller.finished(finished)
    assert isinstance(note, Note) and note.title == "Refused (stale_version)"
    assert read_run(store_db, "run-review")["state"] == "review_requested"
