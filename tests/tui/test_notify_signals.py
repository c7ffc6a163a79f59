"""The console rings its terminal's bell and raises a desktop notification (OSC 777 or 9) when
runs start needing a human: written through the app's driver, one notice per burst, its
worker text inert; ``Z`` mutes them for an hour and unmutes them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from core.lifecycle import Action, RunState
from core.moves import host_move
from core.notify.policy import notice_of
from core.service.notify import ConsoleChannels, Entered
from core.store.sqlite_store import SqliteStore
from jarvis_tui.notify_signals import MUTE_S, escapes
from jarvis_tui.personal import Personal, load_personal
from jarvis_tui.widgets.status_header import StatusHeader
from tests.tui.conftest import fixed_clock
from tests.tui.helpers import RecordingApp, row_text, settle, wait_for
from tests.tui.test_toasts import add_running

OSC777 = "\x1b]777;notify;"


class MovingClock:
    """The console's clock, standing still until the test moves it."""

    def __init__(self) -> None:
        self.at = fixed_clock()

    def __call__(self) -> datetime:
        return self.at


@asynccontextmanager
async def console(
    db: Path, clock: MovingClock, personal: Personal | None = None
) -> AsyncIterator[tuple[Pilot[Any], list[str]]]:
    """The console on ``db``, and what it writes to its driver that is not a frame."""
    app = RecordingApp(db, live=False, clock=clock, operator="test-operator", personal=personal)
    written: list[str] = []
    async with app.run_test(size=(160, 48)) as pilot:
        driver = app._driver
        assert driver is not None
        write = driver.write

        def recording(data: str) -> None:
            if "\a" in data or "\x1b]" in data:
                written.append(data)
            write(data)

        driver.write = recording  # type: ignore[method-assign]
        await settle(pilot)
        yield pilot, written


async def fail(pilot: Pilot[Any], db: Path, run_id: str, reason: str = "worker exited 3") -> None:
    store = SqliteStore(db)
    try:
        host_move(store, run_id, Action.FAIL, reason=reason)
    finally:
        store.close()
    app = pilot.app
    assert isinstance(app, RecordingApp)
    app.main.read_store()
    await wait_for(pilot, lambda: row_text(app, run_id)[1] == "✗ failed")
    await settle(pilot)


async def test_a_run_entering_failed_rings_and_raises_a_desktop_notification(
    store_db: Path,
) -> None:
    async with console(store_db, MovingClock()) as (pilot, written):
        await fail(pilot, store_db, "run-running")
        assert written == [
            f"\a{OSC777}Jarvis: a run needs you;Run run-running: failed: worker exited 3\a"
        ]


async def test_a_burst_in_one_read_is_one_notice_and_the_next_waits_the_gap(
    store_db: Path,
) -> None:
    add_running(store_db, "run-a", "run-b", "run-c")
    clock = MovingClock()
    async with console(store_db, clock) as (pilot, written):
        store = SqliteStore(store_db)
        for run_id in ("run-a", "run-b"):
            host_move(store, run_id, Action.FAIL, reason="x")
        host_move(store, "run-running", Action.FAIL_GATES)
        store.close()
        pilot.app.main.read_store()  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: len(written) == 1)
        assert "3 runs need you: 2 failed, 1 failed contract" in written[0]
        await fail(pilot, store_db, "run-c", "later")
        assert len(written) == 1  # within the gap: it waits
        clock.at += timedelta(seconds=ConsoleChannels().gap_s)
        pilot.app.main.read_store()  # type: ignore[attr-defined]
        await wait_for(pilot, lambda: len(written) == 2)
        assert "Run run-c: failed: later" in written[1]


async def test_worker_text_in_a_notification_is_inert(store_db: Path) -> None:
    token = "ghp_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
    reason = f"boom\n\x1b]777;notify;pwned;x\x07\x1b[2J; token={token}\r\x9b31m"
    async with console(store_db, MovingClock()) as (pilot, written):
        await fail(pilot, store_db, "run-running", reason)
        (out,) = written
    # One bell, one escape introducer and its terminator: nothing of the worker's is live.
    assert out.count("\x1b") == 1 and out.count("\a") == 2 and "\n" not in out and "\r" not in out
    assert "\x9b" not in out and token not in out
    assert out.count(";") == 3  # 777 ; notify ; title ; body — the reason's ';' became ','
    assert "boom \\x1b]777,notify,pwned,x\\x07\\x1b[2J, token=" in out


async def test_the_mute_key_silences_them_for_an_hour_and_again_unmutes(store_db: Path) -> None:
    add_running(store_db, "run-a", "run-b")
    clock = MovingClock()
    async with console(store_db, clock) as (pilot, written):
        header = pilot.app.main.query_one(StatusHeader)  # type: ignore[attr-defined]
        await pilot.press("Z")
        await settle(pilot)
        assert header.muted != "" and "muted till" in header.render().plain
        await fail(pilot, store_db, "run-a")
        assert written == []
        assert pilot.app.main.signals.silenced == 1  # type: ignore[attr-defined]
        await pilot.press("Z")  # unmuted
        await settle(pilot)
        assert header.muted == "" and "muted" not in header.render().plain
        clock.at += timedelta(seconds=ConsoleChannels().gap_s)
        await fail(pilot, store_db, "run-b")
        assert len(written) == 1 and "Run run-b: failed" in written[0]
        # Muted again, the mute runs out by itself after an hour.
        await pilot.press("Z")
        await settle(pilot)
        clock.at += timedelta(seconds=MUTE_S)
        await fail(pilot, store_db, "run-running")
        assert len(written) == 2 and header.muted == ""


async def test_channels_come_from_the_workspaces_notify_section(store_db: Path) -> None:
    (store_db.parent / "jarvis.toml").write_text('[notify]\nbell = false\ndesktop = "osc9"\n')
    async with console(store_db, MovingClock()) as (pilot, written):
        await fail(pilot, store_db, "run-running")
        assert written == [
            "\x1b]9;Jarvis: a run needs you: Run run-running: failed: worker exited 3\a"
        ]


async def test_the_operators_own_file_wins_over_the_workspace_and_sets_the_mute(
    store_db: Path, tmp_path: Path
) -> None:
    (store_db.parent / "jarvis.toml").write_text('[notify]\nbell = false\ndesktop = "osc9"\n')
    own = tmp_path / "config.toml"
    own.write_text("[notify]\nbell = true\nmute_minutes = 5\n")  # desktop left to the workspace
    clock = MovingClock()
    async with console(store_db, clock, load_personal(own)) as (pilot, written):
        await fail(pilot, store_db, "run-running")
        assert written == [
            "\a\x1b]9;Jarvis: a run needs you: Run run-running: failed: worker exited 3\a"
        ]
        await pilot.press("Z")
        await settle(pilot)
        signals = pilot.app.main.signals  # type: ignore[attr-defined]
        assert signals.muted_until == clock().timestamp() + 5 * 60
        assert "muted for 5 min" in pilot.app.notes[-1][1]  # type: ignore[attr-defined]


def test_no_channel_writes_nothing() -> None:
    notice = notice_of([Entered("r", RunState.FAILED)])
    assert escapes(notice, ConsoleChannels(bell=False, desktop="off")) == ""
    assert escapes(notice, ConsoleChannels(bell=True, desktop="off")) == "\a"
