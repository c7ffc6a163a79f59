"""The help screen and the palette: the console goes on reading the store behind them, the
palette keeps the keys typed right behind ctrl+p, and its "go to run" lists runs before an id.

Each test reproduced its defect first: the header's counts froze while help was open, the
palette's "go to" could not find a run created after it opened, ``ctrl+p g o`` lost the keys,
and "go to" alone offered nothing.
"""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandInput, CommandList, CommandPalette

from core.lifecycle import RunState
from jarvis_tui.modals.help_screen import HelpScreen
from tests.tui.conftest import RUNS
from tests.tui.helpers import make_app, settle, table, wait_for, wait_for_palette_hit
from tests.tui.test_on_show import add_runs
from tests.tui.test_type_ahead import type_ahead


def _palette_prompts(app: object) -> list[str]:
    screen = getattr(app, "screen", None)
    if not isinstance(screen, CommandPalette):
        return []
    commands = screen.query_one(CommandList)
    return [
        getattr(commands.get_option_at_index(i).prompt, "plain", "").split("\n")[0]
        for i in range(commands.option_count)
    ]


async def test_the_console_reads_the_store_while_help_is_open(store_db: Path) -> None:
    app = make_app(store_db, live=True, poll_interval=0.05)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        add_runs(store_db, ("run-later", RunState.QUEUED))
        # The header's counts (read behind the help) take the new run in.
        await wait_for(pilot, lambda: sum(app.main.counts.values()) == len(RUNS) + 1)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")


async def test_the_palette_finds_a_run_created_after_it_opened(store_db: Path) -> None:
    app = make_app(store_db, live=True, poll_interval=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        add_runs(store_db, ("run-later", RunState.QUEUED))
        await wait_for(pilot, lambda: sum(app.main.counts.values()) == len(RUNS) + 1)
        await pilot.press(*"go to run-later")
        await wait_for_palette_hit(pilot, "Go to run: run-later")
        await pilot.press("enter")
        await wait_for(pilot, lambda: table(app).selected_run_id == "run-later")


async def test_keys_typed_right_behind_ctrl_p_are_the_palettes_search(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        type_ahead(app, "ctrl+p", *"go to run-review")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await settle(pilot)
        search = app.screen.query_one(CommandInput)
        assert search.value == "go to run-review"
        await wait_for_palette_hit(pilot, "Go to run: run-review")


async def test_a_key_that_reaches_the_palette_with_nothing_focused_is_its_search(
    store_db: Path,
) -> None:
    # What a key typed while the palette is being built meets: no widget has the focus yet,
    # and the App routes it to the screen.
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        app.screen.set_focus(None)
        await pilot.press(*"go to run-review")
        search = app.screen.query_one(CommandInput)
        assert search.value == "go to run-review"
        await wait_for_palette_hit(pilot, "Go to run: run-review")


async def test_go_to_alone_lists_runs(store_db: Path) -> None:
    app = make_app(store_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"go to")

        def listed() -> set[str]:
            return {
                p.removeprefix("Go to run: ")
                for p in _palette_prompts(app)
                if p.startswith("Go to run: ")
            }

        # The palette's search answers in batches, in a worker: wait for every run to be listed.
        await wait_for(pilot, lambda: listed() == set(RUNS))
