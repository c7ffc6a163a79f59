"""The main screen's notifications to its terminal, and the key that mutes them.

Runs that start needing a human ring the terminal's bell and raise a desktop notification
(`jarvis_tui.notify_signals`), besides the toast (`jarvis_tui.attention_toasts`), which shows
only inside the console. ``Z`` mutes the bell and the desktop notification for an hour, and
unmutes them when pressed again; the header says until when they are muted.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from core.service.notify import console_channels
from jarvis_tui.notify_signals import MUTE_S, ConsoleNotifier
from jarvis_tui.screens.main_views import ViewControls
from jarvis_tui.widgets.status_header import StatusHeader


class SignalControls(ViewControls):
    """The main screen's bell and desktop notifications (`start_signals` in its constructor)."""

    signals: ConsoleNotifier
    clock: Callable[[], datetime]

    def start_signals(self, root: Path) -> None:
        """Take the console's channels from the workspace at ``root`` (``[notify]``)."""
        self.signals = ConsoleNotifier(
            console_channels(root), self._write_terminal, lambda: self.clock().timestamp()
        )

    def _write_terminal(self, text: str) -> None:
        # Through the driver, as Textual's own bell: it goes out in order with the frames,
        # never inside one.
        driver = self.app._driver
        if driver is not None:
            driver.write(text)

    def note_signals(self, journal: list[dict[str, Any]]) -> None:
        """Note what this read's journal moved into a stage needing a human."""
        self.signals.entered(journal)

    def ring_signals(self) -> None:
        """Ring and notify if a notice is due (each read, dialogs up or not), and keep the
        header's mute line true once the mute runs out."""
        self.signals.ring(self.model.needs_human)
        self._show_muted()

    def _show_muted(self) -> None:
        until = self.signals.muted_until if self.signals.muted() else None
        shown = (
            "" if until is None else datetime.fromtimestamp(until).astimezone().strftime("%H:%M")
        )
        self.query_one(StatusHeader).show_muted(shown)

    def action_mute(self) -> None:
        """Mute the bell and desktop notifications for an hour, or unmute them."""
        muted = self.signals.toggle_mute()
        self._show_muted()
        if muted:
            message = f"Bell and desktop notifications muted for {MUTE_S / 3600:g} h; Z unmutes."
        else:
            message = "Bell and desktop notifications on again."
        self.notify(message, title="Notifications", markup=False)
