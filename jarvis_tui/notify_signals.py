"""The console's own notifications: the terminal's bell and a desktop notification.

When runs start needing a human (`core.service.notify`'s policy over the journal the console
reads: one notice per run, a burst in one notice, notices a gap apart), the console writes to
its terminal, through the driver like everything it draws:

- the bell (BEL), which a terminal turns into a sound, a flash or an urgent window;
- a desktop notification by escape sequence, which terminals pass through SSH: OSC 777
  (``ESC ] 777 ; notify ; title ; body BEL``) or OSC 9 (``ESC ] 9 ; text BEL``).

What a notice says comes partly from workers (a failure's reason): it is made inert (one line,
controls shown as ``\\xNN``, secrets masked, `safe_line`) and stripped of ``;``, which would end
a field of the escape, before it is written. The operator can mute both for `MUTE_S` (the key
``Z``); a notice due while muted is dropped, not kept for later. Muting is this console's: the
host's webhook is the fleet's and goes on (docs/operator-guide.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.service.notify import ConsoleChannels, Notice, entered, safe_line

#: How long the mute key silences the console's notifications.
MUTE_S = 3600.0
BEL = "\a"
#: Characters of a notification's title and body written into an escape.
TITLE_CHARS = 60
BODY_CHARS = 240


def _field(text: str, limit: int) -> str:
    return safe_line(text, limit).replace(";", ",")


def escapes(notice: Notice, channels: ConsoleChannels) -> str:
    """What the console writes to its terminal for ``notice``: the bell, then the desktop
    notification, as ``channels`` ask ("" for none)."""
    title, body = _field(notice.title, TITLE_CHARS), _field(notice.body, BODY_CHARS)
    out = BEL if channels.bell else ""
    if channels.desktop == "osc777":
        out += f"\x1b]777;notify;{title};{body}{BEL}"
    elif channels.desktop == "osc9":
        out += f"\x1b]9;{title}: {body}{BEL}"
    return out


class ConsoleNotifier:
    """What a console tells its terminal, and whether it is muted.

    Args:
        channels: the bell and the desktop notification (`core.service.notify.console_channels`).
        write: writes text to the terminal (the app's driver).
        clock: seconds (the console's clock, so tests decide when time passes).
    """

    def __init__(
        self,
        channels: ConsoleChannels,
        write: Callable[[str], None],
        clock: Callable[[], float],
        *,
        mute_s: float = MUTE_S,
    ) -> None:
        self.channels = channels
        self.mute_s = mute_s
        """How long the mute key silences the console (the personal ``mute_minutes``)."""
        self.policy = channels.policy()
        self.write = write
        self.clock = clock
        self.muted_until: float | None = None
        """Until when notices are dropped (seconds of ``clock``), None when not muted."""
        self.written = 0
        """Notices written to the terminal."""
        self.silenced = 0
        """Notices dropped while muted."""

    def entered(self, journal: Iterable[dict[str, Any]]) -> None:
        """Note the runs these journal entries move into a stage needing a human."""
        if self.channels.any:
            self.policy.note(entered(journal), self.clock())

    def ring(self, still_waiting: Callable[[str], bool]) -> None:
        """Write the notice that is due, if any, unless muted."""
        now = self.clock()
        notice = self.policy.due(now, still_waiting)
        if notice is None:
            return
        if self.muted(now):
            self.silenced += 1
            return
        self.write(escapes(notice, self.channels))
        self.written += 1

    def muted(self, now: float | None = None) -> bool:
        now = self.clock() if now is None else now
        if self.muted_until is not None and now >= self.muted_until:
            self.muted_until = None
        return self.muted_until is not None

    def toggle_mute(self) -> bool:
        """Mute for `mute_s`, or unmute when muted; True when now muted."""
        if self.muted():
            self.muted_until = None
        else:
            self.muted_until = self.clock() + self.mute_s
        return self.muted_until is not None
