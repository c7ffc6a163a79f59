"""Migrations upgrade a store that already holds data, and run once."""

from __future__ import annotations

from pathlib import Path

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
                       "0007_secrets_found", "0008_worktrees", "0009_usage"]  # fmt: skip
    (event,) = store.rows("SELECT run_id, attempt, seq, summary FROM progress_events")
    assert event == {"run_id": "r1", "attempt": 1, "seq": 7, "summary": "kept across the upgrade"}
    assert store.get_run("r1")["worker_pid"] is None  # type: ignore[index]
    store.close()
    # Opening again applies nothing twice.
    again = SqliteStore(path)
    assert len(again.rows("SELECT name FROM _sqlite_migrations")) == len(applied)
    again.close()
