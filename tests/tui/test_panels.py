"""The side panels and the key bar: they scroll by keys, stay bounded, and a live change
repaints them without laying the screen out again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from core.intake import submit_dispatch
from core.lifecycle import Action
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.widgets.filter_line import FilterLine
from jarvis_tui.widgets.gate_panel import GatePanel
from jarvis_tui.widgets.key_bar import KeyBar
from jarvis_tui.widgets.progress_stream import ProgressStream, entry_text
from jarvis_tui.widgets.run_table import run_text
from jarvis_tui.widgets.text_pane import TextPane
from tests.core.store_helpers import dispatch_doc
from tests.tui.conftest import RUNS
from tests.tui.helpers import (
    console_on,
    make_app,
    row_text,
    select,
    settle,
    table,
    wait_for,
    wait_for_polls,
)


class PaneApp(App[None]):
    def __init__(self, pane: TextPane) -> None:
        super().__init__()
        self.pane = pane

    def compose(self) -> ComposeResult:
        yield self.pane


def screen_text(pane: TextPane) -> list[str]:
    return [pane.render_line(y).text for y in range(pane.size.height)]


async def test_a_pane_wraps_to_its_width_and_scrolls_by_keys() -> None:
    pane = TextPane(wrap=True)
    async with PaneApp(pane).run_test(size=(21, 4)) as pilot:
        pane.set_text(Text("\n".join(f"line {n} " + "x" * 15 for n in range(6))))
        pane.focus()
        await pilot.pause()
        # 20 columns for text, one for the bar; each line wraps into two rows.
        assert len(pane.rows) == 12
        assert screen_text(pane)[0].startswith("line 0")
        assert screen_text(pane)[0][-1] == "┃"  # the bar's thumb at the top
        await pilot.press("pagedown")
        assert pane.top == 3
        await pilot.press("end")
        assert pane.top == pane.max_top == 8
        assert screen_text(pane)[-1].startswith("x")
        assert screen_text(pane)[-1][-1] == "┃"  # thumb at the bottom
        await pilot.press("home", "down")
        assert pane.top == 1


async def test_an_unchanged_text_is_not_redrawn_and_a_short_one_has_no_bar() -> None:
    pane = TextPane(wrap=True)
    async with PaneApp(pane).run_test(size=(30, 5)):
        assert pane.set_text(Text("one\ntwo")) is True
        assert pane.set_text(Text("one\ntwo")) is False
        assert pane.set_text(Text("one\ntwo", style="bold")) is True  # a style is a change
        assert [line.rstrip() for line in screen_text(pane)] == ["one", "two", "", "", ""]


async def test_a_bounded_pane_drops_the_oldest_and_keeps_a_readers_place() -> None:
    pane = TextPane(wrap=False, max_lines=10)
    async with PaneApp(pane).run_test(size=(30, 4)):
        pane.append_lines(Text(f"entry {n}") for n in range(10))
        pane.scroll_to_row(2)
        assert screen_text(pane)[0].startswith("entry 2")
        dropped = pane.append_lines([Text("entry 10"), Text("entry 11")])
        assert dropped == 2 and len(pane.lines) == 10
        assert pane.lines[0].plain == "entry 2"
        assert screen_text(pane)[0].startswith("entry 2")  # the same entry, not the same row


async def test_a_full_pane_following_its_end_draws_only_the_lines_it_never_drew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream at its bound drops as many lines as it adds: the rows already drawn move up,
    drawn as they were (a live fleet appends every read; drawing every row again was most of
    a busy console's paint)."""
    pane = TextPane(wrap=False, max_lines=10)
    async with PaneApp(pane).run_test(size=(30, 4)) as pilot:
        pane.append_lines(Text(f"entry {n}") for n in range(10))
        pane.scroll_to_row(pane.max_top)
        await pilot.pause()
        assert [row.split()[1] for row in screen_text(pane)] == ["6", "7", "8", "9"]
        drawn: list[str] = []
        render = Text.render

        def counting(self: Text, *args: Any, **kwargs: Any) -> Any:
            drawn.append(self.plain)
            return render(self, *args, **kwargs)

        monkeypatch.setattr(Text, "render", counting)
        pane.append_lines([Text("entry 10"), Text("entry 11")])
        pane.scroll_to_row(pane.max_top)
        await pilot.pause()
        assert [row.split()[1] for row in screen_text(pane)] == ["8", "9", "10", "11"]
        assert sorted(drawn) == ["entry 10", "entry 11"]


async def test_a_live_fleet_repaints_panels_without_laying_out_the_screen(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-running", live=True, poll_interval=0.05) as (app, pilot):
        await wait_for_polls(pilot, 3)
        layouts: list[Any] = []
        screen = app.main
        original = screen._refresh_layout

        def counting(*args: Any, **kwargs: Any) -> None:
            layouts.append(args)
            original(*args, **kwargs)

        screen._refresh_layout = counting  # type: ignore[method-assign]
        stream = screen.query_one(ProgressStream)
        store = SqliteStore(store_db)
        try:
            for n in range(30):
                with store.transaction() as tx:
                    summary = f"step {n}"
                    tx.touch_run("run-running", changes={"last_progress_summary": summary},
                                 kind="progress", payload={"phase": "edit", "summary": summary},
                                 actor="w")  # fmt: skip
        finally:
            store.close()
        await wait_for(pilot, lambda: any("step 29" in line for line in stream.shown_lines))
        # The cursor moves between runs that allow different actions: the keys change too.
        await pilot.press("up", "down", "up", "down")
        await settle(pilot)
        await wait_for(
            pilot, lambda: screen.view is not None and screen.view.run_id == "run-running"
        )
        assert "step 29" in row_text(app, "run-running")[-1]
        assert layouts == []


async def test_the_key_bar_dims_what_the_selected_run_cannot_do(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        bar = app.main.query_one(KeyBar)
        await select(pilot, "run-review")
        await pilot.pause()
        assert bar.keys["a"] == ("Approve", True)
        assert bar.keys["r"] == ("Retry", False)
        await select(pilot, "run-failed")
        await pilot.pause()
        assert bar.keys["a"] == ("Approve", False)
        assert bar.keys["r"] == ("Retry", True)
        assert "f1" not in bar.keys  # one entry per action: ? and F1 both open help
        # The steer editor has its own keys.
        await select(pilot, "run-running")
        await pilot.press("s")
        await pilot.pause()
        assert "ctrl+s" in bar.keys and "r" not in bar.keys


async def test_a_run_that_changed_while_filtered_out_shows_its_new_state(store_db: Path) -> None:
    app = make_app(store_db, live=True, poll_interval=0.05)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"run-review", "enter")
        await wait_for(pilot, lambda: table(app).run_ids == ["run-review"])
        store = SqliteStore(store_db)
        try:
            host_move(store, "run-running", Action.FAIL_GATES)
            moved_at = store.last_seq()
        finally:
            store.close()
        # Read while the filter hides it.
        await wait_for(pilot, lambda: (app.main.store_sync.seen_seq or 0) >= moved_at)
        assert "run-running" not in table(app).run_ids
        await pilot.press("slash", "escape")
        await wait_for(pilot, lambda: "run-running" in table(app).run_ids)
        assert row_text(app, "run-running")[1] == "⊘ failed_contract"


async def test_the_filter_line_edits_and_never_lets_typed_keys_act(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"lane run-rx", "backspace")
        line = app.main.query_one(FilterLine)
        assert line.value == "lane run-r"
        await pilot.press("ctrl+w")
        assert line.value == "lane "
        await pilot.press("ctrl+u", *"run-fail")
        await pilot.pause()
        assert sorted(table(app).run_ids) == ["run-failed"]
        await pilot.press("ctrl+u", "r", "x", "o")  # action keys, typed as text
        await pilot.pause()
        assert line.value == "rxo"
        assert isinstance(app.screen, MainScreen)  # no retry or cancel dialog
        await pilot.press("ctrl+u", "enter")
        await pilot.pause()
        assert table(app).has_focus and len(table(app).run_ids) == len(RUNS)
        assert not app.main.has_class("-filtering")  # an empty filter folds away


async def test_a_long_table_scrolls_with_its_cursor_and_draws_a_bar(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    store = SqliteStore(db)
    try:
        for n in range(60):
            submit_dispatch(store, dispatch_doc(f"run-{n:02d}"), source_lane="main",
                            target_lane="jarvis-worker-1", actor="test")  # fmt: skip
    finally:
        store.close()
    app = make_app(db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        runs = table(app)
        runs.focus()
        height = runs.size.height
        assert 0 < height < 60
        assert runs.render_line(0).text.endswith("┃")  # the thumb at the top
        await pilot.press("pagedown")
        assert runs.cursor_row == height - 1 and runs.top == 0
        await pilot.press("down")
        assert runs.top == 1  # the cursor's line stays on screen
        assert runs.render_line(height - 1).text.startswith(runs.selected_run_id or "?")
        await pilot.press("end")
        assert runs.selected_run_id == runs.run_ids[-1] and runs.top == 60 - height
        assert runs.render_line(height - 1).text.endswith("┃")  # and at the bottom
        await pilot.press("home")
        assert runs.top == 0 and runs.cursor_row == 0


async def test_progress_of_the_selected_run_streams_without_reading_the_run_again(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-running", live=True, poll_interval=0.05) as (app, pilot):
        await wait_for_polls(pilot, 3)
        screen = app.main
        read: list[str] = []
        original = screen.feed.run_view

        def counting(run_id: str, **kwargs: Any) -> Any:
            read.append(run_id)
            return original(run_id, **kwargs)

        screen.feed.run_view = counting  # type: ignore[method-assign]
        stream = screen.query_one(ProgressStream)
        store = SqliteStore(store_db)
        try:
            with store.transaction() as tx:
                payload = {"phase": "edit", "summary": "only progress"}
                tx.touch_run("run-running", changes={}, kind="progress", payload=payload, actor="w")
        finally:
            store.close()
        await wait_for(pilot, lambda: any("only progress" in line for line in stream.shown_lines))
        assert read == []
        assert screen.view is not None
        assert screen.view.journal[-1]["payload"]["summary"] == "only progress"
        store = SqliteStore(store_db)
        try:
            host_move(store, "run-running", Action.FAIL_GATES)
        finally:
            store.close()
        # A state change is more than progress: the panels read the run again.
        await wait_for(pilot, lambda: "failed_contract" in screen.query_one(GatePanel).shown.plain)
        assert read and set(read) == {"run-running"}


@pytest.mark.parametrize(
    ("kind", "payload", "expected"),
    [
        ("verification", {"status": "pending"}, "… criteria to verify"),
        ("verification", {"status": "verifying"}, "… verifying criteria"),
        ("verification", {"status": "awaiting_approval", "failed": [],
                          "pending_approval": ['["deploy"]']},
         "◇ a criterion's command waits for approval (A)"),
        ("verification", {"status": "recorded", "passed": True, "failed": []},
         "✓ criteria verified: all passed"),
        ("verification", {"status": "resumed"}, "… verifying criteria again (the host restarted)"),
        # Verification moves are transitions: drawn with the look of the stage they reach.
        ("transition", {"action": "start_verification", "from": "running", "to": "running",
                        "verification_from": "pending", "verification_to": "verifying",
                        "reason": None},
         "◑ start_verification: running (pending) → running (verifying)  by w"),
        ("transition", {"action": "approve_command", "from": "running", "to": "running",
                        "verification_from": "awaiting_approval", "verification_to": "pending",
                        "reason": 'allowed ["deploy"]'},
         '◔ approve_command: running (awaiting_approval) → running (pending)  by w — allowed '
         '["deploy"]'),
        ("transition", {"action": "fail", "from": "running", "to": "failed",
                        "verification_from": "verifying", "verification_to": None,
                        "reason": "acceptance criteria failed"},
         "✗ fail: running (verifying) → failed  by w — acceptance criteria failed"),
        ("transition", {"action": "leap", "from": "running", "to": "elsewhere\x1b[2J"},
         "? leap: running → elsewhere\\x1b[2J  by w"),
        ("verification", {"status": "recorded", "passed": False,
                          "failed": ["docs exist", "tests \x1b[31mpass"]},
         "✗ criteria failed: docs exist; tests \\x1b[31mpass"),
        ("criteria", {"source": "operator", "count": 2, "notes": ["added file_exists: x"]},
         "☰ criteria: 2 from operator — added file_exists: x"),
        ("created", {"state": "queued", "criteria": {"source": "patterns", "count": 1}},
         "+ created (queued) · criteria: 1 from patterns  by w"),
        ("created", {"state": "queued", "criteria": {"source": "patterns", "count": 0}},
         "+ created (queued)  by w"),
        ("quarantined", {"code": "not_json", "message": "The document is not JSON.\n  state  done",
                         "lane": "jarvis-worker-1"},
         "⛔ refused file: not_json — The document is not JSON. ⏎   state  done"
         "  from jarvis-worker-1"),
        ("secrets", {"kinds": ["AWS access key id", "GitHub token"], "new": ["GitHub token"],
                     "source": "progress"},
         "⚠ secrets masked: GitHub token  in its progress"),
    ],
)  # fmt: skip
def test_criteria_entries_read_as_words_in_the_stream(
    kind: str, payload: dict[str, Any], expected: str
) -> None:
    entry = {"at": "2026-01-02T09:30:00.000Z", "kind": kind, "payload": payload, "actor": "w"}
    assert entry_text(entry).plain == f"09:30:00 {expected}"


def test_a_run_whose_workers_sent_secrets_is_marked_in_the_table() -> None:
    # As the store keeps it (JSON text) and as a run view hands it over (a list).
    plain = {"run_id": "run-1", "secrets_found": None}
    flagged = {"run_id": "run-1", "secrets_found": '["GitHub token"]'}
    viewed = {"run_id": "run-1", "secrets_found": ["GitHub token"]}
    long_id = {"run_id": "task-20260222-0123456789", "secrets_found": ["GitHub token"]}
    assert run_text(plain).plain == "run-1"
    assert run_text({"run_id": "run-1", "secrets_found": []}).plain == "run-1"
    assert run_text(flagged).plain == "run-1 ⚠"
    assert run_text(viewed).plain == "run-1 ⚠"
    # A long id gives way to the mark, which must stay inside the 18-column cell.
    assert run_text(long_id).plain == "task-20260222-0… ⚠"
    assert len(run_text(long_id).plain) <= 18
