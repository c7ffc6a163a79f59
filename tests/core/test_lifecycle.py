"""The lifecycle table, and the store applying it exactly as a pure model of the table says.

The table tests pin every illegal pair and the dispatch contract's retry table. The state machine
drives a real SQLite store with random operator actions and host moves on a few runs and checks,
after every step, that the stored runs, journal and audit agree with a dictionary-based model.
"""

from __future__ import annotations

import itertools
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from core import operator_actions
from core.intake import submit_dispatch
from core.lifecycle import (
    OPERATOR_ACTIONS,
    RETRYABLE,
    TRANSITIONS,
    Action,
    IllegalTransition,
    RunState,
    allowed_from,
    transition,
)
from core.moves import host_move
from core.operator_actions import ActionResult
from core.store.sqlite_store import VERSIONED_KINDS, SqliteStore
from tests.core.store_helpers import PATHS

ROOT = Path(__file__).resolve().parents[2]
SAMPLE: dict[str, Any] = json.loads(
    (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
)
SOURCE, TARGET = "main", "jarvis-worker-1"


def dispatch(run_id: str) -> dict[str, Any]:
    # Without a request_id the run id alone identifies the dispatch, so resubmitting it is the
    # contract's retry path rather than an idempotent replay.
    doc = {k: v for k, v in SAMPLE.items() if k != "request_id"}
    doc["run_id"] = run_id
    return doc


def drive(store: SqliteStore, run_id: str, path: tuple[Action, ...]) -> None:
    """Bring a fresh (queued) run through ``path`` of host and operator moves."""
    for action in path:
        if action in OPERATOR_ACTIONS:
            result = {
                Action.APPROVE: lambda: operator_actions.approve(store, run_id, "op"),
                Action.RETRY: lambda: operator_actions.retry(store, run_id, "op"),
                Action.OVERRIDE: lambda: operator_actions.override(store, run_id, "op", "why"),
                Action.CANCEL: lambda: operator_actions.cancel(store, run_id, "op", "why"),
            }[action]()
            assert result.ok, result.refusal
        else:
            host_move(store, run_id, action)


ILLEGAL = [
    (state, action)
    for state, action in itertools.product(RunState, Action)
    if (state, action) not in TRANSITIONS
]


# -- the table ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("state", "action"), ILLEGAL, ids=str)
def test_every_absent_pair_is_an_illegal_transition(state: RunState, action: Action) -> None:
    with pytest.raises(IllegalTransition) as caught:
        transition("task-42", state, action)
    exc = caught.value
    assert (exc.run_id, exc.state, exc.action) == ("task-42", state, action)
    text = str(exc)
    # A sentence for a person: it names the run and the state the run is actually in.
    assert text.startswith("Run task-42 is ") and text.endswith(".")
    assert f" is {state.value}" in text
    # The reader is told where the move would have been legal, so they know what to wait for.
    for legal in allowed_from(action):
        assert legal.value in text


def test_every_action_is_legal_somewhere() -> None:
    # Otherwise the refusal sentence above would name no legal state at all.
    for action in Action:
        assert allowed_from(action)


def test_legal_pairs_return_the_table_target() -> None:
    for (state, action), target in TRANSITIONS.items():
        assert transition("r", state, action) is target


def test_retry_table_of_the_dispatch_contract() -> None:
    assert RETRYABLE == {RunState.FAILED, RunState.FAILED_CONTRACT}
    assert allowed_from(Action.RETRY) == (RunState.FAILED_CONTRACT, RunState.FAILED)
    for state in RunState:
        legal = (state, Action.RETRY) in TRANSITIONS
        assert legal == (state in (RunState.FAILED, RunState.FAILED_CONTRACT)), state


def test_illegal_transition_propagates_out_of_a_transaction(tmp_path: Path) -> None:
    # The host decides a move with `transition` inside its write transaction; an illegal move
    # must reach it as IllegalTransition (and roll back), not as another exception. (A frozen
    # dataclass exception failed here: contextlib assigns __traceback__ on the way out.)
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        with pytest.raises(IllegalTransition):
            with store.transaction() as tx:
                tx.audit("task-1", actor="host", action="start", from_state=None, to_state=None)
                transition("task-1", RunState.QUEUED, Action.APPROVE)
        assert store.rows("SELECT * FROM audit") == []
    finally:
        store.close()


@pytest.mark.parametrize("state", list(RunState), ids=lambda s: s.value)
def test_resubmitting_a_run_id_follows_the_retry_table(state: RunState, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        first = submit_dispatch(
            store, dispatch("task-1"), source_lane=SOURCE, target_lane=TARGET, actor="main"
        )
        assert first.outcome == "enqueued"
        drive(store, "task-1", PATHS[state])
        before = store.get_run("task-1")
        assert before is not None and before["state"] == state.value

        again = submit_dispatch(
            store, dispatch("task-1"), source_lane=SOURCE, target_lane=TARGET, actor="main"
        )

        after = store.get_run("task-1")
        assert after is not None
        if state in (RunState.FAILED, RunState.FAILED_CONTRACT):
            assert again.outcome == "retried"
            assert after["state"] == "queued"
            assert after["retry_count"] == before["retry_count"] + 1
        else:
            assert again.outcome == "duplicate"
            assert state.value in again.message
            assert after == before
    finally:
        store.close()


# -- the store against a model --------------------------------------------------------------------

RUN_IDS = ("run-a", "run-b")
# Mostly usable input and current versions, so that most steps get past the text and version
# checks and reach the lifecycle; the refusals still come up in every few steps.
REASONS = ("checked by hand", "flaky CI, verified locally", "deadline", "", "   ")
STEERS = ("focus on the failing test", "stop and summarise", "run the linter", "", " \t ")
STALE = st.sampled_from((False, False, False, True))


@dataclass
class ModelRun:
    state: RunState = RunState.QUEUED
    retry_count: int = 0
    overridden: bool = False
    version: int = 1
    steer_count: int = 0
    audit: list[str] = field(default_factory=lambda: ["dispatch"])


class StoreMachine(RuleBasedStateMachine):
    """Random operator actions and host moves on a real store, mirrored in a pure model."""

    def __init__(self) -> None:
        super().__init__()
        # Not a pytest fixture: hypothesis builds one machine per example, and each example must
        # start from an empty database, so the machine owns its directory and removes it.
        self.dir = Path(tempfile.mkdtemp(prefix="jarvis-lifecycle-"))
        self.store = SqliteStore(self.dir / "jarvis.db")
        self.model: dict[str, ModelRun] = {}
        self.turns = 0
        for run_id in RUN_IDS:
            result = submit_dispatch(
                self.store, dispatch(run_id), source_lane=SOURCE, target_lane=TARGET, actor="main"
            )
            assert result.outcome == "enqueued"
            self.model[run_id] = ModelRun()

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- helpers ---------------------------------------------------------------------------------

    def snapshot(self) -> tuple[Any, ...]:
        s = self.store
        return (
            s.rows("SELECT * FROM runs ORDER BY run_id"),
            s.rows("SELECT * FROM journal ORDER BY seq"),
            s.rows("SELECT * FROM audit ORDER BY id"),
            s.rows("SELECT * FROM steering_events ORDER BY steer_id"),
        )

    def expected_version(self, run_id: str, stale: bool) -> int | None:
        if not stale:
            return None
        run = self.store.get_run(run_id)
        assert run is not None
        return int(run["version"]) - 1

    def apply(
        self,
        run_id: str,
        action: Action,
        result: ActionResult,
        before: tuple[Any, ...],
        *,
        refusal: str | None,
    ) -> None:
        """Check ``result`` against the model's prediction, then advance the model."""
        if refusal is not None:
            assert not result.ok
            assert result.refusal is not None and result.refusal.code == refusal, result
            # A refusal is a read: nothing in the database may differ.
            assert self.snapshot() == before
            return
        assert result.ok, result.refusal
        model = self.model[run_id]
        model.state = transition(run_id, model.state, action)
        model.version += 1
        model.audit.append(action.value)
        if action is Action.RETRY:
            model.retry_count += 1
        if action is Action.OVERRIDE:
            model.overridden = True
        assert result.run is not None and result.run == self.store.get_run(run_id)

    def operator(
        self, run_id: str, action: Action, reason: str | None, stale: bool
    ) -> tuple[ActionResult, str | None, tuple[Any, ...]]:
        version = self.expected_version(run_id, stale)
        before = self.snapshot()
        store, op = self.store, "operator-1"
        if action is Action.APPROVE:
            result = operator_actions.approve(store, run_id, op, expected_version=version)
        elif action is Action.RETRY:
            result = operator_actions.retry(store, run_id, op, expected_version=version)
        elif action is Action.OVERRIDE:
            result = operator_actions.override(store, run_id, op, reason, expected_version=version)
        else:
            result = operator_actions.cancel(store, run_id, op, reason, expected_version=version)
        # The order in which the actions decide: text first (no transaction), then the version
        # the operator looked at, then the lifecycle.
        refusal: str | None = None
        if action in (Action.OVERRIDE, Action.CANCEL) and not (reason or "").strip():
            refusal = "reason_required"
        elif stale:
            refusal = "stale_version"
        elif (self.model[run_id].state, action) not in TRANSITIONS:
            refusal = "illegal_transition"
        return result, refusal, before

    # -- rules -----------------------------------------------------------------------------------

    @rule(run_id=st.sampled_from(RUN_IDS), pick=st.integers(0, 7))
    def advance(self, run_id: str, pick: int) -> None:
        """A legal move (or a steer or re-dispatch) for the run, so runs travel the whole table.

        The other rules mostly hit refusals once runs are spread over the states; this one
        makes sure retries, overrides and approvals succeed often enough to be checked.
        """
        state = self.model[run_id].state
        moves: list[str] = [a.value for (s, a) in TRANSITIONS if s is state]
        if state is RunState.RUNNING:
            moves.append("steer")
        if state in RETRYABLE:
            moves.append("resubmit")
        if not moves:
            return
        # Hypothesis favours small integers; the machine's own turn counter spreads the choice
        # over every legal move while staying deterministic for replay and shrinking.
        move = moves[(self.turns + pick) % len(moves)]
        self.turns += 1
        if move == "steer":
            self.steer(run_id, STEERS[0], False)
        elif move == "resubmit":
            self.resubmit(run_id)
        elif Action(move) in OPERATOR_ACTIONS:
            action = Action(move)
            result, refusal, before = self.operator(run_id, action, REASONS[0], False)
            assert refusal is None
            self.apply(run_id, action, result, before, refusal=None)
        else:
            self.host(run_id, Action(move))

    @rule(run_id=st.sampled_from(RUN_IDS), stale=STALE)
    def approve(self, run_id: str, stale: bool) -> None:
        result, refusal, before = self.operator(run_id, Action.APPROVE, None, stale)
        self.apply(run_id, Action.APPROVE, result, before, refusal=refusal)

    @rule(run_id=st.sampled_from(RUN_IDS), stale=STALE)
    def retry(self, run_id: str, stale: bool) -> None:
        result, refusal, before = self.operator(run_id, Action.RETRY, None, stale)
        self.apply(run_id, Action.RETRY, result, before, refusal=refusal)

    @rule(run_id=st.sampled_from(RUN_IDS), reason=st.sampled_from(REASONS), stale=STALE)
    def override(self, run_id: str, reason: str, stale: bool) -> None:
        result, refusal, before = self.operator(run_id, Action.OVERRIDE, reason, stale)
        self.apply(run_id, Action.OVERRIDE, result, before, refusal=refusal)
        if result.ok:
            assert result.run is not None and result.run["override_reason"] == reason

    @rule(run_id=st.sampled_from(RUN_IDS), reason=st.sampled_from(REASONS), stale=STALE)
    def cancel(self, run_id: str, reason: str, stale: bool) -> None:
        result, refusal, before = self.operator(run_id, Action.CANCEL, reason, stale)
        self.apply(run_id, Action.CANCEL, result, before, refusal=refusal)

    @rule(run_id=st.sampled_from(RUN_IDS), message=st.sampled_from(STEERS), stale=STALE)
    def steer(self, run_id: str, message: str, stale: bool) -> None:
        version = self.expected_version(run_id, stale)
        before = self.snapshot()
        result = operator_actions.steer(
            self.store, run_id, "operator-1", message, expected_version=version
        )
        model = self.model[run_id]
        if not message.strip():
            refusal: str | None = "empty_message"
        elif stale:
            refusal = "stale_version"
        elif model.state is not RunState.RUNNING:
            refusal = "not_running"
        else:
            refusal = None
        if refusal is not None:
            assert not result.ok and result.refusal is not None
            assert result.refusal.code == refusal, result
            assert self.snapshot() == before
            return
        assert result.ok, result.refusal
        # A steer is recorded and journalled but does not bump the version: it must never make
        # another operator's pending decision stale.
        model.steer_count += 1
        model.audit.append("steer")
        pending = self.store.rows(
            "SELECT status FROM steering_events WHERE steer_id = ?", [result.steer_id]
        )
        assert pending == [{"status": "pending"}]

    def host(self, run_id: str, action: Action) -> None:
        model = self.model[run_id]
        before = self.snapshot()
        if (model.state, action) not in TRANSITIONS:
            with pytest.raises(IllegalTransition):
                host_move(self.store, run_id, action)
            assert self.snapshot() == before
            return
        host_move(self.store, run_id, action)
        model.state = TRANSITIONS[(model.state, action)]
        model.version += 1
        model.audit.append(action.value)  # the host's moves are audited like anyone's

    # One rule per host move, so the host moves runs forward about as often as operators act.
    @rule(run_id=st.sampled_from(RUN_IDS))
    def start(self, run_id: str) -> None:
        self.host(run_id, Action.START)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def pass_gates(self, run_id: str) -> None:
        self.host(run_id, Action.PASS_GATES)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def fail_gates(self, run_id: str) -> None:
        self.host(run_id, Action.FAIL_GATES)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def fail(self, run_id: str) -> None:
        self.host(run_id, Action.FAIL)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def resubmit(self, run_id: str) -> None:
        model = self.model[run_id]
        before = self.snapshot()
        result = submit_dispatch(
            self.store, dispatch(run_id), source_lane=SOURCE, target_lane=TARGET, actor="main"
        )
        if model.state in RETRYABLE:
            assert result.outcome == "retried"
            model.state = RunState.QUEUED
            model.retry_count += 1
            model.version += 1
            model.audit.append("retry")
        else:
            assert result.outcome == "duplicate"
            assert self.snapshot() == before

    # -- invariants ------------------------------------------------------------------------------

    @invariant()
    def store_matches_model(self) -> None:
        for run_id, model in self.model.items():
            run = self.store.get_run(run_id)
            assert run is not None
            assert run["state"] == model.state.value
            assert run["retry_count"] == model.retry_count
            assert bool(run["overridden"]) == model.overridden
            assert run["steer_count"] == model.steer_count
            assert run["version"] == model.version

    @invariant()
    def version_counts_versioned_journal_rows(self) -> None:
        marks = ", ".join("?" for _ in VERSIONED_KINDS)
        for run_id in self.model:
            rows = self.store.rows(
                f"SELECT COUNT(*) AS n FROM journal WHERE run_id = ? AND kind IN ({marks})",
                [run_id, *sorted(VERSIONED_KINDS)],
            )
            run = self.store.get_run(run_id)
            assert run is not None and run["version"] == rows[0]["n"]

    @invariant()
    def journal_replays_to_the_stored_state(self) -> None:
        for run_id in self.model:
            journal = self.store.journal_since(0, run_id=run_id, limit=100_000)
            assert journal[0]["kind"] == "created"
            state = json.loads(journal[0]["payload"])["state"]
            for row in journal[1:]:
                if row["kind"] == "transition":
                    payload = json.loads(row["payload"])
                    assert payload["from"] == state
                    state = payload["to"]
            assert state == self.model[run_id].state.value

    @invariant()
    def one_audit_row_per_successful_move(self) -> None:
        for run_id, model in self.model.items():
            rows = self.store.rows(
                "SELECT action FROM audit WHERE run_id = ? ORDER BY id", [run_id]
            )
            assert [r["action"] for r in rows] == model.audit


StoreMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
test_store_follows_the_lifecycle_model = StoreMachine.TestCase
