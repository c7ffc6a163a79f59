"""Confirm a retry: which run, from which state, and which retry this will be."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from jarvis_tui.modals.confirm_dialog import ConfirmDialog
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.state_look import state_text


class RetryDialog(ConfirmDialog):
    """Dismisses with True to retry, False to leave the run as it is."""

    TITLE_TEXT = "Retry"
    CONFIRM = "Retry"
    KEEP = "Keep as is"

    def __init__(self, run: dict[str, Any]) -> None:
        super().__init__()
        self.run = run

    def body(self) -> Text:
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
        return body
