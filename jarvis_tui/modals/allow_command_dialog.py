"""Confirm allowing a criterion's command: which run, and exactly which argument list will run.

The command comes from a criterion, and criteria can come from task text: what an operator
allows here runs in the run's checkout whenever its criteria are verified. So the dialog shows
the argv itself (as JSON, one string per argument, nothing left to a reader's idea of quoting),
not a description of it.
"""

from __future__ import annotations

import json
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from jarvis_tui.run_actions import PendingCommand
from jarvis_tui.safe_text import one_line, shown


def allow_body(run_id: str, command: PendingCommand, *, more: int = 0) -> Text:
    """What the dialog says (inert: argv and description are shown, never interpreted)."""
    body = Text.assemble(
        "Allow this command for run ",
        (shown(run_id), "bold"),
        "?\n\n",
        (one_line(command.description, 200), "italic"),
        "\n",
    )
    # json.dumps escapes control characters, and `shown` masks anything that looks secret.
    body.append(shown(json.dumps(command.argv)), style="bold")
    if command.shell:
        body.append("\n\nIt runs through a shell: the shell decides what the script does.")
    body.append(
        "\n\nIt is not on the allowlist, so verification waits for you. Allowed, it runs in "
        "this run's checkout whenever its criteria are verified (this run only).",
        style="dim",
    )
    if more:
        body.append(
            f"\n\n{more} more command{'s' if more != 1 else ''} wait after this one.",
            style="dim",
        )
    return body


class AllowCommandDialog(ModalScreen[bool]):
    """Dismisses with True to allow the command, False to leave the run waiting."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", "Allow", id="allow.confirm"),
        Binding("n,escape", "dismiss(False)", "Keep waiting", id="allow.cancel"),
    ]

    def __init__(self, run_id: str, command: PendingCommand, *, more: int = 0) -> None:
        super().__init__(classes="dialog-screen")
        self.run_id = run_id
        self.command = command
        """The command the operator is asked about (its ``key`` is what gets approved)."""
        self.more = more

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Allow command", classes="dialog-title", markup=False)
            yield Static(
                allow_body(self.run_id, self.command, more=self.more),
                id="allow-body",
                classes="dialog-body",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Allow (y)", variant="warning", id="confirm")
                yield Button("Keep waiting (n)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm", Button).focus()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")
