"""The main screen's notifications to its terminal, and the key that mutes them.

Runs that start needing a human ring the terminal's bell and raise a desktop notification
(`jarvis_tui.notify_signals`), besides the toast (`jarvis_tui.attention_toasts`), which shows
only inside the console. ``Z`` mutes the bell and the desktop notification for an hour (the
personal file's ``mute_minutes``), and unmutes them when pressed again; the header says until
when they are muted. The personal file's ``bell`` and ``desktop`` win over the workspace's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from core.service.notify import console_channels
from jarvis_tui.notify_signals import MUTE_S, ConsoleNotifier
from jarvis_tui.personal import NotifySettings
from jarvis_tui.screens.main_views import ViewControls
from jarvis_tui.widgets.status_header import StatusHeader


def _span(seconds: float) -> str:
    """``1 h``, ``90 min``: how long a mute lasts, as the operator set it."""
    minutes = round(seconds / 60)
    return f"{minutes // 60} h" if minutes % 60 == 0 else f"{minutes} min"


class SignalControls(ViewControls):
    """The main screen's bell and desktop notifications (`start_signals` in its constructor)."""

    signals: ConsoleNotifier
    clock: Callable[[], datetime]

    def start_signals(self, root: Path, personal: NotifySettings | None = None) -> None:
        """Take the console's channels from the workspace at ``root`` (``[notify]``), each
        one the operator's own file sets (``personal``) taken from there instead."""
        channels = console_channels(root)
        mute_s = MUTE_S
        if personal is not None:
            channels = replace(
                channels,
                bell=channels.bell if personal.bell is None else personal.bell,
                desktop=channels.desktop if personal.desktop is None else personal.desktop,
            )
            mute_s = personal.mute_minutes * 60.0
        self.signals = ConsoleNotifier(
            channels, self._write_terminal, lambda: self.clock().timestamp(), mute_s=mute_s
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
            message = f"Bell and desktop notifications muted for {_span(self.signals.mute_s)}; "
            message += "Z unmutes."
        else:
            message = "Bell and desktop notifications on again."
        self.notify(message, title="Notifications", markup=False)
