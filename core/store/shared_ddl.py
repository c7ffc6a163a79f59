"""Schema changes both backends make with the same text: their types are SQLite's and
PostgreSQL's alike, so each backend's migrations (`core.store.schema`,
`core.store.postgres_schema`) name the one text rather than keep a copy each."""

from __future__ import annotations

HOSTS_TABLE = """
        -- Every host serving the store: its lease, renewed by heartbeats. A host whose lease
        -- ran out without a clean stop is lost: another host recovers its running runs (once:
        -- each is a move of the lifecycle) and marks it recovered. Times are the store's ISO
        -- text, which orders as time does.
        CREATE TABLE hosts (
            name TEXT PRIMARY KEY,
            incarnation TEXT NOT NULL,
            machine TEXT NOT NULL,
            pid INTEGER NOT NULL,
            workspace TEXT NOT NULL,
            lanes TEXT,
            started_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            lease_until TEXT NOT NULL,
            stopped_at TEXT,
            recovered_by TEXT,
            recovered_at TEXT
        );
        -- The host that claimed a queued run, and runs it; NULL: unclaimed (or from before).
        ALTER TABLE runs ADD COLUMN host TEXT;
        CREATE INDEX runs_host ON runs (host, state);
"""

USAGE_UNREADABLE = """
        -- Why an attempt's usage could not be read (a figure out of range, or not a number);
        -- NULL when every report was read. Such a run cannot pass a token or cost budget: its
        -- figures are unknown (core/host/budgets.py).
        ALTER TABLE run_usage ADD COLUMN unreadable TEXT;
"""

REFUSAL_TARGET = """
        -- The chat a refused file addressed (a message's chatJid, <lane>@nanoclaw for a
        -- dispatch task's target or a steered run's lane); NULL when it named none. NanoClaw's
        -- dispatch blocks, which a lane reads in worker_runs.json, require it.
        ALTER TABLE quarantined_files ADD COLUMN target_jid TEXT;
"""

USAGE_COST_COMPUTED = """
        -- 1 when the attempt's cost was computed by Jarvis from its tokens and a price (its
        -- agent reported none: docs/configuration.md, [prices]), 0 when the agent reported it.
        ALTER TABLE run_usage ADD COLUMN cost_computed INTEGER NOT NULL DEFAULT 0;
"""

CONFINEMENT = """
        -- How the latest attempt's worker was confined: bwrap (Jarvis's bubblewrap sandbox) or
        -- none (it ran unconfined); NULL for runs started before.
        ALTER TABLE runs ADD COLUMN sandbox TEXT;
        -- 1 when the next attempt (a retry asked with --fresh) starts from the base again;
        -- 0: it goes on from where the last attempt left the run's branch.
        ALTER TABLE runs ADD COLUMN retry_fresh INTEGER NOT NULL DEFAULT 0;
        -- The main repository's branches when the attempt started ({"refs/heads/…": sha} as
        -- JSON): a branch that moved while the run ran is told at gating.
        ALTER TABLE run_git ADD COLUMN refs_at_start TEXT;
"""

MERGE_BY_HOST = """
        -- merging while the host holding an approved run's repository merges its branch (the
        -- lifecycle's sub-machine of review_requested, core/lifecycle.py); NULL otherwise.
        ALTER TABLE runs ADD COLUMN merge_state TEXT;
        CREATE INDEX runs_merging ON runs (merge_state) WHERE merge_state IS NOT NULL;
        -- Who approved the merge and when; why the latest merge was refused (merge_conflict,
        -- base_moved, push_rejected, ...: core/repos/merge.py), NULL when it was not.
        ALTER TABLE run_git ADD COLUMN merge_requested_by TEXT;
        ALTER TABLE run_git ADD COLUMN merge_requested_at TEXT;
        ALTER TABLE run_git ADD COLUMN merge_refused TEXT;
"""

WINDOW_INDEXES = """
        -- The console's window (core/store/window.py): each order it offers read a page at a
        -- time from an index on (key, run_id), run_id breaking ties, never sorted whole.
        -- runs_updated and runs_state gain run_id, so the ties are in the index too.
        DROP INDEX runs_updated;
        CREATE INDEX runs_updated ON runs (updated_at, run_id);
        DROP INDEX runs_state;
        CREATE INDEX runs_state ON runs (state, updated_at, run_id);
        CREATE INDEX runs_by_created ON runs (created_at, run_id);
        CREATE INDEX runs_by_state ON runs (state, run_id);
        CREATE INDEX runs_by_lane ON runs (lane, run_id);
        CREATE INDEX runs_by_task ON runs ((COALESCE(task_type, '')), run_id);
        CREATE INDEX runs_by_retries ON runs (retry_count, run_id);
        -- The runs needing a human include running ones with an expired steer.
        CREATE INDEX steering_events_status ON steering_events (status, run_id);
"""

LANE_PAUSES = """
        -- Paused lanes (core/store/lanes.py): while a lane's row is here no host claims its
        -- queued runs; its running runs finish. Pausing inserts the row, resuming deletes it.
        CREATE TABLE lane_pauses (
            lane TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            paused_by TEXT NOT NULL,
            paused_at TEXT NOT NULL
        );
"""


def retention_tables(integer: str) -> str:
    """Retention's tables (SQLite's 0022, PostgreSQL's 0012), with ``integer`` the backend's
    64-bit integer type (SQLite's INTEGER, PostgreSQL's BIGINT); each backend adds its own
    trigger keeping the journal append-only above the horizon."""
    return f"""
        -- Retention (core/store/retention.py) removes the old history of finished runs; what it
        -- removed is summed per run here, so `jarvis show` says what is gone, which span it
        -- covered and under which policy (keep_days).
        CREATE TABLE run_retention (
            run_id TEXT PRIMARY KEY REFERENCES runs (run_id),
            progress_removed {integer} NOT NULL DEFAULT 0,
            progress_first_at TEXT,
            progress_last_at TEXT,
            progress_keep_days {integer},
            journal_removed {integer} NOT NULL DEFAULT 0,
            journal_first_at TEXT,
            journal_last_at TEXT,
            journal_keep_days {integer},
            updated_at TEXT NOT NULL
        );
        -- Where retention stands, per table it walks ('progress', 'journal'): the finished runs
        -- cleared, in (updated_at, run_id) order, up to and including (run_updated_at, run_id).
        -- The journal's row also holds its horizon (seq): every entry at or above it is kept,
        -- so a reader that has seen up to horizon - 1 or later has missed nothing.
        CREATE TABLE retention_marks (
            name TEXT PRIMARY KEY,
            seq {integer} NOT NULL DEFAULT 0,
            run_updated_at TEXT NOT NULL DEFAULT '',
            run_id TEXT NOT NULL DEFAULT ''
        );
        INSERT INTO retention_marks (name) VALUES ('progress');
        INSERT INTO retention_marks (name) VALUES ('journal');
        -- Old receipts are found by their time, not by a scan of every receipt (the time
        -- alone: the key again in the index would cost a receipt half its size).
        CREATE INDEX ipc_receipts_at ON ipc_receipts (at);
"""


def notify_marks_table(integer: str) -> str:
    """The notifications' mark (SQLite's 0023, PostgreSQL's 0013), with ``integer`` the
    backend's 64-bit integer type."""
    return f"""
        -- Where the fleet's notifications stand (core/host/notifier.py): the journal up to seq
        -- was claimed by one host, which told of the runs it moved into a stage needing a
        -- human. A host claims the next stretch by moving seq from the value it read, so on a
        -- store shared by many hosts each transition is claimed once.
        CREATE TABLE notify_marks (
            name TEXT PRIMARY KEY,
            seq {integer} NOT NULL
        );
"""
