"""The main screen's actions on marked runs: what to ask once, the work, what to say after.

Marked runs take the registry's actions that need no more than a reason (`BULK_ACTIONS`):
one question for them all (a confirmation naming the runs, or one reason), then the engine's
call on each run in turn (`jarvis_tui.bulk.act_on_each`, on a thread worker, through the same
store the single-run action writes with), and one toast saying how many went through with
each refusal's sentence. Like `RunActionsController`, it decides and returns effects; the
screen carries them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from rich.text import Text

from core.service.actions import ACTIONS
from jarvis_tui.bulk import BulkResult, Target, act_on_each
from jarvis_tui.messages import BulkFinished
from jarvis_tui.modals.confirm_dialog import ActionConfirmDialog
from jarvis_tui.modals.reason_dialog import ReasonDialog
from jarvis_tui.safe_text import shown
from jarvis_tui.screens.effects import Dialog, Effects, Note, Post, Work
from jarvis_tui.screens.run_actions_controller import RunActionsController
from jarvis_tui.state_look import run_label

Severity = Literal["information", "warning", "error"]

#: Runs named in the question; the rest are counted.
NAMED_RUNS = 10
#: Seconds the summary stays up: it may name several refusals to read.
SUMMARY_SECONDS = 12


def runs_text(rows: Sequence[dict[str, Any]]) -> Text:
    """The runs asked about, one a line with where each stands, the rest counted."""
    text = Text()
    for row in rows[:NAMED_RUNS]:
        text.append("\n  ")
        text.append(shown(row["run_id"]), style="bold")
        text.append(f"  {run_label(row)}", style="dim")
    if len(rows) > NAMED_RUNS:
        text.append(f"\n  and {len(rows) - NAMED_RUNS} more")
    return text


class BulkActions:
    """Decides what an action on the marked runs takes (the single-run controller writes)."""

    def __init__(self, actions: RunActionsController) -> None:
        self._actions = actions

    def asked(self, name: str, rows: Sequence[dict[str, Any]]) -> Effects:
        """The operator asked for ``name`` on the marked runs ``rows`` (as last read)."""
        entry = ACTIONS[name]
        targets = [Target(str(row["run_id"]), int(row["version"])) for row in rows]
        count = len(targets)
        title = f"{entry.label} {count} marked run{'s' if count != 1 else ''}"
        body = Text.assemble(f"{title}?", runs_text(rows))
        if entry.consequence:
            body.append(f"\n\n{entry.consequence}")
        body.append("\n\nEach run is acted on once; one that moved since you marked it is "
                    "refused, and said.", style="dim")  # fmt: skip
        if entry.asks == "reason":
            return [Dialog(ReasonDialog(title, body, confirm=entry.label),
                           lambda reason: [self._work(name, targets, reason=reason)]
                           if reason else [])]  # fmt: skip
        dialog = ActionConfirmDialog(title, body, confirm=entry.label)
        return [Dialog(dialog, lambda ok: [self._work(name, targets)] if ok else [])]

    def _work(self, name: str, targets: list[Target], **options: Any) -> Work:
        actions = self._actions

        def work(post: Post) -> None:
            # In the worker's thread.
            post(BulkFinished(act_on_each(actions.open_store, name, targets, actions.operator,
                                          options)))  # fmt: skip

        return Work(work, "act-marked", "act", "Apply an operator action to the marked runs")

    def finished(self, result: BulkResult) -> Effects:
        """One toast for every run's outcome, and a read of the store."""
        title, message = result.summary()
        severity: Severity = "information"
        if result.refused:
            severity = "warning" if result.done else "error"
        return [Note(message, title, severity, SUMMARY_SECONDS)]
