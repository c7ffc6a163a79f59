"""A search in a running run's log holds the view on its match while the worker writes: new
lines never move the match away (they did when the match was on the last screen, where the
view was following), and the bottom (G, end) follows again. Reproduced first: the match
scrolled off as the next lines arrived. And the log's j k g G and half pages."""

from __future__ import annotations

from pathlib import Path

from tests.tui.helpers import console_on, wait_for
from tests.tui.test_log_console import append, log_db, on_screen, open_log

__all__ = ["log_db"]  # the fixture, in force here too


async def test_new_lines_never_move_the_log_off_a_match_until_G(log_db: Path) -> None:
    async with console_on(log_db, "run-running", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot, running=True)
        view = screen.log_view
        append(log_db, "run-running", "".join(f"test {n} passed\n" for n in range(60)))
        await wait_for(pilot, lambda: len(view.lines) == 61)
        assert view.following
        # The newest line: its match is on the last screen, where the view was following.
        await pilot.press("slash", *"test 59", "enter")
        assert view.current is not None and view.text_of(view.current) == "test 59 passed"
        top = view.top
        assert not view.following
        append(log_db, "run-running", "".join(f"more {n}\n" for n in range(40)))
        await wait_for(pilot, lambda: len(view.lines) == 101)
        assert view.top == top and "test 59 passed" in on_screen(view)
        await pilot.press("G")
        assert view.following and on_screen(view)[-1] == "more 39"
        append(log_db, "run-running", "last\n")
        await wait_for(pilot, lambda: len(view.lines) == 102)
        assert on_screen(view)[-1] == "last"


async def test_j_k_g_G_and_half_pages_move_the_log(log_db: Path) -> None:
    async with console_on(log_db, "run-failed", size=(100, 30)) as (app, pilot):
        screen = await open_log(pilot)
        view = screen.log_view
        assert view.top == view.max_top > 0 and view.following
        await pilot.press("g")
        assert view.top == 0 and not view.following
        await pilot.press("j", "j", "k")
        assert view.top == 1
        await pilot.press("ctrl+d")
        assert view.top == 1 + view.size.height // 2
        await pilot.press("ctrl+u")
        assert view.top == 1
        await pilot.press("G")
        assert view.top == view.max_top and view.following
