"""One real host's lease: it serves only its lanes, refuses a name another live host holds, and
when it finds its lease lost (recovered by another host while it was away) it stops the workers
of the runs it gave up, registers again and goes on working."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from core.host.fleet import Lease
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    STEERABLE_INTERVAL,
    cli,
    dispatch,
    is_alive_worker,
    run_row,
    running_host,
    wait_for_states,
    wait_for_sweeps,
    wait_until,
    workers_of,
    write_config,
)
from tests.processes import HANG_GUARD_S


def worker_of(ws: Path, run_id: str) -> list[int]:
    return [pid for pid in workers_of(ws) if is_alive_worker(pid, run_id)]


LEASE = '[host]\nname = "h1"\nheartbeat_s = 0.2\nlease_s = 30\n'


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


def test_a_host_that_finds_its_lease_lost_stops_those_workers_and_goes_on(
    ws: Path, store: SqliteStore, conn: sqlite3.Connection
) -> None:
    write_config(ws, no_output_s=60)
    with (ws / "jarvis.toml").open("a") as config:
        config.write(LEASE)
    dispatch(store, "slow-1", scenario="slow")
    with running_host(ws, interval=STEERABLE_INTERVAL) as host:
        wait_for_states(conn, {"slow-1": "running"}, HANG_GUARD_S, host=host)
        wait_until(lambda: worker_of(ws, "slow-1"), HANG_GUARD_S, "slow-1's worker")
        before = store.host("h1")
        assert before is not None
        # Another host finds h1's lease run out (as if h1 had been paused) and recovers it.
        store.db.execute("UPDATE hosts SET lease_until = '2000-01-01T00:00:00.000Z'")
        recoverer = Lease(store, "h2", ws, None, 1.0, 30.0)
        recoverer.register()
        assert recoverer.recover_lost() == {"h1": ["slow-1"]}
        # h1 learns it at its next heartbeat: the worker is stopped, the run stays failed once.
        wait_until(lambda: not worker_of(ws, "slow-1"), HANG_GUARD_S, "the worker to stop",
                   host.log)  # fmt: skip
        again = wait_until(
            lambda: (h := store.host("h1")) and h["incarnation"] != before["incarnation"] and h,
            HANG_GUARD_S,
            "h1 to register again",
            host.log,
        )
        assert again["recovered_by"] is None and again["stopped_at"] is None
        dispatch(store, "after", scenario="ok")
        wait_for_states(conn, {"after": "review_requested"}, HANG_GUARD_S, host=host)
    run = run_row(conn, "slow-1")
    assert run["state"] == "failed" and run["state_reason"].startswith("host_lost: host h1 ")
    failures = conn.execute("SELECT error_code FROM failures WHERE run_id = 'slow-1'").fetchall()
    assert [f[0] for f in failures] == ["HOST_LOST"]
