"""The lines above the table: workspace, host, counts per state, and who needs a human.

Two lines, each cut to the width it is drawn at, never wrapped: a wrapped first line pushed the
second, with the count of runs that need a human, out of its two-line box. What gives way first
is what matters least: the workspace path shortens from the left, then the read time goes, and
below a full line the state counts drop their words and keep their symbols.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.events import Resize
from textual.geometry import Region
from textual.strip import Strip

from core.lifecycle import RunState
from core.service.text import usage_line
from jarvis_tui.ages import in_largest_unit, seconds_since
from jarvis_tui.feed import HostLine
from jarvis_tui.safe_text import shown
from jarvis_tui.state_look import STATE_LOOK
from jarvis_tui.widgets.text_pane import LinePane

#: The fewest characters of the workspace path kept before the read time gives way.
PATH_MIN = 12


def _path_in(path: str, room: int) -> str:
    """``path`` in ``room`` cells, its start replaced by ``…`` (its end names the workspace)."""
    if cell_len(path) <= room:
        return path
    if room <= 1:
        return "…"[:room]
    tail = path
    while tail and cell_len(tail) > room - 1:
        tail = tail[1:]
    return "…" + tail


def many_hosts(hosts: tuple[HostLine, ...], host: int | None | bool) -> bool:
    """Whether the header speaks of the store's hosts (a line of them) rather than of this
    workspace's host alone: more than one serves the store, or one does from elsewhere."""
    return len(hosts) > 1 or (len(hosts) == 1 and not host)


def _hosts_line(hosts: tuple[HostLine, ...], now: datetime | None) -> Text:
    line = Text()
    # Lost hosts first: a narrow terminal cuts the end of the line, and they need the operator.
    ordered = sorted(hosts, key=lambda found: (found.state != "lost", found.name))
    for n, found in enumerate(ordered):
        if n:
            line.append(" · ", style="dim")
        lanes = "every lane" if found.lanes is None else ", ".join(found.lanes)
        quiet = seconds_since(found.heartbeat_at, now) if now is not None else None
        if found.state == "live":
            line.append(f"● {shown(found.name)}", style="green")
            if quiet is not None:
                line.append(f" ♥{in_largest_unit(quiet)}", style="green")
            line.append(f" {shown(lanes)}", style="dim")
        else:
            since = f", last heartbeat {in_largest_unit(quiet)} ago" if quiet is not None else ""
            line.append(f"✕ {shown(found.name)} lost{since}", style="bold red")
            line.append(f" {shown(lanes)}", style="dim")
    return line


def render_status(
    workspace: Path,
    counts: dict[str, int],
    *,
    host: int | None | bool = False,
    attention: int = 0,
    read_at: str = "",
    width: int | None = None,
    burn: dict[str, Any] | None = None,
    hosts: tuple[HostLine, ...] = (),
    now: datetime | None = None,
    muted: str = "",
) -> Text:
    """Workspace and host on the first line; who needs a human and the runs per state on the
    second; with `many_hosts`, a third line of every live or lost host, its lanes, and when a
    lost one last beat. Each line fits ``width`` cells (None: no limit). ``muted``: until when
    the bell and desktop notifications are muted (``HH:MM``), "" when they are not.

    ``host`` is the local host's pid, None when no host holds the workspace, False when not
    known yet; ``hosts`` the store's (`jarvis_tui.feed.HostLine`); ``now`` the console's time.
    """
    if many_hosts(hosts, host):
        live = sum(1 for found in hosts if found.state == "live")
        lost = len(hosts) - live
        if not live:
            host_part: tuple[str, str] = ("  ○ no live host: runs will not start", "bold red")
        else:
            plural = "s" if live > 1 else ""
            lost_part = f", {lost} lost" if lost else ""
            host_part = (f"  ● {live} host{plural} live{lost_part}",
                         "bold yellow" if lost else "green")  # fmt: skip
    elif host is None:
        host_part = ("  ○ no host: runs will not start", "bold red")
    elif host is not False:
        host_part = (f"  ● host pid {host}", "green")
    else:
        host_part = ("", "")
    read_part = f"  read {read_at}" if read_at else ""
    # What the fleet's agents have spent, as they reported it: the operator's running bill.
    burn_part = f"  spent {usage_line(burn)}" if burn else ""
    path = shown(workspace)
    if width is not None:
        room = (
            width
            - cell_len("jarvis ")
            - cell_len(host_part[0])
            - cell_len(read_part)
            - cell_len(burn_part)
        )
        if room < PATH_MIN and read_part:
            room += cell_len(read_part)
            read_part = ""
        if room < PATH_MIN and burn_part:
            room += cell_len(burn_part)
            burn_part = ""
        path = _path_in(path, max(0, room))
    first = Text.assemble(
        ("jarvis ", "bold"), (path, "dim"), host_part, (burn_part, "yellow"), (read_part, "dim")
    )
    # Who waits on an operator comes first: a narrow terminal cuts the end of the line.
    second = Text()
    second.append(f"! {attention} need a human", style="bold yellow" if attention else "dim")
    if muted:
        # Beside the count it silences: an operator who muted knows why nothing rings.
        second.append(f" (muted till {muted})", style="yellow")
    second.append(" │ ", style="dim")
    words = Text()
    symbols = Text()
    for state in RunState:
        symbol, style = STATE_LOOK.get(state, ("?", ""))
        count = counts.get(state, 0)
        words.append(f"{symbol} {state} ", style=style)
        words.append(f"{count}  ")
        symbols.append(f"{symbol} ", style=style)
        symbols.append(f"{count}  ")
    words.rstrip()
    symbols.rstrip()
    fits = width is None or second.cell_len + words.cell_len <= width
    second.append_text(words if fits else symbols)
    lines = [first, second]
    if many_hosts(hosts, host):
        lines.append(_hosts_line(hosts, now))
    if width is not None:
        for line in lines:
            line.truncate(width, overflow="ellipsis")
    return Text("\n").join(lines)


class StatusHeader(LinePane):
    """Workspace, host and per-state counts; `show_status` refreshes them.

    Drawn for the width it has (two fixed lines, theme CSS), so a change is a repaint of two
    lines, never a layout of the screen; and only of a line that reads differently: the read
    time goes on each second, and drawing the whole header through Textual's content for it
    was a third of what an idle console spent.
    """

    def __init__(self, workspace: Path, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.workspace = workspace
        """The workspace directory whose store is shown."""
        self.counts: dict[str, int] = {}
        """Runs per state, as last shown."""
        self.host: int | None | bool = False
        self.attention = 0
        self.read_at = ""
        """When the store was last read (``HH:MM:SS``)."""
        self.burn: dict[str, Any] | None = None
        self.hosts: tuple[HostLine, ...] = ()
        self.now: datetime | None = None
        self.muted = ""
        """Until when notifications are muted (``HH:MM``), "" when they are not."""
        self._lines: list[Text] | None = None
        """The lines as last drawn (None: to be made again)."""
        self._drawn: dict[int, tuple[tuple[Any, ...], Strip]] = {}
        """Each line's strip, with what it was drawn from."""

    def show_muted(self, until: str) -> None:
        """Say until when the bell and desktop notifications are muted ("": they are not)."""
        if until != self.muted:
            self.muted = until
            self._changed()

    def show_status(
        self,
        counts: dict[str, int],
        *,
        host: int | None | bool,
        attention: int,
        read_at: str = "",
        burn: dict[str, Any] | None = None,
        hosts: tuple[HostLine, ...] = (),
        now: datetime | None = None,
    ) -> None:
        """Show these values (repainted only when one of them changed; ``now`` only ages a
        lost host's heartbeat, and is taken with the rest)."""
        shown_now = (self.counts, self.host, self.attention, self.read_at, self.burn, self.hosts)
        if (counts, host, attention, read_at, burn, hosts) == shown_now:
            return
        # A line of hosts makes the header three lines high: a layout, once, when it appears.
        height = 3 if many_hosts(hosts, host) else 2
        if height != (3 if many_hosts(self.hosts, self.host) else 2):
            self.styles.height = height
        self.counts = dict(counts)
        self.host = host
        self.attention = attention
        self.read_at = read_at
        self.burn = burn
        self.hosts = hosts
        self.now = now
        self._changed()

    def _changed(self) -> None:
        """Repaint the lines that read differently now (all of them before the first paint)."""
        drawn, self._lines = self._lines, None
        width = self.size.width
        if drawn is None or not self.is_mounted or width <= 0:
            self.refresh()
            return
        now = self.lines
        if len(now) != len(drawn):
            self.refresh()
            return
        for y, (old, new) in enumerate(zip(drawn, now, strict=True)):
            if (old.plain, old.spans) != (new.plain, new.spans):
                self.refresh(Region(0, y, width, 1))

    @property
    def lines(self) -> list[Text]:
        """The header's lines for its width now."""
        lines = self._lines
        if lines is None:
            lines = self._lines = list(self.render().split("\n", allow_blank=True))
        return lines

    def on_resize(self, event: Resize) -> None:
        self._lines = None
        self._drawn.clear()
        self.refresh()

    def render_line(self, y: int) -> Strip:
        base: Style = self.base_style
        width = self.pane_size.width
        lines = self.lines
        if y >= len(lines):
            return Strip.blank(width, base)
        line = lines[y]
        key = (line.plain, tuple(line.spans), base, width)
        cached = self._drawn.get(y)
        if cached is None or cached[0] != key:
            segments = line.render(self.app.console, end="")
            # The rest of the line is the background alone, as Textual pads a widget's content.
            pad = Style(bgcolor=base.bgcolor)
            cached = (key, Strip(segments).apply_style(base).crop_extend(0, width, pad))
            self._drawn[y] = cached
        return cached[1]

    def render(self) -> Text:
        return render_status(
            self.workspace,
            self.counts,
            host=self.host,
            attention=self.attention,
            read_at=self.read_at,
            width=self.size.width,
            burn=self.burn,
            hosts=self.hosts,
            now=self.now,
            muted=self.muted,
        )
