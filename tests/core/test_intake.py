"""Dispatch intake: every outcome, and what each leaves in the store."""

from __future__ import annotations

import json

from core.intake import submit_dispatch
from core.lifecycle import RunState
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import dispatch_doc, make_run


def submit(store: SqliteStore, doc: object, **kw: str) -> str:
    kw.setdefault("source_lane", "main")
    kw.setdefault("target_lane", "jarvis-worker-1")
    return submit_dispatch(store, doc, actor="op", **kw).outcome  # type: ignore[arg-type]


def test_a_new_dispatch_is_enqueued_with_its_lineage(store: SqliteStore) -> None:
    doc = dispatch_doc("r-1", parent_run_id="r-0")
    result = submit_dispatch(
        store, doc, source_lane="main", target_lane="jarvis-worker-3", actor="op"
    )
    assert result.outcome == "enqueued" and result.accepted
    run = store.get_run("r-1")
    assert run is not None
    assert (run["state"], run["lane"], run["source_lane"]) == ("queued", "jarvis-worker-3", "main")
    assert (run["dispatch_repo"], run["dispatch_branch"]) == (doc["repo"], doc["branch"])
    assert run["parent_run_id"] == "r-0" and run["retry_count"] == 0 and run["version"] == 1
    assert json.loads(run["dispatch_json"]) == doc
    assert [r["kind"] for r in store.journal_since(0)] == ["created"]


def test_invalid_dispatches_leave_nothing(store: SqliteStore) -> None:
    result = submit_dispatch(
        store, b"please fix it", source_lane="main", target_lane="jarvis-worker-1", actor="op"
    )
    assert result.outcome == "invalid" and result.errors[0].code == "not_json"
    assert submit(store, dispatch_doc("r 1")) == "invalid"
    assert store.list_runs() == [] and store.last_seq() == 0


def test_bad_lane_names_are_invalid(store: SqliteStore) -> None:
    result = submit_dispatch(
        store, dispatch_doc("r-1"), source_lane="main", target_lane="../etc", actor="op"
    )
    assert result.outcome == "invalid"
    assert [(e.field, e.code) for e in result.errors] == [("to", "bad_lane")]


def test_unauthorized_lanes_are_refused(store: SqliteStore) -> None:
    assert submit(store, dispatch_doc("r-1"), source_lane="andy-bot") == "unauthorized"
    assert (
        submit(
            store, dispatch_doc("r-1"), source_lane="jarvis-worker-1", target_lane="jarvis-worker-2"
        )
        == "unauthorized"
    )
    assert submit(store, dispatch_doc("r-1"), source_lane="andy-developer") == "enqueued"


def test_same_key_same_payload_is_deduplicated(store: SqliteStore) -> None:
    doc = dispatch_doc("r-1", request_id="req-1")
    assert submit(store, doc, idempotency_key="k") == "enqueued"
    result = submit_dispatch(
        store, doc, source_lane="main", target_lane="jarvis-worker-1", actor="op",
        idempotency_key="k",
    )  # fmt: skip
    assert result.outcome == "deduplicated" and result.run_id == "r-1"
    assert len(store.list_runs()) == 1


def test_a_request_id_groups_runs_and_identifies_none(store: SqliteStore) -> None:
    # NanoClaw's rework: a second run of the same request, under its own run id.
    assert submit(store, dispatch_doc("r-1", request_id="req-1")) == "enqueued"
    assert submit(store, dispatch_doc("r-1-rework", request_id="req-1")) == "enqueued"
    assert {r["request_id"] for r in store.list_runs()} == {"req-1"}
    # The same dispatch again without a key: its run id is taken.
    assert submit(store, dispatch_doc("r-1", request_id="req-1")) == "duplicate"


def test_the_same_dispatch_after_a_failure_is_a_retry(store: SqliteStore) -> None:
    for run_id, state in (("r-1", RunState.FAILED), ("r-2", RunState.FAILED_CONTRACT)):
        make_run(store, run_id, state)
        assert submit(store, dispatch_doc(run_id, request_id="req-1")) == "retried"
        run = store.get_run(run_id)
        assert run is not None and run["state"] == "queued" and run["retry_count"] == 1


def test_payload_key_order_does_not_matter_for_deduplication(store: SqliteStore) -> None:
    doc = dispatch_doc("r-1", request_id="req-1")
    assert submit(store, doc, idempotency_key="k") == "enqueued"
    reordered = dict(reversed(list(doc.items())))
    assert submit(store, json.dumps(reordered), idempotency_key="k") == "deduplicated"


def test_existing_run_ids_are_duplicates_unless_retryable(store: SqliteStore) -> None:
    for state in (RunState.QUEUED, RunState.RUNNING, RunState.REVIEW_REQUESTED, RunState.DONE):
        run_id = f"r-{state.value}"
        make_run(store, run_id, state)
        result = submit_dispatch(
            store,
            dispatch_doc(run_id),
            source_lane="main",
            target_lane="jarvis-worker-1",
            actor="op",
        )
        assert result.outcome == "duplicate", state
        assert state.value in result.message and "blocked" in result.message
        assert store.get_run(run_id)["state"] == state.value  # type: ignore[index]


def test_failed_run_ids_are_retried_with_the_same_id(store: SqliteStore) -> None:
    for state in (RunState.FAILED, RunState.FAILED_CONTRACT):
        run_id = f"r-{state.value}"
        make_run(store, run_id, state)
        new_input = "Try again, this time keep the public API."
        result = submit_dispatch(
            store,
            dispatch_doc(run_id, input=new_input),
            source_lane="main",
            target_lane="jarvis-worker-1",
            actor="op",
        )
        assert result.outcome == "retried"
        run = store.get_run(run_id)
        assert run is not None
        assert (run["state"], run["retry_count"]) == ("queued", 1)
        assert json.loads(run["dispatch_json"])["input"] == new_input


def test_session_reuse_across_worker_lanes_is_refused(store: SqliteStore) -> None:
    fields = {"context_intent": "continue", "session_id": "sess-9"}
    first = dispatch_doc("r-1", **fields)
    first["output_contract"]["required_fields"].append("session_id")
    assert submit(store, first) == "enqueued"
    second = dispatch_doc("r-2", **fields)
    second["output_contract"]["required_fields"].append("session_id")
    result = submit_dispatch(
        store, second, source_lane="main", target_lane="jarvis-worker-2", actor="op"
    )
    assert result.outcome == "invalid"
    assert [(e.field, e.code) for e in result.errors] == [("session_id", "session_on_other_lane")]
    assert "jarvis-worker-1" in result.errors[0].message
    # The same lane may continue its own session.
    assert submit(store, second, target_lane="jarvis-worker-1") == "enqueued"
