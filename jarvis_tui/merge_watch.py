"""What became of the merges this console asked for: one toast each, when the host says.

Approving a run with a branch to merge only asks for it; the host holding the run's repository
merges it a moment later (or much later, when that host is down). The operator who pressed
``a`` hears the result then — merged, or refused and why — without watching the run. Other
consoles are not told: the merge was not theirs, and the run's row shows where it stands.

The host may decide before the console hears back from its own approval (the poll that reads
the host's move can come before the action's answer): decisions of runs not asked about are
kept for a while, and asking about one of them answers at once.

Plain Python: the screen feeds it the journal it reads.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from core.lifecycle import Action
from jarvis_tui.attention_toasts import Toast
from jarvis_tui.safe_text import one_line, shown

#: Seconds a merge's toast stays up.
MERGE_TOAST_SECONDS = 10.0
#: Decisions kept for runs not (yet) asked about.
KEPT = 200

Decided = tuple[str, Toast, bool]
"""A run, its toast, and whether its merge went through (False: refused, with the reason)."""


class MergeWatch:
    """The runs whose merge this console asked for, until the host decides them."""

    def __init__(self) -> None:
        self.asked: set[str] = set()
        self._unasked: OrderedDict[str, Decided] = OrderedDict()

    def ask(self, run_id: str) -> Decided | None:
        """Watch ``run_id``'s merge; its decision at once if the host already made it."""
        early = self._unasked.pop(run_id, None)
        if early is None:
            self.asked.add(run_id)
        return early

    def decided(self, entries: Iterable[dict[str, Any]]) -> list[Decided]:
        """The decisions these journal entries hold of merges asked here (the others kept
        for a late `ask`)."""
        told: list[Decided] = []
        for entry in entries:
            payload = entry.get("payload")
            if entry.get("kind") != "transition" or not isinstance(payload, dict):
                continue
            run_id = str(entry.get("run_id"))
            reason = one_line(str(payload.get("reason") or ""), 240)
            action = payload.get("action")
            if action == Action.MERGE:
                decision = (run_id, Toast(f"Run {shown(run_id)} merged", reason), True)
            elif action == Action.REFUSE_MERGE:
                refused = Toast(f"Run {shown(run_id)}: merge refused", reason)
                decision = (run_id, refused, False)
            else:
                continue
            if run_id in self.asked:
                self.asked.discard(run_id)
                told.append(decision)
            else:
                self._unasked[run_id] = decision
                while len(self._unasked) > KEPT:
                    self._unasked.popitem(last=False)
        return told
