"""Criteria as part of a run: set at dispatch, edited while queued, verified, overridden."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from core.criteria import run_criteria
from core.lifecycle import Action, RunState
from core.moves import host_move
from core.operator_actions import override
from core.run_views import needs_attention, run_detail
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run
from tests.criteria.helpers import POLICY, py

EXISTS = {"type": "file_exists", "path": "NOTES.md", "description": "notes are written"}
UNLISTED = {"type": "command_success", "command": ["deploy-check", "--dry-run"],
            "description": "the deploy check passes"}  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "jarvis.db")


def _gates_passed(store: SqliteStore, run_id: str) -> None:
    """Where record_completion leaves a run with criteria: running, verification pending."""
    host_move(store, run_id, Action.AWAIT_VERIFICATION)


def _verify(store: SqliteStore, run_id: str) -> dict[str, Any]:
    # What the worker left in its checkout: commands run on it (an empty checkout runs none).
    folder = run_criteria.checkout_dir(store.path.parent, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "worker-left-this.txt").write_text("work\n")
    run = run_criteria.begin(store, run_id)
    assert run is not None
    verification = run_criteria.verify_run(store, store.path.parent, run, POLICY)
    ended = run_criteria.finish(store, run_id, verification)
    assert ended is not None
    return ended


def test_a_dispatch_with_listed_criteria_keeps_them_and_adds_the_universal_ones(
    store: SqliteStore,
) -> None:
    make_run(store, "r1", RunState.QUEUED, acceptance_criteria=[EXISTS], universal_criteria=True)
    run = store.get_run("r1")
    assert run is not None and run["criteria_source"] == "dispatch"
    criteria = run_criteria.criteria_of(run)
    assert criteria[0] == {**EXISTS, "universal": False}
    assert {c["type"] for c in criteria[1:]} == {
        "test_pass", "no_lint_errors", "changelog_updated", "backlog_updated"
    }  # fmt: skip
    assert all(c["universal"] for c in criteria[1:])


def test_criteria_change_only_while_queued_and_bad_ones_are_refused(store: SqliteStore) -> None:
    make_run(store, "r1", RunState.QUEUED)
    added = run_criteria.add_criterion(store, "r1", EXISTS, "ops")
    assert added.ok and added.criteria == [{**EXISTS, "universal": False}]
    bad = run_criteria.add_criterion(store, "r1", {"type": "file_exists", "path": "../x",
                                                   "description": "escape"}, "ops")  # fmt: skip
    assert not bad.ok and bad.code == "invalid_criterion" and bad.field.startswith("criterion")
    assert not run_criteria.remove_criterion(store, "r1", 3, "ops").ok
    removed = run_criteria.remove_criterion(store, "r1", 0, "ops")
    assert removed.ok and removed.criteria == []
    host_move(store, "r1", Action.START)
    late = run_criteria.add_criterion(store, "r1", EXISTS, "ops")
    assert not late.ok and late.code == "not_queued" and "before it starts" in late.message
    audit = store.rows("SELECT action, reason FROM audit WHERE run_id = 'r1' AND action = ?",
                       ["criteria"])  # fmt: skip
    assert [a["reason"] for a in audit] == [
        "added file_exists: notes are written", "removed file_exists: notes are written"
    ]  # fmt: skip


def test_verification_decides_a_waiting_run_and_names_what_failed(store: SqliteStore) -> None:
    make_run(store, "pass", RunState.RUNNING, acceptance_criteria=[EXISTS])
    make_run(store, "fail", RunState.RUNNING, acceptance_criteria=[EXISTS])
    checkout = run_criteria.checkout_dir(store.path.parent, "pass")
    checkout.mkdir(parents=True)
    (checkout / "NOTES.md").write_text("done")
    for run_id in ("pass", "fail"):
        _gates_passed(store, run_id)
    assert sorted(run_criteria.due(store)) == ["fail", "pass"]
    assert _verify(store, "pass")["state"] == "review_requested"
    failed = _verify(store, "fail")
    assert failed["state"] == "failed"
    assert failed["state_reason"] == "acceptance criteria failed: notes are written"
    assert run_criteria.due(store) == []
    detail = run_detail(store, "fail")
    assert detail is not None and detail["verification"]["passed"] is False
    assert detail["verification"]["criteria_results"][0]["criterion"]["path"] == "NOTES.md"


def test_an_unlisted_command_waits_for_approval_then_runs(store: SqliteStore) -> None:
    make_run(store, "r1", RunState.RUNNING, acceptance_criteria=[UNLISTED])
    _gates_passed(store, "r1")
    waiting = _verify(store, "r1")
    assert waiting["state"] == "running"
    assert waiting["verification_state"] == run_criteria.AWAITING_APPROVAL
    assert needs_attention(waiting)
    results = run_criteria.latest_results(store, "r1")
    assert results is not None and "approval" in results["criteria_results"][0]["output"]
    key = json.dumps(UNLISTED["command"])
    approved = run_criteria.approve_command(store, "r1", key, "ops")
    assert approved.ok
    run = store.get_run("r1")
    assert run is not None and run["verification_state"] == run_criteria.PENDING
    assert json.loads(run["approved_commands"]) == [key]
    # Approved, it runs (and fails: there is no such program here), deciding the run.
    assert _verify(store, "r1")["state"] == "failed"


def test_two_operators_approving_at_once_get_one_effect_and_one_refusal(
    store: SqliteStore,
) -> None:
    make_run(store, "r1", RunState.RUNNING, acceptance_criteria=[UNLISTED])
    _gates_passed(store, "r1")
    _verify(store, "r1")
    key = json.dumps(UNLISTED["command"])
    barrier = threading.Barrier(2)
    outcomes: list[run_criteria.CriteriaChange] = []

    def approve(operator: str) -> None:
        own = SqliteStore(store.path, migrate=False)  # one connection per operator
        try:
            barrier.wait()
            outcomes.append(run_criteria.approve_command(own, "r1", key, operator))
        finally:
            own.close()

    threads = [threading.Thread(target=approve, args=(who,)) for who in ("ana", "bo")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(o.ok for o in outcomes) == [False, True]
    refused = next(o for o in outcomes if not o.ok)
    assert refused.code == "illegal_transition"
    assert refused.message == (
        "Run r1 is running (pending); a command can be approved for it only when it is "
        "running (awaiting_approval)."
    )
    audit = store.rows("SELECT actor FROM audit WHERE run_id = 'r1' AND action = ?",
                       ["approve_command"])  # fmt: skip
    assert len(audit) == 1


def test_reverify_records_but_does_not_move_a_decided_run(store: SqliteStore) -> None:
    make_run(store, "r1", RunState.RUNNING, acceptance_criteria=[EXISTS])
    _gates_passed(store, "r1")
    assert _verify(store, "r1")["state"] == "failed"
    checkout = run_criteria.checkout_dir(store.path.parent, "r1")
    (checkout / "NOTES.md").write_text("written after all")
    again = run_criteria.reverify(store, store.path.parent, "r1", POLICY)
    assert again.ok and again.results is not None and again.results["passed"] is True
    assert again.run is not None and again.run["state"] == "failed"  # an operator decides
    assert run_criteria.reverify(store, store.path.parent, "nope", POLICY).code == "not_found"
    make_run(store, "bare", RunState.QUEUED)
    assert run_criteria.reverify(store, store.path.parent, "bare", POLICY).code == "no_criteria"


def test_an_override_is_recorded_with_the_verification_results(store: SqliteStore) -> None:
    make_run(store, "r1", RunState.RUNNING, acceptance_criteria=[EXISTS])
    _gates_passed(store, "r1")
    _verify(store, "r1")
    result = override(store, "r1", "ops", "the notes live in the wiki")
    assert result.ok
    results = run_criteria.latest_results(store, "r1")
    assert results is not None
    assert results["override_applied"] is True
    assert results["override_reason"] == "the notes live in the wiki"
    assert results["overridden_by"] == "ops" and results["overridden_at"]


@pytest.mark.parametrize("run_id", ["../escape", "a/b", "..", "."])
def test_a_checkout_never_leaves_the_workspace(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(ValueError):
        run_criteria.checkout_dir(tmp_path, run_id)


def test_a_command_criterion_runs_in_the_checkout(store: SqliteStore) -> None:
    code = "import pathlib, sys; sys.exit(0 if pathlib.Path('here').exists() else 1)"
    check = {"type": "command_success", "description": "runs in the checkout", "command": py(code)}
    make_run(store, "r1", RunState.RUNNING, acceptance_criteria=[check])
    checkout = run_criteria.checkout_dir(store.path.parent, "r1")
    checkout.mkdir(parents=True)
    (checkout / "here").write_text("")
    _gates_passed(store, "r1")
    assert _verify(store, "r1")["state"] == "review_requested"
