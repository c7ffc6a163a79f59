"""Notifications through the front door: the policy a console decides with, its channels, and a
notice's text made safe (`core.notify`).

A console's channels (the terminal's bell, a desktop notification by escape sequence) are read
from ``[notify]`` of the workspace's ``jarvis.toml`` by `console_channels`; a personal
configuration can later give a `ConsoleChannels` of its own to the same console.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.host.config import ConfigError, load_config
from core.host.notify_config import Desktop, NotifyConfig
from core.notify.policy import Entered, Notice, NotifyPolicy, entered
from core.notify.text import safe_line

__all__ = [
    "ConsoleChannels",
    "Desktop",
    "Entered",
    "Notice",
    "NotifyPolicy",
    "console_channels",
    "entered",
    "safe_line",
]


@dataclass(frozen=True)
class ConsoleChannels:
    """How a console tells its operator of a notice: the bell, a desktop notification
    (``osc777``, ``osc9`` or ``off``), and the least seconds between two notices."""

    bell: bool = True
    desktop: Desktop = "osc777"
    gap_s: float = NotifyConfig().gap_s

    @property
    def any(self) -> bool:
        return self.bell or self.desktop != "off"

    def policy(self) -> NotifyPolicy:
        """The console's policy: no settling time, since each read of the store already
        brings every entry since the last one (a burst arrives in one read)."""
        return NotifyPolicy(settle_s=0, gap_s=self.gap_s)


def console_channels(root: Path) -> ConsoleChannels:
    """The channels ``[notify]`` of the workspace at ``root`` gives a console; the defaults
    when its ``jarvis.toml`` cannot be used (the host refuses it, and says why)."""
    try:
        notify = load_config(root).notify
    except ConfigError:
        return ConsoleChannels()
    return ConsoleChannels(notify.bell, notify.desktop, notify.gap_s)
