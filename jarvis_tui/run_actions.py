"""Which operator actions the selected run allows, and why not when it does not.

The lifecycle decides (`core.lifecycle`); this module only phrases its answer for the footer,
the side panel and the notification an operator gets for pressing a key that cannot act.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.lifecycle import Action, IllegalTransition, RunState, transition

#: Console action name → (key, label).
RUN_ACTIONS: dict[str, tuple[str, str]] = {
    "retry": ("r", "Retry"),
    "override": ("o", "Override"),
    "approve": ("a", "Approve"),
    "cancel": ("x", "Cancel"),
    "steer": ("s", "Steer"),
}


@dataclass(frozen=True)
class Availability:
    enabled: bool
    reason: str
    """Why not (empty when enabled)."""


def availability(action: str, row: dict[str, Any] | None) -> Availability:
    """Whether ``action`` can apply to ``row`` (a run table row), with the reason if not."""
    if row is None:
        return Availability(False, "No run is selected.")
    run_id = str(row["run_id"])
    try:
        state = RunState(str(row["state"]))
    except ValueError:
        return Availability(False, f"Run {run_id} is in an unknown state.")
    if action == "steer":
        if state is RunState.RUNNING:
            return Availability(True, "")
        return Availability(
            False, f"Run {run_id} is {state.value}; only a running run can be steered."
        )
    try:
        transition(run_id, state, Action(action))
    except IllegalTransition as exc:
        return Availability(False, str(exc))
    return Availability(True, "")
