"""Exactly once under kill -9: progress is neither lost nor doubled however often the host dies.

A writer thread drops 5,000 progress files (50 runs x seq 1..100) into a lane whose concurrency
is 0 (so the host starts no worker and the runs stay queued) at a steady pace, while the test
SIGKILLs the host 10 times, each after a random number of new events, and starts it again,
alternating inotify and polling. A kill can land between a file's commit and its deletion, in the
middle of a transaction, or during the start-up sweep; the receipts and the (run, attempt, seq)
key must make every replay a no-op. When the writer is done and the last host has drained the
tree, the store must hold every event exactly once, with exactly one journal row each.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from core.ipc.files import atomic_write_json
from core.store.sqlite_store import SqliteStore
from tests.host.hostkit import (
    HostProcess,
    assert_no_workers,
    connect,
    dispatch,
    rows,
    wait_until,
    write_config,
)
from tests.processes import HANG_GUARD_S

pytestmark = pytest.mark.slow

LANE = "jarvis-worker-1"
RUNS = 50
SEQS = 100
TOTAL = RUNS * SEQS
KILLS = 10
#: New events each host ingests before its kill, drawn per round (10 rounds take at most 3,000
#: of the 5,000 the writer writes, so a round never waits for events that will not come).
EVENTS_BEFORE_KILL = (1, 300)
#: Files per second: the writer takes ~12 s, about as long as the 10 kill rounds.
PACE = 400


def _summary(run_id: str, seq: int) -> str:
    return f"{run_id}: step {seq} of {SEQS}"


class Writer(threading.Thread):
    """Writes every progress file, seq by seq across the runs, as a worker would (temp+rename)."""

    def __init__(self, progress_root: Path, run_ids: list[str]) -> None:
        super().__init__(name="progress-writer", daemon=True)
        self.progress_root = progress_root
        self.run_ids = run_ids
        self.error: BaseException | None = None
        self.written = 0

    def run(self) -> None:
        try:
            self._write_all()
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc

    def _write_all(self) -> None:
        for run_id in self.run_ids:
            (self.progress_root / run_id).mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        base_ms = time.time_ns() // 1_000_000
        for seq in range(1, SEQS + 1):
            for run_id in self.run_ids:
                # A steady pace rather than a burst, so kills land while files keep arriving.
                due = started + self.written / PACE
                if (ahead := due - time.monotonic()) > 0:
                    time.sleep(ahead)
                ms = base_ms + self.written  # names sort in event order within each run
                seconds, millis = divmod(ms, 1000)
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
                atomic_write_json(
                    self.progress_root / run_id / f"{ms}-{seq}.json",
                    {
                        "kind": "worker_progress",
                        "run_id": run_id,
                        "group_folder": LANE,
                        "timestamp": f"{stamp}.{millis:03d}Z",
                        "phase": "testing",
                        "summary": _summary(run_id, seq),
                        "tool_used": "bash",
                        "seq": seq,
                    },
                )
                self.written += 1


def _pending_files(progress_root: Path) -> list[Path]:
    return [
        p
        for p in progress_root.glob("*/*.json")
        if not p.name.startswith(".")  # a temp file, not an event
    ]


def test_progress_is_ingested_exactly_once_across_ten_kill_9s(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_config(ws, lane_concurrency={LANE: 0})
    run_ids = [f"crash-run-{n:02d}" for n in range(RUNS)]
    store = SqliteStore(ws / "jarvis.db")
    for run_id in run_ids:
        dispatch(store, run_id, lane=LANE)
    store.close()

    progress_root = ws / "data" / "ipc" / LANE / "progress"
    writer = Writer(progress_root, run_ids)
    rng = random.Random(os.environ.get("JARVIS_TEST_SEED", "kill-9"))
    conn = connect(ws)
    hosts: list[HostProcess] = []
    ingested: list[int] = [0]  # events in the store after each kill
    try:
        writer.start()
        for round_no in range(KILLS):
            host = HostProcess(ws, poll=round_no % 2 == 1, log_name=f"host-{round_no}.log")
            hosts.append(host)
            host.wait_started()
            # Killed at work, after a random number of new events is in the store, wherever it
            # then is: the start-up sweep, the watcher's stream, a commit whose file is not yet
            # deleted. Counted, so a slow machine changes when the kill lands, not how much
            # work each host did first.
            wanted = ingested[-1] + rng.randint(*EVENTS_BEFORE_KILL)

            def busy(wanted: int = wanted) -> bool:
                return rows(conn, "SELECT COUNT(*) AS n FROM progress_events")[0]["n"] >= wanted

            wait_until(busy, HANG_GUARD_S, f"host {round_no} to ingest up to {wanted} events",
                       host.log, interval=0.002)  # fmt: skip
            host.kill()
            assert host.proc.returncode == -9, host.log()
            ingested.append(rows(conn, "SELECT COUNT(*) AS n FROM progress_events")[0]["n"])

        last = HostProcess(ws, poll=KILLS % 2 == 1, log_name="host-last.log")
        hosts.append(last)
        last.wait_started()
        writer.join(timeout=120)
        assert not writer.is_alive(), "the writer did not finish"
        assert writer.error is None, repr(writer.error)
        assert writer.written == TOTAL

        def drained() -> bool:
            return not _pending_files(progress_root)

        wait_until(
            drained,
            HANG_GUARD_S,
            "the last host to ingest every file",
            lambda: f"{len(_pending_files(progress_root))} files left\n{last.log()[-3000:]}",
            interval=0.2,
        )
        assert last.stop() == 0, last.log()
    finally:
        for host in hosts:
            host.kill()
        assert_no_workers(ws)

    events = rows(conn, "SELECT run_id, attempt, seq, summary FROM progress_events")
    assert len(events) == TOTAL
    counts = Counter((e["run_id"], e["seq"]) for e in events)
    expected = {(run_id, seq) for run_id in run_ids for seq in range(1, SEQS + 1)}
    assert set(counts) == expected, "events missing or invented"
    assert set(counts.values()) == {1}, "an event recorded twice"
    assert {e["attempt"] for e in events} == {1}
    for event in events:
        assert event["summary"] == _summary(event["run_id"], event["seq"])

    # A replayed file must not add a journal row either: one 'progress' row per event.
    progress_rows = rows(
        conn, "SELECT run_id, COUNT(*) AS n FROM journal WHERE kind = 'progress' GROUP BY run_id"
    )
    assert sum(r["n"] for r in progress_rows) == TOTAL
    assert {r["run_id"]: r["n"] for r in progress_rows} == dict.fromkeys(run_ids, SEQS)
    assert rows(conn, "SELECT COUNT(*) AS n FROM ipc_receipts")[0]["n"] == TOTAL

    for run in rows(conn, "SELECT run_id, state, last_progress_summary FROM runs"):
        assert run["state"] == "queued", run  # the paused lane never started a worker
        assert run["last_progress_summary"] == _summary(run["run_id"], SEQS), run

    conn.close()
    check = sqlite3.connect(ws / "jarvis.db")
    try:
        assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        check.close()
    errors_dir = ws / "data" / "ipc" / "errors"
    assert not errors_dir.exists() or not list(errors_dir.iterdir()), list(errors_dir.iterdir())
    assert not list(progress_root.glob("*/.*")), "temp files left behind"
