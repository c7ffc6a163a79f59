"""What verifying a run again needs besides the run: the workspace's policy, and allowing a
waiting command named the way the command line names it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from core.criteria import run_criteria
from core.criteria.allowlist import command_key
from core.lifecycle import stage_of
from core.service.action_types import ActionRequest, Refusal
from core.service.criteria import approval_key
from core.service.errors import ServiceError

if TYPE_CHECKING:
    from core.criteria.allowlist import VerifyPolicy
    from core.store.api import RunStore


def verify_policy(root: Path, *, strict: bool) -> tuple[VerifyPolicy, str | None]:
    """The workspace's verify policy, and why ``jarvis.toml`` could not be used when not.

    Such a file would be refused by the host; verifying with the defaults (a smaller allowlist:
    more commands wait for approval, none runs that would not) still tells the operator
    something, unless ``strict`` (the command line), which refuses instead.

    Raises:
        ServiceError: ``config_unusable``, when ``strict``.
    """
    # Imported here, not at start: the configuration's models cost a console's first paint.
    from core.criteria.allowlist import DEFAULT_POLICY
    from core.host.config import ConfigError, load_config

    try:
        return load_config(root).verify_policy(), None
    except ConfigError as exc:
        if strict:
            raise ServiceError("config_unusable", str(exc)) from None
        return DEFAULT_POLICY, str(exc)
    except OSError as exc:
        if strict:
            raise
        return DEFAULT_POLICY, str(exc)


def allow_command_by_key(store: RunStore, request: ActionRequest, raw: str) -> Refusal | None:
    """Allow the command ``raw`` names (its JSON argument list, or a command line) for the run;
    the refusal, or None when it was allowed."""
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    try:
        if isinstance(value, list) and all(isinstance(a, str) for a in value):
            key = command_key(value)
        else:
            key = command_key(raw)
    except ValueError as exc:
        return Refusal("invalid_key", f"--approve {raw!r} is not a command: {exc}.", "approve")
    run = store.get_run(request.run_id)
    if run is not None and stage_of(run) is run_criteria.AWAITING_APPROVAL:
        keys = [k for k in map(approval_key, run_criteria.criteria_of(run)) if k is not None]
        if key not in keys:
            return Refusal(
                "unknown_command",
                f"Run {request.run_id} has no criterion that runs {key}; its commands: "
                f"{', '.join(keys) or 'none'}.",
                "approve",
            )
    change = run_criteria.approve_command(
        store, request.run_id, key, request.operator, expected_version=request.expected_version
    )
    return None if change.ok else Refusal(change.code, change.message, change.field)
