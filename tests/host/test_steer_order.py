"""Steers recorded in the same millisecond are delivered in the order they were recorded."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.host.steering import deliver_pending, expire_steers
from core.ipc.layout import IpcLayout
from core.lifecycle import RunState
from core.operator_actions import cancel
from core.store.sqlite_store import SqliteStore
from tests.core.store_helpers import make_run


def test_steers_of_one_millisecond_go_out_in_the_order_they_were_recorded(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "jarvis.db")
    try:
        make_run(store, "order-1", RunState.RUNNING)
        layout = IpcLayout(tmp_path / "data" / "ipc")
        layout.ensure_lane("jarvis-worker-1")
        # One transaction, one timestamp: the ids stand in for two random ones that happen to
        # sort against the order in which the operator sent them.
        with store.transaction() as tx:
            tx.add_steer("steer-ffffffffffffffff", "order-1", "first: stop the refactor", "op")
            tx.add_steer("steer-0000000000000000", "order-1", "second: then fix the test", "op")
        assert deliver_pending(store, layout) == 1
        sent = json.loads(layout.steer_file("jarvis-worker-1", "order-1").read_text())
    finally:
        store.close()
    assert sent["message"] == "first: stop the refactor"


def test_a_steer_waiting_for_an_agents_turn_is_not_expired_until_its_run_ends(
    tmp_path: Path,
) -> None:
    clock = [datetime(2026, 11, 25, 3, 0, tzinfo=UTC)]
    store = SqliteStore(tmp_path / "jarvis.db", clock=lambda: clock[0])
    try:
        layout = IpcLayout(tmp_path / "data" / "ipc")
        layout.ensure_lane("jarvis-worker-1")
        for run_id in ("agent-1", "command-1"):
            make_run(store, run_id, RunState.RUNNING)
            with store.transaction() as tx:
                tx.add_steer(f"steer-{run_id}", run_id, "also update the changelog", "op")
        assert deliver_pending(store, layout) == 2
        clock[0] += timedelta(hours=1)  # far past any ack timeout
        assert expire_steers(store, layout, ack_timeout_s=30, patient=["agent-1"]) == 1
        status = {r["run_id"]: r["status"] for r in store.rows("SELECT * FROM steering_events")}
        assert status == {"agent-1": "delivered", "command-1": "expired"}
        assert layout.steer_file("jarvis-worker-1", "agent-1").exists()
        # The run ends without taking it: now it is expired, patient or not.
        assert cancel(store, "agent-1", "op", "not needed any more").ok
        assert expire_steers(store, layout, ack_timeout_s=30, patient=["agent-1"]) == 1
        (row,) = store.rows("SELECT * FROM steering_events WHERE run_id = 'agent-1'")
        assert row["status"] == "expired" and "the run ended (failed)" in row["status_reason"]
    finally:
        store.close()
