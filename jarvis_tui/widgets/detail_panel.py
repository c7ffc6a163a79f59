"""The selected run: who and where it is, its gate verdicts and its recent progress."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from jarvis_tui.safe_text import inert
from jarvis_tui.state_look import state_text

#: How many of the most recent progress events the panel shows.
EVENTS_SHOWN = 8


def _header(detail: dict[str, Any]) -> Text:
    line = Text.assemble(
        (inert(str(detail["run_id"])), "bold"),
        "  ",
        state_text(str(detail["state"]), bool(detail.get("overridden"))),
        ("  retries ", "dim"),
        str(detail.get("retry_count") or 0),
    )
    if detail.get("overridden"):
        line.append("\noverride: ", style="dim")
        line.append(inert(str(detail.get("override_reason") or "")))
        if detail.get("overridden_by"):
            line.append(f"  by {inert(str(detail['overridden_by']))}", style="dim")
    if detail.get("state_reason"):
        line.append("\nreason: ", style="dim")
        line.append(inert(str(detail["state_reason"])))
    return line


def _gates(detail: dict[str, Any]) -> Text:
    # Headings are appended, not the base style, which would spread over every later line.
    text = Text().append("gates", style="bold underline")
    gates = detail.get("gates") or []
    if not gates:
        text.append("\n  none yet", style="dim")
    for gate in gates:
        passed = bool(gate["passed"])
        text.append("\n  ")
        text.append("✓" if passed else "✗", style="green" if passed else "bold red")
        text.append(f" {inert(str(gate['name']))}")
        if gate.get("detail"):
            text.append(f"  {inert(str(gate['detail']))}", style="dim")
    return text


def _events(detail: dict[str, Any]) -> Text:
    text = Text().append("recent progress", style="bold underline")
    events = (detail.get("events") or [])[-EVENTS_SHOWN:]
    if not events:
        text.append("\n  none yet", style="dim")
    for event in events:
        stamp = str(event.get("timestamp") or "")
        # The time of day is what an operator scans for; the date is in `jarvis show`.
        clock = stamp[11:19] if len(stamp) >= 19 else stamp
        text.append(f"\n  {inert(clock)} ", style="dim")
        text.append(f"{inert(str(event.get('phase') or '-')):<10}", style="bold")
        text.append(f" {inert(str(event.get('summary') or ''))}")
    return text


def render_detail(detail: dict[str, Any] | None) -> Text:
    """The panel's content for one run detail, or a hint when nothing is selected."""
    if detail is None:
        return Text("No run selected.", style="dim")
    return Text("\n\n").join([_header(detail), _gates(detail), _events(detail)])


class DetailPanel(Static):
    """Shows one run's detail; `show` replaces it. All worker text is inert and never markup."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(render_detail(None), id=id)
        self.run_id: str | None = None
        """The run shown, if any."""
        self.shown: Text = render_detail(None)
        """What the panel shows, as Rich text (its ``plain`` is what an operator reads)."""

    def show(self, run_id: str | None, detail: dict[str, Any] | None) -> None:
        """Show ``detail`` for ``run_id`` (None: the run is gone or nothing is selected)."""
        self.run_id = run_id
        if run_id is not None and detail is None:
            self.shown = Text(f"Run {inert(run_id)} is no longer in the store.", style="dim")
        else:
            self.shown = render_detail(detail)
        self.update(self.shown)
