"""What became of the merges this console asked for: one toast each, when the host says.

Approving a run with a branch to merge only asks for it; the host holding the run's repository
merges it a moment later (or much later, when that host is down). The operator who pressed
``a`` hears the result then — merged, or refused and why — without watching the run. Other
consoles are not told: the merge was not theirs, and the run's row shows where it stands.

Plain Python: the screen feeds it the journal it reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.lifecycle import Action
from jarvis_tui.attention_toasts import Toast
from jarvis_tui.safe_text import one_line, shown

#: Seconds a merge's toast stays up.
MERGE_TOAST_SECONDS = 10.0


class MergeWatch:
    """The runs whose merge this console asked for, until the host decides them."""

    def __init__(self) -> None:
        self.asked: set[str] = set()

    def ask(self, run_id: str) -> None:
        self.asked.add(run_id)

    def decided(self, entries: Iterable[dict[str, Any]]) -> list[tuple[str, Toast, bool]]:
        """For each merge asked here that these journal entries decide: its run, a toast, and
        whether it went through (False: refused, with the host's reason)."""
        toasts: list[tuple[str, Toast, bool]] = []
        for entry in entries:
            payload = entry.get("payload")
            run_id = str(entry.get("run_id"))
            if entry.get("kind") != "transition" or run_id not in self.asked:
                continue
            if not isinstance(payload, dict):
                continue
            action = payload.get("action")
            reason = one_line(str(payload.get("reason") or ""), 240)
            if action == Action.MERGE:
                toasts.append((run_id, Toast(f"Run {shown(run_id)} merged", reason), True))
            elif action == Action.REFUSE_MERGE:
                refused = Toast(f"Run {shown(run_id)}: merge refused", reason)
                toasts.append((run_id, refused, False))
            else:
                continue
            self.asked.discard(run_id)
        return toasts
