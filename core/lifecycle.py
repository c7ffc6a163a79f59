"""The run lifecycle: one transition table, and the only function that applies it.

Every module that changes where a run stands asks `transition`; nothing else compares states.
The table is the architecture's canonical lifecycle, the verification of a run's acceptance
criteria, and the operator's moves:

    queued -> running -> review_requested -> done          (approve: nothing to merge)
                      -> failed_contract  -> queued | done (retry | override)
                      -> failed           -> queued | done (retry | override)
    queued | running  -> failed                            (cancel)

    running, its gates passed, with criteria to verify (the sub-machine of running):
    running -> pending -> verifying -> review_requested    (criteria pass)
                                    -> failed              (a criterion fails)
                                    -> awaiting_approval -> pending  (approve_command)

    review_requested, approved with a branch to merge (the sub-machine of review_requested):
    review_requested -> merging -> done                    (the host merged it)
                                -> review_requested        (the merge was refused)

A run in ``pending``, ``verifying`` or ``awaiting_approval`` is still ``running`` (the store's
``state``); where its verification stands is its ``verification_state``. A run in ``merging`` is
still ``review_requested``: an operator approved it, and the host holding its repository merges
its branch outside any store transaction (`core.host.merges`); the store's ``merge_state``. The
table names every kind of stage alike, so a sub-machine's move is a move like any other: legal or
an `IllegalTransition`, versioned, journalled and audited (`core.moves.apply_move`).

docs/lifecycle.md draws it; `tests/core/test_lifecycle.py` checks this table against a model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, TypeAlias


class RunState(StrEnum):
    """A run's state: the store's ``runs.state``."""

    QUEUED = "queued"
    RUNNING = "running"
    REVIEW_REQUESTED = "review_requested"
    FAILED_CONTRACT = "failed_contract"
    FAILED = "failed"
    DONE = "done"


class VerificationState(StrEnum):
    """Where a running run's acceptance criteria stand once its gates passed: the states of
    ``running``'s sub-machine, the store's ``runs.verification_state`` (NULL outside it)."""

    PENDING = "pending"
    """The gates passed; the host verifies the criteria next (or again, after a restart)."""
    VERIFYING = "verifying"
    """The host runs the criteria in the run's checkout."""
    AWAITING_APPROVAL = "awaiting_approval"
    """A criterion's command is off the allowlist and waits for an operator to allow it."""


class MergeState(StrEnum):
    """Where an approved run's merge stands: the states of ``review_requested``'s sub-machine,
    the store's ``runs.merge_state`` (NULL outside it)."""

    MERGING = "merging"
    """Approved; the host holding the run's repository merges its branch next (or again, after
    a restart: the merge finds itself done)."""


SubStage: TypeAlias = VerificationState | MergeState
Stage: TypeAlias = RunState | SubStage
"""Where a run stands: a state, or a state of one of its sub-machines. ``running`` itself is the
stage of a run whose worker is at work; ``review_requested`` of one waiting for its review."""

PARENT = RunState.RUNNING
"""The state whose sub-machine `VerificationState` is."""
MERGE_PARENT = RunState.REVIEW_REQUESTED
"""The state whose sub-machine `MergeState` is."""
SUB_STAGES: dict[RunState, tuple[SubStage, ...]] = {
    PARENT: tuple(VerificationState),
    MERGE_PARENT: tuple(MergeState),
}
"""Each state that has a sub-machine, and its states."""

STAGES: tuple[Stage, ...] = tuple(
    stage for state in RunState for stage in (state, *SUB_STAGES.get(state, ()))
)
"""Every stage, in lifecycle order: each state, then its sub-states."""

assert len({stage.value for stage in STAGES}) == len(STAGES), "stage names must not repeat"


class Action(StrEnum):
    """Everything that can move a run: the host's moves, then the operators'."""

    START = "start"
    PASS_GATES = "pass_gates"
    FAIL_GATES = "fail_gates"
    FAIL = "fail"
    AWAIT_VERIFICATION = "await_verification"
    START_VERIFICATION = "start_verification"
    AWAIT_APPROVAL = "await_approval"
    APPROVE = "approve"
    RETRY = "retry"
    OVERRIDE = "override"
    CANCEL = "cancel"
    APPROVE_COMMAND = "approve_command"
    REQUEST_MERGE = "request_merge"
    """The operator's approval of a run with a branch to merge: the host merges it next."""
    MERGE = "merge"
    REFUSE_MERGE = "refuse_merge"


S = RunState
V = VerificationState
M = MergeState
A = Action

TRANSITIONS: dict[tuple[Stage, Action], Stage] = {
    (S.QUEUED, A.START): S.RUNNING,
    (S.RUNNING, A.PASS_GATES): S.REVIEW_REQUESTED,
    (S.RUNNING, A.FAIL_GATES): S.FAILED_CONTRACT,
    (S.RUNNING, A.FAIL): S.FAILED,
    # The gates passed and the run has acceptance criteria: it waits, still running, for them.
    (S.RUNNING, A.AWAIT_VERIFICATION): V.PENDING,
    (V.PENDING, A.START_VERIFICATION): V.VERIFYING,
    (V.VERIFYING, A.PASS_GATES): S.REVIEW_REQUESTED,
    (V.VERIFYING, A.FAIL): S.FAILED,
    (V.VERIFYING, A.AWAIT_APPROVAL): V.AWAITING_APPROVAL,
    (V.AWAITING_APPROVAL, A.APPROVE_COMMAND): V.PENDING,
    # An operator's `jarvis verify` decides a run that waits on verification, as the host would.
    (V.PENDING, A.PASS_GATES): S.REVIEW_REQUESTED,
    (V.PENDING, A.FAIL): S.FAILED,
    (V.PENDING, A.AWAIT_APPROVAL): V.AWAITING_APPROVAL,
    (V.AWAITING_APPROVAL, A.PASS_GATES): S.REVIEW_REQUESTED,
    (V.AWAITING_APPROVAL, A.FAIL): S.FAILED,
    (S.REVIEW_REQUESTED, A.APPROVE): S.DONE,
    # Approving a run whose branch is to be merged asks the host holding its repository.
    (S.REVIEW_REQUESTED, A.REQUEST_MERGE): M.MERGING,
    (M.MERGING, A.MERGE): S.DONE,
    (M.MERGING, A.REFUSE_MERGE): S.REVIEW_REQUESTED,
    (S.FAILED, A.RETRY): S.QUEUED,
    (S.FAILED_CONTRACT, A.RETRY): S.QUEUED,
    (S.FAILED, A.OVERRIDE): S.DONE,
    (S.FAILED_CONTRACT, A.OVERRIDE): S.DONE,
    (S.QUEUED, A.CANCEL): S.FAILED,
    (S.RUNNING, A.CANCEL): S.FAILED,
    (V.PENDING, A.CANCEL): S.FAILED,
    (V.VERIFYING, A.CANCEL): S.FAILED,
    (V.AWAITING_APPROVAL, A.CANCEL): S.FAILED,
}
"""(stage, action) → next stage. A pair that is absent is an illegal move."""

OPERATOR_ACTIONS = frozenset(
    {A.APPROVE, A.REQUEST_MERGE, A.RETRY, A.OVERRIDE, A.CANCEL, A.APPROVE_COMMAND}
)
REASON_REQUIRED = frozenset({A.OVERRIDE, A.CANCEL})
"""Destructive moves carry a non-blank reason, recorded with the transition."""

TERMINAL = frozenset({S.DONE})
NEEDS_HUMAN: frozenset[Stage] = frozenset(
    {S.REVIEW_REQUESTED, S.FAILED_CONTRACT, S.FAILED, V.AWAITING_APPROVAL}
)
"""Stages in which nothing happens until an operator decides (``merging`` waits on a host)."""
RETRYABLE = frozenset(stage for (stage, action) in TRANSITIONS if action is A.RETRY)
"""The dispatch contract's retry table: resubmitting these run ids retries them."""

_PHRASE = {
    A.START: "it can start",
    A.PASS_GATES: "it can pass its gates",
    A.FAIL_GATES: "it can fail its gates",
    A.FAIL: "it can fail",
    A.AWAIT_VERIFICATION: "it can wait for its criteria to be verified",
    A.START_VERIFICATION: "its criteria can be verified",
    A.AWAIT_APPROVAL: "it can wait for a command's approval",
    A.APPROVE: "it can be approved",
    A.RETRY: "it can be retried",
    A.OVERRIDE: "it can be overridden",
    A.CANCEL: "it can be cancelled",
    A.APPROVE_COMMAND: "a command can be approved for it",
    A.REQUEST_MERGE: "it can be approved",
    A.MERGE: "its branch can be merged",
    A.REFUSE_MERGE: "its merge can be refused",
}

_BARE: dict[Stage, str] = {PARENT: "its worker at work", MERGE_PARENT: "not yet approved"}
"""What a state with a sub-machine means alone, where its sub-states are named apart."""


def state_of(stage: Stage) -> RunState:
    """The run's state at ``stage`` (a sub-state's parent)."""
    if isinstance(stage, VerificationState):
        return PARENT
    if isinstance(stage, MergeState):
        return MERGE_PARENT
    return stage


def verification_of(stage: Stage) -> VerificationState | None:
    """The run's ``verification_state`` at ``stage``: None outside the sub-machine."""
    return stage if isinstance(stage, VerificationState) else None


def merge_of(stage: Stage) -> MergeState | None:
    """The run's ``merge_state`` at ``stage``: None outside the sub-machine."""
    return stage if isinstance(stage, MergeState) else None


def stage_of(run: Mapping[str, Any]) -> Stage:
    """Where a stored run (a row with ``state``, ``verification_state`` and ``merge_state``)
    stands.

    A sub-state outside its parent is ignored: each sub-machine exists only there.

    Raises:
        ValueError: the row names no state (or sub-state) of the lifecycle.
    """
    state = RunState(run["state"])
    if state is PARENT and (sub := run.get("verification_state")):
        return VerificationState(sub)
    if state is MERGE_PARENT and (merging := run.get("merge_state")):
        return MergeState(merging)
    return state


def label(stage: Stage) -> str:
    """The stage as people read it: ``running`` or ``running (verifying)``."""
    parent = state_of(stage)
    return stage.value if parent is stage else f"{parent.value} ({stage.value})"


def allowed_from(action: Action) -> tuple[Stage, ...]:
    """The stages from which ``action`` is legal, in lifecycle order."""
    return tuple(s for s in STAGES if (s, action) in TRANSITIONS)


def _collapsed(stages: Iterable[Stage]) -> list[str]:
    """Labels of ``stages``, a state standing for its sub-states when all of them are there
    (and saying it means none of them when they are not)."""
    chosen = list(stages)
    whole = {p for p, subs in SUB_STAGES.items() if p in chosen and all(s in chosen for s in subs)}
    return [
        f"{s.value} ({_BARE[s]})" if s in _BARE and s not in whole else label(s)
        for s in chosen
        if state_of(s) is s or state_of(s) not in whole
    ]


def or_list(stages: Iterable[Stage]) -> str:
    """``a``, ``a or b``, ``a, b or c``: the stages' labels, for a sentence."""
    names = _collapsed(stages)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def move_text(action: Action) -> str:
    """``action`` as the table has it, for help texts: ``failed_contract | failed → queued``.

    The targets are joined the same way (an action has one target per source, but not always the
    same one: ``pass_gates``)."""
    sources = allowed_from(action)
    targets = dict.fromkeys(TRANSITIONS[(s, action)] for s in sources)
    return f"{' | '.join(_collapsed(sources))} → {' | '.join(_collapsed(targets))}"


class IllegalTransition(Exception):
    """A move the lifecycle does not allow; ``str()`` is a sentence for the user.

    A plain exception, not a frozen dataclass: raising one through a context manager (a store
    transaction) assigns ``__traceback__``, which a frozen instance refuses.
    """

    def __init__(self, run_id: str, stage: Stage, action: Action) -> None:
        super().__init__(run_id, stage, action)
        self.run_id = run_id
        self.stage = stage
        self.action = action

    @property
    def state(self) -> RunState:
        return state_of(self.stage)

    def __str__(self) -> str:
        return (
            f"Run {self.run_id} is {label(self.stage)}; {_PHRASE[self.action]} only "
            f"when it is {or_list(allowed_from(self.action))}."
        )


def transition(run_id: str, stage: Stage, action: Action) -> Stage:
    """The stage after ``action``.

    Raises:
        IllegalTransition: the lifecycle does not allow ``action`` from ``stage``.
    """
    try:
        return TRANSITIONS[(stage, action)]
    except KeyError:
        raise IllegalTransition(run_id, stage, action) from None


def is_legal(stage: Stage, action: Action) -> bool:
    return (stage, action) in TRANSITIONS
