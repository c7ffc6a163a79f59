"""The lifecycle table, and the store applying it exactly as a pure model of the table says.

The table tests check every (stage, action) pair, the verification sub-machine of ``running``
included, against the table and against docs/lifecycle.md, and pin the dispatch contract's retry
table. The store tests check that every verification move bumps the run's version and is
journalled, so that an operator who looked at the run before is refused as stale. The state
machine drives a real SQLite store with random operator actions and host moves on a few runs and
checks, after every step, that the stored runs, journal and audit agree with a dictionary-based
model.
"""

from __future__ import annotations

import itertools
import json
import re
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
from core.criteria import run_criteria
from core.intake import submit_dispatch
from core.lifecycle import (
    MERGE_PARENT,
    NEEDS_HUMAN,
    OPERATOR_ACTIONS,
    PARENT,
    RETRYABLE,
    STAGES,
    TERMINAL,
    TRANSITIONS,
    Action,
    IllegalTransition,
    MergeState,
    RunState,
    Stage,
    VerificationState,
    allowed_from,
    label,
    merge_of,
    stage_of,
    state_of,
    transition,
    verification_of,
)
from core.moves import host_move, moved
from core.operator_actions import ActionResult
from core.store.runs import VERSIONED_KINDS
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import PATHS

ROOT = Path(__file__).resolve().parents[2]
SAMPLE: dict[str, Any] = json.loads(
    (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
)
SOURCE, TARGET = "main", "jarvis-worker-1"
V = VerificationState


def dispatch(run_id: str) -> dict[str, Any]:
    # Without a request_id the run id alone identifies the dispatch, so resubmitting it is the
    # contract's retry path rather than an idempotent replay.
    doc = {k: v for k, v in SAMPLE.items() if k != "request_id"}
    doc["run_id"] = run_id
    return doc


#: Operator actions `drive` takes through the operator's own call; the rest (approving a run
#: with a branch to merge among them: these runs have none) as the store's move.
BY_OPERATOR = {Action.APPROVE, Action.RETRY, Action.OVERRIDE, Action.CANCEL}


def drive(store: SqliteStore, run_id: str, path: tuple[Action, ...]) -> None:
    """Bring a fresh (queued) run through ``path`` of host and operator moves."""
    for action in path:
        if action in BY_OPERATOR:
            result = {
                Action.APPROVE: lambda: operator_actions.approve(store, run_id, "op"),
                Action.RETRY: lambda: operator_actions.retry(store, run_id, "op"),
                Action.OVERRIDE: lambda: operator_actions.override(store, run_id, "op", "why"),
                Action.CANCEL: lambda: operator_actions.cancel(store, run_id, "op", "why"),
            }[action]()
            assert result.ok, result.refusal
        else:
            host_move(store, run_id, action)


PAIRS = list(itertools.product(STAGES, Action))


def pair_id(pair: tuple[Stage, Action]) -> str:
    return f"{pair[0].value}-{pair[1].value}"


# -- the table ------------------------------------------------------------------------------------


def test_the_stages_are_the_states_with_their_sub_machines_inside() -> None:
    assert [s for s in STAGES if isinstance(s, RunState)] == list(RunState)
    assert [s for s in STAGES if isinstance(s, VerificationState)] == list(VerificationState)
    assert [s for s in STAGES if isinstance(s, MergeState)] == list(MergeState)
    # Each sub-state comes right after its parent, in the sub-machine's own order.
    for parent, subs in ((PARENT, VerificationState), (MERGE_PARENT, MergeState)):
        at = STAGES.index(parent)
        assert STAGES[at + 1 : at + 1 + len(subs)] == tuple(subs)
    for stage in STAGES:
        parents: dict[type, Stage] = {VerificationState: PARENT, MergeState: MERGE_PARENT}
        assert state_of(stage) is parents.get(type(stage), stage)
        assert verification_of(stage) is (stage if isinstance(stage, VerificationState) else None)
        assert merge_of(stage) is (stage if isinstance(stage, MergeState) else None)
    assert label(V.VERIFYING) == "running (verifying)" and label(RunState.DONE) == "done"
    assert label(MergeState.MERGING) == "review_requested (merging)"


def test_a_merge_moves_only_within_review_requested_or_on_to_done() -> None:
    merging = MergeState.MERGING
    assert allowed_from(Action.REQUEST_MERGE) == (MERGE_PARENT,)
    assert {a for (s, a) in TRANSITIONS if s is merging} == {Action.MERGE, Action.REFUSE_MERGE}
    assert TRANSITIONS[(merging, Action.MERGE)] is RunState.DONE
    assert TRANSITIONS[(merging, Action.REFUSE_MERGE)] is MERGE_PARENT
    # Decided, and in a host's hands: no operator's move applies, and it needs no human.
    assert not {a for (s, a) in TRANSITIONS if s is merging} & OPERATOR_ACTIONS
    assert merging not in NEEDS_HUMAN and MERGE_PARENT in NEEDS_HUMAN
    refused = str(IllegalTransition("r1", merging, Action.APPROVE))
    assert refused == ("Run r1 is review_requested (merging); it can be approved only when it "
                       "is review_requested (not yet approved).")  # fmt: skip


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_every_stage_and_action_is_either_the_tables_move_or_illegal(
    pair: tuple[Stage, Action],
) -> None:
    stage, action = pair
    if pair in TRANSITIONS:
        assert transition("task-42", stage, action) is TRANSITIONS[pair]
        return
    with pytest.raises(IllegalTransition) as caught:
        transition("task-42", stage, action)
    exc = caught.value
    assert (exc.run_id, exc.stage, exc.action) == ("task-42", stage, action)
    assert exc.state is state_of(stage)
    text = str(exc)
    # A sentence for a person: it names the run and the stage the run is actually in.
    assert text.startswith(f"Run task-42 is {label(stage)};") and text.endswith(".")
    # The reader is told where the move would have been legal, so they know what to wait for:
    # every such stage, or its state when the move is legal in all of that state's stages.
    for legal in allowed_from(action):
        assert legal.value in text or state_of(legal).value in text


def test_the_table_names_only_stages_and_never_stays_put() -> None:
    for (stage, action), target in TRANSITIONS.items():
        assert stage in STAGES and target in STAGES and isinstance(action, Action)
        assert target != stage, f"{stage}-{action} moves nowhere"


def test_every_stage_is_reachable_and_only_done_is_terminal() -> None:
    reached = {RunState.QUEUED}
    frontier = [RunState.QUEUED]
    while frontier:
        here = frontier.pop()
        for (stage, _action), target in TRANSITIONS.items():
            if stage == here and target not in reached:
                reached.add(target)
                frontier.append(target)
    assert reached == set(STAGES)
    ends = {stage for stage in STAGES if not any(s == stage for s, _a in TRANSITIONS)}
    assert ends == TERMINAL == {RunState.DONE}


def test_every_action_is_legal_somewhere() -> None:
    # Otherwise the refusal sentence above would name no legal stage at all.
    for action in Action:
        assert allowed_from(action)


def test_verification_moves_only_within_running_or_out_of_it() -> None:
    for (stage, action), target in TRANSITIONS.items():
        if isinstance(target, VerificationState):
            # Into or within the sub-machine: only from running or one of its stages.
            assert state_of(stage) is PARENT, (stage, action)
        if isinstance(stage, VerificationState) and not isinstance(target, VerificationState):
            # Out of it: decided, or cancelled, like a running run.
            assert (PARENT, action) in TRANSITIONS, (stage, action)
    # Every stage of running can be cancelled and failed; only running itself gates output.
    for stage in (PARENT, *VerificationState):
        assert (stage, Action.CANCEL) in TRANSITIONS and (stage, Action.FAIL) in TRANSITIONS
    assert allowed_from(Action.FAIL_GATES) == (PARENT,)
    assert allowed_from(Action.APPROVE_COMMAND) == (V.AWAITING_APPROVAL,)
    assert V.AWAITING_APPROVAL in NEEDS_HUMAN and {V.PENDING, V.VERIFYING}.isdisjoint(NEEDS_HUMAN)


def _doc_table() -> dict[tuple[Stage, Action], Stage]:
    """The table docs/lifecycle.md draws (its "from | action | to" rows)."""
    text = (ROOT / "docs" / "lifecycle.md").read_text()
    by_label = {label(stage): stage for stage in STAGES}
    table: dict[tuple[Stage, Action], Stage] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[1] not in {a.value for a in Action}:
            continue
        for source in re.split(r",\s*(?![^()]*\))", cells[0]):
            key = (by_label[source], Action(cells[1]))
            assert key not in table, f"docs/lifecycle.md lists {key} twice"
            table[key] = by_label[cells[2]]
    return table


def test_docs_draw_the_same_table() -> None:
    assert _doc_table() == TRANSITIONS


def test_retry_table_of_the_dispatch_contract() -> None:
    assert RETRYABLE == {RunState.FAILED, RunState.FAILED_CONTRACT}
    assert allowed_from(Action.RETRY) == (RunState.FAILED_CONTRACT, RunState.FAILED)
    for stage in STAGES:
        legal = (stage, Action.RETRY) in TRANSITIONS
        assert legal == (stage in (RunState.FAILED, RunState.FAILED_CONTRACT)), stage


def test_a_stored_run_stands_at_its_state_or_its_stage_of_verification() -> None:
    assert stage_of({"state": "running", "verification_state": "verifying"}) is V.VERIFYING
    assert stage_of({"state": "running", "verification_state": None}) is RunState.RUNNING
    assert stage_of({"state": "running"}) is RunState.RUNNING
    # Verification exists only inside running: a leftover elsewhere is not a stage.
    assert stage_of({"state": "failed", "verification_state": "pending"}) is RunState.FAILED
    with pytest.raises(ValueError):
        stage_of({"state": "running", "verification_state": "thinking"})


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


@pytest.mark.parametrize("stage", STAGES, ids=lambda s: s.value)
def test_resubmitting_a_run_id_follows_the_retry_table(stage: Stage, tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        first = submit_dispatch(
            store, dispatch("task-1"), source_lane=SOURCE, target_lane=TARGET, actor="main"
        )
        assert first.outcome == "enqueued"
        drive(store, "task-1", PATHS[stage])
        before = store.get_run("task-1")
        assert before is not None and stage_of(before) is stage

        again = submit_dispatch(
            store, dispatch("task-1"), source_lane=SOURCE, target_lane=TARGET, actor="main"
        )

        after = store.get_run("task-1")
        assert after is not None
        if stage in (RunState.FAILED, RunState.FAILED_CONTRACT):
            assert again.outcome == "retried"
            assert after["state"] == "queued"
            assert after["retry_count"] == before["retry_count"] + 1
        else:
            assert again.outcome == "duplicate"
            assert state_of(stage).value in again.message
            assert after == before
    finally:
        store.close()


# -- verification moves in the store --------------------------------------------------------------

#: An unlisted command: verification waits for an operator to allow it.
UNLISTED = {"type": "command_success", "command": ["deploy-check", "--dry-run"],
            "description": "the deploy check passes"}  # fmt: skip
KEY = json.dumps(UNLISTED["command"])


def _criteria_run(store: SqliteStore, run_id: str) -> None:
    doc = {**dispatch(run_id), "acceptance_criteria": [UNLISTED], "universal_criteria": False}
    assert submit_dispatch(store, doc, source_lane=SOURCE, target_lane=TARGET,
                           actor="main").outcome == "enqueued"  # fmt: skip
    host_move(store, run_id, Action.START)
    checkout = run_criteria.checkout_dir(store.path.parent, run_id)
    checkout.mkdir(parents=True, exist_ok=True)
    (checkout / "worker-left-this.txt").write_text("work\n")


def _host_verifies(store: SqliteStore, run_id: str) -> dict[str, Any]:
    from core.criteria.allowlist import DEFAULT_POLICY

    run = run_criteria.begin(store, run_id)
    assert run is not None
    verification = run_criteria.verify_run(store, store.path.parent, run, DEFAULT_POLICY)
    ended = run_criteria.finish(store, run_id, verification)
    assert ended is not None
    return ended


def test_every_verification_change_bumps_the_version_and_is_journalled(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        _criteria_run(store, "r1")
        seen: list[tuple[Stage, int]] = []

        def note() -> None:
            run = store.get_run("r1")
            assert run is not None
            seen.append((stage_of(run), int(run["version"])))

        note()
        host_move(store, "r1", Action.AWAIT_VERIFICATION)  # the gates passed
        note()
        run_criteria.begin(store, "r1")
        note()
        _host_verifies(store, "r1")  # resumes (no change), then waits for approval
        note()
        assert run_criteria.approve_command(store, "r1", KEY, "ops").ok
        note()
        run_criteria.begin(store, "r1")
        note()
        assert [stage for stage, _ in seen] == [
            RunState.RUNNING, V.PENDING, V.VERIFYING, V.AWAITING_APPROVAL, V.PENDING, V.VERIFYING,
        ]  # fmt: skip
        versions = [version for _, version in seen]
        assert versions == list(range(versions[0], versions[0] + len(versions)))

        journal = store.journal_since(0, run_id="r1")
        moves = [json.loads(j["payload"]) for j in journal if j["kind"] == "transition"]
        verification_moves = [m for m in moves if "verification_to" in m]
        assert [(m["action"], m["verification_from"], m["verification_to"])
                for m in verification_moves] == [
            ("await_verification", None, "pending"),
            ("start_verification", "pending", "verifying"),
            ("await_approval", "verifying", "awaiting_approval"),
            ("approve_command", "awaiting_approval", "pending"),
            ("start_verification", "pending", "verifying"),
        ]  # fmt: skip
        assert all(m["from"] == m["to"] == "running" for m in verification_moves)
        audit = store.rows("SELECT actor, action, from_state, to_state, reason FROM audit "
                           "WHERE run_id = 'r1' AND action = 'approve_command'")  # fmt: skip
        assert audit == [{"actor": "ops", "action": "approve_command",
                          "from_state": "running (awaiting_approval)",
                          "to_state": "running (pending)", "reason": f"allowed {KEY}"}]  # fmt: skip
        # A host restarted mid-verification verifies it again: nothing changed, no new version.
        before = store.get_run("r1")
        assert before is not None
        resumed = run_criteria.begin(store, "r1")
        assert resumed is not None and resumed["version"] == before["version"]
        assert store.journal_since(0, run_id="r1")[-1]["kind"] == "verification"
    finally:
        store.close()


def test_an_operator_who_looked_before_verification_moved_is_refused_as_stale(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        _criteria_run(store, "r1")
        host_move(store, "r1", Action.AWAIT_VERIFICATION)
        looked = store.get_run("r1")
        assert looked is not None
        _host_verifies(store, "r1")  # pending → verifying → awaiting_approval meanwhile
        seq = store.last_seq()

        cancel = operator_actions.cancel(store, "r1", "ops", "not needed",
                                         expected_version=looked["version"])  # fmt: skip
        allow = run_criteria.approve_command(store, "r1", KEY, "ops",
                                             expected_version=looked["version"])  # fmt: skip

        assert not cancel.ok and cancel.refusal is not None
        assert cancel.refusal.code == "stale_version"
        assert "it is now running (awaiting_approval)" in cancel.refusal.message
        assert not allow.ok and allow.code == "stale_version" and allow.field == "version"
        assert store.last_seq() == seq  # refused: nothing written
        now = store.get_run("r1")
        assert now is not None and stage_of(now) is V.AWAITING_APPROVAL
        # Looking again, the same operator acts on what is there now.
        assert run_criteria.approve_command(store, "r1", KEY, "ops",
                                            expected_version=now["version"]).ok  # fmt: skip
    finally:
        store.close()


@pytest.mark.parametrize(
    ("stage", "action"),
    [
        (RunState.QUEUED, Action.START_VERIFICATION),
        (RunState.RUNNING, Action.START_VERIFICATION),
        (RunState.RUNNING, Action.APPROVE_COMMAND),
        (V.PENDING, Action.FAIL_GATES),
        (V.VERIFYING, Action.AWAIT_VERIFICATION),
        (V.AWAITING_APPROVAL, Action.START_VERIFICATION),
        (RunState.REVIEW_REQUESTED, Action.AWAIT_APPROVAL),
    ],
)
def test_an_illegal_verification_move_raises_like_any_other_and_writes_nothing(
    stage: Stage, action: Action, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        submit_dispatch(store, dispatch("r1"), source_lane=SOURCE, target_lane=TARGET,
                        actor="main")  # fmt: skip
        drive(store, "r1", PATHS[stage])
        seq, before = store.last_seq(), store.get_run("r1")
        with pytest.raises(IllegalTransition) as caught:
            host_move(store, "r1", action)
        assert (caught.value.stage, caught.value.action) == (stage, action)
        assert store.last_seq() == seq and store.get_run("r1") == before
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
    stage: Stage = RunState.QUEUED
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
        model.stage = transition(run_id, model.stage, action)
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
        elif action is Action.CANCEL:
            result = operator_actions.cancel(store, run_id, op, reason, expected_version=version)
        else:
            allowed = run_criteria.approve_command(store, run_id, KEY, op, expected_version=version)
            # The same shape as the other actions' results, for `apply`.
            refused = (
                None if allowed.ok else operator_actions.Refusal(allowed.code, allowed.message)
            )
            result = ActionResult(allowed.ok, store.get_run(run_id), refused)
        # The order in which the actions decide: text first (no transaction), then the version
        # the operator looked at, then the lifecycle.
        refusal: str | None = None
        if action in (Action.OVERRIDE, Action.CANCEL) and not (reason or "").strip():
            refusal = "reason_required"
        elif stale:
            refusal = "stale_version"
        elif (self.model[run_id].stage, action) not in TRANSITIONS:
            refusal = "illegal_transition"
        return result, refusal, before

    # -- rules -----------------------------------------------------------------------------------

    @rule(run_id=st.sampled_from(RUN_IDS), pick=st.integers(0, 7))
    def advance(self, run_id: str, pick: int) -> None:
        """A legal move (or a steer or re-dispatch) for the run, so runs travel the whole table.

        The other rules mostly hit refusals once runs are spread over the states; this one
        makes sure retries, overrides and approvals succeed often enough to be checked.
        """
        stage = self.model[run_id].stage
        moves: list[str] = [a.value for (s, a) in TRANSITIONS if s is stage]
        if state_of(stage) is RunState.RUNNING:
            moves.append("steer")
        if stage in RETRYABLE:
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
        elif Action(move) in BY_OPERATOR or Action(move) is Action.APPROVE_COMMAND:
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

    @rule(run_id=st.sampled_from(RUN_IDS), stale=STALE)
    def approve_command(self, run_id: str, stale: bool) -> None:
        result, refusal, before = self.operator(run_id, Action.APPROVE_COMMAND, None, stale)
        self.apply(run_id, Action.APPROVE_COMMAND, result, before, refusal=refusal)

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
        elif state_of(model.stage) is not RunState.RUNNING:
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
        if (model.stage, action) not in TRANSITIONS:
            with pytest.raises(IllegalTransition):
                host_move(self.store, run_id, action)
            assert self.snapshot() == before
            return
        host_move(self.store, run_id, action)
        model.stage = TRANSITIONS[(model.stage, action)]
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

    # An approval that asks a host to merge, and the host's merge, done or refused.
    @rule(run_id=st.sampled_from(RUN_IDS))
    def request_merge(self, run_id: str) -> None:
        self.host(run_id, Action.REQUEST_MERGE)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def merge(self, run_id: str) -> None:
        self.host(run_id, Action.MERGE)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def refuse_merge(self, run_id: str) -> None:
        self.host(run_id, Action.REFUSE_MERGE)

    # The host's moves of verification: the gates passed into it, the host starts verifying,
    # a criterion's command waits for approval.
    @rule(run_id=st.sampled_from(RUN_IDS))
    def await_verification(self, run_id: str) -> None:
        self.host(run_id, Action.AWAIT_VERIFICATION)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def start_verification(self, run_id: str) -> None:
        self.host(run_id, Action.START_VERIFICATION)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def await_approval(self, run_id: str) -> None:
        self.host(run_id, Action.AWAIT_APPROVAL)

    @rule(run_id=st.sampled_from(RUN_IDS))
    def resubmit(self, run_id: str) -> None:
        model = self.model[run_id]
        before = self.snapshot()
        result = submit_dispatch(
            self.store, dispatch(run_id), source_lane=SOURCE, target_lane=TARGET, actor="main"
        )
        if model.stage in RETRYABLE:
            assert result.outcome == "retried"
            model.stage = RunState.QUEUED
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
            assert stage_of(run) is model.stage
            assert run["state"] == state_of(model.stage).value
            sub = verification_of(model.stage)
            assert run["verification_state"] == (sub.value if sub else None)
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
    def journal_replays_to_the_stored_stage(self) -> None:
        for run_id in self.model:
            journal = self.store.journal_since(0, run_id=run_id, limit=100_000)
            assert journal[0]["kind"] == "created"
            stage: Stage = RunState(json.loads(journal[0]["payload"])["state"])
            for row in journal[1:]:
                if row["kind"] == "transition":
                    payload = json.loads(row["payload"])
                    stages = moved(payload)
                    assert stages is not None and stages[0] is stage
                    # Every recorded move is the table's.
                    assert TRANSITIONS[(stage, Action(payload["action"]))] is stages[1]
                    stage = stages[1]
            assert stage is self.model[run_id].stage

    @invariant()
    def the_kept_counts_are_every_runs(self) -> None:
        expected: dict[str, int] = {}
        for model in self.model.values():
            state = state_of(model.stage).value
            expected[state] = expected.get(state, 0) + 1
        assert self.store.state_counts() == expected

    @invariant()
    def one_audit_row_per_successful_move(self) -> None:
        for run_id, model in self.model.items():
            rows = self.store.rows(
                "SELECT action FROM audit WHERE run_id = ? ORDER BY id", [run_id]
            )
            assert [r["action"] for r in rows] == model.audit


StoreMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=30, deadline=None)
test_store_follows_the_lifecycle_model = StoreMachine.TestCase
