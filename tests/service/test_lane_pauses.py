"""Pausing lanes in the store, on both backends: one pause however many operators race, the
paused lane's queued runs never read for a start nor claimed, the fleet's read by lane."""

from __future__ import annotations

import threading
from pathlib import Path

from core.intake import submit_dispatch
from core.service.lanes import LaneRequest, fleet_lanes, lane_act
from core.store.api import RunStore
from tests.backends import another_connection
from tests.core.store_helpers import dispatch_doc

RACERS = 6


def _queue(store: RunStore, run_id: str, lane: str) -> None:
    done = submit_dispatch(store, dispatch_doc(run_id), source_lane="main", target_lane=lane,
                           actor="test")  # fmt: skip
    assert done.outcome == "enqueued", done.to_json()


def test_operators_pausing_one_lane_at_once_make_one_pause(any_store: RunStore) -> None:
    start = threading.Barrier(RACERS)
    outcomes = []

    def pause(n: int) -> None:
        store = another_connection(any_store)  # each operator's own, in its own thread
        try:
            start.wait()
            outcomes.append(lane_act(store, LaneRequest("pause_lane", "build", f"op-{n}", "why")))
        finally:
            store.close()

    threads = [threading.Thread(target=pause, args=(n,)) for n in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(o.ok for o in outcomes) == [False] * (RACERS - 1) + [True]
    refused = [o.refusal for o in outcomes if not o.ok]
    assert {r.code for r in refused if r} == {"already_paused"}
    assert len(any_store.lane_pauses()) == 1
    assert [e["kind"] for e in any_store.journal_page("lane:build", limit=10)] == ["lane_paused"]


def test_a_paused_lanes_runs_are_neither_read_for_a_start_nor_claimed(any_store: RunStore) -> None:
    _queue(any_store, "run-a1", "a")
    _queue(any_store, "run-b1", "b")
    assert lane_act(any_store, LaneRequest("pause_lane", "a", "op", "hold")).ok
    assert [r["run_id"] for r in any_store.queued_runs("queued", 10)] == ["run-b1"]
    assert any_store.claim_runs("host-1", {"a": 5, "b": 5}, "queued") == ["run-b1"]
    assert lane_act(any_store, LaneRequest("resume_lane", "a", "op")).ok
    assert any_store.claim_runs("host-1", {"a": 5}, "queued") == ["run-a1"]


def test_bad_requests_are_refused_with_a_sentence(any_store: RunStore) -> None:
    blank = lane_act(any_store, LaneRequest("pause_lane", "a", "op", "  "))
    assert blank.refusal is not None and blank.refusal.code == "reason_required"
    bad = lane_act(any_store, LaneRequest("pause_lane", "../etc", "op", "why"))
    assert bad.refusal is not None and bad.refusal.code == "bad_lane"
    assert not any_store.lane_pauses()


def test_the_fleet_by_lane_counts_runs_and_shows_the_pause(
    any_store: RunStore, tmp_path: Path
) -> None:
    (tmp_path / "jarvis.toml").write_text(
        '[workers]\nconcurrency = 2\nlane_concurrency = { "quiet" = 0 }\n'
        '[workers.sim]\nagent = "command"\ncommand = ["true"]\nsandbox = "none"\n'
        '[lanes."a"]\nworker = "sim"\n'
    )
    _queue(any_store, "run-a1", "a")
    _queue(any_store, "run-a2", "a")
    lane_act(any_store, LaneRequest("pause_lane", "a", "op", "hold"))
    fleet = fleet_lanes(any_store, tmp_path)
    assert fleet.config_problem is None
    lanes = {line.lane: line for line in fleet.lanes}
    assert set(lanes) == {"a", "quiet"}
    a = lanes["a"]
    assert (a.profile, a.agent, a.sandbox, a.concurrency, a.queued, a.running) == (
        "sim", "command", "none", 2, 2, 0,
    )  # fmt: skip
    assert a.pause is not None and a.pause["reason"] == "hold"
    assert lanes["quiet"].concurrency == 0 and lanes["quiet"].pause is None
