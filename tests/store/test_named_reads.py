"""The store's named reads that replaced statements elsewhere: each answers what its name
says, including the cases a hand-written statement got wrong or never met, on both backends."""

from __future__ import annotations

import pytest

from core.lifecycle import RunState
from core.store.api import RunStore
from tests.core.store_helpers import make_run


@pytest.fixture
def store(any_store: RunStore) -> RunStore:
    """Each test runs on both backends (tests/store/conftest.py)."""
    return any_store


def test_run_ids_starting_takes_the_prefix_literally(store: RunStore) -> None:
    for run_id in ("task-20261125-001", "task-20261125-002", "task_20261125-003", "x%y-1"):
        make_run(store, run_id, RunState.QUEUED)
    assert sorted(store.run_ids_starting("task-20261125-")) == [
        "task-20261125-001",
        "task-20261125-002",
    ]
    # '_' and '%' are LIKE's wildcards; here they are characters of the prefix.
    assert store.run_ids_starting("task_") == ["task_20261125-003"]
    assert store.run_ids_starting("x%") == ["x%y-1"]
    assert store.run_ids_starting("x_") == []


def test_states_newest_and_counts(store: RunStore) -> None:
    make_run(store, "a", RunState.QUEUED)
    make_run(store, "b", RunState.RUNNING)
    make_run(store, "c", RunState.RUNNING)
    assert store.states_of(["a", "c", "missing"]) == {"a": "queued", "c": "running"}
    assert store.states_of([]) == {}
    assert store.state_counts() == {"queued": 1, "running": 2}
    assert len(store.newest_run_ids(2)) == 2 and set(store.newest_run_ids(5)) == {"a", "b", "c"}
    assert store.lanes_with_runs() == {"jarvis-worker-1"}
    assert [r["run_id"] for r in store.queued_runs("queued", 10)] == ["a"]


def test_the_change_signature_moves_with_a_run_and_only_then(store: RunStore) -> None:
    make_run(store, "a", RunState.RUNNING)
    before = store.change_signature()
    assert store.change_signature() == before
    make_run(store, "b", RunState.QUEUED)
    assert store.change_signature() != before


def test_the_journal_span_and_an_empty_stores_answers(store: RunStore) -> None:
    assert store.journal_span() == {"first": None, "last": None}
    assert store.progress_event_count() == 0
    assert store.most_shared_fingerprint() is None
    make_run(store, "a", RunState.QUEUED)
    span = store.journal_span()
    assert span["first"] is not None and span["first"] <= span["last"]


def test_fingerprint_peers_count_other_runs_with_the_same_failure(store: RunStore) -> None:
    for run_id in ("a", "b", "c"):
        make_run(store, run_id, RunState.FAILED)
    with store.transaction() as tx:
        for run_id, fingerprint in (("a", "fp-1"), ("a", "fp-1"), ("b", "fp-1"), ("c", "fp-2")):
            tx.add_failure(run_id, 1, error_class="worker", error_code="CRASH", step_id="run",
                           message="exited 1", fingerprint=fingerprint)  # fmt: skip
    (peers,) = store.fingerprint_peers("a")
    assert (peers["fingerprint"], peers["other_runs"]) == ("fp-1", 1)
    assert [p["other_runs"] for p in store.fingerprint_peers("c")] == [0]


def test_a_batchs_reads_of_many_runs_answer_as_one_read_per_run_would(store: RunStore) -> None:
    # 250 runs (more than a statement's arms) and one run with 600 names (more than an arm's).
    run_ids = [f"r-{n:03d}" for n in range(250)]
    for run_id in run_ids:
        make_run(store, run_id, RunState.RUNNING)
    with store.transaction() as tx:
        tx.add_progress_events([
            (run_id, 1, seq, f"{seq}.json", "2026-11-22T00:00:00.000Z",
             f"2026-11-22T00:00:0{seq}.000000Z", "p", "s", None)
            for run_id in run_ids for seq in (1, 2)
        ] + [
            ("r-000", 2, seq, f"{seq}.json", "t", "u", "p", "s", None) for seq in range(600)
        ])  # fmt: skip
        assert tx.run_briefs([*run_ids[:3], "missing", "r-001"]) == {
            run_id: {"run_id": run_id, "lane": "jarvis-worker-1", "state": "running",
                     "retry_count": 0}
            for run_id in run_ids[:3]
        }  # fmt: skip
        wanted = {(run_id, 1): ["2.json", "3.json"] for run_id in run_ids}
        wanted["r-000", 2] = [f"{seq}.json" for seq in range(550, 700)]
        wanted["r-001", 7] = ["1.json"]  # no such attempt
        found = tx.stored_progress_names_of(wanted)
        for run_id in run_ids:
            assert found[run_id, 1] == tx.stored_progress_names(run_id, 1, ["2.json", "3.json"])
            assert found[run_id, 1] == {"2.json"}
        assert found["r-000", 2] == {f"{seq}.json" for seq in range(550, 600)}
        assert found["r-001", 7] == set()


def test_runs_take_the_batchs_latest_progress_unless_a_later_event_is_stored(
    store: RunStore,
) -> None:
    for run_id in ("early", "latest"):
        make_run(store, run_id, RunState.RUNNING)
    with store.transaction() as tx:
        tx.add_progress_events([
            (run_id, 1, 5, "5.json", "T5", "2026-11-22T00:00:05.000000Z", "p", "five", None)
            for run_id in ("early", "latest")
        ])  # fmt: skip
        tx.touch_latest_progress([
            # Older than the stored event: its summary is not the run's last.
            ("early", 1, "2026-11-22T00:00:01.000000Z", 1, "1.json", "one", "T1"),
            # The same time and seq, a later name: the latest by (at_utc, seq, name).
            ("latest", 1, "2026-11-22T00:00:05.000000Z", 5, "6.json", "six", "T6"),
        ])  # fmt: skip
    early, latest = store.get_run("early"), store.get_run("latest")
    assert early is not None and latest is not None
    assert early["last_progress_summary"] is None and early["last_progress_at"] is None
    assert (latest["last_progress_summary"], latest["last_progress_at"]) == ("six", "T6")
