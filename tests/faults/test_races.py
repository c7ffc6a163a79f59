"""Operator actions and intake racing each other across real OS processes.

Each worker is a separate process (the "spawn" start method: no state inherited from pytest) with
its own connection to the same database file. All of them open the store first, then wait on one
barrier, so their actions reach SQLite at the same instant. The write lock taken by BEGIN
IMMEDIATE must serialise them: exactly one effect, every other caller refused with the run's new
state, and one audit row and one journal row for the single effect.
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
from core.intake import submit_dispatch
from core.lifecycle import Action
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


def _perform(store: SqliteStore, op: str, index: int, arg: dict[str, Any]) -> Outcome:
    operator = f"operator-{index}"
    run_id = arg.get("run_id", "")
    version = arg.get("expected_version")
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
            barrier.wait(TIMEOUT_S)
            outcome = _perform(store, op, index, arg)
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
