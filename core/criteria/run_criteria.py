"""Acceptance criteria as part of a run: chosen at dispatch, edited while queued, verified once
the completion gates pass, and overridden with a reason.

The run's row holds the list (``criteria_json``), where it came from (``criteria_source``), the
universal flag and the commands an operator approved. Where verification stands belongs to the
lifecycle (`core.lifecycle.VerificationState`, the sub-machine of ``running``): ``pending`` once the
gates passed, ``verifying`` while it runs, ``awaiting_approval`` when a command off the allowlist
waits for an operator. Every one of those changes is a move (`core.moves.apply_move`): legal by the
table, versioned, journalled and audited. The run stays ``running`` until verification decides: all
criteria pass → ``review_requested``; any fails → ``failed`` with the failing criteria named. A host
that dies mid-verification finds the run ``pending`` or ``verifying`` and verifies it again: a check
only reads the checkout.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.contracts.fingerprint import fingerprint
from core.contracts.names import relative_path_problem
from core.criteria.allowlist import DEFAULT_POLICY, VerifyPolicy
from core.lifecycle import (
    PARENT,
    TRANSITIONS,
    Action,
    IllegalTransition,
    RunState,
    Stage,
    VerificationState,
    allowed_from,
    label,
    stage_of,
)
from core.moves import HOST, apply_move
from core.store.api import Row, RunStore, RunTransaction

if TYPE_CHECKING:
    from core.criteria.runner import Supervision
    from core.criteria.verify import Verification

# The extraction and verification modules (regular expressions, pydantic models, subprocesses)
# are imported where they are used: this module is imported by every operator action, and so by
# the console at start, which has a one-second first-paint budget.

#: Where a run's repository checkout lives, under the workspace.
CHECKOUTS = "checkouts"

PENDING = VerificationState.PENDING
VERIFYING = VerificationState.VERIFYING
AWAITING_APPROVAL = VerificationState.AWAITING_APPROVAL

#: Stages in which the host verifies a run: those verification can start from, and the one it
#: is in while it runs (a host that died left it there; the next one verifies it again).
DUE: tuple[Stage, ...] = (
    *allowed_from(Action.START_VERIFICATION),
    TRANSITIONS[(PENDING, Action.START_VERIFICATION)],
)
#: Stages in which an operator's `reverify` decides the run: every stage of verification but
#: the one in which the host is deciding it.
WAITING: tuple[Stage, ...] = tuple(s for s in VerificationState if s is not VERIFYING)


def checkout_dir(workspace_root: Path, run_id: str) -> Path:
    """The run's checkout: where its worker works and its criteria are verified.

    Run ids are validated names (no separators, no ``..``) before they reach the store; this
    checks again, since a path built from one must never leave the workspace.
    """
    problem = relative_path_problem(run_id)
    if problem or "/" in run_id or run_id in (".", ".."):
        raise ValueError(f"run id {run_id!r} cannot name a checkout folder")
    return workspace_root / CHECKOUTS / run_id


# -- reading and editing ----------------------------------------------------------------------


def _json_list(raw: object) -> list[Any]:
    # A column that does not hold a JSON list reads as empty, never as an error.
    try:
        value = json.loads(raw) if isinstance(raw, str) else []
    except json.JSONDecodeError:
        return []
    return value if isinstance(value, list) else []


def criteria_of(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [c for c in _json_list(run.get("criteria_json")) if isinstance(c, dict)]


def approved_of(run: Mapping[str, Any]) -> list[str]:
    return [k for k in _json_list(run.get("approved_commands")) if isinstance(k, str)]


@dataclass(frozen=True)
class CriteriaChange:
    ok: bool
    criteria: list[dict[str, Any]]
    code: str = ""
    """``not_found``, ``not_queued``, ``invalid_criterion``, ``too_many_criteria``,
    ``bad_index``, ``stale_version`` or (approving a command) ``illegal_transition``."""
    message: str = ""
    field: str = ""


def _editable(
    tx: RunTransaction, run_id: str, expected_version: int | None
) -> Row | CriteriaChange:
    run = tx.get_run(run_id)
    if run is None:
        return CriteriaChange(False, [], "not_found", f"There is no run {run_id}.", "run_id")
    if run["state"] != RunState.QUEUED:
        return CriteriaChange(
            False,
            criteria_of(run),
            "not_queued",
            f"Run {run_id} is {run['state']}; criteria can be changed only before it starts.",
            "run_id",
        )
    if expected_version is not None and run["version"] != expected_version:
        return CriteriaChange(
            False,
            criteria_of(run),
            "stale_version",
            f"Run {run_id} changed since you looked at it (version {run['version']}, not "
            f"{expected_version}); nothing was done.",
            "version",
        )
    return run


def _save(
    tx: RunTransaction, run: Row, criteria: list[dict[str, Any]], actor: str, what: str
) -> None:
    payload = {"source": "operator", "count": len(criteria), "notes": [what]}
    changes = {"criteria_json": json.dumps(criteria), "criteria_source": "operator"}
    tx.touch_run(run["run_id"], kind="criteria", payload=payload, actor=actor, changes=changes)
    tx.audit(run["run_id"], actor=actor, action="criteria", from_state=run["state"],
             to_state=run["state"], reason=what)  # fmt: skip


def add_criterion(
    store: RunStore,
    run_id: str,
    criterion: Any,
    operator: str,
    *,
    expected_version: int | None = None,
) -> CriteriaChange:
    """Append ``criterion`` (validated like any other) to a queued run's criteria."""
    from pydantic import ValidationError

    from core.contracts.criteria import MAX_CRITERIA
    from core.criteria.extract import canonical

    if not isinstance(criterion, Mapping):
        return CriteriaChange(False, [], "invalid_criterion", "A criterion is a JSON object.",
                              "criterion")  # fmt: skip
    try:
        clean = canonical(criterion, universal=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "criterion"
        return CriteriaChange(False, [], "invalid_criterion", f"{where}: {first['msg']}",
                              f"criterion.{where}")  # fmt: skip
    with store.transaction() as tx:
        run = _editable(tx, run_id, expected_version)
        if isinstance(run, CriteriaChange):
            return run
        criteria = [*criteria_of(run), clean]
        if len(criteria) > MAX_CRITERIA:
            return CriteriaChange(False, criteria[:-1], "too_many_criteria",
                                  f"Run {run_id} has {MAX_CRITERIA} criteria, the most a run may "
                                  "have; remove one first.", "criterion")  # fmt: skip
        _save(tx, run, criteria, operator, f"added {clean['type']}: {clean['description']}")
    return CriteriaChange(True, criteria)


def remove_criterion(
    store: RunStore,
    run_id: str,
    index: int,
    operator: str,
    *,
    expected_version: int | None = None,
) -> CriteriaChange:
    """Remove the criterion at ``index`` (0-based, as `jarvis criteria RUN` lists them)."""
    with store.transaction() as tx:
        run = _editable(tx, run_id, expected_version)
        if isinstance(run, CriteriaChange):
            return run
        criteria = criteria_of(run)
        if not 0 <= index < len(criteria):
            return CriteriaChange(
                False, criteria, "bad_index",
                f"Run {run_id} has {len(criteria)} criteria; there is no index {index}.", "index",
            )  # fmt: skip
        gone = criteria.pop(index)
        _save(tx, run, criteria, operator, f"removed {gone.get('type')}: {gone.get('description')}")
    return CriteriaChange(True, criteria)


# -- after the gates --------------------------------------------------------------------------


def needs_verification(run: Mapping[str, Any]) -> bool:
    """Whether a run whose gates just passed has criteria to verify."""
    return bool(criteria_of(run))


def policy_for(run: Mapping[str, Any], base: VerifyPolicy = DEFAULT_POLICY) -> VerifyPolicy:
    """``base`` with the commands an operator approved for this run."""
    return replace(base, approved=base.approved | frozenset(approved_of(run)))


def due(store: RunStore, host: str | None = None) -> list[str]:
    """Runs whose verification should run now (including one a dead host left half done);
    of those ``host`` holds when given (their checkouts are on its machine)."""
    return store.runs_in_stages(PARENT.value, [stage.value for stage in DUE], host)


def begin(store: RunStore, run_id: str) -> Row | None:
    """Move the run to verifying; None when it is no longer due (cancelled meanwhile).

    A run a previous host left verifying is verified again as it is: nothing about it changed,
    so its version stays, and the journal notes that verification resumed.
    """
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None or stage_of(run) not in DUE:
            return None
        if stage_of(run) is VERIFYING:
            tx.touch_run(run_id, changes={}, kind="verification",
                         payload={"status": "resumed"}, actor=HOST)  # fmt: skip
            return tx.get_run(run_id)
        return apply_move(tx, run, Action.START_VERIFICATION, HOST)


def verify_run(
    store: RunStore,
    workspace_root: Path,
    run: Mapping[str, Any],
    policy: VerifyPolicy,
    *,
    now: Callable[[], datetime] | None = None,
    supervision: Supervision | None = None,
) -> Verification:
    """Run the run's criteria in its checkout (may take minutes).

    Writes to the store only through ``supervision``'s callbacks (the host's record of each
    command's process group); a cancelled verification comes back marked ``cancelled``.
    """
    from core.criteria.verify import verify_all
    from core.repos.claims import find_repository

    checkout = checkout_dir(workspace_root, str(run["run_id"]))
    checkout.mkdir(parents=True, exist_ok=True)
    clock = now or (lambda: datetime.fromisoformat(store.now()))
    return verify_all(
        criteria_of(run),
        checkout,
        policy_for(run, policy),
        now=clock,
        supervision=supervision,
        # Tests or a linter run in an empty folder would fail, or pass, for nothing. Files a
        # worker left without git (a downloaded tarball) are still code to run them on.
        has_repository=find_repository(checkout) is not None or any(checkout.iterdir()),
    )


def record_command_group(store: RunStore, run_id: str, pgid: int | None) -> None:
    """Note (or clear) the process group of the criterion command the host runs for a run.

    Written before the command starts and committed at once: it is how a host restarted after a
    ``kill -9`` finds a command its predecessor left running. Host bookkeeping, not a change an
    operator acts on, so it neither bumps the run's version nor writes the journal.
    """
    with store.transaction() as tx:
        tx.set_command_group(run_id, pgid)


def leftover_command_groups(store: RunStore, host: str | None = None) -> list[tuple[str, int]]:
    """``(run_id, pgid)`` of every criterion command a previous host recorded and left (of
    ``host``'s runs when given: the processes are on its machine)."""
    return store.command_groups_left(host)


def _failing(verification: Verification) -> list[str]:
    lenient = verification.unchecked_may_pass
    return [
        str(o.criterion.get("description") or o.criterion.get("type"))
        for o in verification.outcomes
        if not o.passed
        and o.status != "needs_approval"
        and not (o.status == "not_checked" and lenient)
    ]


def record(
    tx: RunTransaction, run: Mapping[str, Any], verification: Verification, *, decide: bool
) -> Row:
    """Store the results for the run's current attempt; with ``decide``, move the run on.

    Decides only for a run still running whose verification was due: all pass →
    review_requested, any fails → failed naming them, waiting on approval → it waits.

    Raises:
        IllegalTransition: ``decide`` for a run whose stage has no such move (a caller's
            mistake: `finish` and `reverify` decide only from stages that have them).
    """
    run_id = str(run["run_id"])
    attempt = int(run["retry_count"]) + 1
    results = verification.results()
    tx.add_verification_results(run_id, attempt, json.dumps(results), results["verified_at"])
    current = tx.get_run(run_id)
    assert current is not None
    failing = _failing(verification)
    summary = {
        "passed": verification.passed,
        "failed": failing,
        "pending_approval": verification.pending_approval,
    }
    if verification.unchecked:
        # Not run for want of a repository: said wherever the run is shown.
        tx.touch_run(run_id, changes={"unverified": "the run's checkout is empty"},
                     kind="verification", payload={"status": "not_checked",
                     "count": len(verification.unchecked)}, actor=HOST)  # fmt: skip
    stage = stage_of(current)
    still_waiting = verification.pending_approval and stage is AWAITING_APPROVAL and not failing
    if not decide or RunState(current["state"]) is not PARENT or still_waiting:
        tx.touch_run(run_id, changes={}, kind="verification",
                     payload={"status": "recorded", **summary}, actor=HOST)  # fmt: skip
        return current
    if failing:
        reason = "acceptance criteria failed: " + "; ".join(failing)
        _record_failure(tx, run_id, attempt, verification, reason)
        return apply_move(tx, current, Action.FAIL, HOST, reason=reason[:2000],
                          changes={"state_reason": reason[:2000]})  # fmt: skip
    if verification.pending_approval:
        waits = "a criterion's command waits for an operator's approval"
        return apply_move(tx, current, Action.AWAIT_APPROVAL, HOST, reason=waits,
                          changes={"state_reason": waits})  # fmt: skip
    return apply_move(tx, current, Action.PASS_GATES, HOST)


#: The error.v1 record of a run its criteria failed: runs that fail the same kind of criterion
#: share a fingerprint, which is how the console says "N other runs failed like this".
CRITERIA_ERROR = ("interaction_failed", "ACCEPTANCE_CRITERIA_FAILED")


def _record_failure(
    tx: RunTransaction, run_id: str, attempt: int, verification: Verification, reason: str
) -> None:
    first = next(o for o in verification.outcomes if not o.passed)
    step = f"verify:{first.criterion.get('type', 'criterion')}"
    error_class, error_code = CRITERIA_ERROR
    tx.add_failure(
        run_id,
        attempt,
        error_class=error_class,
        error_code=error_code,
        step_id=step,
        message=reason[:2000],
        fingerprint=fingerprint(error_class, error_code, step),
    )


def finish(store: RunStore, run_id: str, verification: Verification) -> Row | None:
    """Record a host verification and decide; None when the run moved on meanwhile."""
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None or stage_of(run) is not VERIFYING:
            return None
        return record(tx, run, verification, decide=True)


def latest_results(store: RunStore, run_id: str) -> dict[str, Any] | None:
    latest = store.latest_verification_results(run_id)
    if latest is None:
        return None
    value = json.loads(latest["results_json"])
    return value if isinstance(value, dict) else None


def record_override(tx: RunTransaction, run_id: str, reason: str, operator: str) -> None:
    """The override's who, why and when, in the run's latest verification results."""
    latest = tx.latest_verification_results(run_id)
    if latest is None:
        return
    results = json.loads(latest["results_json"])
    results.update(
        override_applied=True,
        override_reason=reason,
        overridden_at=tx.now,
        overridden_by=operator,
    )
    tx.replace_verification_results(int(latest["id"]), json.dumps(results))


def approve_command(
    store: RunStore,
    run_id: str,
    key: str,
    operator: str,
    *,
    expected_version: int | None = None,
) -> CriteriaChange:
    """Allow one command off the allowlist for this run; its verification then runs again.

    A lifecycle move (``awaiting_approval → pending``): refused as ``illegal_transition`` when
    the run waits for no approval, and as ``stale_version`` when it changed since the operator
    looked at it (``expected_version``) — its verification moved on, say.
    """
    with store.transaction() as tx:
        run = tx.get_run(run_id)
        if run is None:
            return CriteriaChange(False, [], "not_found", f"There is no run {run_id}.", "run_id")
        if expected_version is not None and run["version"] != expected_version:
            return CriteriaChange(
                False, criteria_of(run), "stale_version",
                f"Run {run_id} changed since you looked at it (it is now "
                f"{label(stage_of(run))}, version {run['version']}, not {expected_version}); "
                "nothing was done.", "version",
            )  # fmt: skip
        approved = sorted({*approved_of(run), key})
        try:
            apply_move(tx, run, Action.APPROVE_COMMAND, operator, reason=f"allowed {key}",
                       changes={"approved_commands": json.dumps(approved),
                                "state_reason": None})  # fmt: skip
        except IllegalTransition as exc:
            return CriteriaChange(False, criteria_of(run), "illegal_transition", str(exc),
                                  "run_id")  # fmt: skip
    return CriteriaChange(True, criteria_of(run))


@dataclass(frozen=True)
class Reverified:
    """What `reverify` did: the results recorded, and the run as it now is (or why not)."""

    ok: bool
    results: dict[str, Any] | None = None
    run: Row | None = None
    code: str = ""
    """``not_found``, ``no_criteria`` or ``in_progress``."""
    message: str = ""


def reverify(
    store: RunStore,
    workspace_root: Path,
    run_id: str,
    policy: VerifyPolicy = DEFAULT_POLICY,
) -> Reverified:
    """Verify a run's criteria again now (`jarvis verify`, the console's ``v``).

    The results are always recorded. They decide the run only while it waits on verification
    (gates passed, or a command approved); a run already decided keeps its state, and an
    operator reads the new results and overrides if they show the criteria were wrong.
    """
    run = store.get_run(run_id)
    if run is None:
        return Reverified(False, code="not_found", message=f"There is no run {run_id}.")
    if not criteria_of(run):
        return Reverified(
            False,
            run=run,
            code="no_criteria",
            message=f"Run {run_id} has no acceptance criteria to verify.",
        )
    if stage_of(run) is VERIFYING:
        return Reverified(
            False,
            run=run,
            code="in_progress",
            message=f"Run {run_id} is being verified by the host right now.",
        )
    verification = verify_run(store, workspace_root, run, policy)
    with store.transaction() as tx:
        current = tx.get_run(run_id)
        if current is None:
            return Reverified(False, code="not_found", message=f"There is no run {run_id}.")
        waiting = stage_of(current) in WAITING
        updated = record(tx, current, verification, decide=waiting)
    return Reverified(True, results=verification.results(), run=updated)
