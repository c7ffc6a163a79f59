"""Which operator actions the selected run allows, and why not when it does not.

The lifecycle decides (`core.lifecycle`), allowing a criterion's command included (a move of
verification, the sub-machine of ``running``); this module only phrases its answer for the footer,
the side panel and the notification an operator gets for pressing a key that cannot act. Verifying
again (``v``) is not a move: it follows `core.criteria.run_criteria.reverify`, which needs the
run's criteria and a host that is not verifying it right now.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.criteria.allowlist import argv_of, command_key
from core.criteria.run_criteria import AWAITING_APPROVAL, VERIFYING
from core.lifecycle import Action, IllegalTransition, RunState, stage_of, state_of, transition
from jarvis_tui.state_look import shown_stage

#: Console action name → (key, label).
RUN_ACTIONS: dict[str, tuple[str, str]] = {
    "retry": ("r", "Retry"),
    "override": ("o", "Override"),
    "approve": ("a", "Approve"),
    "cancel": ("x", "Cancel"),
    "steer": ("s", "Steer"),
    "verify": ("v", "Verify"),
    "approve_command": ("A", "Allow command"),
}

#: Actions judged on the run's acceptance criteria, which a table row does not carry: they
#: need the run's detail (`core.run_views.run_detail`), or at least its ``criteria``.
CRITERIA_ACTIONS = frozenset({"verify", "approve_command"})


@dataclass(frozen=True)
class Availability:
    enabled: bool
    reason: str
    """Why not (empty when enabled)."""


def availability(action: str, row: Mapping[str, Any] | None) -> Availability:
    """Whether ``action`` can apply to ``row`` (a run table row), with the reason if not.

    For ``verify``, ``row`` must carry the run's ``criteria`` (a run's detail does); without
    them the answer is "not yet", never a guess.
    """
    if row is None:
        return Availability(False, "No run is selected.")
    run_id = str(row["run_id"])
    try:
        stage = stage_of(row)
    except ValueError:
        return Availability(False, f"Run {run_id} is in an unknown state.")
    if action == "verify":
        return _verify_availability(run_id, row)
    if action == "steer":
        if state_of(stage) is RunState.RUNNING:
            return Availability(True, "")
        return Availability(
            False, f"Run {run_id} is {row['state']}; only a running run can be steered."
        )
    # The sentences are core's (`IllegalTransition`): pressing the key and being refused by core
    # read the same.
    try:
        transition(run_id, stage, Action(action))
    except IllegalTransition as exc:
        return Availability(False, str(exc))
    return Availability(True, "")


def _verify_availability(run_id: str, row: Mapping[str, Any]) -> Availability:
    # The sentences are core's (`run_criteria.reverify`).
    if "criteria" not in row:
        return Availability(False, f"Run {run_id} is still being read; try again in a moment.")
    if not row["criteria"]:
        return Availability(False, f"Run {run_id} has no acceptance criteria to verify.")
    if stage_of(row) is VERIFYING:
        return Availability(False, f"Run {run_id} is being verified by the host right now.")
    return Availability(True, "")


@dataclass(frozen=True)
class PendingCommand:
    """A criterion's command that waits for an operator to allow it."""

    key: str
    """What `core.criteria.run_criteria.approve_command` takes (`command_key`: argv as JSON)."""
    argv: list[str]
    """Exactly what will run once allowed."""
    shell: bool
    description: str

    @property
    def display(self) -> str:
        """The argv as a shell would read it (quoted where needed); still to be made inert."""
        return shlex.join(self.argv)


def criterion_command(criterion: Mapping[str, Any]) -> PendingCommand | None:
    """The command a criterion runs, keyed as verification keys it; None when it has none (or
    one that cannot be split into arguments, which verification reports as an error)."""
    command = criterion.get("command")
    if not isinstance(command, str | list):
        return None
    shell = criterion.get("shell") is True
    try:
        argv = argv_of(command, shell=shell)
        key = command_key(command, shell=shell)
    except ValueError:
        return None
    if not argv:
        return None
    description = str(criterion.get("description") or criterion.get("type") or "")
    return PendingCommand(key, [str(a) for a in argv], shell, description)


def pending_commands(detail: Mapping[str, Any] | None) -> list[PendingCommand]:
    """The commands a run's verification waits on, in criterion order (each once).

    Read from the latest verification, not recomputed with `allowlist.needs_approval`: the host
    decided with the policy it loaded when it started, and the console's reading of
    ``jarvis.toml`` may differ since. A command the console's policy allows but the host's did
    not would otherwise be missing here, and the operator left with no way to allow it. While a
    run is ``awaiting_approval`` every criterion that did not pass is one that was not run for
    want of approval (`run_criteria.record` fails the run on any real failure first), so a
    command criterion that did not pass, and whose key (`command_key`, the same key verification
    uses) is not approved yet, is exactly one that waits. The criterion's pass flag is read, never
    the wording of its output.
    """
    if not detail or shown_stage(detail) is not AWAITING_APPROVAL:
        return []
    verification = detail.get("verification") or {}
    approved = set(detail.get("approved_commands") or [])
    pending: dict[str, PendingCommand] = {}
    for result in verification.get("criteria_results") or []:
        criterion = result.get("criterion")
        if result.get("passed") or not isinstance(criterion, dict):
            continue
        command = criterion_command(criterion)
        if command is None or command.key in approved or command.key in pending:
            continue
        pending[command.key] = command
    return list(pending.values())
