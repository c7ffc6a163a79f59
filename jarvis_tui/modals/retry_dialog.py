"""Confirm a retry: which run, from which state, and which retry this will be."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import state_text


class RetryDialog(ModalScreen[bool]):
    """Dismisses with True to retry, False to leave the run as it is."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", "Retry", id="retry.confirm"),
        Binding("n,escape", "dismiss(False)", "Keep as is", id="retry.cancel"),
    ]

    def __init__(self, run: dict[str, Any]) -> None:
        super().__init__(classes="dialog-screen")
        self.run = run

    def compose(self) -> ComposeResult:
        retries = int(self.run.get("retry_count") or 0)
        body = Text.assemble(
            ("Retry run ", ""),
            (shown(self.run["run_id"]), "bold"),
            "?\n\nIt is ",
            state_text(str(self.run["state"])),
            f". It has been retried {retries} time{'s' if retries != 1 else ''}; "
            f"this will be retry {retries + 1}, with the same run id, back to the queue.",
        )
        if self.run.get("state_reason"):
            body.append("\n\nWhy it stopped: ", style="dim")
            body.append(one_line(self.run["state_reason"], 300))
        with Vertical(classes="dialog"):
            yield Static("Retry", classes="dialog-title")
            yield Static(body, classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Retry (y)", variant="warning", id="confirm")
                yield Button("Keep as is (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm", Button).focus()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")
