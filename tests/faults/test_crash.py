"""kill -9 in the middle of writes never corrupts the store or splits a unit of work.

A writer process (tests/faults/crash_writer.py) changes runs as fast as it can; the test kills it
with SIGKILL after a random number of commits, wherever it then is, checks the database, restarts
the writer on the same file, and repeats. After every kill, whatever the writer was doing, the
database must be intact and every run must agree with its journal: each transaction wrote all of
its rows (run, journal, audit, steer) or none of them. Rows seen after one kill must still be
there after the next.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.intake import submit_dispatch
from core.lifecycle import TRANSITIONS, Action, RunState, Stage, label, stage_of
from core.moves import moved as moved_by
from core.store.runs import VERSIONED_KINDS
from core.store.sqlite_store import SqliteStore
from tests.faults.crash_writer import SOURCE, TARGET, dispatch
from tests.processes import wait_until

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 16
#: Commits a writer makes before its kill, drawn per round: the kill lands wherever the writer
#: then is, after an amount of work that does not depend on how fast the machine is.
COMMITS_BEFORE_KILL = (10, 60)

JournalRow = tuple[int, str, str, str, str, str]


@dataclass
class Seen:
    """What one check found; the next check must find all of it again."""

    journal: list[JournalRow]
    runs: int


def _rows(conn: sqlite3.Connection, sql: str) -> list[dict[str, Any]]:
    cursor = conn.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def verify(db: Path, before: Seen | None, where: str) -> Seen:
    """Check the whole database; ``where`` says which kill it follows, for the failure report."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)], where
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == [], where
        runs = {r["run_id"]: r for r in _rows(conn, "SELECT * FROM runs")}
        journal = _rows(conn, "SELECT * FROM journal ORDER BY seq")
        audit = _rows(conn, "SELECT * FROM audit ORDER BY id")
        steers = _rows(conn, "SELECT * FROM steering_events")
        keys = _rows(conn, "SELECT * FROM idempotency_keys")
    finally:
        conn.close()

    flat: list[JournalRow] = [
        (j["seq"], j["run_id"], j["kind"], j["payload"], j["actor"], j["at"]) for j in journal
    ]
    seqs = [j[0] for j in flat]
    assert seqs == sorted(set(seqs)), f"{where}: journal seq not strictly increasing"
    if before is not None:
        # Committed work survives the kill: what the last check saw is still there, unchanged,
        # and nothing was inserted in front of it.
        assert flat[: len(before.journal)] == before.journal, f"{where}: journal prefix changed"
        assert len(runs) >= before.runs, f"{where}: runs disappeared"

    by_run: dict[str, list[dict[str, Any]]] = {run_id: [] for run_id in runs}
    for row in journal:
        assert row["run_id"] in by_run, f"{where}: journal row {row['seq']} has no run"
        by_run[row["run_id"]].append(row)
    audit_by_run: dict[str, list[dict[str, Any]]] = {run_id: [] for run_id in runs}
    for row in audit:
        assert row["run_id"] in audit_by_run, f"{where}: audit row {row['id']} has no run"
        audit_by_run[row["run_id"]].append(row)
    steers_by_run: dict[str, set[str]] = {run_id: set() for run_id in runs}
    for row in steers:
        steers_by_run[row["run_id"]].add(row["steer_id"])
    for key in keys:
        assert key["run_id"] in runs, f"{where}: idempotency key {key['key']} has no run"

    for run_id, run in runs.items():
        _check_run(run, by_run[run_id], audit_by_run[run_id], steers_by_run[run_id], where)
    return Seen(flat, len(runs))


def _check_run(
    run: dict[str, Any],
    journal: list[dict[str, Any]],
    audit: list[dict[str, Any]],
    steer_ids: set[str],
    where: str,
) -> None:
    run_id = run["run_id"]
    at = f"{where}, run {run_id}"
    assert journal and journal[0]["kind"] == "created", f"{at}: no 'created' row first"
    assert [j["kind"] for j in journal].count("created") == 1, at
    state = json.loads(journal[0]["payload"])["state"]
    assert state == "queued", at
    stage: Stage = RunState(state)

    retries = 0
    overridden = False
    moved: Counter[tuple[Any, ...]] = Counter()
    journal_steers: set[str] = set()
    for row in journal[1:]:
        payload = json.loads(row["payload"])
        if row["kind"] == "transition":
            # Replay through the lifecycle table itself: every recorded move was a legal one,
            # the moves of verification (the stages of running) included.
            stages = moved_by(payload)
            assert stages is not None, f"{at}: seq {row['seq']} names no stage"
            assert stages[0] is stage, f"{at}: seq {row['seq']} starts from elsewhere"
            action = Action(payload["action"])
            assert TRANSITIONS[(stage, action)] is stages[1], at
            stage = stages[1]
            retries += action is Action.RETRY
            overridden = overridden or action is Action.OVERRIDE
            moved[(action.value, label(stages[0]), label(stages[1]), row["actor"], row["at"])] += 1
        elif row["kind"] == "steer":
            journal_steers.add(payload["steer_id"])

    assert stage_of(run) is stage, f"{at}: stored {stage_of(run)}, journal says {stage}"
    versioned = sum(j["kind"] in VERSIONED_KINDS for j in journal)
    assert run["version"] == versioned, f"{at}: version {run['version']} != {versioned}"
    assert run["retry_count"] == retries, at
    assert bool(run["overridden"]) == overridden, at
    assert run["steer_count"] == len(journal_steers), at
    assert journal_steers == steer_ids, f"{at}: steers and their journal rows differ"

    # Every move, the operator's or the host's, has exactly one audit row written in the same
    # transaction as its journal row (same actor, same timestamp), and no audit row lacks one.
    audited = Counter(
        (a["action"], a["from_state"], a["to_state"], a["actor"], a["at"])
        for a in audit
        if a["action"] not in ("dispatch", "steer")
    )
    assert audited == moved, f"{at}: audit {audited} != journal {moved}"
    dispatched = [a for a in audit if a["action"] == "dispatch"]
    assert [a["at"] for a in dispatched] == [journal[0]["at"]], at
    assert sum(a["action"] == "steer" for a in audit) == len(journal_steers), at


def start_writer(db: Path, tmp: Path, round_: int) -> subprocess.Popen[bytes]:
    ready = tmp / f"ready-{round_}"
    stderr = (tmp / f"writer-{round_}.err").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.faults.crash_writer", str(db), str(ready), str(round_)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    stderr.close()
    try:
        wait_until(lambda: ready.exists() or proc.poll() is not None,
                   f"writer {round_} to open the store", interval=0.005)  # fmt: skip
    except AssertionError:
        proc.kill()
        raise
    if proc.poll() is not None:
        pytest.fail(f"writer {round_} exited at start: {writer_error(tmp, round_)}")
    return proc


def journal_rows(db: Path) -> int:
    """How many journal rows are committed (one per committed change), read on the side."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM journal").fetchone()[0])
    finally:
        conn.close()


def writer_error(tmp: Path, round_: int) -> str:
    return (tmp / f"writer-{round_}.err").read_text(errors="replace")[-3000:]


def test_kill_9_mid_write_leaves_a_consistent_store(tmp_path: Path) -> None:
    db = tmp_path / "jarvis.db"
    rng = random.Random()
    seen: Seen | None = None
    for round_ in range(ROUNDS):
        proc = start_writer(db, tmp_path, round_)
        wanted = journal_rows(db) + rng.randint(*COMMITS_BEFORE_KILL)

        def committed(proc: subprocess.Popen[bytes] = proc, wanted: int = wanted) -> bool:
            return journal_rows(db) >= wanted or proc.poll() is not None

        wait_until(committed, f"writer {round_} to commit up to journal row {wanted}",
                   interval=0.002)  # fmt: skip
        # Still alive: the kill lands on a busy writer, not on one that already failed.
        assert proc.poll() is None, writer_error(tmp_path, round_)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
        seen = verify(db, seen, f"after kill {round_ + 1}")

    assert seen is not None
    # Not vacuous: the writer did a lot of every kind of work between the kills.
    assert len(seen.journal) >= 100, len(seen.journal)
    actions = Counter(
        json.loads(payload).get("action") or kind for _, _, kind, payload, _, _ in seen.journal
    )
    for needed in ("retry", "override", "cancel", "approve", "start", "fail", "steer"):
        assert actions[needed] > 0, actions

    # The store opens and takes writes after the last kill.
    store = SqliteStore(db)
    try:
        result = submit_dispatch(
            store,
            dispatch("after-the-crashes", "req-after-the-crashes"),
            source_lane=SOURCE,
            target_lane=TARGET,
            actor="main",
        )
        assert result.outcome == "enqueued", result.message
    finally:
        store.close()
    verify(db, seen, "after the final write")
