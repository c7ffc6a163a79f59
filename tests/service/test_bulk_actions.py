"""One action on many runs through the front door (`core.service.bulk`), on both backends: each
run is acted on exactly once, two operators racing on the same runs included, and every run
gets its own result."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.lifecycle import RunState
from core.service.bulk import BULK_ACTIONS, MAX_RUNS, RunResult, act_on_runs, select_runs
from core.service.errors import ServiceError
from core.store.api import RunStore
from jarvis_cli.verbs import BULK_VERBS
from tests.backends import another_connection
from tests.core.store_helpers import make_run

RUNS = [f"r{n}" for n in range(6)]


def test_the_command_lines_bulk_verbs_are_the_engines_bulk_actions() -> None:
    assert BULK_VERBS == BULK_ACTIONS


def test_two_operators_bulk_approving_the_same_runs_at_once_approve_each_run_once(
    any_store: RunStore, tmp_path: Path
) -> None:
    for run_id in RUNS:
        make_run(any_store, run_id, RunState.REVIEW_REQUESTED)
    start = threading.Barrier(2)
    results: dict[str, list[RunResult]] = {}

    def approve(operator: str) -> None:
        own = another_connection(any_store)  # each operator has a connection of their own
        try:
            start.wait()
            # In opposite orders, so the two meet in the middle rather than one trailing.
            order = RUNS if operator == "ana" else RUNS[::-1]
            results[operator] = act_on_runs(own, tmp_path, "approve", order, operator)
        finally:
            own.close()

    threads = [threading.Thread(target=approve, args=(who,)) for who in ("ana", "bo")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(results) == ["ana", "bo"]
    for run_id in RUNS:
        mine = [r for rs in results.values() for r in rs if r.run_id == run_id]
        assert sorted(r.ok for r in mine) == [False, True], run_id  # one move, one refusal
        refused = next(r for r in mine if not r.ok)
        assert refused.code == "illegal_transition"
        assert refused.message.startswith(f"Run {run_id} is done;")
        run = any_store.get_run(run_id)
        assert run is not None and run["state"] == "done"
    audit = any_store.rows("SELECT run_id FROM audit WHERE action = 'approve'", [])
    assert sorted(row["run_id"] for row in audit) == RUNS  # each run approved exactly once


def test_a_refusal_does_not_stop_the_others_and_one_reason_goes_to_every_run(
    any_store: RunStore, tmp_path: Path
) -> None:
    make_run(any_store, "f1", RunState.FAILED)
    make_run(any_store, "q1", RunState.QUEUED)
    make_run(any_store, "f2", RunState.FAILED)
    results = act_on_runs(any_store, tmp_path, "override", ["f1", "q1", "gone", "f2", "f1"],
                          "ops", reason="fixed by hand")  # fmt: skip
    assert [(r.run_id, r.ok, r.code) for r in results] == [
        ("f1", True, "done"), ("q1", False, "illegal_transition"), ("gone", False, "not_found"),
        ("f2", True, "done"),
    ]  # fmt: skip
    assert results[0].message == "Overrode f1."
    for run_id in ("f1", "f2"):
        run = any_store.get_run(run_id)
        assert run is not None and run["override_reason"] == "fixed by hand"
    json_of = results[1].to_json()
    assert json_of["ok"] is False and json_of["code"] == "illegal_transition"
    assert json_of["run"]["state"] == "queued"


def test_a_missing_reason_is_refused_for_each_run(any_store: RunStore, tmp_path: Path) -> None:
    make_run(any_store, "q1", RunState.QUEUED)
    make_run(any_store, "q2", RunState.QUEUED)
    results = act_on_runs(any_store, tmp_path, "cancel", ["q1", "q2"], "ops", reason="  ")
    assert [(r.ok, r.code) for r in results] == [(False, "reason_required")] * 2
    assert {any_store.get_run(r)["state"] for r in ("q1", "q2")} == {"queued"}  # type: ignore[index]


def test_actions_of_one_run_and_too_many_runs_are_refused_whole(
    any_store: RunStore, tmp_path: Path
) -> None:
    with pytest.raises(ServiceError) as one:
        act_on_runs(any_store, tmp_path, "steer", ["r1"], "ops")
    assert one.value.code == "not_bulk"
    many = [f"r{n}" for n in range(MAX_RUNS + 1)]
    with pytest.raises(ServiceError) as caught:
        act_on_runs(any_store, tmp_path, "retry", many, "ops")
    assert caught.value.code == "too_many_runs"


def test_a_selection_splits_what_the_action_applies_to_from_what_it_leaves_alone(
    any_store: RunStore,
) -> None:
    make_run(any_store, "f1", RunState.FAILED)
    make_run(any_store, "f2", RunState.FAILED, lane="jarvis-worker-2")
    make_run(any_store, "d1", RunState.DONE)
    make_run(any_store, "q1", RunState.QUEUED, lane="jarvis-worker-2")
    everything = select_runs(any_store, "retry")
    assert sorted(everything.applies) == ["f1", "f2"]
    assert sorted(run_id for run_id, _ in everything.left) == ["d1", "q1"]
    assert all("can be retried only when" in why for _, why in everything.left)
    lane = select_runs(any_store, "retry", states=("failed",), lane="jarvis-worker-2")
    assert (lane.applies, lane.left) == (["f2"], [])
