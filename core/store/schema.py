"""The store's schema, as versioned migrations applied at every start.

sqlite-utils' `Migrations` records each applied step in ``_sqlite_migrations`` and runs each step
in its own transaction, so a start that dies half-way leaves the schema at a known step. New steps
are appended, never edited: a deployed store has already run the old ones. `STEPS` lists them
in order; their statements are SQLite's own (`core.store.sqlite_ddl`) or the text both backends
share (`core.store.shared_ddl`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from core.store import sqlite_ddl
from core.store.shared_ddl import (
    CONFINEMENT,
    HOSTS_TABLE,
    LANE_PAUSES,
    MERGE_BY_HOST,
    REFUSAL_TARGET,
    USAGE_COST_COMPUTED,
    USAGE_UNREADABLE,
    WINDOW_INDEXES,
    notify_marks_table,
)

MIGRATIONS = Migrations("jarvis")

RUN_COLUMNS = (
    # identity and routing
    "run_id", "lane", "source_lane", "task_type", "request_id", "idempotency_key",
    # lifecycle
    "state", "state_reason", "retry_count", "version",
    "overridden", "override_reason", "overridden_by", "overridden_at",
    # the dispatch and its lineage (worker_runs)
    "dispatch_json", "dispatch_repo", "dispatch_branch", "context_intent", "parent_run_id",
    # session continuity telemetry (worker_runs)
    "dispatch_session_id", "selected_session_id", "effective_session_id",
    "session_selection_source", "session_resume_status", "session_resume_error",
    # completion artifacts (worker_runs)
    "branch_name", "commit_sha", "files_changed", "test_summary", "risk_summary",
    "pr_url", "pr_skipped_reason",
    # live progress (worker_runs)
    "last_progress_summary", "last_progress_at", "steer_count",
    # times
    "created_at", "updated_at", "started_at", "finished_at", "worked_s",
    # many hosts: which host claimed the run (and runs it)
    "host",
    # confinement: how its latest worker ran, and where a retry starts
    "sandbox", "retry_fresh",
    # an approved run's merge, carried out by the host holding its repository
    "merge_state",
)  # fmt: skip


def _run_script(db: Database, script: str) -> None:
    """Run statements one by one: ``executescript`` would COMMIT the migration's transaction."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement in migration: {statement.strip()[:60]}")


#: Every step, in order: its name (recorded in ``_sqlite_migrations``) and its statements.
STEPS: tuple[tuple[str, str], ...] = (
    ("0001_initial", sqlite_ddl.INITIAL),
    ("0002_host", sqlite_ddl.HOST),
    ("0003_console_reads", sqlite_ddl.CONSOLE_READS),
    ("0004_criteria", sqlite_ddl.CRITERIA),
    ("0005_verification_process", sqlite_ddl.VERIFICATION_PROCESS),
    ("0006_worker_trouble", sqlite_ddl.WORKER_TROUBLE),
    ("0007_secrets_found", sqlite_ddl.SECRETS_FOUND),
    ("0008_worktrees", sqlite_ddl.WORKTREES),
    ("0009_usage", sqlite_ddl.USAGE),
    ("0010_progress_identity", sqlite_ddl.PROGRESS_IDENTITY),
    ("0011_verification_in_the_lifecycle", sqlite_ddl.VERIFICATION_IN_THE_LIFECYCLE),
    ("0012_worked_time", sqlite_ddl.WORKED_TIME),
    ("0013_hosts", HOSTS_TABLE),
    ("0014_usage_unreadable", USAGE_UNREADABLE),
    ("0015_refusal_target", REFUSAL_TARGET),
    ("0016_usage_cost_computed", USAGE_COST_COMPUTED),
    ("0017_confinement", CONFINEMENT),
    ("0018_merge_by_host", MERGE_BY_HOST),
    ("0019_run_counts", sqlite_ddl.RUN_COUNTS),
    ("0020_usage_totals", sqlite_ddl.USAGE_TOTALS),
    ("0021_window_indexes", WINDOW_INDEXES),
    ("0022_retention", sqlite_ddl.RETENTION),
    ("0023_notify_marks", notify_marks_table("INTEGER")),
    ("0024_lane_pauses", LANE_PAUSES),
)


def _step(script: str) -> Callable[[Database], None]:
    def apply(db: Database) -> None:
        _run_script(db, script)

    return apply


for _name, _script in STEPS:
    MIGRATIONS(name=_name)(_step(_script))


def migrate(db: Database) -> None:
    """Bring the schema up to date (idempotent)."""
    MIGRATIONS.apply(db)
