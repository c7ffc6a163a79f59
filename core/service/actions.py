"""Every operator action, declared once, and `act`: the one way a front end carries one out.

An entry says what the console and the command line need to offer the action (its key and
label, what it asks first, the stages it applies to, its verb and options) and its engine call.
The console's bindings, key bar, palette and help, and the command line's verbs and dispatch are
built from `ACTIONS`; adding an action is an entry here and its engine call. Which actions a run
allows, and the sentence when it does not, is `availability`: the lifecycle's answer
(`core.lifecycle`), or the action's own check.

The engine calls import the engine when they run: every `jarvis` command reads this registry
to build its parser, and parsing must not load the store or the contracts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.identity import operator_name
from core.lifecycle import (
    PARENT,
    STAGES,
    Action,
    IllegalTransition,
    Stage,
    VerificationState,
    is_legal,
    stage_of,
)
from core.service.action_types import (
    ActionRequest,
    Availability,
    EngineCall,
    OperatorAction,
    Option,
    Outcome,
    Refusal,
)
from core.service.errors import ServiceError

if TYPE_CHECKING:
    from core.operator_actions import ActionResult
    from core.store.api import RunStore

__all__ = ["ACTIONS", "MAX_REASON", "act", "availability", "operator_name", "register"]

MAX_REASON = 2000
"""The longest reason an override or a cancel takes (`core.operator_actions.MAX_REASON`)."""


# -- the engine calls ---------------------------------------------------------------------------


def _moved(request: ActionRequest, result: ActionResult) -> Outcome:
    refusal = result.refusal
    return Outcome(
        request,
        result.ok,
        result.run,
        Refusal(refusal.code, refusal.message) if refusal else None,
        steer_id=result.steer_id,
        merge=result.merge,
    )


def _retry(store: RunStore, root: Path, request: ActionRequest) -> Outcome:
    from core import operator_actions

    return _moved(request, operator_actions.retry(
        store, request.run_id, request.operator, expected_version=request.expected_version,
        fresh=bool(request.options.get("fresh")),
    ))  # fmt: skip


def _approve(store: RunStore, root: Path, request: ActionRequest) -> Outcome:
    from core import operator_actions
    from core.service.merging import wait_for_merge, wait_s

    timeout = wait_s(request.options.get("timeout"))
    if timeout is None:
        said = request.options.get("timeout")
        refusal = Refusal("bad_timeout", f"--timeout {said!r} is not a number of seconds above "
                          "zero.", "timeout")  # fmt: skip
        return Outcome(request, False, store.get_run(request.run_id), refusal)
    approved = _moved(request, operator_actions.approve(
        store, request.run_id, request.operator, expected_version=request.expected_version,
        merge=not request.options.get("no_merge"),
    ))  # fmt: skip
    if (
        approved.ok
        and approved.merge
        and approved.merge.get("pending")
        and request.options.get("wait")
    ):
        return wait_for_merge(store, approved, timeout)
    return approved


def _with_reason(move: str) -> EngineCall:
    """The engine call of a move that carries a reason: ``override`` or ``cancel`` of
    `core.operator_actions`, which refuses a missing one."""

    def call(store: RunStore, root: Path, request: ActionRequest) -> Outcome:
        from core import operator_actions

        act = getattr(operator_actions, move)
        return _moved(request, act(
            store, request.run_id, request.operator, request.options.get("reason"),
            expected_version=request.expected_version,
        ))  # fmt: skip

    return call


def _steer(store: RunStore, root: Path, request: ActionRequest) -> Outcome:
    from core import operator_actions

    return _moved(request, operator_actions.steer(
        store, request.run_id, request.operator, request.options.get("message"),
        expected_version=request.expected_version,
    ))  # fmt: skip


def _verify(store: RunStore, root: Path, request: ActionRequest) -> Outcome:
    from core.criteria import run_criteria
    from core.service.verifying import allow_command_by_key, verify_policy

    policy, problem = verify_policy(root, strict=request.strict)
    key = request.options.get("approve")
    if key is not None:
        refused = allow_command_by_key(store, request, str(key))
        if refused is not None:
            return Outcome(request, False, store.get_run(request.run_id), refused)
    done = run_criteria.reverify(store, root, request.run_id, policy)
    refusal = None if done.ok else Refusal(done.code, done.message, "run_id")
    return Outcome(request, done.ok, done.run, refusal, results=done.results,
                   policy_problem=problem)  # fmt: skip


def _approve_command(store: RunStore, root: Path, request: ActionRequest) -> Outcome:
    from core.criteria import run_criteria

    change = run_criteria.approve_command(
        store, request.run_id, str(request.options["key"]), request.operator,
        expected_version=request.expected_version,
    )  # fmt: skip
    refusal = None if change.ok else Refusal(change.code, change.message, change.field)
    return Outcome(request, change.ok, store.get_run(request.run_id), refusal)


# -- what they apply to -------------------------------------------------------------------------


def _steerable(run_id: str, stage: Stage, row: Mapping[str, Any]) -> str | None:
    if stage is PARENT or isinstance(stage, VerificationState):
        return None
    return f"Run {run_id} is {row['state']}; only a running run can be steered."


def _verifiable(run_id: str, stage: Stage, row: Mapping[str, Any]) -> str | None:
    # The sentences are the engine's (`run_criteria.reverify`).
    if "criteria" not in row:
        return f"Run {run_id} is still being read; try again in a moment."
    if not row["criteria"]:
        return f"Run {run_id} has no acceptance criteria to verify."
    if stage is VerificationState.VERIFYING:
        return f"Run {run_id} is being verified by the host right now."
    return None


ACTIONS: dict[str, OperatorAction] = {}
"""Every operator action by name, in the order the console shows them."""


def register(action: OperatorAction) -> OperatorAction:
    """Add ``action`` to the registry (its name, key and verb must be new)."""
    for other in ACTIONS.values():
        clash = (other.name == action.name or other.key == action.key
                 or (action.verb is not None and other.verb == action.verb))  # fmt: skip
        if clash:
            raise ValueError(f"operator action {action.name!r} clashes with {other.name!r}")
    ACTIONS[action.name] = action
    return action


register(OperatorAction(
    "retry", "r", "Retry", "Retry the selected run",
    "Retry a {stages} run (asks to confirm, shows the retry count)",
    _retry, move=Action.RETRY, asks="confirm", done="Retried",
    verb="retry", verb_help="{move} (retry_count + 1)",
    options=(Option("fresh", "--fresh", takes="flag", help="start from the base again, not "
                    "from where the last attempt left the branch"),),
))  # fmt: skip
register(OperatorAction(
    "override", "o", "Override", "Override to done, with a reason",
    "Override a {stages} run to done (asks why; marked overridden)",
    _with_reason("override"), move=Action.OVERRIDE, asks="reason", done="Overrode",
    consequence="Mark it done although it failed. It stays marked as overridden wherever it "
    "is shown.",
    verb="override", verb_help="{move}, with a reason",
    options=(Option("reason", "--reason", required=True, metavar="TEXT"),),
))  # fmt: skip
register(OperatorAction(
    "approve", "a", "Approve", "Approve a run in review", "Approve a run in {stages}",
    _approve, move=Action.APPROVE, done="Approved",
    verb="approve", verb_help="{move}; a branch to merge is merged by the host holding it",
    options=(Option("no_merge", "--no-merge", takes="flag",
                    help="approve without merging the run's branch"),
             Option("wait", "--wait", takes="flag",
                    help="wait for the host's merge and say what it came to"),
             Option("timeout", "--timeout", metavar="SECONDS",
                    help="with --wait: give up waiting after this long (default 600)")),
))  # fmt: skip
register(OperatorAction(
    "cancel", "x", "Cancel", "Cancel, with a reason",
    "Cancel a {stages} run (asks for a reason)",
    _with_reason("cancel"), move=Action.CANCEL, asks="reason", done="Cancelled",
    consequence="Stop it: a running worker is stopped, and the run is failed with your reason.",
    verb="cancel", verb_help="{move}, with a reason",
    options=(Option("reason", "--reason", required=True, metavar="TEXT"),),
))  # fmt: skip
register(OperatorAction(
    "steer", "s", "Steer", "Write to a running run's worker",
    "Steer a running run: write in the composer, ctrl+s sends",
    _steer, stages=(PARENT, *VerificationState), check=_steerable, asks="text",
    done="Steer queued for",
    verb="steer", verb_help="send a running run a message (delivered by the host)",
    options=(Option("message", None, metavar="MESSAGE"),),
))  # fmt: skip
# Not on the key bar, which is full at 80 columns: the gates panel lists both keys on every
# run that has criteria, and the help and the palette list them always.
register(OperatorAction(
    "verify", "v", "Verify", "Verify the run's acceptance criteria again, in its checkout",
    "Verify a run's acceptance criteria again in its checkout (results recorded)",
    _verify, stages=STAGES, check=_verifiable, needs_detail=True, show=False,
    verb="verify", verb_help="verify a run's acceptance criteria in its checkout now",
    options=(Option("approve", "--approve", metavar="KEY",
                    help="first allow this waiting command (its JSON argument list)"),),
    expect_version_help="with --approve: refuse if the run changed since this version",
))  # fmt: skip
register(OperatorAction(
    "approve_command", "A", "Allow command",
    "Allow the command a run's verification waits on (shows its argv first)",
    "Allow the command a {symbols} run waits on (shows the exact argv)",
    _approve_command, move=Action.APPROVE_COMMAND, asks="confirm", needs_detail=True,
    show=False,
))  # fmt: skip


def availability(action: str, row: Mapping[str, Any] | None) -> Availability:
    """Whether ``action`` can apply to ``row`` (a run's table row, or its detail for an action
    that `needs_detail`), with the reason if not: the sentences are the engine's, so pressing
    the key and being refused by the engine read the same."""
    if row is None:
        return Availability(False, "No run is selected.")
    run_id = str(row["run_id"])
    try:
        stage = stage_of(row)
    except ValueError:
        return Availability(False, f"Run {run_id} is in an unknown state.")
    entry = ACTIONS[action]
    if entry.check is not None:
        why = entry.check(run_id, stage, row)
        return Availability(why is None, why or "")
    if entry.move is not None and not is_legal(stage, entry.move):
        return Availability(False, str(IllegalTransition(run_id, stage, entry.move)))
    if entry.move is None and stage not in entry.applies_to:
        return Availability(False, f"Run {run_id} is {row['state']}; {entry.label} cannot apply.")
    return Availability(True, "")


def act(store: RunStore, root: Path, request: ActionRequest) -> Outcome:
    """Carry out ``request`` in ``store`` (of the workspace at ``root``): its action's engine
    call, which reads the run under the write lock and refuses what the run no longer allows.

    Raises:
        ServiceError: the request names no action (``unknown_action``), or the workspace's
            configuration cannot be used and the request is `strict`.
    """
    entry = ACTIONS.get(request.action)
    if entry is None:
        raise ServiceError("unknown_action", f"There is no operator action {request.action!r}.")
    return entry.call(store, root, request)
