"""The command palette's screen: Textual's, its search box given every key typed.

Keys typed right behind ctrl+p arrive while the palette is being built. Textual's palette takes
its focus from ``AUTO_FOCUS`` when the screen is resumed; a key routed while no widget had the
focus went to the screen itself, which dropped it ("go to run 150" read "go go to run"). Here
the box is focused as the palette mounts (the App mounts a pushed screen before it routes the
next key, as the reason dialog relies on), and a printable key that still reaches the screen
with nothing focused is put in the box rather than dropped.
"""

from __future__ import annotations

from textual.command import CommandInput, CommandPalette
from textual.events import Key


class JarvisPalette(CommandPalette):
    """Textual's command palette; no key typed for its search is lost."""

    def on_mount(self) -> None:
        # At once, not after the queued keys as `focus()` or ``AUTO_FOCUS`` would.
        self.set_focus(self.query_one(CommandInput))

    def on_key(self, event: Key) -> None:
        if self.focused is not None or not event.is_printable or event.character is None:
            return
        event.stop()
        event.prevent_default()
        search = self.query_one(CommandInput)
        self.set_focus(search)
        search.insert_text_at_cursor(event.character)
