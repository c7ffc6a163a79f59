"""The steering composer: the selected run's steers with live receipts, and a message to send.

Sending is possible only while the run is running; the composer says why when it is not. The
message itself goes through core's operator API (`core.operator_actions.steer`), which the app
calls; this widget only collects it (`SteerComposer.SendRequested`).

A draft belongs to its run: showing another run puts the draft away with its run and brings out
that run's own, so text typed for one run is never sent to another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from core.service.actions import availability
from jarvis_tui.feed import RunView
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import steer_text
from jarvis_tui.widgets.progress_stream import clock_of
from jarvis_tui.widgets.text_pane import TextPane


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
    """The message box: ``ctrl+s`` sends; ``escape`` (the main screen's) goes back to the run
    table, the draft staying with its run."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "send", "Send steer", id="steer.send", priority=True),
    ]

    def action_send(self) -> None:
        composer = self.query_ancestor(SteerComposer)
        composer.send()


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
        self._hint: Text = Text("")
        self.drafts: dict[str, str] = {}
        """Unsent text by run id, for the runs not shown now (the shown run's is in the editor)."""

    def compose(self) -> ComposeResult:
        receipts = TextPane(wrap=True, id="steer-receipts")
        receipts.set_text(self.receipts_text)
        yield receipts
        yield Static("", id="steer-hint")
        yield SteerEditor(id="steer-editor", soft_wrap=True, show_line_numbers=False)

    @property
    def editor(self) -> SteerEditor:
        return self.query_one(SteerEditor)

    def show(self, view: RunView | None) -> None:
        """Show ``view``'s receipts, its draft, and whether it can be steered now."""
        previous = self.view.run_id if self.view else None
        if (view.run_id if view else None) != previous:
            self._switch_draft(previous, view.run_id if view else None)
        self.view = view
        receipts = render_receipts(view)
        pane = self.query_one("#steer-receipts", TextPane)
        if (view.run_id if view else None) != previous and pane.top:
            pane.scroll_to_row(0)  # another run: its newest steer first
        self.receipts_text = receipts
        pane.set_text(receipts)  # redraws only on a change; never a layout
        detail: dict[str, Any] | None = view.detail if view else None
        can = availability("steer", detail)
        if can.enabled:
            hint = Text("ctrl+s sends · escape returns to the runs", style="dim")
        elif detail is not None:
            # Short enough for one line of the narrowest panel; the key's notice says it in full.
            hint = Text(f"{detail['state']}: only a running run can be steered", style="yellow")
        else:
            hint = Text(can.reason, style="yellow")
        if hint.plain != self._hint.plain or hint.spans != self._hint.spans:
            self._hint = hint
            # A fixed one-line box (theme CSS): a new hint never changes the layout.
            self.query_one("#steer-hint", Static).update(hint, layout=False)
        self.editor.read_only = not can.enabled
        self.set_class(not can.enabled, "-disabled")

    def _switch_draft(self, previous: str | None, run_id: str | None) -> None:
        editor = self.editor
        text = editor.text
        if previous is not None and text:
            self.drafts[previous] = text
        draft = self.drafts.pop(run_id, "") if run_id is not None else ""
        if draft != text:
            # Most runs have no draft: a cursor moving over them loads nothing.
            editor.load_text(draft)
            editor.move_cursor(editor.document.end)

    def sent(self, run_id: str, message: str) -> None:
        """``message`` was accepted for ``run_id``: its draft is done with (unless the operator
        has changed it since sending, which makes it a new draft)."""
        if self.view is not None and self.view.run_id == run_id:
            if self.editor.text == message:
                self.editor.clear()
        elif self.drafts.get(run_id) == message:
            del self.drafts[run_id]

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
