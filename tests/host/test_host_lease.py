"""One real host's lease: it serves only its lanes and refuses a name another live host holds.
What it does when its lease ran out while it was away is in test_store_outage.py."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    cli,
    dispatch,
    run_row,
    running_host,
    wait_for_states,
    wait_for_sweeps,
    write_config,
)
from tests.processes import HANG_GUARD_S


def test_a_host_claims_only_its_lanes(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, no_output_s=60)
    dispatch(store, "mine", lane="jarvis-worker-1")
    dispatch(store, "theirs", lane="jarvis-worker-2")
    with running_host(ws, extra_args=["--lanes", "jarvis-worker-1", "--name", "h1"]) as host:
        wait_for_states(conn, {"mine": "review_requested"}, HANG_GUARD_S, host=host)
        wait_for_sweeps(ws, 2, host)
        assert run_row(conn, "theirs")["state"] == "queued"
        code, listed = cli(ws, "hosts")
        (h1,) = listed["hosts"]
        assert code == 0 and (h1["name"], h1["lanes"], h1["state"]) == (
            "h1", ["jarvis-worker-1"], "live")  # fmt: skip
    code, listed = cli(ws, "hosts")
    assert listed["hosts"][0]["state"] == "stopped"  # a clean stop ends the lease
    assert run_row(conn, "mine")["host"] == "h1" and run_row(conn, "theirs")["host"] is None


def test_a_name_another_live_host_holds_is_refused(
    ws: Path, store: SqliteStore, tmp_path: Path
) -> None:
    write_config(ws)
    other = tmp_path / "other"
    other.mkdir()
    with running_host(ws, extra_args=["--name", "h1"]):
        done = subprocess.run(
            [sys.executable, "-m", "jarvis_cli", "host", "--workspace", str(other), "--db",
             str(ws / "jarvis.db"), "--name", "h1", "--json"],
            capture_output=True, text=True, timeout=HANG_GUARD_S,
        )  # fmt: skip
    assert done.returncode == 1
    assert '"code": "host_name_held"' in done.stdout and "holds the name 'h1'" in done.stdout
