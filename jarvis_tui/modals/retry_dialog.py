"""Confirm a retry: which run, from which state, which retry this will be, and where it starts.

A retry goes on from where the last attempt left the run's branch (`y`); `f` starts it from
the base again (``jarvis retry --fresh``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from jarvis_tui.modals.confirm_dialog import ConfirmDialog
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import state_text


class RetryDialog(ConfirmDialog):
    """Dismisses with True to retry, False to leave the run as it is; `fresh` says whether the
    retry starts from the base again."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *ConfirmDialog.BINDINGS,
        Binding("f", "fresh", "Retry fresh", id="dialog.fresh"),
    ]

    TITLE_TEXT = "Retry"
    CONFIRM = "Retry"
    KEEP = "Keep as is"

    def __init__(self, run: dict[str, Any]) -> None:
        super().__init__()
        self.run = run
        self.fresh = False
        """The operator chose to start from the base again."""

    def body(self) -> Text:
        retries = int(self.run.get("retry_count") or 0)
        body = Text.assemble(
            ("Retry run ", ""),
            (shown(self.run["run_id"]), "bold"),
            "?\n\nIt is ",
            state_text(str(self.run["state"])),
            f". It has been retried {retries} time{'s' if retries != 1 else ''}; "
            f"this will be retry {retries + 1}, with the same run id, back to the queue. "
            "It goes on from where the last attempt left its branch; a fresh retry starts "
            "from the base again.",
        )
        if self.run.get("state_reason"):
            body.append("\n\nWhy it stopped: ", style="dim")
            body.append(one_line(self.run["state_reason"], 300))
        return body

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.TITLE_TEXT, classes="dialog-title", markup=False)
            yield Static(self.body(), id=self.BODY_ID, classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.CONFIRM} (y)", variant="warning", id="confirm")
                yield Button("Fresh (f)", id="fresh")
                yield Button(f"{self.KEEP} (n)", id="cancel")

    def action_fresh(self) -> None:
        self.fresh = True
        self.dismiss(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "fresh":
            self.action_fresh()
        else:
            super().on_button_pressed(event)
