"""What the console says of an operator action's outcome: the engine's sentence, as notes."""

from __future__ import annotations

import json
from typing import Any

from core.service.action_types import Outcome
from core.service.actions import ACTIONS, availability
from core.service.criteria import approved_of, criterion_command, pending_commands
from jarvis_tui.safe_text import one_line, shown
from jarvis_tui.screens.effects import Note
from jarvis_tui.state_look import run_label


def outcome_notes(outcome: Outcome, *, host_running: bool) -> list[Note]:
    """What to say of ``outcome``: done (the run as it is now) or the engine's refusal."""
    request = outcome.request
    notes: list[Note] = []
    run_id = shown(request.run_id)
    if outcome.policy_problem:
        notes.append(Note(
            f"jarvis.toml cannot be used, so run {run_id} was verified with the default "
            f"policy: {one_line(outcome.policy_problem, 300)}",
            "Default verify policy", "warning", 10,
        ))  # fmt: skip
    if not outcome.ok:
        if outcome.refusal is not None:
            notes.append(Note(outcome.refusal.message, f"Refused ({outcome.refusal.code})",
                              "error", 10))  # fmt: skip
    elif request.action == "verify":
        notes.append(_verified(run_id, outcome))
    elif request.action == "approve_command":
        later = ("the host verifies it again shortly" if host_running
                 else "no host is running: press v to verify it now")  # fmt: skip
        argv = request.options["command"].argv
        notes.append(Note(f"Allowed {one_line(json.dumps(argv), 200)} for run {run_id}; "
                          f"{later}.", "Done"))  # fmt: skip
    elif outcome.run is not None:
        state = run_label(outcome.run)
        extra = f", retry {outcome.run['retry_count']}" if request.action == "retry" else ""
        # What approving did with the branch (merged, recommended, left), in git's words.
        merged = f" {shown(str(outcome.merge['note']))}" if outcome.merge else ""
        notes.append(Note(f"{ACTIONS[request.action].done} run {run_id}: now {state}{extra}."
                          f"{merged}", "Done"))  # fmt: skip
    return notes


def _verified(run_id: str, outcome: Outcome) -> Note:
    results = (outcome.results or {}).get("criteria_results") or []
    run: dict[str, Any] = outcome.run or {}
    keys = {
        command.key
        for command in pending_commands(
            {
                "state": run.get("state"),
                "verification_state": run.get("verification_state"),
                "verification": outcome.results,
                "approved_commands": approved_of(run),
            }
        )
    }
    passed = waiting = 0
    for result in results:
        command = criterion_command(result.get("criterion") or {})
        if result.get("passed"):
            passed += 1
        elif command is not None and command.key in keys:
            waiting += 1
    failed = len(results) - passed - waiting
    counts = f"{passed} of {len(results)} criteria passed, {failed} failed"
    if waiting:
        counts += f", {waiting} waiting for your approval (A)"
    state = str(run.get("state") or "")
    before = outcome.request.options.get("state_before")
    if not state:
        after = "it is no longer in the store"
    elif state != before:
        after = f"it is now {state}"
    else:
        # Verifying again decides only a run still waiting on verification: a decided run
        # keeps its state, and the operator judges the new results.
        after = f"it stays {state}"
        overridable = run.get("run_id") is not None and availability("override", run).enabled
        if overridable and not failed and not waiting:
            after += " (override it if the work is done)"
    return Note(
        f"Run {run_id}: {counts}; {after}.",
        "Verified" if not failed else "Verified: criteria failed",
        "information" if not failed else "warning",
    )
