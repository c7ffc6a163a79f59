"""The lines above the table: workspace, host, counts per state, and who needs a human."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from core.lifecycle import RunState
from jarvis_tui.safe_text import shown
from jarvis_tui.state_look import STATE_LOOK


def render_status(
    workspace: Path,
    counts: dict[str, int],
    *,
    host: int | None | bool = False,
    attention: int = 0,
    read_at: str = "",
) -> Text:
    """Workspace and host on the first line; ``symbol count`` per state on the second.

    ``host`` is the host's pid, None when no host holds the workspace, False when not known yet.
    """
    text = Text.assemble(("jarvis ", "bold"), (shown(workspace), "dim"))
    if host is None:
        text.append("  ○ no host: runs will not start", style="bold red")
    elif host is not False:
        text.append(f"  ● host pid {host}", style="green")
    if read_at:
        text.append(f"  read {read_at}", style="dim")
    text.append("\n")
    # Who waits on an operator comes first: a narrow terminal cuts the end of the line.
    text.append(f"! {attention} need a human", style="bold yellow" if attention else "dim")
    text.append(" │ ", style="dim")
    for state in RunState:
        symbol, style = STATE_LOOK.get(state.value, ("?", ""))
        text.append(f"{symbol} {state.value} ", style=style)
        text.append(f"{counts.get(state.value, 0)}  ")
    return text


class StatusHeader(Static):
    """Workspace, host and per-state counts; `show_status` refreshes them."""

    def __init__(self, workspace: Path, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(render_status(workspace, {}), id=id)
        self.workspace = workspace
        """The workspace directory whose store is shown."""
        self.counts: dict[str, int] = {}
        """Runs per state, as last shown."""
        self.host: int | None | bool = False
        self.attention = 0

    def show_status(
        self,
        counts: dict[str, int],
        *,
        host: int | None | bool,
        attention: int,
        read_at: str = "",
    ) -> None:
        self.counts = dict(counts)
        self.host = host
        self.attention = attention
        # Two fixed lines: a new text never changes the layout, so skip the layout pass.
        self.update(
            render_status(
                self.workspace, self.counts, host=host, attention=attention, read_at=read_at
            ),
            layout=False,
        )
