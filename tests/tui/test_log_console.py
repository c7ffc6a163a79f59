"""The console's worker log (``l``): keys, then what the view holds. Real log files, written
while the view is open as a worker would write them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from core.lifecycle import Action
from core.moves import host_move
from core.store.sqlite_store import SqliteStore
from core.worker_logs import attempt_dir
from jarvis_tui.modals.log_screen import LogScreen
from jarvis_tui.screens.main_screen import MainScreen
from jarvis_tui.widgets.log_view import LogView
from tests.tui.helpers import RecordingApp, console_on, wait_for, wait_for_palette_hit
from tests.tui.log_store import BUILD_LINES, FAKE_KEY, build_log_store


@pytest.fixture
def log_db(tmp_path: Path) -> Path:
    return build_log_store(tmp_path / "jarvis.db")


def screen_of(app: RecordingApp) -> LogScreen:
    screen = app.screen
    assert isinstance(screen, LogScreen)
    return screen


async def open_log(pilot: Pilot[Any], *, running: bool = False) -> LogScreen:
    """Press ``l`` and wait until the log's opening read is shown (and, for a run that has
    stopped, its last read too)."""
    app = pilot.app
    await pilot.press("l")
    await wait_for(pilot, lambda: isinstance(app.screen, LogScreen) and app.screen.opened)
    screen = screen_of(app)  # type: ignore[arg-type]
    if not running:
        await wait_for(pilot, lambda: not screen.running)
    await pilot.pause()
    return screen


def on_screen(view: LogView) -> list[str]:
    """The rows the view draws now, as text (the scroll bar's column left out)."""
    rows = []
    for y in range(view.size.height):
        strip = view.render_line(y)
        rows.append("".join(segment.text for segment in strip)[:-1].rstrip())
    return rows


def status(screen: LogScreen) -> str:
    return str(screen.query_one("#logs-status").render())


def append(db: Path, run_id: str, text: str) -> None:
    with (attempt_dir(db.parent, run_id, 1) / "stdout.log").open("a", encoding="utf-8") as f:
        f.write(text)


async def test_l_opens_the_runs_stdout_inert_and_masked_and_escape_closes(log_db: Path) -> None:
    async with console_on(log_db, "run-failed", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot)
        view = screen.log_view
        rows = on_screen(view)
        assert rows[-1] == "build failed"  # at the end, where a log's news is
        assert rows[-2] == "export ANTHROPIC_API_KEY=sk-a****"
        # Escapes shown as text, markup as typed, a colour code dropped, the key masked.
        assert rows[-3] == "worker says: \\x1b]0;pwned\\x07 [bold]x[/] red \\u202eevil"
        assert rows[-4] == "[060] compiling module_060.py   ok"  # the tab laid out
        text = "\n".join(rows)
        assert "\x1b" not in text and "\u202e" not in text and FAKE_KEY not in text
        assert str(screen.query_one("#logs-title").render()) == (
            "Log of run run-failed  attempt 1 · stdout"
        )
        assert status(screen).startswith(f"{BUILD_LINES + 3} lines · ended")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_t_shows_the_other_stream_and_back(log_db: Path) -> None:
    async with console_on(log_db, "run-failed", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot)
        await pilot.press("t")
        await wait_for(pilot, lambda: screen.opened and not screen.running)
        await pilot.pause()
        assert screen.stream == "stderr"
        rows = [row for row in on_screen(screen.log_view) if row]
        assert rows == [
            "Traceback (most recent call last):",
            '  File "app.py", line 3, in <module>',
            "ValueError: the fixture file tests/data/users.json is broken",
        ]
        assert "t stdout" in status(screen)
        await pilot.press("t")
        await wait_for(pilot, lambda: screen.opened and not screen.running)
        assert (screen.stream, len(screen.log_view.lines)) == ("stdout", BUILD_LINES + 3)


async def test_search_goes_to_each_match_and_round_the_end(log_db: Path) -> None:
    async with console_on(log_db, "run-failed", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot)
        view = screen.log_view
        await pilot.press("slash", *"module_05", "enter")
        assert view.needle == "module_05" and view.current is not None
        assert view.text_of(view.current) == "[050] compiling module_050.py   ok"
        assert "match 1 of 10 for module_05" in status(screen)
        await pilot.press("n", "n")
        assert view.text_of(view.current) == "[052] compiling module_052.py   ok"
        await pilot.press("N", "N", "N")
        assert view.text_of(view.current) == "[059] compiling module_059.py   ok"  # round the start
        assert "match 10 of 10" in status(screen)
        rows = on_screen(view)
        assert "[059] compiling module_059.py   ok" in rows  # brought into view
        # A secret is searched as shown: its value finds nothing.
        await pilot.press("slash", *FAKE_KEY[:20], "enter")
        assert f"no match for {FAKE_KEY[:20]}" in status(screen)
        # Escape closes an open search first, then the log.
        await pilot.press("slash")
        assert screen.has_class("-searching")
        await pilot.press("escape")
        assert not screen.has_class("-searching") and screen.is_current
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_a_running_runs_log_is_followed_until_the_run_stops(log_db: Path) -> None:
    async with console_on(log_db, "run-running", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot, running=True)
        view = screen.log_view
        assert screen.running and " · following" in status(screen)
        assert [row for row in on_screen(view) if row] == ["reading the failing test"]
        append(log_db, "run-running", "patched the handler\nrunning the tests\n")
        await wait_for(pilot, lambda: len(view.lines) == 3)
        assert on_screen(view)[:3] == [
            "reading the failing test", "patched the handler", "running the tests",
        ]  # fmt: skip
        # Scrolled up, the view stays where the operator put it as lines arrive.
        append(log_db, "run-running", "".join(f"test {n} passed\n" for n in range(60)))
        await wait_for(pilot, lambda: len(view.lines) == 63)
        assert on_screen(view)[-1] == "test 59 passed" and view.following
        await pilot.press("home")
        append(log_db, "run-running", "one more\n")
        await wait_for(pilot, lambda: len(view.lines) == 64)
        assert view.top == 0 and not view.following
        await pilot.press("end")
        assert on_screen(view)[-1] == "one more" and view.following
        # The run stops: its last words, even without a line feed, and the follow ends.
        append(log_db, "run-running", "all 60 passed")
        store = SqliteStore(log_db, migrate=False)
        try:
            host_move(store, "run-running", Action.FAIL)
        finally:
            store.close()
        await wait_for(pilot, lambda: not screen.running)
        await pilot.pause()
        assert on_screen(view)[-1] == "all 60 passed"
        assert " · ended" in status(screen)


async def test_the_view_keeps_a_bounded_number_of_lines_and_says_so(
    log_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jarvis_tui.modals.log_screen.MAX_LINES", 50)
    async with console_on(log_db, "run-running", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot, running=True)
        view = screen.log_view
        append(log_db, "run-running", "".join(f"line {n}\n" for n in range(120)))
        await wait_for(pilot, lambda: view.total == 121)
        assert len(view.lines) == 50 and view.dropped == 71
        assert view.text_of(view.dropped) == "line 70" and view.text_of(70) is None
        assert "50 lines · following · 71 older dropped" in status(screen)
        assert on_screen(view)[-1] == "line 119"


async def test_a_log_longer_than_the_view_opens_on_its_end_and_says_earlier_lines_exist(
    log_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jarvis_tui.modals.log_screen.MAX_LINES", 20)
    async with console_on(log_db, "run-failed", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot)
        assert screen.truncated and screen.log_view.text_of(0) == (
            f"[{BUILD_LINES - 16:03d}] compiling module_{BUILD_LINES - 16:03d}.py   ok"
        )
        assert "earlier lines not shown" in status(screen)


async def test_a_run_without_logs_says_why_in_one_sentence(log_db: Path) -> None:
    async with console_on(log_db, "run-queued", size=(80, 24)) as (app, pilot):
        screen = await open_log(pilot)
        rows = on_screen(screen.log_view)
        assert rows[0] == "Run run-queued has no logs yet: no attempt of it has started."
        await pilot.press("slash", "n", "t")  # nothing to search; the other stream says the same
        await wait_for(pilot, lambda: screen.opened)
        assert screen.is_current and screen.refusal is not None
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_the_palette_and_the_help_offer_the_log(log_db: Path) -> None:
    async with console_on(log_db, "run-failed", size=(160, 48)) as (app, pilot):
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"run: logs")
        await wait_for_palette_hit(pilot, "Run: Logs run-failed")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LogScreen))
        assert screen_of(app).run_id == "run-failed"
