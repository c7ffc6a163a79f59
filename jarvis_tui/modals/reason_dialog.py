"""Ask for the reason a destructive action needs (override, cancel). Blank is refused here,
and core refuses it again: the reason is recorded with the transition and shown to everyone."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from core.service.actions import MAX_REASON


class ReasonDialog(ModalScreen[str | None]):
    """Dismisses with the reason (stripped, non-blank), or None when the operator backs out."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Back out", id="reason.cancel"),
    ]
    # Keys typed right behind `x` or `o`, in the same read, are the reason: the App mounts a
    # pushed screen before it routes its next key, and the reason box must have the focus by
    # then. Named, not left to the first focusable widget: a focusable body or button placed
    # before the box would otherwise take the reason's first keys.
    AUTO_FOCUS = "#reason"

    def __init__(self, title: str, body: Text, *, confirm: str) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.body = body
        self.confirm = confirm

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield Static(self.body, classes="dialog-body")
            yield Input(
                placeholder="Reason (required, recorded in the audit trail)",
                max_length=MAX_REASON,
                id="reason",
            )
            yield Static("", id="reason-error", classes="dialog-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.confirm} (enter)", variant="error", id="confirm")
                yield Button("Back out (esc)", id="cancel")

    def on_mount(self) -> None:
        # At once, not after the queued keys as `focus()` would (as `/` and `s` do).
        self.set_focus(self.query_one(Input))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm":
            self._submit()
        else:
            self.dismiss(None)

    def _submit(self) -> None:
        reason = self.query_one(Input).value.strip()
        if not reason:
            self.query_one("#reason-error", Static).update(
                Text("A reason is required: say why, for whoever reads the audit trail.")
            )
            self.query_one(Input).focus()
            return
        self.dismiss(reason)
