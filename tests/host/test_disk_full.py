"""A real disk that fills up under a real host: nothing refused, nothing lost, nothing doubled.

The workspace lives on a small tmpfs the test mounts (as root; skipped where mounting is not
allowed). The host is paused (SIGSTOP) while progress files are written and the disk is filled,
so its next write meets a full disk; it must log the fault, keep the files, stay alive and, once
space returns, ingest every event exactly once. A second round stops it (SIGTERM) while the
disk is still full: it must exit, and the next host ingests what it left.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from core.ipc.files import REASON_SUFFIX, atomic_write_json
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    HostProcess,
    assert_no_workers,
    connect,
    dispatch,
    fill,
    rows,
    wait_until,
    write_config,
)
from tests.host.inproc import LANE, progress_body

pytestmark = pytest.mark.slow

RUN = "disk-full-run-1"
FIRST, SECOND = 30, 20
WAIT_S = 60.0
FAULT = "the store cannot be used (full"


def push(ws: Path, seqs: range) -> list[Path]:
    folder = ws / "data" / "ipc" / LANE / "progress" / RUN
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for seq in seqs:
        path = folder / f"{seq:08d}-{seq}.json"
        atomic_write_json(path, progress_body(RUN, seq, f"step {seq}"))
        paths.append(path)
    return paths


def stored(ws: Path) -> list[int]:
    conn = connect(ws)
    try:
        found = rows(conn, "SELECT seq FROM progress_events ORDER BY seq")
        return [r["seq"] for r in found]
    finally:
        conn.close()


def journalled(ws: Path) -> list[int]:
    conn = connect(ws)
    try:
        found = rows(conn, "SELECT payload FROM journal WHERE kind = 'progress'")
        return sorted(json.loads(r["payload"])["seq"] for r in found)
    finally:
        conn.close()


def quarantined(ws: Path) -> list[str]:
    errors = ws / "data" / "ipc" / "errors"
    return sorted(p.name for p in errors.glob(f"*{REASON_SUFFIX}")) if errors.exists() else []


def test_a_full_disk_is_waited_out_and_every_event_ingested_once(small_disk: Path) -> None:
    ws = small_disk / "ws"
    ws.mkdir()
    write_config(ws, lane_concurrency={LANE: 0})  # the run exists; no worker ever starts
    store = SqliteStore(ws / "jarvis.db")
    dispatch(store, RUN)
    store.close()

    # The host's log lives off the small disk: on it, the line saying the disk is full could
    # not be written whenever the log's last page had no room left.
    logs = small_disk.parent
    host = HostProcess(ws, log_dir=logs)
    try:
        host.wait_started()
        # Holding the lock is not yet holding the workspace: a host whose start-up meets a full
        # disk (its lease not yet registered) exits saying so. This round is about a host at work.
        wait_until(lambda: f"host {host.pid} holds" in host.log(), WAIT_S,
                   "the host to hold the workspace", host.log)  # fmt: skip
        # Round 1: the disk fills while files wait; the host waits too, then takes them in.
        os.kill(host.pid, signal.SIGSTOP)
        first = push(ws, range(1, FIRST + 1))
        filler = fill(small_disk)
        os.kill(host.pid, signal.SIGCONT)
        wait_until(lambda: FAULT in host.log(), WAIT_S, "the host to meet the full disk",
                   host.log)  # fmt: skip
        assert host.proc.poll() is None, host.log()
        assert quarantined(ws) == [], "a valid file was quarantined for a full disk"
        assert all(p.exists() for p in first)
        assert stored(ws) == []

        filler.unlink()
        wait_until(
            lambda: stored(ws) == list(range(1, FIRST + 1)) and not any(p.exists() for p in first),
            WAIT_S,
            "every event of round 1 to be ingested",
            lambda: f"stored: {stored(ws)}\n{host.log()[-3000:]}",
        )
        assert host.log().count(FAULT) == 1, host.log()  # logged once, however many retries

        # Round 2: SIGTERM while the disk is full still stops the host, and loses nothing.
        os.kill(host.pid, signal.SIGSTOP)
        second = push(ws, range(FIRST + 1, FIRST + SECOND + 1))
        filler = fill(small_disk)
        os.kill(host.pid, signal.SIGCONT)
        wait_until(lambda: host.log().count(FAULT) == 2, WAIT_S, "the second fault", host.log)
        assert host.stop(timeout=WAIT_S) == 0, host.log()
        assert all(p.exists() for p in second)
        assert quarantined(ws) == []
    finally:
        host.stop()

    filler.unlink()
    again = HostProcess(ws, log_name="host-2.log", log_dir=logs)
    try:
        again.wait_started()
        everything = list(range(1, FIRST + SECOND + 1))
        wait_until(lambda: stored(ws) == everything, WAIT_S, "round 2's events", again.log)
    finally:
        again.stop()
    assert_no_workers(ws)
    assert stored(ws) == everything
    assert journalled(ws) == everything
    assert quarantined(ws) == []
