"""The steering composer: the selected run's steers with live receipts, and a message to send.

Sending is possible only while the run is running; the composer says why when it is not. The
message itself goes through core's operator API (`core.operator_actions.steer`), which the app
calls; this widget only collects it (`SteerComposer.SendRequested`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static, TextArea

from jarvis_tui.feed import RunView
from jarvis_tui.run_actions import availability
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import steer_text
from jarvis_tui.widgets.progress_stream import clock_of


def render_receipts(view: RunView | None) -> Text:
    """Every steer of the run, newest first (the one an operator is waiting on stays in view),
    one line each: status, when it last moved, the message, who sent it."""
    if view is None or view.detail is None:
        return Text("No run selected.", style="dim")
    steers = view.detail.get("steers") or []
    text = Text().append(f"steers to {shown(view.run_id)}", style="bold underline")
    if not steers:
        text.append("\n  none sent", style="dim")
    for steer in reversed(steers):
        moved = steer.get("acked_at") or steer.get("sent_at") or steer["created_at"]
        text.append("\n")
        text.append_text(steer_text(str(steer["status"])))
        text.append(f" {clock_of(moved)} ", style="dim")
        text.append(f"“{one_line(steer['message'], 120)}”")
        text.append(f" {shown(steer.get('operator') or '')}", style="dim")
        if steer.get("status_reason"):
            text.append(f"\n    {one_line(steer['status_reason'], 160)}", style="dim")
    return text


class SteerEditor(TextArea):
    """The message box: ``ctrl+s`` sends, ``escape`` goes back to the run table."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "send", "Send steer", id="steer.send", priority=True),
        Binding("escape", "leave", "Back to runs", id="steer.leave"),
    ]

    def action_send(self) -> None:
        composer = self.query_ancestor(SteerComposer)
        composer.send()

    def action_leave(self) -> None:
        self.screen.query_one("#runs").focus()


class SteerComposer(Vertical):
    """Receipts above, the editor below."""

    @dataclass
    class SendRequested(Message):
        """The operator asked to send ``message`` to ``run_id`` (at ``version``)."""

        run_id: str
        version: int
        message: str

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, classes=classes)
        self.view: RunView | None = None
        """The run the composer steers."""
        self.receipts_text: Text = render_receipts(None)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="steer-receipts-scroll"):
            yield Static(self.receipts_text, id="steer-receipts")
        yield Static("", id="steer-hint")
        yield SteerEditor(id="steer-editor", soft_wrap=True, show_line_numbers=False)

    @property
    def editor(self) -> SteerEditor:
        return self.query_one(SteerEditor)

    def show(self, view: RunView | None) -> None:
        """Show ``view``'s receipts, and whether it can be steered now."""
        self.view = view
        receipts = render_receipts(view)
        if receipts.plain != self.receipts_text.plain or receipts.spans != self.receipts_text.spans:
            self.receipts_text = receipts
            self.query_one("#steer-receipts", Static).update(receipts)
        detail: dict[str, Any] | None = view.detail if view else None
        can = availability("steer", detail)
        hint = (
            Text("ctrl+s sends · escape returns to the runs", style="dim")
            if can.enabled
            else Text(can.reason, style="yellow")
        )
        self.query_one("#steer-hint", Static).update(hint)
        self.editor.read_only = not can.enabled
        self.set_class(not can.enabled, "-disabled")

    def send(self) -> None:
        """Ask the app to send what is typed; the editor clears once the store accepted it."""
        detail = self.view.detail if self.view else None
        can = availability("steer", detail)
        if not can.enabled or detail is None:
            self.app.notify(can.reason, title="Cannot steer", severity="warning", markup=False)
            return
        message = self.editor.text
        if not message.strip():
            self.app.notify(
                "Type a message first.", title="Cannot steer", severity="warning", markup=False
            )
            return
        self.post_message(
            self.SendRequested(str(detail["run_id"]), int(detail["version"]), message)
        )
