"""A run's acceptance criteria as the front ends show them: the commands a verification waits
on, the key that allows one, and the criteria and approvals a run holds.

Which commands wait is read from the latest verification, never recomputed from the console's
reading of the policy: the host decided with the policy it loaded when it started.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.criteria.allowlist import argv_of, command_key
from core.criteria.run_criteria import (
    AWAITING_APPROVAL,
    CriteriaChange,
    approved_of,
    criteria_of,
)
from core.lifecycle import stage_of

__all__ = [
    "CriteriaChange",
    "PendingCommand",
    "approval_key",
    "approved_of",
    "command_key",
    "criteria_of",
    "criterion_command",
    "pending_commands",
]

_COMMAND_TYPES = frozenset({"test_pass", "command_success", "no_lint_errors"})


@dataclass(frozen=True)
class PendingCommand:
    """A criterion's command that waits for an operator to allow it."""

    key: str
    """What allowing it takes (`command_key`: argv as JSON)."""
    argv: list[str]
    """Exactly what will run once allowed."""
    shell: bool
    description: str

    @property
    def display(self) -> str:
        """The argv as a shell would read it (quoted where needed); still to be made inert."""
        return shlex.join(self.argv)


def approval_key(criterion: Mapping[str, Any]) -> str | None:
    """The key `jarvis verify --approve` takes for a command criterion, else None."""
    command = criterion.get("command")
    if criterion.get("type") not in _COMMAND_TYPES or not isinstance(command, str | list):
        return None
    try:
        return command_key(command, shell=bool(criterion.get("shell")))
    except ValueError:
        return None


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


def _stage(run: Mapping[str, Any]) -> object:
    try:
        return stage_of(run)
    except (KeyError, ValueError):
        return None


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
    if not detail or _stage(detail) is not AWAITING_APPROVAL:
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
