"""The fleet view (F) and the quarantine view (Q) in a Pilot console: a lane paused and resumed
in the store, a second pause refused with the engine's sentence; a quarantined file's reason
and content shown inert, and replayed back where it was found."""

from __future__ import annotations

from pathlib import Path

from core.store.sqlite_store import SqliteStore
from jarvis_tui.modals.fleet_screen import FleetScreen
from jarvis_tui.modals.quarantine_screen import QuarantineScreen
from jarvis_tui.modals.reason_dialog import ReasonDialog
from tests.tui.conftest import HOSTILE
from tests.tui.fleet_store import QUARANTINED, build_fleet_workspace
from tests.tui.helpers import make_app, settle, wait_for, wait_for_palette_hit


def _pauses(db: Path) -> dict[str, str]:
    store = SqliteStore(db)
    try:
        return {p["lane"]: f"{p['paused_by']}: {p['reason']}" for p in store.lane_pauses()}
    finally:
        store.close()


def _status(screen: FleetScreen | QuarantineScreen, widget: str) -> str:
    return str(screen.query_one(widget).render())


async def test_the_fleet_view_pauses_and_resumes_a_lane_in_the_store(tmp_path: Path) -> None:
    db = build_fleet_workspace(tmp_path / "jarvis.db")
    app = make_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("F")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        rows = screen.data()
        assert list(rows) == ["backend", "docs", "frontend"]
        assert rows["backend"][:6] == ["backend", "claude (claude-code)", "bwrap", "2", "2", "1"]
        assert rows["docs"][1:4] == ["sim (command)", "none", "0"]
        assert rows["frontend"][5:] == ["2", "build-01", "release freeze until the tag (alice)"]

        # backend is the first row: pause it, with a reason.
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, ReasonDialog))
        await pilot.press(*"deploy", "enter")
        await wait_for(pilot, lambda: "backend" in _pauses(db))
        await settle(pilot)
        assert _pauses(db)["backend"] == "test-operator: deploy"
        assert "Paused lane backend." in _status(screen, "#fleet-status")
        assert screen.data()["backend"][7].startswith("deploy")

        # Pausing it again: refused, and the pause in place is kept.
        await pilot.press("p", *"again", "enter")
        await wait_for(pilot, lambda: "Refused" in _status(screen, "#fleet-status"))
        assert "already paused by test-operator" in _status(screen, "#fleet-status")
        assert _pauses(db)["backend"] == "test-operator: deploy"

        await pilot.press("u")
        await wait_for(pilot, lambda: "backend" not in _pauses(db))
        await settle(pilot)
        assert "Resumed lane backend." in _status(screen, "#fleet-status")

        # The run table's moves: j down to docs, G to the last lane, g back to the first.
        table = screen.lanes_table
        for key, row in (("j", 1), ("G", 2), ("k", 1), ("g", 0)):
            await pilot.press(key)
            await settle(pilot)
            assert table.cursor_row == row, key
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is app.main


async def test_the_palette_opens_the_fleet_and_the_quarantine(tmp_path: Path) -> None:
    app = make_app(build_fleet_workspace(tmp_path / "jarvis.db"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for words, screen_type in (("lanes and hosts", FleetScreen),
                                   ("quarantined files", QuarantineScreen)):  # fmt: skip
            await pilot.press("ctrl+p", *words)
            await wait_for_palette_hit(pilot, words.split()[0].capitalize())
            await pilot.press("enter")
            await wait_for(pilot, lambda t=screen_type: isinstance(app.screen, t))  # type: ignore[misc]
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)


async def test_the_quarantine_shows_a_file_inert_and_replays_it(tmp_path: Path) -> None:
    db = build_fleet_workspace(tmp_path / "jarvis.db")
    app = make_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("Q")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, QuarantineScreen)
        newest, older = sorted(QUARANTINED, reverse=True)
        assert [f.name for f in screen.files] == [newest, older]
        await wait_for(pilot, lambda: "not json" in _status(screen, "#quarantine-file"))
        pane = _status(screen, "#quarantine-file")
        # The hostile text is there as typed: not styling, not a terminal command.
        assert "[bold red]x[/]" in pane and "\x1b" not in pane
        assert "bad_json: The file is not JSON" in pane
        assert "found at data/ipc/backend/progress/run-backend-3/0003-p.json" in pane

        await pilot.press("r")
        await settle(pilot)
        await pilot.press("y")
        back = tmp_path / "data" / "ipc" / "backend" / "progress" / "run-backend-3" / "0003-p.json"
        await wait_for(pilot, back.exists)
        await settle(pilot)
        assert back.read_text() == QUARANTINED[newest][3]
        assert f"Replayed {newest}" in _status(screen, "#quarantine-status")
        assert [bool(f.replayed_at) for f in screen.files] == [True, False]
        # Replaying it again: nothing is there to replay, and it says so.
        await pilot.press("r")
        await settle(pilot)
        assert "cannot be replayed" in _status(screen, "#quarantine-status")


def test_a_lane_paused_and_resumed_reads_as_a_sentence_in_the_progress_stream() -> None:
    from jarvis_tui.widgets.progress_stream import entry_text

    at = "2026-11-25T19:52:16.000Z"
    paused = {"kind": "lane_paused", "payload": {"lane": "build", "reason": f"deploy {HOSTILE}"},
              "at": at, "actor": "alice"}  # fmt: skip
    text = entry_text(paused).plain
    assert text.startswith("19:52:16 ⏸ lane build paused — deploy [bold red]x[/]")
    assert "\x1b" not in text and text.endswith("by alice")
    resumed = {"kind": "lane_resumed", "payload": {"lane": "build"}, "at": at, "actor": "bob"}
    assert entry_text(resumed).plain == "19:52:16 ⏸ lane build resumed  by bob"
