"""Every theme the console offers works: ours, and Textual's own, which the palette lists too."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandPalette

from jarvis_tui.modals.retry_dialog import RetryDialog
from jarvis_tui.widgets.status_header import StatusHeader
from jarvis_tui.widgets.steer_composer import SteerComposer
from tests.tui.helpers import console_on, wait_for


async def test_every_theme_the_palette_offers_applies_without_error(store_db: Path) -> None:
    async with console_on(store_db, "run-failed", size=(80, 24)) as (app, pilot):
        offered = sorted(app.available_themes)
        assert "textual-dark" in offered and "jarvis-light" in offered
        for name in offered:
            app.theme = name
            await pilot.pause()
            # The stylesheet was parsed again with the theme's variables: the role colours our
            # sheet uses resolved (an unresolved one raises before this line is reached).
            assert app.theme == name
            hint = app.main.query_one("#steer-hint")
            assert hint.styles.color.a > 0, name
        # A dialog's styles come from the same sheet: open one under the last theme.
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RetryDialog))
        await pilot.press("n")
        assert app.main.query_one(StatusHeader).display
        assert app.main.query_one(SteerComposer)


async def test_choosing_a_textual_theme_from_the_palette_keeps_the_console_running(
    store_db: Path,
) -> None:
    async with console_on(store_db, "run-review", size=(120, 30)) as (app, pilot):
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"theme")
        await pilot.pause(0.3)
        await pilot.press("enter")  # Textual's "Theme" command: a list of every theme
        await pilot.pause(0.3)
        await pilot.press(*"nord")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "nord")
        await wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette))
        assert app.is_running
