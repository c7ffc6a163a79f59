"""Steers recorded in the same millisecond are delivered in the order they were recorded."""

from __future__ import annotations

import json
from pathlib import Path

from core.host.steering import deliver_pending
from core.ipc.layout import IpcLayout
from core.lifecycle import RunState
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
