"""Operator actions, intake and the host's verification racing each other across real OS
processes.

Each worker is a separate process (the "spawn" start method: no state inherited from pytest) with
its own connection to the same database file. All of them open the store first (a host racer also
verifies the run's criteria then), then wait on one barrier, so their actions reach SQLite at the
same instant. The write lock taken by BEGIN IMMEDIATE must serialise them: exactly one effect,
every other caller refused with the run's new state, and one audit row and one journal row for the
single effect.
"""

from __future__ import annotations

import json
import multiprocessing
import queue
import traceback
from multiprocessing.context import SpawnContext
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest

from core import operator_actions
from core.criteria import run_criteria
from core.criteria.allowlist import DEFAULT_POLICY
from core.intake import submit_dispatch
from core.lifecycle import Action, stage_of
from core.moves import host_move
from core.store.sqlite_store import SqliteStore

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE: dict[str, Any] = json.loads(
    (ROOT / "sample_runs" / "dispatches" / "valid-backend-fix.json").read_text()
)
SOURCE, TARGET = "main", "jarvis-worker-1"
WORKERS = 8
TIMEOUT_S = 60.0
"""Generous: a loaded CI machine may take seconds to spawn eight interpreters."""

Outcome = dict[str, Any]


def dispatch(run_id: str, request_id: str | None = None) -> dict[str, Any]:
    doc = {k: v for k, v in SAMPLE.items() if k != "request_id"}
    doc["run_id"] = run_id
    if request_id is not None:
        doc["request_id"] = request_id
    return doc


def failed_run(db: Path, run_id: str) -> dict[str, Any]:
    """A run the host started and then failed: the state every retry or override race needs."""
    store = SqliteStore(db)
    try:
        result = submit_dispatch(
            store, dispatch(run_id), source_lane=SOURCE, target_lane=TARGET, actor="main"
        )
        assert result.outcome == "enqueued"
        host_move(store, run_id, Action.START)
        host_move(store, run_id, Action.FAIL)
        run = store.get_run(run_id)
        assert run is not None and run["state"] == "failed"
        return run
    finally:
        store.close()


# -- the worker process ---------------------------------------------------------------------------


def _prepare(store: SqliteStore, op: str, arg: dict[str, Any]) -> Any:
    """What a racer does before the barrier: the host verifies the criteria (the slow part, in
    the run's checkout) so that only recording the verdict races."""
    if op != "host_finish":
        return None
    run = store.get_run(arg["run_id"])
    assert run is not None
    return run_criteria.verify_run(store, store.path.parent, run, DEFAULT_POLICY)


def _perform(
    store: SqliteStore, op: str, index: int, arg: dict[str, Any], prepared: Any = None
) -> Outcome:
    operator = f"operator-{index}"
    run_id = arg.get("run_id", "")
    version = arg.get("expected_version")
    if op in ("host_begin", "host_finish"):
        if op == "host_begin":
            moved = run_criteria.begin(store, run_id)
        else:
            moved = run_criteria.finish(store, run_id, prepared)
        # None: the run was no longer at the stage the host moves it from; the host lets it be.
        return {"op": op, "ok": moved is not None, "code": None if moved else "moved_on"}
    if op == "approve_command":
        allowed = run_criteria.approve_command(
            store, run_id, arg["key"], operator, expected_version=version
        )
        return {"op": op, "ok": allowed.ok, "code": allowed.code or None,
                "message": allowed.message or None}  # fmt: skip
    if op == "dispatch":
        intake = submit_dispatch(
            store, arg["doc"], source_lane=SOURCE, target_lane=TARGET, actor="main"
        )
        return {"op": op, "ok": intake.outcome == "enqueued", "code": intake.outcome}
    if op == "retry":
        result = operator_actions.retry(store, run_id, operator, expected_version=version)
    elif op == "override":
        result = operator_actions.override(
            store, run_id, operator, f"verified by {operator}", expected_version=version
        )
    elif op == "cancel":
        result = operator_actions.cancel(
            store, run_id, operator, f"stopped by {operator}", expected_version=version
        )
    elif op == "approve":
        result = operator_actions.approve(store, run_id, operator, expected_version=version)
    else:
        raise ValueError(op)
    refusal = result.refusal
    return {
        "op": op,
        "ok": result.ok,
        "code": refusal.code if refusal else None,
        "message": refusal.message if refusal else None,
    }


def _worker(
    db: str, op: str, index: int, arg: dict[str, Any], barrier: Barrier, results: Any
) -> None:
    # Module level, so the spawned interpreter can import it by name.
    try:
        store = SqliteStore(db)
        try:
            prepared = _prepare(store, op, arg)
            barrier.wait(TIMEOUT_S)
            outcome = _perform(store, op, index, arg, prepared)
        finally:
            store.close()
    except BaseException:
        outcome = {"op": op, "ok": False, "code": "crashed", "message": traceback.format_exc()}
    results.put(outcome)


def race(db: Path, ops: list[tuple[str, dict[str, Any]]]) -> list[Outcome]:
    """Run ``ops`` in one process each, released together; their outcomes in any order."""
    ctx: SpawnContext = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(ops))
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(str(db), op, i, arg, barrier, results), daemon=True)
        for i, (op, arg) in enumerate(ops)
    ]
    for proc in procs:
        proc.start()
    outcomes: list[Outcome] = []
    try:
        for _ in procs:
            outcomes.append(results.get(timeout=TIMEOUT_S))
    except queue.Empty:
        pytest.fail(f"only {len(outcomes)} of {len(procs)} racers reported: {outcomes}")
    finally:
        for proc in procs:
            proc.join(TIMEOUT_S)
            if proc.is_alive():
                proc.kill()
    crashed = [o["message"] for o in outcomes if o["code"] == "crashed"]
    assert not crashed, crashed[0]
    assert [p.exitcode for p in procs] == [0] * len(procs)
    return outcomes


def rows(db: Path, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    store = SqliteStore(db)
    try:
        return store.rows(sql, params)
    finally:
        store.close()


def transitions_since(db: Path, run_id: str, seq: int) -> list[dict[str, Any]]:
    found = rows(
        db,
        "SELECT payload FROM journal WHERE run_id = ? AND seq > ? AND kind = 'transition' "
        "ORDER BY seq",
        [run_id, seq],
    )
    return [json.loads(r["payload"]) for r in found]


def last_seq(db: Path) -> int:
    return int(rows(db, "SELECT COALESCE(MAX(seq), 0) AS seq FROM journal", [])[0]["seq"])


def audit_actions(db: Path, run_id: str, actions: tuple[str, ...]) -> list[dict[str, Any]]:
    marks = ", ".join("?" for _ in actions)
    return rows(
        db,
        f"SELECT * FROM audit WHERE run_id = ? AND action IN ({marks}) ORDER BY id",
        [run_id, *actions],
    )


def current(db: Path, run_id: str) -> dict[str, Any]:
    found = rows(db, "SELECT * FROM runs WHERE run_id = ?", [run_id])
    assert len(found) == 1
    return found[0]


# -- the races ------------------------------------------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "jarvis.db"


def test_simultaneous_retries_apply_once(db: Path) -> None:
    before = failed_run(db, "task-race-retry")
    seq = last_seq(db)

    outcomes = race(db, [("retry", {"run_id": "task-race-retry"})] * WORKERS)

    winners = [o for o in outcomes if o["ok"]]
    losers = [o for o in outcomes if not o["ok"]]
    assert len(winners) == 1, outcomes
    assert len(losers) == WORKERS - 1
    for lost in losers:
        assert lost["code"] == "illegal_transition", lost
        # Told what happened instead: somebody else's retry already queued the run.
        assert "is queued" in lost["message"], lost
    after = current(db, "task-race-retry")
    assert after["state"] == "queued"
    assert after["retry_count"] == before["retry_count"] + 1
    assert after["version"] == before["version"] + 1
    assert len(audit_actions(db, "task-race-retry", ("retry",))) == 1
    moves = transitions_since(db, "task-race-retry", seq)
    assert [(m["action"], m["from"], m["to"]) for m in moves] == [("retry", "failed", "queued")]


def test_simultaneous_overrides_apply_once(db: Path) -> None:
    before = failed_run(db, "task-race-override")
    seq = last_seq(db)

    outcomes = race(db, [("override", {"run_id": "task-race-override"})] * WORKERS)

    winners = [o for o in outcomes if o["ok"]]
    assert len(winners) == 1, outcomes
    for lost in outcomes:
        if not lost["ok"]:
            assert lost["code"] == "illegal_transition", lost
            assert "is done" in lost["message"], lost
    after = current(db, "task-race-override")
    assert after["state"] == "done" and after["overridden"] == 1
    assert after["version"] == before["version"] + 1
    audit = audit_actions(db, "task-race-override", ("override",))
    assert len(audit) == 1
    # The stored reason and overrider are the winner's, not a mix of several racers'.
    assert after["override_reason"] == audit[0]["reason"] == f"verified by {audit[0]['actor']}"
    assert after["overridden_by"] == audit[0]["actor"]
    moves = transitions_since(db, "task-race-override", seq)
    assert [(m["action"], m["to"]) for m in moves] == [("override", "done")]


def test_mixed_retries_and_overrides_have_one_effect_in_total(db: Path) -> None:
    before = failed_run(db, "task-race-mixed")
    seq = last_seq(db)
    arg = {"run_id": "task-race-mixed"}

    outcomes = race(db, [("retry", arg)] * (WORKERS // 2) + [("override", arg)] * (WORKERS // 2))

    winners = [o for o in outcomes if o["ok"]]
    assert len(winners) == 1, outcomes
    won = winners[0]["op"]
    after = current(db, "task-race-mixed")
    expected_state = "queued" if won == "retry" else "done"
    assert after["state"] == expected_state
    assert after["retry_count"] == before["retry_count"] + (won == "retry")
    assert after["overridden"] == (won == "override")
    assert after["version"] == before["version"] + 1
    for lost in outcomes:
        if not lost["ok"]:
            assert lost["code"] == "illegal_transition", lost
            assert f"is {expected_state}" in lost["message"], lost
    audit = audit_actions(db, "task-race-mixed", ("retry", "override"))
    assert [a["action"] for a in audit] == [won]
    assert [m["action"] for m in transitions_since(db, "task-race-mixed", seq)] == [won]


def test_two_cancels_with_the_same_expected_version_apply_once(db: Path) -> None:
    store = SqliteStore(db)
    try:
        intake = submit_dispatch(
            store,
            dispatch("task-race-cancel"),
            source_lane=SOURCE,
            target_lane=TARGET,
            actor="main",
        )
        assert intake.outcome == "enqueued" and intake.run is not None
        seen = intake.run["version"]
    finally:
        store.close()
    arg = {"run_id": "task-race-cancel", "expected_version": seen}

    outcomes = race(db, [("cancel", arg), ("cancel", arg)])

    assert sorted(o["ok"] for o in outcomes) == [False, True], outcomes
    lost = next(o for o in outcomes if not o["ok"])
    # The loser decided on version `seen`, which no longer exists; with the version check first
    # that is stale_version, but illegal_transition (failed) would be an equally safe refusal.
    assert lost["code"] in {"stale_version", "illegal_transition"}, lost
    after = current(db, "task-race-cancel")
    assert after["state"] == "failed" and after["version"] == seen + 1
    assert len(audit_actions(db, "task-race-cancel", ("cancel",))) == 1
    assert [m["action"] for m in transitions_since(db, "task-race-cancel", 0)] == ["cancel"]


def test_identical_dispatches_make_one_run(db: Path) -> None:
    doc = dispatch("task-race-dispatch", request_id="req-race-1")

    outcomes = race(db, [("dispatch", {"doc": doc})] * WORKERS)

    # The run id decides (a request_id identifies no submission): one run, the rest refused.
    codes = sorted(o["code"] for o in outcomes)
    assert codes == ["duplicate"] * (WORKERS - 1) + ["enqueued"], codes
    assert len(rows(db, "SELECT run_id FROM runs", [])) == 1
    journal = rows(db, "SELECT kind FROM journal WHERE run_id = ?", ["task-race-dispatch"])
    assert [j["kind"] for j in journal] == ["created"]
    assert len(audit_actions(db, "task-race-dispatch", ("dispatch",))) == 1


# -- verification racing operators ----------------------------------------------------------------

#: A criterion the worker met: the host's verification passes it.
MET = {"type": "file_exists", "path": "NOTES.md", "description": "notes are written"}
#: A command off the allowlist: the host's verification waits for an operator to allow it.
UNLISTED = {"type": "command_success", "command": ["deploy-check", "--dry-run"],
            "description": "the deploy check passes"}  # fmt: skip
KEY = json.dumps(UNLISTED["command"])


def verification_run(db: Path, run_id: str, criterion: dict[str, Any], *, begun: bool) -> int:
    """A run whose gates passed, with ``criterion`` to verify in a checkout the worker filled:
    ``pending``, or ``verifying`` once the host ``begun``. Returns the version an operator
    looking at it now sees."""
    store = SqliteStore(db)
    try:
        doc = {**dispatch(run_id), "acceptance_criteria": [criterion],
               "universal_criteria": False}  # fmt: skip
        intake = submit_dispatch(store, doc, source_lane=SOURCE, target_lane=TARGET, actor="main")
        assert intake.outcome == "enqueued"
        checkout = run_criteria.checkout_dir(db.parent, run_id)
        checkout.mkdir(parents=True)
        (checkout / "NOTES.md").write_text("done\n")
        host_move(store, run_id, Action.START)
        pending = host_move(store, run_id, Action.AWAIT_VERIFICATION)
        verifying = run_criteria.begin(store, run_id) if begun else pending
        assert verifying is not None
        return int(verifying["version"])
    finally:
        store.close()


def stage(db: Path, run_id: str) -> str:
    return str(stage_of(current(db, run_id)).value)


@pytest.mark.parametrize(
    ("criterion", "decided", "operator_op"),
    [
        # An operator approves the run they saw verifying, as the host passes its criteria.
        (MET, "review_requested", "approve"),
        # An operator allows a command for the run they saw verifying, as the host finds the
        # command waiting for approval.
        (UNLISTED, "awaiting_approval", "approve_command"),
        # An operator cancels the run they saw verifying, as the host passes its criteria.
        (MET, "review_requested", "cancel"),
    ],
    ids=["approve", "approve_command", "cancel"],
)
def test_the_host_finishing_verification_and_an_operator_have_one_effect(
    db: Path, criterion: dict[str, Any], decided: str, operator_op: str
) -> None:
    run_id = f"task-race-{operator_op.replace('_', '-')}"
    seen = verification_run(db, run_id, criterion, begun=True)
    seq = last_seq(db)
    arg = {"run_id": run_id, "expected_version": seen, "key": KEY}

    outcomes = race(db, [("host_finish", arg), (operator_op, arg)])

    by_op = {o["op"]: o for o in outcomes}
    host, operator = by_op["host_finish"], by_op[operator_op]
    assert [host["ok"], operator["ok"]].count(True) == 1, outcomes
    after = current(db, run_id)
    moves = transitions_since(db, run_id, seq)
    assert after["version"] == seen + 1 and len(moves) == 1, moves
    if host["ok"]:
        # The operator decided on a run still verifying: whether it came first (then the move
        # was not legal yet) or second (the run changed under them), a refusal, never an effect.
        assert stage(db, run_id) == decided
        assert operator["code"] in {"stale_version", "illegal_transition"}, operator
        if operator["code"] == "stale_version":
            assert decided in operator["message"], operator
        else:
            assert "is running (verifying)" in operator["message"], operator
    else:
        # Only a cancel can come first and win; the host then leaves the run as it found it.
        assert operator_op == "cancel" and host["code"] == "moved_on"
        assert after["state"] == "failed" and moves[0]["action"] == "cancel"
        assert rows(db, "SELECT id FROM verification_results WHERE run_id = ?", [run_id]) == []


def test_the_host_starting_verification_makes_an_operators_cancel_stale(db: Path) -> None:
    # The operator looked at the run pending verification; the host starts verifying it.
    seen = verification_run(db, "task-race-begin", MET, begun=False)
    arg = {"run_id": "task-race-begin", "expected_version": seen}

    outcomes = race(db, [("host_begin", arg), ("cancel", arg)])

    by_op = {o["op"]: o for o in outcomes}
    assert [by_op["host_begin"]["ok"], by_op["cancel"]["ok"]].count(True) == 1, outcomes
    after = current(db, "task-race-begin")
    assert after["version"] == seen + 1
    if by_op["host_begin"]["ok"]:
        assert stage(db, "task-race-begin") == "verifying"
        assert by_op["cancel"]["code"] == "stale_version", by_op["cancel"]
        assert "it is now running (verifying)" in by_op["cancel"]["message"]
    else:
        assert after["state"] == "failed" and by_op["host_begin"]["code"] == "moved_on"


def test_operators_allowing_and_cancelling_a_waiting_run_have_one_effect(db: Path) -> None:
    verification_run(db, "task-race-allow", UNLISTED, begun=True)
    store = SqliteStore(db)
    try:
        run = store.get_run("task-race-allow")
        assert run is not None
        verification = run_criteria.verify_run(store, db.parent, run, DEFAULT_POLICY)
        waiting = run_criteria.finish(store, "task-race-allow", verification)
        assert waiting is not None and stage_of(waiting).value == "awaiting_approval"
        seen = int(waiting["version"])
    finally:
        store.close()
    seq = last_seq(db)
    arg = {"run_id": "task-race-allow", "expected_version": seen, "key": KEY}

    outcomes = race(db, [("approve_command", arg)] * (WORKERS // 2) + [("cancel", arg)] * 2)

    winners = [o for o in outcomes if o["ok"]]
    assert len(winners) == 1, outcomes
    for lost in outcomes:
        if not lost["ok"]:
            assert lost["code"] == "stale_version", lost
    after = current(db, "task-race-allow")
    assert after["version"] == seen + 1
    won = winners[0]["op"]
    assert stage(db, "task-race-allow") == ("pending" if won == "approve_command" else "failed")
    assert [m["action"] for m in transitions_since(db, "task-race-allow", seq)] == [won]
    assert len(audit_actions(db, "task-race-allow", ("approve_command", "cancel"))) == 1
