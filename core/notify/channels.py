"""A console's channels: the terminal's bell and a desktop notification by escape sequence.

Read from ``[notify]`` of the workspace's ``jarvis.toml`` with the standard library's TOML
reader alone, as the store's location is (`core.store.location`): opening the console loads no
pydantic. The host validates the same keys (`core.host.notify_config`) and refuses a bad one,
saying which; a console takes the default for any value the host would refuse. A personal
configuration can later give a console a `ConsoleChannels` of its own.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from core.notify.policy import GAP_S, NotifyPolicy

#: How a console asks its terminal for a desktop notification: OSC 777 (``notify;title;body``:
#: foot, Ghostty, WezTerm, rxvt-unicode's extension, VTE terminals), OSC 9 (iTerm2, WezTerm,
#: Windows Terminal, kitty), or not at all.
Desktop = Literal["osc777", "osc9", "off"]
DESKTOPS: Final[tuple[Desktop, ...]] = ("osc777", "osc9", "off")
#: The most seconds ``gap_s`` may be (a day).
GAP_MAX_S: Final = 86400.0


@dataclass(frozen=True)
class ConsoleChannels:
    """How a console tells its operator of a notice: the bell, a desktop notification
    (``osc777``, ``osc9`` or ``off``), and the least seconds between two notices."""

    bell: bool = True
    desktop: Desktop = "osc777"
    gap_s: float = GAP_S

    @property
    def any(self) -> bool:
        return self.bell or self.desktop != "off"

    def policy(self) -> NotifyPolicy:
        """The console's policy: no settling time, since each read of the store already
        brings every entry since the last one (a burst arrives in one read)."""
        return NotifyPolicy(settle_s=0, gap_s=self.gap_s)


def channels_from(table: Mapping[str, Any]) -> ConsoleChannels:
    """The channels a ``[notify]`` table gives, each key's default where its value is wrong."""
    default = ConsoleChannels()
    bell = table.get("bell")
    desktop = table.get("desktop")
    gap = table.get("gap_s")
    gap_ok = isinstance(gap, int | float) and not isinstance(gap, bool) and 0 <= gap <= GAP_MAX_S
    return ConsoleChannels(
        bell=bell if isinstance(bell, bool) else default.bell,
        desktop=desktop if desktop in DESKTOPS else default.desktop,
        gap_s=float(gap) if gap_ok else default.gap_s,  # type: ignore[arg-type]
    )


def console_channels(root: Path) -> ConsoleChannels:
    """The channels ``[notify]`` of the workspace at ``root`` gives a console; the defaults
    when its ``jarvis.toml`` is missing or cannot be read."""
    try:
        table = tomllib.loads((root / "jarvis.toml").read_text("utf-8")).get("notify", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ConsoleChannels()
    return channels_from(table if isinstance(table, dict) else {})
