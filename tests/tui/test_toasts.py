"""Runs that need a human raise one toast per burst, collapsed, at most one in a while, and no
toast ever shows over a dialog: what is raised while one is up waits until it closes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot

from core.lifecycle import Action, RunState
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from jarvis_tui.attention_toasts import AttentionToasts
from jarvis_tui.modals.help_screen import HelpScreen
from jarvis_tui.screens.main_screen import MainScreen
from tests.core.store_helpers import make_run
from tests.tui.helpers import RecordingApp, make_app, row_text, settle, wait_for


def entered(run_id: str, state: str, reason: str | None = None, seq: int = 1) -> dict[str, Any]:
    """A journal entry: ``run_id`` moved into ``state``."""
    payload = {"action": "fail", "from": "running", "to": state, "reason": reason}
    return {"seq": seq, "run_id": run_id, "kind": "transition", "payload": payload}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_is_one_toast_naming_how_many_and_a_few_of_them() -> None:
    toasts = AttentionToasts(every=30, clock=Clock())
    toasts.entered([entered(f"run-{n}", "failed", seq=n) for n in range(5)])
    toast = toasts.due(lambda run_id: True)
    assert toast is not None
    assert toast.title == "Needs a human"
    assert toast.message == (
        "5 runs need a human: run-0, run-1, run-2 and 2 more. Press ! to see them."
    )
    assert toasts.due(lambda run_id: True) is None  # said once


def test_one_run_is_named_with_its_state_and_reason() -> None:
    toasts = AttentionToasts(every=30, clock=Clock())
    toasts.entered([entered("run-7", "failed_contract", "2 gates failed")])
    toast = toasts.due(lambda run_id: True)
    assert toast is not None and toast.message == "Run run-7 is failed_contract: 2 gates failed"


def test_runs_arriving_within_the_interval_wait_and_come_as_one() -> None:
    clock = Clock()
    toasts = AttentionToasts(every=30, clock=clock)
    toasts.entered([entered("run-1", "failed")])
    assert toasts.due(lambda run_id: True) is not None
    shown = 0
    for n in range(2, 12):  # one a second, as a busy fleet does
        clock.now += 1
        toasts.entered([entered(f"run-{n}", "review_requested", seq=n)])
        shown += toasts.due(lambda run_id: True) is not None
    assert shown == 0
    clock.now += 20  # 30 s after the first toast
    toast = toasts.due(lambda run_id: True)
    assert toast is not None and toast.message.startswith("10 runs need a human: run-2, run-3,")
    assert toasts.due(lambda run_id: True) is None


def test_a_run_handled_before_its_toast_is_left_out() -> None:
    clock = Clock()
    toasts = AttentionToasts(every=30, clock=clock)
    toasts.entered([entered("run-1", "failed")])
    toasts.due(lambda run_id: True)
    toasts.entered([entered("run-2", "failed"), entered("run-3", "review_requested")])
    clock.now += 30
    toast = toasts.due(lambda run_id: run_id != "run-3")  # approved meanwhile
    assert toast is not None and toast.message == "Run run-2 is failed."
    toasts.entered([entered("run-4", "failed")])
    clock.now += 30
    assert toasts.due(lambda run_id: False) is None  # nobody waits any more: no toast


def test_entries_that_are_not_a_move_into_a_waiting_state_raise_nothing() -> None:
    toasts = AttentionToasts(every=30, clock=Clock())
    progress = {"seq": 1, "run_id": "r", "kind": "progress", "payload": {"summary": "x"}}
    toasts.entered([progress, entered("run-1", "done"), entered("run-2", "queued")])
    assert toasts.due(lambda run_id: True) is None


# -- the console -----------------------------------------------------------------------------


def toasts_in(notified: list[Notify]) -> list[str]:
    return [n.notification.message for n in notified if n.notification.title == "Needs a human"]


def move(db: Path, *moves: tuple[str, Action]) -> None:
    store = SqliteStore(db)
    try:
        for run_id, action in moves:
            host_move(store, run_id, action)
    finally:
        store.close()


def add_running(db: Path, *run_ids: str) -> None:
    store = SqliteStore(db)
    try:
        for run_id in run_ids:
            make_run(store, run_id, RunState.RUNNING)
    finally:
        store.close()


async def console_noting(db: Path, notified: list[Notify]) -> tuple[RecordingApp, Any]:
    """The console on ``db`` (see `make_app`), and its test run, noting each toast raised."""

    def hook(message: Message) -> None:
        if isinstance(message, Notify):
            notified.append(message)

    app = make_app(db)  # reads only when told (`read_store`), as after an action
    return app, app.run_test(size=(160, 48), message_hook=hook)


async def test_runs_entering_one_after_another_raise_one_toast(store_db: Path) -> None:
    add_running(store_db, "run-a", "run-b", "run-c")
    notified: list[Notify] = []
    app, running = await console_noting(store_db, notified)
    async with running as pilot:
        await settle(pilot)
        for run_id in ("run-a", "run-b", "run-c"):  # each in its own read
            move(store_db, (run_id, Action.FAIL))
            app.main.read_store()
            await wait_for(pilot, shows_failed(app, run_id))
        await settle(pilot)
        # The console's clock stands still: the second and third wait for the interval.
        assert toasts_in(notified) == ["Run run-a is failed."]


async def test_a_burst_in_one_read_is_one_collapsed_toast(store_db: Path) -> None:
    add_running(store_db, "run-a", "run-b")
    notified: list[Notify] = []
    app, running = await console_noting(store_db, notified)
    async with running as pilot:
        await settle(pilot)
        move(store_db, ("run-a", Action.FAIL), ("run-b", Action.FAIL_GATES),
             ("run-running", Action.PASS_GATES))  # fmt: skip
        app.main.read_store()
        await wait_for(pilot, lambda: row_text(app, "run-b")[1] == "⊘ failed_contract")
        await settle(pilot)
        assert toasts_in(notified) == [
            "3 runs need a human: run-a, run-b, run-running. Press ! to see them."
        ]


def shows_failed(app: RecordingApp, run_id: str) -> Callable[[], bool]:
    return lambda: row_text(app, run_id)[1] == "✗ failed"


async def open_help(pilot: Pilot[Any]) -> None:
    await pilot.press("question_mark")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))


async def test_no_toast_is_raised_over_a_dialog_it_waits_until_the_dialog_closes(
    store_db: Path,
) -> None:
    notified: list[Notify] = []
    app, running = await console_noting(store_db, notified)
    async with running as pilot:
        await settle(pilot)
        await open_help(pilot)
        move(store_db, ("run-running", Action.FAIL))
        app.main.read_store()  # as an action finishing behind the dialog does
        await wait_for(pilot, lambda: row_text(app, "run-running")[1] == "✗ failed")
        app.notify("Approved run run-review: now done.", title="Done")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert notified == []  # nothing drawn over the dialog
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: len(notified) == 2)
        titles = sorted(n.notification.title for n in notified)
        assert titles == ["Done", "Needs a human"]
