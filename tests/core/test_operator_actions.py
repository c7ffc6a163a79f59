"""Operator actions: each legal move, each refusal, and what lands in the audit and journal."""

from __future__ import annotations

import pytest

from core import operator_actions as ops
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run


def audit(store: SqliteStore, run_id: str) -> list[tuple[str, str, str | None]]:
    rows = store.rows(
        "SELECT actor, action, reason FROM audit WHERE run_id = ? ORDER BY id", [run_id]
    )
    return [(r["actor"], r["action"], r["reason"]) for r in rows]


def test_approve_review_requested(store: SqliteStore) -> None:
    make_run(store, "r", RunState.REVIEW_REQUESTED)
    result = ops.approve(store, "r", "alice")
    assert result.ok and result.run is not None
    assert result.run["state"] == "done" and result.run["finished_at"]
    assert audit(store, "r")[-1] == ("alice", "approve", None)


def test_retry_resets_the_attempt_and_counts_it(store: SqliteStore) -> None:
    make_run(store, "r", RunState.FAILED_CONTRACT)
    with store.transaction() as tx:
        run = tx.get_run("r")
        assert run is not None
        tx.change_run("r", expected_version=run["version"], changes={"commit_sha": "abc1234"},
                      kind="completion_artifacts", payload={}, actor="host")  # fmt: skip
    result = ops.retry(store, "r", "bob")
    assert result.ok and result.run is not None
    assert (result.run["state"], result.run["retry_count"], result.run["commit_sha"]) == (
        "queued",
        1,
        None,
    )
    assert ops.retry(store, "r", "bob").refusal.code == "illegal_transition"  # type: ignore[union-attr]


def test_override_requires_a_reason_and_marks_the_run(store: SqliteStore) -> None:
    make_run(store, "r", RunState.FAILED)
    for blank in (None, "", "   \n"):
        refused = ops.override(store, "r", "carol", blank)
        assert not refused.ok and refused.refusal is not None
        assert refused.refusal.code == "reason_required"
    assert store.get_run("r")["state"] == "failed"  # type: ignore[index]
    result = ops.override(store, "r", "carol", "flaky CI runner; verified by hand")
    assert result.ok and result.run is not None
    run = result.run
    assert (run["state"], run["overridden"], run["overridden_by"]) == ("done", 1, "carol")
    assert run["override_reason"] == "flaky CI runner; verified by hand"
    assert result.to_json()["run"]["overridden"] is True
    assert audit(store, "r")[-1] == ("carol", "override", "flaky CI runner; verified by hand")


def test_cancel_records_the_reason_as_the_state_reason(store: SqliteStore) -> None:
    make_run(store, "r", RunState.RUNNING)
    result = ops.cancel(store, "r", "dave", "wrong repository")
    assert result.ok and result.run is not None
    assert result.run["state"] == "failed"
    assert result.run["state_reason"] == "cancelled by dave: wrong repository"


@pytest.mark.parametrize(
    ("state", "action"),
    [
        (RunState.QUEUED, "approve"),
        (RunState.RUNNING, "retry"),
        (RunState.DONE, "override"),
        (RunState.REVIEW_REQUESTED, "cancel"),
        (RunState.FAILED, "approve"),
    ],
)
def test_illegal_moves_are_refused_with_a_sentence_and_change_nothing(
    store: SqliteStore, state: RunState, action: str
) -> None:
    make_run(store, "r", state)
    before = store.get_run("r")
    seq = store.last_seq()
    call = {
        "approve": lambda: ops.approve(store, "r", "op"),
        "retry": lambda: ops.retry(store, "r", "op"),
        "override": lambda: ops.override(store, "r", "op", "because"),
        "cancel": lambda: ops.cancel(store, "r", "op", "because"),
    }[action]
    result = call()
    assert not result.ok and result.refusal is not None
    assert result.refusal.code == "illegal_transition"
    assert result.refusal.message.startswith(f"Run r is {state.value};")
    assert store.get_run("r") == before and store.last_seq() == seq


def test_unknown_run_is_not_found(store: SqliteStore) -> None:
    result = ops.retry(store, "nope", "op")
    assert result.refusal is not None and result.refusal.code == "not_found"


def test_a_stale_version_is_refused_even_if_the_move_is_still_legal(store: SqliteStore) -> None:
    make_run(store, "r", RunState.FAILED)
    seen = store.get_run("r")["version"]  # type: ignore[index]
    assert ops.retry(store, "r", "alice", expected_version=seen).ok
    # the host fails the retried run again; bob still looks at the old screen
    from core.lifecycle import Action
    from core.moves import host_move

    host_move(store, "r", Action.START)
    host_move(store, "r", Action.FAIL)
    stale = ops.retry(store, "r", "bob", expected_version=seen)
    assert stale.refusal is not None and stale.refusal.code == "stale_version"
    assert store.get_run("r")["retry_count"] == 1  # type: ignore[index]


def test_steer_only_a_running_run(store: SqliteStore) -> None:
    make_run(store, "q", RunState.QUEUED)
    refused = ops.steer(store, "q", "op", "focus on the tests")
    assert refused.refusal is not None and refused.refusal.code == "not_running"
    make_run(store, "r", RunState.RUNNING)
    version = store.get_run("r")["version"]  # type: ignore[index]
    result = ops.steer(store, "r", "erin", "focus on the tests")
    assert result.ok and result.steer_id
    steers = store.rows("SELECT * FROM steering_events WHERE run_id = 'r'")
    assert [(s["status"], s["operator"], s["message"]) for s in steers] == [
        ("pending", "erin", "focus on the tests")
    ]
    run = store.get_run("r")
    assert run is not None and run["steer_count"] == 1
    assert run["version"] == version  # a steer is not a state change: it makes nobody stale


@pytest.mark.parametrize(
    ("message", "code"),
    [("", "empty_message"), ("x" * 4001, "message_too_long"), ("hi\x1b[2J", "bad_characters")],
)
def test_bad_steer_messages(store: SqliteStore, message: str, code: str) -> None:
    make_run(store, "r", RunState.RUNNING)
    result = ops.steer(store, "r", "op", message)
    assert result.refusal is not None and result.refusal.code == code
    assert store.rows("SELECT * FROM steering_events") == []
