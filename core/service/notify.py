"""Notifications through the front door: the policy a console decides with, its channels, and a
notice's text made safe (`core.notify`). Nothing here loads pydantic: the console opens fast."""

from __future__ import annotations

from core.notify.channels import ConsoleChannels, Desktop, console_channels
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
