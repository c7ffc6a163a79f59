"""Confirm allowing a criterion's command: which run, and exactly which argument list will run.

The command comes from a criterion, and criteria can come from task text: what an operator
allows here runs in the run's checkout whenever its criteria are verified. So the dialog shows
the argv itself (as JSON, one string per argument, nothing left to a reader's idea of quoting),
not a description of it.
"""

from __future__ import annotations

import json

from rich.text import Text

from core.service.criteria import PendingCommand
from jarvis_tui.modals.confirm_dialog import ConfirmDialog
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


class AllowCommandDialog(ConfirmDialog):
    """Dismisses with True to allow the command, False to leave the run waiting."""

    TITLE_TEXT = "Allow command"
    CONFIRM = "Allow"
    KEEP = "Keep waiting"
    BODY_ID = "allow-body"

    def __init__(self, run_id: str, command: PendingCommand, *, more: int = 0) -> None:
        super().__init__()
        self.run_id = run_id
        self.command = command
        """The command the operator is asked about (its ``key`` is what gets approved)."""
        self.more = more

    def body(self) -> Text:
        return allow_body(self.run_id, self.command, more=self.more)
