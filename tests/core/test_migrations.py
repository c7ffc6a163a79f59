"""Migrations upgrade a store that already holds data, and run once."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlite_utils import Database

from core.store.schema import MIGRATIONS
from core.store.sqlite_store import SqliteStore


def test_0002_keeps_progress_written_under_0001(tmp_path: Path) -> None:
    path = tmp_path / "jarvis.db"
    old = Database(path)
    MIGRATIONS.apply(old, stop_before="0002_host")
    old.execute(
        "INSERT INTO runs (run_id, lane, source_lane, state, dispatch_json, created_at, "
        "updated_at) VALUES ('r1', 'jarvis-worker-1', 'main', 'running', '{}', 't', 't')"
    )
    old.execute(
        "INSERT INTO progress_events (run_id, seq, timestamp, phase, summary, ingested_at) "
        "VALUES ('r1', 7, 't', 'testing', 'kept across the upgrade', 't')"
    )
    old.conn.commit()
    old.close()

    store = SqliteStore(path)
    applied = [r["name"] for r in store.rows("SELECT name FROM _sqlite_migrations ORDER BY id")]
    assert applied == ["0001_initial", "0002_host", "0003_console_reads", "0004_criteria",
                       "0005_verification_process", "0006_worker_trouble",
                       "0007_secrets_found", "0008_worktrees", "0009_usage",
                       "0010_progress_identity", "0011_verification_in_the_lifecycle",
                       "0012_worked_time", "0013_hosts", "0014_usage_unreadable",
                       "0015_refusal_target", "0016_usage_cost_computed",
                       "0017_confinement", "0018_merge_by_host", "0019_run_counts",
                       "0020_usage_totals", "0021_window_indexes", "0022_retention",
                       "0023_notify_marks",
                       "0024_lane_pauses"]  # fmt: skip
    (event,) = store.rows("SELECT run_id, attempt, seq, summary FROM progress_events")
    assert event == {"run_id": "r1", "attempt": 1, "seq": 7, "summary": "kept across the upgrade"}
    assert store.get_run("r1")["worker_pid"] is None  # type: ignore[index]
    store.close()
    # Opening again applies nothing twice.
    again = SqliteStore(path)
    assert len(again.rows("SELECT name FROM _sqlite_migrations")) == len(applied)
    again.close()


def test_0010_keeps_progress_and_usage_and_tells_events_apart_by_file_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "jarvis.db"
    old = Database(path)
    MIGRATIONS.apply(old, stop_before="0010_progress_identity")
    old.execute(
        "INSERT INTO runs (run_id, lane, source_lane, state, dispatch_json, created_at, "
        "updated_at) VALUES ('r1', 'jarvis-worker-1', 'main', 'running', '{}', 't', 't')"
    )
    for seq in (1, 2):
        old.execute(
            "INSERT INTO progress_events (run_id, attempt, seq, timestamp, phase, summary, "
            "ingested_at) VALUES ('r1', 1, ?, 't', 'testing', ?, 't')",
            [seq, f"event {seq}"],
        )
    old.execute(
        "INSERT INTO run_usage (run_id, attempt, seq, tokens_in, tokens_out, cost_usd, "
        "updated_at) VALUES ('r1', 1, 2, 10, 5, 0.5, 't')"
    )
    old.conn.commit()
    old.close()

    store = SqliteStore(path)
    try:
        kept = store.rows(
            "SELECT seq, name, at_utc, summary FROM progress_events "
            "ORDER BY attempt, at_utc, seq, name"
        )
        assert kept == [
            {"seq": 1, "name": None, "at_utc": "", "summary": "event 1"},
            {"seq": 2, "name": None, "at_utc": "", "summary": "event 2"},
        ]
        (usage,) = store.rows("SELECT seq, at_utc, name, tokens_in FROM run_usage")
        assert usage == {"seq": 2, "at_utc": "", "name": "", "tokens_in": 10}
        # A later query's seq 1 again, under its own file name, is another event.
        with store.transaction() as tx:
            added = tx.execute(
                "INSERT OR IGNORE INTO progress_events (run_id, attempt, seq, name, timestamp, "
                "at_utc, ingested_at) VALUES ('r1', 1, 1, '2026-03-17T10-01-02-345Z-1.json', "
                "'t', '2026-03-17T10:01:02.345000Z', 't')",
                [],
            )
            again = tx.execute(
                "INSERT OR IGNORE INTO progress_events (run_id, attempt, seq, name, timestamp, "
                "at_utc, ingested_at) VALUES ('r1', 1, 1, '2026-03-17T10-01-02-345Z-1.json', "
                "'t', '2026-03-17T10:01:02.345000Z', 't')",
                [],
            )
        assert (added, again) == (1, 0)
    finally:
        store.close()


def test_0011_clears_verification_left_outside_running(tmp_path: Path) -> None:
    path = tmp_path / "jarvis.db"
    old = Database(path)
    MIGRATIONS.apply(old, stop_before="0011_verification_in_the_lifecycle")
    rows = [  # what cancelling or failing a run mid-verification used to leave
        ("cancelled", "failed", "awaiting_approval"),
        ("overridden", "done", "pending"),
        ("verifying", "running", "verifying"),
        ("plain", "failed", None),
    ]
    for run_id, state, verification in rows:
        old.execute(
            "INSERT INTO runs (run_id, lane, source_lane, state, verification_state, "
            "dispatch_json, created_at, updated_at, version) "
            "VALUES (?, 'jarvis-worker-1', 'main', ?, ?, '{}', 't', 't', 3)",
            [run_id, state, verification],
        )
    old.conn.commit()
    old.close()

    store = SqliteStore(path)
    try:
        found = store.rows("SELECT run_id, state, verification_state, version FROM runs")
        assert {
            r["run_id"]: (r["state"], r["verification_state"], r["version"]) for r in found
        } == {
            "cancelled": ("failed", None, 3),
            "overridden": ("done", None, 3),
            "verifying": ("running", "verifying", 3),  # a stage of running: kept
            "plain": ("failed", None, 3),
        }
        assert store.rows("SELECT * FROM journal") == []
    finally:
        store.close()


def test_0012_gives_runs_from_before_their_latest_attempts_recorded_span(tmp_path: Path) -> None:
    path = tmp_path / "jarvis.db"
    old = Database(path)
    MIGRATIONS.apply(old, stop_before="0012_worked_time")
    rows = [  # (run, started, finished)
        ("ended", "2026-11-26T03:00:00.000+00:00", "2026-11-26T03:01:30.500+00:00"),
        ("running", "2026-11-26T03:00:00.000+00:00", None),
        ("queued", None, None),
        ("clock-went-back", "2026-11-26T03:00:00.000+00:00", "2026-11-26T02:59:00.000+00:00"),
    ]
    for run_id, started, finished in rows:
        old.execute(
            "INSERT INTO runs (run_id, lane, source_lane, state, dispatch_json, created_at, "
            "updated_at, started_at, finished_at) "
            "VALUES (?, 'jarvis-worker-1', 'main', 'failed', '{}', 't', 't', ?, ?)",
            [run_id, started, finished],
        )
    old.conn.commit()
    old.close()

    store = SqliteStore(path)
    try:
        found = {r["run_id"]: r["worked_s"] for r in store.rows("SELECT * FROM runs")}
        assert found.pop("ended") == pytest.approx(90.5, abs=0.01)
        assert found == {"running": 0, "queued": 0, "clock-went-back": 0}
    finally:
        store.close()
