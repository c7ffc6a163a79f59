"""The operator's actions: approve, retry, override, cancel and steer; pause and resume a lane.

Each action is one store transaction that reads the run under the write lock, asks the lifecycle
whether the move is legal, and writes the new state, its audit row and its journal row together.
Two operators acting on the same run at once are therefore serialised: the first one's move
happens, and the second finds the run already moved and is refused with its current state — it is
never applied twice. An operator who passes the version they were looking at
(``expected_version``) is refused if the run has changed since, even when the move would still be
legal: they decided on a state that no longer exists.

Refusals are data (`Refusal`: a stable code and a sentence), never exceptions.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.criteria.run_criteria import record_override
from core.lifecycle import (
    REASON_REQUIRED,
    Action,
    IllegalTransition,
    RunState,
    is_legal,
    label,
    stage_of,
)
from core.moves import apply_move
from core.repos.approval import MergeRequest, decide, host_state
from core.run_views import run_summary
from core.store.api import Row, RunStore, RunTransaction

MAX_REASON = 2000
MAX_STEER = 4000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

RETRY_CLEARS = (
    "state_reason", "branch_name", "commit_sha", "files_changed", "test_summary",
    "risk_summary", "pr_url", "pr_skipped_reason", "started_at", "finished_at",
)  # fmt: skip
"""What a retry resets: the last attempt's outcome. Its history stays in the journal and audit.
(Where its verification stood goes with the move: `core.moves.apply_move`.)"""


@dataclass(frozen=True, slots=True)
class Refusal:
    code: str
    """``not_found``, ``illegal_transition``, ``stale_version``, ``reason_required``,
    ``reason_too_long``, ``not_running``, ``empty_message``, ``message_too_long``,
    ``bad_characters``; for a lane ``bad_lane``, ``already_paused`` or ``not_paused``."""
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class ActionResult:
    ok: bool
    run: Row | None
    refusal: Refusal | None = None
    steer_id: str | None = None
    merge: dict[str, Any] | None = None
    """What an approval did with the run's branch (`core.repos.merge.MergeOutcome`)."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ok": self.ok,
            "run": run_summary(self.run) if self.run else None,
            "refusal": self.refusal.to_json() if self.refusal else None,
        }
        if self.steer_id:
            data["steer_id"] = self.steer_id
        if self.merge is not None:
            data["merge"] = self.merge
        return data


def _refused(code: str, message: str, run: Row | None = None) -> ActionResult:
    return ActionResult(False, run, Refusal(code, message))


def _text_problem(text: str | None, *, what: str, limit: int) -> Refusal | None:
    if text is None or not text.strip():
        code = "reason_required" if what == "reason" else "empty_message"
        return Refusal(code, f"A non-blank {what} is required.")
    if len(text) > limit:
        code = "reason_too_long" if what == "reason" else "message_too_long"
        return Refusal(code, f"The {what} is {len(text):,} characters; the limit is {limit:,}.")
    if _CONTROL.search(text):
        return Refusal("bad_characters", f"The {what} contains control characters.")
    return None


def _current(tx: RunTransaction, run_id: str, expected_version: int | None) -> Row | ActionResult:
    """The run as it is under the write lock, or the refusal: gone, or moved since the operator
    looked (``expected_version``)."""
    run = tx.get_run(run_id)
    if run is None:
        return _refused("not_found", f"There is no run {run_id}.")
    if expected_version is not None and run["version"] != expected_version:
        return _refused(
            "stale_version",
            f"Run {run_id} changed since you looked at it (it is now {label(stage_of(run))}, "
            f"version {run['version']}, not {expected_version}); nothing was done.",
            run,
        )
    return run


Changes = Callable[[Row, str], dict[str, Any]]


def _move(
    store: RunStore,
    run_id: str,
    action: Action,
    operator: str,
    *,
    reason: str | None = None,
    expected_version: int | None = None,
    changes: Changes | None = None,
    also: Callable[[RunTransaction, Row], None] | None = None,
) -> ActionResult:
    if action in REASON_REQUIRED:
        problem = _text_problem(reason, what="reason", limit=MAX_REASON)
        if problem:
            return ActionResult(False, store.get_run(run_id), problem)
    with store.transaction() as tx:
        run = _current(tx, run_id, expected_version)
        if isinstance(run, ActionResult):
            return run
        try:
            updated = apply_move(
                tx,
                run,
                action,
                operator,
                reason=reason,
                changes=changes(run, tx.now) if changes else None,
            )
        except IllegalTransition as exc:
            return _refused("illegal_transition", str(exc), run)
        if also is not None:
            also(tx, updated)  # in the same transaction: the move and its record land together
    return ActionResult(True, updated)


def approve(
    store: RunStore,
    run_id: str,
    operator: str,
    *,
    expected_version: int | None = None,
    merge: bool = True,
) -> ActionResult:
    """``review_requested → done``, or ``→ review_requested (merging)`` for a branch to merge.

    A run with a branch in a configured repository whose merge mode is ``auto-merge`` (and
    ``merge`` true) is asked of the host holding its repository, which merges it outside any
    transaction and then moves the run on (`core.repos.approval`); the result's ``merge`` says
    it is pending. Anything else is decided here: ``recommend-only`` records the
    recommendation, ``merge`` false leaves the branch, a run with no repository is just done.
    Two operators approving at once get one approval and one refusal.
    """
    with store.transaction() as tx:
        run = _current(tx, run_id, expected_version)
        if isinstance(run, ActionResult):
            return run
        stage = stage_of(run)
        if not is_legal(stage, Action.APPROVE):
            refusal = IllegalTransition(run_id, stage, Action.APPROVE)
            return _refused("illegal_transition", str(refusal), run)
        decided = decide(tx, run, operator, merge=merge)
        if isinstance(decided, MergeRequest):
            updated = apply_move(tx, run, Action.REQUEST_MERGE, operator)
            host = run.get("host")
            pending = decided.to_json(host, host_state(tx, host, tx.now))
            return ActionResult(True, updated, merge=pending)
        updated = apply_move(tx, run, Action.APPROVE, operator, changes={"finished_at": tx.now})
    return ActionResult(True, updated, merge=decided.to_json() if decided else None)


def retry(
    store: RunStore,
    run_id: str,
    operator: str,
    *,
    expected_version: int | None = None,
    fresh: bool = False,
) -> ActionResult:
    """``failed | failed_contract → queued``: same run_id, retry_count + 1.

    The next attempt goes on from where the last one left the run's branch (its checkout as it
    was, `core.repos.worktrees`), as a NanoClaw worker's workspace persists between attempts;
    ``fresh`` starts it from the base again (the old branch head kept in the repository).
    """

    def reset(run: Row, now: str) -> dict[str, Any]:
        values: dict[str, Any] = dict.fromkeys(RETRY_CLEARS)
        values["retry_count"] = run["retry_count"] + 1
        values["retry_fresh"] = 1 if fresh else 0
        return values

    return _move(
        store, run_id, Action.RETRY, operator, expected_version=expected_version, changes=reset
    )


def override(
    store: RunStore,
    run_id: str,
    operator: str,
    reason: str | None,
    *,
    expected_version: int | None = None,
) -> ActionResult:
    """``failed | failed_contract → done``, marked overridden, with a required reason."""
    return _move(
        store,
        run_id,
        Action.OVERRIDE,
        operator,
        reason=reason,
        expected_version=expected_version,
        changes=lambda run, now: {
            "overridden": 1,
            "override_reason": reason,
            "overridden_by": operator,
            "overridden_at": now,
            "finished_at": now,
        },
        # A run failed by its criteria shows who overrode them, why and when, with the results.
        also=lambda tx, run: record_override(tx, run_id, str(reason), operator),
    )


def cancel(
    store: RunStore,
    run_id: str,
    operator: str,
    reason: str | None,
    *,
    expected_version: int | None = None,
) -> ActionResult:
    """``queued | running → failed``, with the reason recorded as the run's state reason."""
    return _move(
        store,
        run_id,
        Action.CANCEL,
        operator,
        reason=reason,
        expected_version=expected_version,
        changes=lambda run, now: {
            "state_reason": f"cancelled by {operator}: {reason}",
            "finished_at": now,
            "worker_pid": None,  # the host stops the worker; the run no longer has one
        },
    )


def steer(
    store: RunStore,
    run_id: str,
    operator: str,
    message: str | None,
    *,
    expected_version: int | None = None,
) -> ActionResult:
    """Record a pending steer for a running run. Delivery is the host's job (one at a time)."""
    with store.transaction() as tx:
        return steer_in(tx, run_id, operator, message, expected_version=expected_version)


def steer_in(
    tx: RunTransaction,
    run_id: str,
    operator: str,
    message: str | None,
    *,
    expected_version: int | None = None,
) -> ActionResult:
    """`steer` inside the caller's transaction (the host records a receipt with it)."""
    problem = _text_problem(message, what="message", limit=MAX_STEER)
    if problem:
        return ActionResult(False, tx.get_run(run_id), problem)
    assert message is not None
    run = tx.get_run(run_id)
    if run is None:
        return _refused("not_found", f"There is no run {run_id}.")
    if expected_version is not None and run["version"] != expected_version:
        return _refused(
            "stale_version",
            f"Run {run_id} changed since you looked at it (it is now {run['state']}); "
            "the steer was not sent.",
            run,
        )
    if run["state"] != RunState.RUNNING:
        return _refused(
            "not_running",
            f"Run {run_id} is {run['state']}; only a running run can be steered.",
            run,
        )
    steer_id = f"steer-{uuid.uuid4().hex[:16]}"
    _record_steer(tx, run, steer_id, message, operator)
    return ActionResult(True, tx.get_run(run_id), steer_id=steer_id)


def _record_steer(tx: RunTransaction, run: Row, steer_id: str, message: str, operator: str) -> None:
    tx.add_steer(steer_id, run["run_id"], message, operator)
    tx.change_run(
        run["run_id"],
        expected_version=run["version"],
        changes={"steer_count": run["steer_count"] + 1},
        kind="steer",
        payload={"steer_id": steer_id, "status": "pending", "message": message},
        actor=operator,
    )
    tx.audit(
        run["run_id"],
        actor=operator,
        action="steer",
        from_state=run["state"],
        to_state=run["state"],
        reason=message,
    )


# -- lanes ---------------------------------------------------------------------------------------

LANE_JOURNAL_PREFIX = "lane:"
"""A lane's journal and audit entries are kept under ``lane:NAME``, which no run id can be."""


@dataclass(frozen=True, slots=True)
class LaneResult:
    """What pausing or resuming a lane came to: the lane's pause as it is now (None: running)."""

    ok: bool
    lane: str
    pause: Row | None
    refusal: Refusal | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "lane": self.lane,
            "paused": self.pause is not None,
            "pause": self.pause,
            "refusal": self.refusal.to_json() if self.refusal else None,
        }


def _lane_refused(lane: str, code: str, message: str, pause: Row | None) -> LaneResult:
    return LaneResult(False, lane, pause, Refusal(code, message))


def _lane_record(tx: RunTransaction, lane: str, kind: str, payload: dict[str, Any],
                 operator: str, reason: str | None) -> None:  # fmt: skip
    key = f"{LANE_JOURNAL_PREFIX}{lane}"
    tx.journal(key, kind, {"lane": lane, **payload}, operator)
    tx.audit(key, actor=operator, action=kind, from_state=None, to_state=None, reason=reason)


def pause_lane(store: RunStore, lane: str, operator: str, reason: str | None) -> LaneResult:
    """Pause ``lane``: no host claims its queued runs until it is resumed; its running runs go
    on to their end. A reason is required. Two operators pausing at once get one pause: the
    second is refused with who paused it, when and why."""
    from core.workspace import lane_problem

    bad = lane_problem(lane)
    if bad:
        return _lane_refused(lane, "bad_lane", bad[0].upper() + bad[1:], None)
    problem = _text_problem(reason, what="reason", limit=MAX_REASON)
    if problem:
        return LaneResult(False, lane, None, problem)
    assert reason is not None
    with store.transaction() as tx:
        if not tx.pause_lane(lane, reason, operator):
            held = tx.lane_pause(lane)
            who = (
                f" by {held['paused_by']} at {held['paused_at']} ({held['reason']})" if held else ""
            )
            said = f"Lane {lane} is already paused{who}; nothing was done."
            return _lane_refused(lane, "already_paused", said, held)
        _lane_record(tx, lane, "lane_paused", {"reason": reason}, operator, reason)
        return LaneResult(True, lane, tx.lane_pause(lane))


def resume_lane(store: RunStore, lane: str, operator: str) -> LaneResult:
    """Resume a paused ``lane``: its queued runs are claimed again as its concurrency allows.
    Two operators resuming at once: one resumes, the other is refused (not paused)."""
    with store.transaction() as tx:
        held = tx.lane_pause(lane)
        if held is None or not tx.resume_lane(lane):
            return _lane_refused(lane, "not_paused",
                                 f"Lane {lane} is not paused; nothing was done.", None)  # fmt: skip
        _lane_record(tx, lane, "lane_resumed", {"paused_by": held["paused_by"]}, operator, None)
        return LaneResult(True, lane, None)
