"""The run lifecycle: one transition table, and the only function that applies it.

Every module that changes a run's state asks `transition`; nothing else compares states. The
table is the architecture's canonical lifecycle plus the operator's moves:

    queued -> running -> review_requested -> done          (approve)
                      -> failed_contract  -> queued | done (retry | override)
                      -> failed           -> queued | done (retry | override)
    queued | running  -> failed                            (cancel)

docs/lifecycle.md draws it; `tests/core/test_lifecycle.py` checks this table against a model.
"""

from __future__ import annotations

from enum import StrEnum


class RunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    REVIEW_REQUESTED = "review_requested"
    FAILED_CONTRACT = "failed_contract"
    FAILED = "failed"
    DONE = "done"


class Action(StrEnum):
    """Everything that can move a run. The first four belong to the host, the rest to operators."""

    START = "start"
    PASS_GATES = "pass_gates"
    FAIL_GATES = "fail_gates"
    FAIL = "fail"
    APPROVE = "approve"
    RETRY = "retry"
    OVERRIDE = "override"
    CANCEL = "cancel"


S = RunState
A = Action

TRANSITIONS: dict[tuple[RunState, Action], RunState] = {
    (S.QUEUED, A.START): S.RUNNING,
    (S.RUNNING, A.PASS_GATES): S.REVIEW_REQUESTED,
    (S.RUNNING, A.FAIL_GATES): S.FAILED_CONTRACT,
    (S.RUNNING, A.FAIL): S.FAILED,
    (S.REVIEW_REQUESTED, A.APPROVE): S.DONE,
    (S.FAILED, A.RETRY): S.QUEUED,
    (S.FAILED_CONTRACT, A.RETRY): S.QUEUED,
    (S.FAILED, A.OVERRIDE): S.DONE,
    (S.FAILED_CONTRACT, A.OVERRIDE): S.DONE,
    (S.QUEUED, A.CANCEL): S.FAILED,
    (S.RUNNING, A.CANCEL): S.FAILED,
}
"""(state, action) → next state. A pair that is absent is an illegal move."""

OPERATOR_ACTIONS = frozenset({A.APPROVE, A.RETRY, A.OVERRIDE, A.CANCEL})
REASON_REQUIRED = frozenset({A.OVERRIDE, A.CANCEL})
"""Destructive moves carry a non-blank reason, recorded with the transition."""

TERMINAL = frozenset({S.DONE})
NEEDS_HUMAN = frozenset({S.REVIEW_REQUESTED, S.FAILED_CONTRACT, S.FAILED})
"""States in which nothing happens until an operator decides."""
RETRYABLE = frozenset(state for (state, action) in TRANSITIONS if action is A.RETRY)
"""The dispatch contract's retry table: resubmitting these run ids retries them."""

_VERB = {
    A.START: "start",
    A.PASS_GATES: "pass its gates",
    A.FAIL_GATES: "fail its gates",
    A.FAIL: "fail",
    A.APPROVE: "approved",
    A.RETRY: "retried",
    A.OVERRIDE: "overridden",
    A.CANCEL: "cancelled",
}


def allowed_from(action: Action) -> tuple[RunState, ...]:
    """The states from which ``action`` is legal, in lifecycle order."""
    return tuple(s for s in RunState if (s, action) in TRANSITIONS)


def _or_list(states: tuple[RunState, ...]) -> str:
    names = [s.value for s in states]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


class IllegalTransition(Exception):
    """A move the lifecycle does not allow; ``str()`` is a sentence for the user.

    A plain exception, not a frozen dataclass: raising one through a context manager (a store
    transaction) assigns ``__traceback__``, which a frozen instance refuses.
    """

    def __init__(self, run_id: str, state: RunState, action: Action) -> None:
        super().__init__(run_id, state, action)
        self.run_id = run_id
        self.state = state
        self.action = action

    def __str__(self) -> str:
        legal = allowed_from(self.action)
        verb = _VERB[self.action]
        if self.action in OPERATOR_ACTIONS:
            return (
                f"Run {self.run_id} is {self.state.value}; it can be {verb} only "
                f"when it is {_or_list(legal)}."
            )
        return (
            f"Run {self.run_id} is {self.state.value}; it can {verb} only "
            f"when it is {_or_list(legal)}."
        )


def transition(run_id: str, state: RunState, action: Action) -> RunState:
    """The state after ``action``.

    Raises:
        IllegalTransition: the lifecycle does not allow ``action`` from ``state``.
    """
    try:
        return TRANSITIONS[(state, action)]
    except KeyError:
        raise IllegalTransition(run_id, state, action) from None


def is_legal(state: RunState, action: Action) -> bool:
    return (state, action) in TRANSITIONS
