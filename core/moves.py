"""Moving a run through the lifecycle: the one way a run changes state.

`apply_move` is the step every caller shares — operator actions, re-dispatch, the host, the
verification of a run's criteria — so a move means the same thing whoever makes it: the lifecycle
decides the target stage, and the new state and verification state, its audit row and its journal
row are written together in the caller's transaction, the run's version bumped.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from core.lifecycle import (
    Action,
    MergeState,
    RunState,
    Stage,
    VerificationState,
    label,
    merge_of,
    stage_of,
    state_of,
    transition,
    verification_of,
)
from core.store.api import Row, RunStore, RunTransaction
from core.store.runs import STAGE_COLUMNS

HOST = "host"
#: Moves that end the worker's attempt (its gates passed into verification included).
_ENDS_ATTEMPT = frozenset(
    {Action.PASS_GATES, Action.FAIL_GATES, Action.FAIL, Action.AWAIT_VERIFICATION}
)


def apply_move(
    tx: RunTransaction,
    run: Row,
    action: Action,
    actor: str,
    *,
    reason: str | None = None,
    changes: Mapping[str, Any] | None = None,
    via: str | None = None,
) -> Row:
    """Move ``run`` by ``action`` inside ``tx``: new stage, audit row and journal row together.

    The journal row's ``from`` and ``to`` are states; a move into, within or out of the
    verification sub-machine adds ``verification_from`` and ``verification_to`` (null outside
    it), and one of the merge sub-machine ``merge_from`` and ``merge_to``, so replaying the
    journal gives every column.

    Raises:
        IllegalTransition: the lifecycle does not allow the move; nothing was written.
    """
    assert not STAGE_COLUMNS & set(changes or {}), "the lifecycle decides"
    here = stage_of(run)
    there = transition(run["run_id"], here, action)
    sub_here, sub_there = verification_of(here), verification_of(there)
    merge_here, merge_there = merge_of(here), merge_of(there)
    values: dict[str, Any] = {
        "state": state_of(there).value,
        "verification_state": sub_there.value if sub_there else None,
        "merge_state": merge_there.value if merge_there else None,
        **(changes or {}),
    }
    if here is RunState.RUNNING and there is not RunState.RUNNING:
        # The worker's attempt ends here, however it ends: its time joins the run's.
        values["worked_s"] = (run.get("worked_s") or 0.0) + worked(run.get("started_at"), tx.now)
    payload: dict[str, Any] = {
        "action": action.value,
        "from": state_of(here).value,
        "to": state_of(there).value,
    }
    if sub_here or sub_there:
        payload["verification_from"] = sub_here.value if sub_here else None
        payload["verification_to"] = sub_there.value if sub_there else None
    if merge_here or merge_there:
        payload["merge_from"] = merge_here.value if merge_here else None
        payload["merge_to"] = merge_there.value if merge_there else None
    payload["reason"] = reason
    if via:
        payload["via"] = via
    updated = tx.change_run(
        run["run_id"],
        expected_version=run["version"],
        changes=values,
        kind="transition",
        payload=payload,
        actor=actor,
    )
    tx.audit(
        run["run_id"],
        actor=actor,
        action=action.value,
        from_state=label(here),
        to_state=label(there),
        reason=reason,
    )
    return updated


def worked(started_at: str | None, now: str) -> float:
    """Seconds from ``started_at`` to ``now`` (store times), 0 when unknown or backwards."""
    if not started_at:
        return 0.0
    return max(
        0.0, (datetime.fromisoformat(now) - datetime.fromisoformat(started_at)).total_seconds()
    )


def moved(payload: Mapping[str, Any]) -> tuple[Stage, Stage] | None:
    """The stages a ``transition`` journal row's payload moves a run from and to; None when it
    names none of the lifecycle (a row from a newer jarvis, or damaged)."""
    try:
        here: Stage = RunState(payload["from"])
        there: Stage = RunState(payload["to"])
        if payload.get("verification_from"):
            here = VerificationState(payload["verification_from"])
        if payload.get("verification_to"):
            there = VerificationState(payload["verification_to"])
        if payload.get("merge_from"):
            here = MergeState(payload["merge_from"])
        if payload.get("merge_to"):
            there = MergeState(payload["merge_to"])
    except (KeyError, TypeError, ValueError):
        return None
    return here, there


class NotHeld(Exception):
    """The run is claimed by another host than the one moving it."""


def host_move(
    store: RunStore,
    run_id: str,
    action: Action,
    *,
    changes: Mapping[str, Any] | None = None,
    reason: str | None = None,
    actor: str = HOST,
    holder: str | None = None,
) -> Row:
    """A move the host makes (start, pass or fail the gates, fail), in its own transaction.

    Records when the attempt started and ended, beside any ``changes`` the caller adds.

    ``holder``: the host making the move (`core.store.hosts`); refused while another host holds
    the run's claim, and recorded as the run's host. (A run no host claimed may be moved: the
    lifecycle's compare-and-set already lets one move from a state happen once.)

    Raises:
        IllegalTransition: the move is not legal from the run's state; nothing was written.
        KeyError: there is no such run.
        NotHeld: ``holder`` was given and another host holds the run now.
    """
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None:
            raise KeyError(run_id)
        values: dict[str, Any] = dict(changes or {})
        if holder is not None:
            if run.get("host") not in (None, holder):
                raise NotHeld(run_id)
            values["host"] = holder
        if action is Action.START:
            values.setdefault("started_at", tx.now)
        elif action in _ENDS_ATTEMPT:
            values.setdefault("finished_at", tx.now)
        return apply_move(tx, run, action, actor, reason=reason, changes=values)
