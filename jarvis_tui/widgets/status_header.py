"""The lines above the table: workspace, host, counts per state, and who needs a human.

Two lines, each cut to the width it is drawn at, never wrapped: a wrapped first line pushed the
second, with the count of runs that need a human, out of its two-line box. What gives way first
is what matters least: the workspace path shortens from the left, then the read time goes, and
below a full line the state counts drop their words and keep their symbols.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from core.lifecycle import RunState
from core.usage_text import usage_line
from jarvis_tui.safe_text import shown
from jarvis_tui.state_look import STATE_LOOK

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


def render_status(
    workspace: Path,
    counts: dict[str, int],
    *,
    host: int | None | bool = False,
    attention: int = 0,
    read_at: str = "",
    width: int | None = None,
    burn: dict[str, Any] | None = None,
) -> Text:
    """Workspace and host on the first line; who needs a human and the runs per state on the
    second; each line fits ``width`` cells (None: no limit).

    ``host`` is the host's pid, None when no host holds the workspace, False when not known yet.
    """
    if host is None:
        host_part: tuple[str, str] = ("  ○ no host: runs will not start", "bold red")
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
    second.append(" │ ", style="dim")
    words = Text()
    symbols = Text()
    for state in RunState:
        symbol, style = STATE_LOOK.get(state.value, ("?", ""))
        count = counts.get(state.value, 0)
        words.append(f"{symbol} {state.value} ", style=style)
        words.append(f"{count}  ")
        symbols.append(f"{symbol} ", style=style)
        symbols.append(f"{count}  ")
    words.rstrip()
    symbols.rstrip()
    fits = width is None or second.cell_len + words.cell_len <= width
    second.append_text(words if fits else symbols)
    lines = [first, second]
    if width is not None:
        for line in lines:
            line.truncate(width, overflow="ellipsis")
    return Text("\n").join(lines)


class StatusHeader(Widget):
    """Workspace, host and per-state counts; `show_status` refreshes them.

    Drawn for the width it has (two fixed lines, theme CSS), so a change is a repaint of two
    lines, never a layout of the screen.
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

    def show_status(
        self,
        counts: dict[str, int],
        *,
        host: int | None | bool,
        attention: int,
        read_at: str = "",
        burn: dict[str, Any] | None = None,
    ) -> None:
        """Show these values (repainted only when one of them changed)."""
        shown_now = (self.counts, self.host, self.attention, self.read_at, self.burn)
        if (counts, host, attention, read_at, burn) == shown_now:
            return
        self.counts = dict(counts)
        self.host = host
        self.attention = attention
        self.read_at = read_at
        self.burn = burn
        self.refresh()

    def render(self) -> Text:
        return render_status(
            self.workspace,
            self.counts,
            host=self.host,
            attention=self.attention,
            read_at=self.read_at,
            width=self.size.width,
            burn=self.burn,
        )
