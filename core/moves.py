"""Moving a run through the lifecycle: the one way a run changes state.

`apply_move` is the step every caller shares — operator actions, re-dispatch, the host — so a move
means the same thing whoever makes it: the lifecycle decides the target, and the new state, its
audit row and its journal row are written together in the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.lifecycle import Action, RunState, transition
from core.store.sqlite_store import Row, SqliteStore, Transaction

HOST = "host"
_ENDS_ATTEMPT = frozenset({Action.PASS_GATES, Action.FAIL_GATES, Action.FAIL})


def apply_move(
    tx: Transaction,
    run: Row,
    action: Action,
    actor: str,
    *,
    reason: str | None = None,
    changes: Mapping[str, Any] | None = None,
    via: str | None = None,
) -> Row:
    """Move ``run`` by ``action`` inside ``tx``: new state, audit row and journal row together.

    Raises:
        IllegalTransition: the lifecycle does not allow the move; nothing was written.
    """
    state = RunState(run["state"])
    target = transition(run["run_id"], state, action)
    values: dict[str, Any] = {"state": target.value, **(changes or {})}
    payload: dict[str, Any] = {"action": action.value, "from": state.value, "to": target.value}
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
        from_state=state.value,
        to_state=target.value,
        reason=reason,
    )
    return updated


def host_move(
    store: SqliteStore,
    run_id: str,
    action: Action,
    *,
    changes: Mapping[str, Any] | None = None,
    reason: str | None = None,
    actor: str = HOST,
) -> Row:
    """A move the host makes (start, pass or fail the gates, fail), in its own transaction.

    Records when the attempt started and ended, beside any ``changes`` the caller adds.

    Raises:
        IllegalTransition: the move is not legal from the run's state; nothing was written.
        KeyError: there is no such run.
    """
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None:
            raise KeyError(run_id)
        values: dict[str, Any] = dict(changes or {})
        if action is Action.START:
            values.setdefault("started_at", tx.now)
        elif action in _ENDS_ATTEMPT:
            values.setdefault("finished_at", tx.now)
        return apply_move(tx, run, action, actor, reason=reason, changes=values)
