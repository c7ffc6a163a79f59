"""The SQLite store's own schema steps, as text: the tables as SQLite first made them and each
change since that only SQLite makes (rebuilding a table, SQLite's date functions). The steps in
order, and those both backends make with one text (`core.store.shared_ddl`), are in
`core.store.schema`; tests/store/test_schemas_agree.py holds the result to PostgreSQL's."""

from __future__ import annotations

from core.store.shared_ddl import retention_tables

#: 0001_initial
INITIAL = """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            lane TEXT NOT NULL,
            source_lane TEXT NOT NULL,
            task_type TEXT,
            request_id TEXT,
            idempotency_key TEXT,
            state TEXT NOT NULL,
            state_reason TEXT,
            retry_count INTEGER NOT NULL DEFAULT 0,
            version INTEGER NOT NULL DEFAULT 1,
            overridden INTEGER NOT NULL DEFAULT 0,
            override_reason TEXT,
            overridden_by TEXT,
            overridden_at TEXT,
            dispatch_json TEXT NOT NULL,
            dispatch_repo TEXT,
            dispatch_branch TEXT,
            context_intent TEXT,
            parent_run_id TEXT,
            dispatch_session_id TEXT,
            selected_session_id TEXT,
            effective_session_id TEXT,
            session_selection_source TEXT,
            session_resume_status TEXT,
            session_resume_error TEXT,
            branch_name TEXT,
            commit_sha TEXT,
            files_changed TEXT,
            test_summary TEXT,
            risk_summary TEXT,
            pr_url TEXT,
            pr_skipped_reason TEXT,
            last_progress_summary TEXT,
            last_progress_at TEXT,
            steer_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT
        );
        CREATE INDEX runs_state ON runs (state, updated_at);
        CREATE INDEX runs_lane ON runs (lane, state);
        CREATE INDEX runs_updated ON runs (updated_at);

        CREATE TABLE idempotency_keys (
            key TEXT PRIMARY KEY,
            payload_hash TEXT NOT NULL,
            run_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        );

        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            lane TEXT NOT NULL,
            last_run_id TEXT NOT NULL,
            last_used_at TEXT NOT NULL
        );

        CREATE TABLE steering_events (
            steer_id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            message TEXT NOT NULL,
            operator TEXT NOT NULL,
            status TEXT NOT NULL,
            status_reason TEXT,
            created_at TEXT NOT NULL,
            sent_at TEXT,
            acked_at TEXT
        );
        CREATE INDEX steering_events_run ON steering_events (run_id, created_at);

        CREATE TABLE progress_events (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            seq INTEGER NOT NULL,
            timestamp TEXT NOT NULL,
            phase TEXT,
            summary TEXT,
            tool_used TEXT,
            ingested_at TEXT NOT NULL,
            UNIQUE (run_id, seq)
        );

        CREATE TABLE gate_results (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            name TEXT NOT NULL,
            passed INTEGER NOT NULL,
            detail TEXT NOT NULL,
            evaluated_at TEXT NOT NULL
        );
        CREATE INDEX gate_results_run ON gate_results (run_id, attempt);

        CREATE TABLE verification_results (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            results_json TEXT NOT NULL,
            verified_at TEXT NOT NULL
        );

        CREATE TABLE failures (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            error_class TEXT NOT NULL,
            error_code TEXT NOT NULL,
            step_id TEXT NOT NULL,
            url TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX failures_fingerprint ON failures (fingerprint);

        CREATE TABLE audit (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            from_state TEXT,
            to_state TEXT,
            reason TEXT,
            at TEXT NOT NULL
        );
        CREATE INDEX audit_run ON audit (run_id, id);

        CREATE TABLE journal (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            actor TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX journal_run ON journal (run_id, seq);

        -- The journal is append-only: the database itself refuses edits and deletions.
        CREATE TRIGGER journal_no_update BEFORE UPDATE ON journal
        BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
        CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
        BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
        """

#: 0002_host
HOST = """
        -- A retried run's worker numbers its progress from 1 again: the attempt is part of an
        -- event's identity, or the new attempt's events would be taken for replays.
        CREATE TABLE progress_events_new (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            timestamp TEXT NOT NULL,
            phase TEXT,
            summary TEXT,
            tool_used TEXT,
            ingested_at TEXT NOT NULL,
            UNIQUE (run_id, attempt, seq)
        );
        INSERT INTO progress_events_new
            (id, run_id, attempt, seq, timestamp, phase, summary, tool_used, ingested_at)
            SELECT id, run_id, 1, seq, timestamp, phase, summary, tool_used, ingested_at
            FROM progress_events;
        DROP TABLE progress_events;
        ALTER TABLE progress_events_new RENAME TO progress_events;

        -- One receipt per IPC file the host has acted on, written in the same transaction as
        -- the effect: a file seen again after a crash (committed, not yet deleted) is skipped.
        CREATE TABLE ipc_receipts (
            key TEXT PRIMARY KEY,
            lane TEXT NOT NULL,
            kind TEXT NOT NULL,
            at TEXT NOT NULL
        );

        -- The worker process of a running run, so a restarted host can find and stop an orphan.
        ALTER TABLE runs ADD COLUMN worker_pid INTEGER;
        ALTER TABLE runs ADD COLUMN attempt_log TEXT;
        """

#: 0003_console_reads
CONSOLE_READS = """
        -- The console reads one run's failures (and their fingerprints' peers) on every
        -- selection; without this it would scan every failure ever recorded.
        CREATE INDEX failures_run ON failures (run_id, id);
        """

#: 0004_criteria
CRITERIA = """
        -- Acceptance criteria live with the run (constraint-extraction document): extracted at
        -- dispatch, editable while queued, verified after the completion gates pass.
        ALTER TABLE runs ADD COLUMN criteria_json TEXT;
        ALTER TABLE runs ADD COLUMN universal_criteria INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE runs ADD COLUMN criteria_source TEXT;
        -- pending (gates passed, to verify) | verifying | awaiting_approval | NULL (none due).
        -- A host that dies mid-verification finds the run pending or verifying and runs it again.
        ALTER TABLE runs ADD COLUMN verification_state TEXT;
        -- Command keys an operator allowed to run although they are not on the allowlist.
        ALTER TABLE runs ADD COLUMN approved_commands TEXT;
        CREATE INDEX runs_verification ON runs (verification_state)
            WHERE verification_state IS NOT NULL;
        CREATE INDEX verification_results_run ON verification_results (run_id, id);
        """

#: 0005_verification_process
VERIFICATION_PROCESS = """
        -- The process group of the criterion command a host's verification is running, written
        -- before the command starts: a host restarted after a kill -9 kills the leftover
        -- (after checking its environment marks it as this workspace's) before verifying again.
        ALTER TABLE runs ADD COLUMN verify_pgid INTEGER;
        """

#: 0006_worker_trouble
WORKER_TROUBLE = """
        -- Files the host refused (data/ipc/errors/), as operators' tools show them. The reason
        -- file beside each stays the record of what was moved where; this is its copy, tied to
        -- the run it concerns when that run exists (named_run keeps the name either way).
        CREATE TABLE quarantined_files (
            id INTEGER PRIMARY KEY,
            reason_file TEXT NOT NULL UNIQUE,
            run_id TEXT,
            named_run TEXT,
            lane TEXT,
            code TEXT NOT NULL,
            message TEXT NOT NULL,
            original_path TEXT NOT NULL,
            stored_as TEXT,
            outcome TEXT NOT NULL,
            quarantined_at TEXT NOT NULL
        );
        CREATE INDEX quarantined_files_run ON quarantined_files (run_id, id)
            WHERE run_id IS NOT NULL;
        CREATE INDEX quarantined_files_at ON quarantined_files (quarantined_at);

        -- The end of a worker's stderr for each attempt (bounded, secrets masked, inert).
        CREATE TABLE worker_stderr (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            exit_code INTEGER,
            tail TEXT NOT NULL,
            total_bytes INTEGER NOT NULL,
            at TEXT NOT NULL,
            UNIQUE (run_id, attempt)
        );
        """

#: 0007_secrets_found
SECRETS_FOUND = """
        -- The kinds of secret found (and masked) in what the run's workers sent, as a sorted
        -- JSON list ("AWS access key id", …); never a value. NULL: none found.
        ALTER TABLE runs ADD COLUMN secrets_found TEXT;
        """

#: 0008_worktrees
WORKTREES = """
        -- Each attempt's git worktree (a run whose repository is configured) and what git showed
        -- of its completion: where it started, the commit it claimed, the diff's size.
        CREATE TABLE run_git (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            repo TEXT,
            repo_dir TEXT,
            checkout TEXT NOT NULL,
            branch TEXT,
            base_ref TEXT,
            base_commit TEXT,
            start_commit TEXT,
            head_commit TEXT,
            merge_base TEXT,
            diff_files INTEGER,
            diff_additions INTEGER,
            diff_deletions INTEGER,
            made_at TEXT,
            checked_at TEXT,
            removed_at TEXT,
            -- What approval does with the branch: auto-merge | recommend-only (NULL: nothing,
            -- no repository); the remote pushed to after a merge; what the approval did.
            merge_mode TEXT,
            push_remote TEXT,
            merged_commit TEXT,
            merge_note TEXT,
            PRIMARY KEY (run_id, attempt)
        );
        CREATE INDEX run_git_kept ON run_git (removed_at) WHERE removed_at IS NULL;
        -- passed | failed | not_checked; NULL for rows written before (read from `passed`).
        -- A gate not checked (no repository to check against) may let the run through, by the
        -- workspace's policy, but is never shown as passed.
        ALTER TABLE gate_results ADD COLUMN status TEXT;
        -- Why the run's claims could not be checked against git (NULL: they were, or no
        -- completion yet); shown wherever the run is, as "unverified".
        ALTER TABLE runs ADD COLUMN unverified TEXT;
        """

#: 0009_usage
USAGE = """
        -- Tokens and cost an agent reported, per attempt (its latest cumulative figures, by the
        -- seq of the event that carried them); a run's totals are the sum over its attempts.
        CREATE TABLE run_usage (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            tokens_in INTEGER NOT NULL,
            tokens_out INTEGER NOT NULL,
            cost_usd REAL NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (run_id, attempt)
        );
        """

#: 0010_progress_identity
PROGRESS_IDENTITY = """
        -- NanoClaw's worker numbers progress from 0, and from 0 again for each query of an
        -- attempt: (run, attempt, seq) no longer names one event. Its file's name does (it
        -- holds the event's time and seq): an event is (run, attempt, name). Rows from before
        -- keep a NULL name (they were told apart by seq, which stays unique among them).
        -- at_utc is the event's timestamp as fixed-width UTC text; an attempt's events are
        -- ordered by (at_utc, seq, name), and the last of that order is the latest. Rows from
        -- before have '' (no attempt spans the upgrade: a host start ends running runs), so
        -- among themselves they keep their seq order.
        CREATE TABLE progress_events_new (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            name TEXT,
            timestamp TEXT NOT NULL,
            at_utc TEXT NOT NULL DEFAULT '',
            phase TEXT,
            summary TEXT,
            tool_used TEXT,
            ingested_at TEXT NOT NULL,
            UNIQUE (run_id, attempt, name)
        );
        INSERT INTO progress_events_new
            (id, run_id, attempt, seq, name, timestamp, at_utc, phase, summary, tool_used,
             ingested_at)
            SELECT id, run_id, attempt, seq, NULL, timestamp, '', phase, summary, tool_used,
                   ingested_at
            FROM progress_events;
        DROP TABLE progress_events;
        ALTER TABLE progress_events_new RENAME TO progress_events;
        CREATE INDEX progress_events_order
            ON progress_events (run_id, attempt, at_utc, seq, name);

        -- The usage figures that stand are the latest event's by the same order.
        ALTER TABLE run_usage ADD COLUMN at_utc TEXT NOT NULL DEFAULT '';
        ALTER TABLE run_usage ADD COLUMN name TEXT NOT NULL DEFAULT '';
        """

#: 0011_verification_in_the_lifecycle
VERIFICATION_IN_THE_LIFECYCLE = """
        -- verification_state is the stage of the lifecycle's verification sub-machine, which
        -- exists only inside running (core/lifecycle.py). Before it was part of the lifecycle,
        -- cancelling or failing a run mid-verification left the column set: cleared here, which
        -- is also what replaying such a run's journal gives (its last move left running). No
        -- version bump and no journal row: nothing an operator saw changes.
        UPDATE runs SET verification_state = NULL
            WHERE verification_state IS NOT NULL AND state != 'running';
        """

#: 0012_worked_time
WORKED_TIME = """
        -- Seconds the run's workers have worked, summed over its ended attempts (from start to
        -- the move that ended the attempt: gates, failure, cancel, verification); what a
        -- workspace's wall-time budget adds up. Runs from before get their latest attempt's
        -- span where both ends were recorded: earlier attempts' were never kept.
        ALTER TABLE runs ADD COLUMN worked_s REAL NOT NULL DEFAULT 0;
        UPDATE runs SET worked_s = (julianday(finished_at) - julianday(started_at)) * 86400.0
            WHERE started_at IS NOT NULL AND finished_at IS NOT NULL
              AND finished_at >= started_at;
        """

#: 0019_run_counts
RUN_COUNTS = """
        -- How many runs are in each state, kept by the store itself in the writer's
        -- transaction: a console's header reads a handful of rows instead of counting every
        -- run on every change (a GROUP BY over a million runs: 80 ms a read).
        CREATE TABLE run_counts (
            state TEXT PRIMARY KEY,
            n INTEGER NOT NULL
        );
        INSERT INTO run_counts (state, n) SELECT state, COUNT(*) FROM runs GROUP BY state;
        CREATE TRIGGER runs_counted_insert AFTER INSERT ON runs BEGIN
            INSERT OR IGNORE INTO run_counts (state, n) VALUES (NEW.state, 0);
            UPDATE run_counts SET n = n + 1 WHERE state = NEW.state;
        END;
        CREATE TRIGGER runs_counted_update AFTER UPDATE OF state ON runs
            WHEN OLD.state IS NOT NEW.state BEGIN
            UPDATE run_counts SET n = n - 1 WHERE state = OLD.state;
            INSERT OR IGNORE INTO run_counts (state, n) VALUES (NEW.state, 0);
            UPDATE run_counts SET n = n + 1 WHERE state = NEW.state;
        END;
        CREATE TRIGGER runs_counted_delete AFTER DELETE ON runs BEGIN
            UPDATE run_counts SET n = n - 1 WHERE state = OLD.state;
        END;
        -- The newest runs first (a console's first page, `jarvis runs`): read from an index,
        -- not sorted from every run.
        CREATE INDEX runs_newest ON runs (created_at DESC, run_id);
        """

#: 0020_usage_totals
USAGE_TOTALS = """
        -- What every run's agents reported, summed, kept by the store in the writer's
        -- transaction: the console's header reads one row instead of summing every attempt's
        -- figures on every change. One row ('all'); cost_computed_rows counts the attempts
        -- whose cost Jarvis computed (the fleet's cost is marked computed when any is).
        CREATE TABLE usage_totals (
            fleet TEXT PRIMARY KEY,
            tokens_in REAL NOT NULL,
            tokens_out REAL NOT NULL,
            cost_usd REAL NOT NULL,
            cost_computed_rows INTEGER NOT NULL
        );
        INSERT INTO usage_totals (fleet, tokens_in, tokens_out, cost_usd, cost_computed_rows)
            SELECT 'all', COALESCE(SUM(CAST(tokens_in AS REAL)), 0),
                   COALESCE(SUM(CAST(tokens_out AS REAL)), 0), COALESCE(SUM(cost_usd), 0),
                   COALESCE(SUM(cost_computed), 0)
            FROM run_usage;
        CREATE TRIGGER run_usage_summed_insert AFTER INSERT ON run_usage BEGIN
            UPDATE usage_totals SET tokens_in = tokens_in + NEW.tokens_in,
                tokens_out = tokens_out + NEW.tokens_out, cost_usd = cost_usd + NEW.cost_usd,
                cost_computed_rows = cost_computed_rows + NEW.cost_computed;
        END;
        CREATE TRIGGER run_usage_summed_update AFTER UPDATE ON run_usage BEGIN
            UPDATE usage_totals SET
                tokens_in = tokens_in + NEW.tokens_in - OLD.tokens_in,
                tokens_out = tokens_out + NEW.tokens_out - OLD.tokens_out,
                cost_usd = cost_usd + NEW.cost_usd - OLD.cost_usd,
                cost_computed_rows = cost_computed_rows + NEW.cost_computed - OLD.cost_computed;
        END;
        CREATE TRIGGER run_usage_summed_delete AFTER DELETE ON run_usage BEGIN
            UPDATE usage_totals SET tokens_in = tokens_in - OLD.tokens_in,
                tokens_out = tokens_out - OLD.tokens_out, cost_usd = cost_usd - OLD.cost_usd,
                cost_computed_rows = cost_computed_rows - OLD.cost_computed;
        END;
        """

#: 0022_retention
RETENTION = (
    retention_tables("INTEGER")
    + """
        -- The journal stays append-only where a console may still tail it: an entry at or
        -- above the horizon, or of a run not finished ('done', core/lifecycle.py TERMINAL; an
        -- entry of no run too), is never deleted. Retention raises the horizon first, in the
        -- deleting transaction. An update is refused always.
        DROP TRIGGER journal_no_delete;
        CREATE TRIGGER journal_no_delete BEFORE DELETE ON journal
            WHEN OLD.seq >= (SELECT seq FROM retention_marks WHERE name = 'journal')
              OR NOT EXISTS (SELECT 1 FROM runs WHERE run_id = OLD.run_id AND state = 'done')
        BEGIN SELECT RAISE(ABORT, 'the journal is append-only'); END;
        """
)
