"""Pausing a lane with a real host: its queued runs wait while another lane's run, its running
run finishes, and after `jarvis lane resume` the waiting run starts; a second pause is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    STEERABLE_INTERVAL,
    cli,
    describe_runs,
    dispatch,
    rows,
    run_row,
    running_host,
    wait_for_states,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

PAUSED, OTHER = "lane-paused", "lane-other"


def test_a_paused_lanes_queued_run_waits_while_another_lane_runs_and_starts_after_resume(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, concurrency=1)
    dispatch(store, "pause-running-1", scenario="slow", lane=PAUSED)
    with running_host(ws, interval=STEERABLE_INTERVAL) as host:
        wait_until(lambda: run_row(conn, "pause-running-1")["state"] == "running", HANG_GUARD_S,
                   "the first run to start", lambda: describe_runs(conn, host))  # fmt: skip
        code, paused = cli(ws, "lane", "pause", PAUSED, "--reason", "deploy window",
                           "--operator", "operator-1")  # fmt: skip
        assert code == 0 and paused["ok"] and paused["paused"], paused
        assert paused["pause"]["paused_by"] == "operator-1"
        # A second operator pausing too: refused, saying who paused it and why.
        code, again = cli(ws, "lane", "pause", PAUSED, "--reason", "me too",
                          "--operator", "operator-2")  # fmt: skip
        assert code == 1 and not again["ok"], again
        assert again["refusal"]["code"] == "already_paused"
        assert "operator-1" in again["refusal"]["message"]
        assert "deploy window" in again["refusal"]["message"]

        dispatch(store, "pause-waits-1", lane=PAUSED)
        dispatch(store, "pause-other-1", lane=OTHER)
        # The running run finishes; the other lane's run is started and ends; this one waits.
        ended = {"pause-running-1": "review_requested", "pause-other-1": "review_requested"}
        wait_for_states(conn, ended, HANG_GUARD_S, host=host)
        # The host has scheduled many ticks since the other lane's run was queued after it.
        waiting = run_row(conn, "pause-waits-1")
        assert waiting["state"] == "queued", describe_runs(conn, host)
        assert waiting["host"] is None, "a paused lane's run was claimed"

        code, resumed = cli(ws, "lane", "resume", PAUSED, "--operator", "operator-2")
        assert code == 0 and resumed["ok"] and not resumed["paused"], resumed
        code, twice = cli(ws, "lane", "resume", PAUSED, "--operator", "operator-1")
        assert code == 1 and twice["refusal"]["code"] == "not_paused", twice
        wait_for_states(conn, {"pause-waits-1": "review_requested"}, HANG_GUARD_S, host=host)

    journal = rows(conn, "SELECT kind, actor, payload FROM journal WHERE run_id = ? ORDER BY seq",
                   [f"lane:{PAUSED}"])  # fmt: skip
    assert [(j["kind"], j["actor"]) for j in journal] == [
        ("lane_paused", "operator-1"), ("lane_resumed", "operator-2"),
    ]  # fmt: skip
    audit = rows(conn, "SELECT action, actor, reason FROM audit WHERE run_id = ? ORDER BY id",
                 [f"lane:{PAUSED}"])  # fmt: skip
    assert audit == [
        {"action": "lane_paused", "actor": "operator-1", "reason": "deploy window"},
        {"action": "lane_resumed", "actor": "operator-2", "reason": None},
    ]
