"""The line above the table: which workspace, how many runs in each state, who needs a human."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from core.lifecycle import NEEDS_HUMAN, RunState
from jarvis_tui.safe_text import inert
from jarvis_tui.state_look import STATE_LOOK


def render_status(workspace: Path, counts: dict[str, int], read_at: str = "") -> Text:
    """``workspace`` and ``symbol count`` per state, then how many runs wait on an operator."""
    text = Text.assemble(("jarvis ", "bold"), (inert(str(workspace)), "dim"))
    if read_at:
        text.append(f"  read {read_at}", style="dim")
    text.append("\n")
    for state in RunState:
        symbol, style = STATE_LOOK.get(state.value, ("?", ""))
        text.append(f"{symbol} {state.value} ", style=style)
        text.append(f"{counts.get(state.value, 0)}  ")
    waiting = sum(counts.get(state.value, 0) for state in NEEDS_HUMAN)
    text.append(f"│ {waiting} need a human", style="bold" if waiting else "dim")
    return text


class StatusHeader(Static):
    """Workspace and per-state counts; `show_counts` refreshes the numbers."""

    def __init__(self, workspace: Path, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(render_status(workspace, {}), id=id)
        self.workspace = workspace
        """The workspace directory whose store is shown."""
        self.counts: dict[str, int] = {}
        """Runs per state, as last shown."""

    def show_counts(self, counts: dict[str, int], read_at: str = "") -> None:
        """Show ``counts`` (runs per state) as read at ``read_at`` (a time of day)."""
        self.counts = dict(counts)
        self.update(render_status(self.workspace, self.counts, read_at))
