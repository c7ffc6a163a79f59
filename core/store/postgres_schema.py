"""The PostgreSQL store's schema, as versioned migrations applied when a store opens.

The same tables and columns as the SQLite schema after its migration 0013 (times are ISO text
as there, integers 64-bit), so every named read and write runs unchanged. What differs is
PostgreSQL's own: identity columns where SQLite has rowids, a trigger function for the
append-only journal, and ``steering_events.id`` (SQLite orders steers by ``rowid``). Applied
steps are recorded in ``jarvis_migrations``; new steps are appended, never edited.
tests/store/test_schemas_agree.py compares the two schemas after all their steps.
"""

from __future__ import annotations

from typing import Final

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
    retention_tables,
)

MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    (
        "0001_initial",
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            lane TEXT NOT NULL,
            source_lane TEXT NOT NULL,
            task_type TEXT,
            request_id TEXT,
            idempotency_key TEXT,
            state TEXT NOT NULL,
            state_reason TEXT,
            retry_count BIGINT NOT NULL DEFAULT 0,
            version BIGINT NOT NULL DEFAULT 1,
            overridden BIGINT NOT NULL DEFAULT 0,
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
            steer_count BIGINT NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            worker_pid BIGINT,
            attempt_log TEXT,
            criteria_json TEXT,
            universal_criteria BIGINT NOT NULL DEFAULT 1,
            criteria_source TEXT,
            verification_state TEXT,
            approved_commands TEXT,
            verify_pgid BIGINT,
            secrets_found TEXT,
            unverified TEXT
        );
        CREATE INDEX runs_state ON runs (state, updated_at);
        CREATE INDEX runs_lane ON runs (lane, state);
        CREATE INDEX runs_updated ON runs (updated_at);
        CREATE INDEX runs_verification ON runs (verification_state)
            WHERE verification_state IS NOT NULL;

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
            id BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
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
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt BIGINT NOT NULL,
            seq BIGINT NOT NULL,
            name TEXT,
            timestamp TEXT NOT NULL,
            at_utc TEXT NOT NULL DEFAULT '',
            phase TEXT,
            summary TEXT,
            tool_used TEXT,
            ingested_at TEXT NOT NULL,
            UNIQUE (run_id, attempt, name)
        );
        CREATE INDEX progress_events_order
            ON progress_events (run_id, attempt, at_utc, seq, name);

        CREATE TABLE gate_results (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt BIGINT NOT NULL,
            name TEXT NOT NULL,
            passed BIGINT NOT NULL,
            detail TEXT NOT NULL,
            evaluated_at TEXT NOT NULL,
            status TEXT
        );
        CREATE INDEX gate_results_run ON gate_results (run_id, attempt);

        CREATE TABLE verification_results (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt BIGINT NOT NULL,
            results_json TEXT NOT NULL,
            verified_at TEXT NOT NULL
        );
        CREATE INDEX verification_results_run ON verification_results (run_id, id);

        CREATE TABLE failures (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt BIGINT NOT NULL,
            error_class TEXT NOT NULL,
            error_code TEXT NOT NULL,
            step_id TEXT NOT NULL,
            url TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX failures_fingerprint ON failures (fingerprint);
        CREATE INDEX failures_run ON failures (run_id, id);

        CREATE TABLE audit (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            actor TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX journal_run ON journal (run_id, seq);
        CREATE FUNCTION journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'the journal is append-only'; END $$;
        CREATE TRIGGER journal_no_update BEFORE UPDATE OR DELETE ON journal
            FOR EACH ROW EXECUTE FUNCTION journal_append_only();

        CREATE TABLE ipc_receipts (
            key TEXT PRIMARY KEY,
            lane TEXT NOT NULL,
            kind TEXT NOT NULL,
            at TEXT NOT NULL
        );

        CREATE TABLE worker_stderr (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt BIGINT NOT NULL,
            exit_code BIGINT,
            tail TEXT NOT NULL,
            total_bytes BIGINT NOT NULL,
            at TEXT NOT NULL,
            UNIQUE (run_id, attempt)
        );

        CREATE TABLE quarantined_files (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
        CREATE INDEX quarantined_files_at ON quarantined_files (quarantined_at);
        CREATE INDEX quarantined_files_run ON quarantined_files (run_id, id)
            WHERE run_id IS NOT NULL;

        CREATE TABLE run_git (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt BIGINT NOT NULL,
            repo TEXT,
            repo_dir TEXT,
            checkout TEXT NOT NULL,
            branch TEXT,
            base_ref TEXT,
            base_commit TEXT,
            start_commit TEXT,
            head_commit TEXT,
            merge_base TEXT,
            diff_files BIGINT,
            diff_additions BIGINT,
            diff_deletions BIGINT,
            made_at TEXT,
            checked_at TEXT,
            removed_at TEXT,
            merge_mode TEXT,
            push_remote TEXT,
            merged_commit TEXT,
            merge_note TEXT,
            PRIMARY KEY (run_id, attempt)
        );
        CREATE INDEX run_git_kept ON run_git (removed_at) WHERE removed_at IS NULL;

        CREATE TABLE run_usage (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt BIGINT NOT NULL,
            seq BIGINT NOT NULL,
            tokens_in BIGINT NOT NULL,
            tokens_out BIGINT NOT NULL,
            cost_usd DOUBLE PRECISION NOT NULL,
            updated_at TEXT NOT NULL,
            at_utc TEXT NOT NULL DEFAULT '',
            name TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (run_id, attempt)
        );
        """,
    ),
    (
        "0002_worked_time",
        """
        -- SQLite's 0012: seconds the run's workers have worked, over its ended attempts.
        ALTER TABLE runs ADD COLUMN worked_s DOUBLE PRECISION NOT NULL DEFAULT 0;
        """,
    ),
    # SQLite's 0013, the same text: its types are PostgreSQL's too (pid fits an INTEGER).
    ("0003_hosts", HOSTS_TABLE),
    # SQLite's 0014, the same text.
    ("0004_usage_unreadable", USAGE_UNREADABLE),
    # SQLite's 0015, the same text.
    ("0005_refusal_target", REFUSAL_TARGET),
    # SQLite's 0016, the same text.
    ("0006_usage_cost_computed", USAGE_COST_COMPUTED),
    # SQLite's 0017, the same text.
    ("0007_confinement", CONFINEMENT),
    # SQLite's 0018, the same text.
    ("0008_merge_by_host", MERGE_BY_HOST),
    (
        "0009_run_counts",
        """
        -- SQLite's 0019: runs per state, kept by a trigger in the writer's transaction.
        CREATE TABLE run_counts (
            state TEXT PRIMARY KEY,
            n BIGINT NOT NULL
        );
        INSERT INTO run_counts (state, n) SELECT state, COUNT(*) FROM runs GROUP BY state;
        CREATE FUNCTION count_runs() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' AND OLD.state IS NOT DISTINCT FROM NEW.state THEN
                RETURN NULL;
            END IF;
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                UPDATE run_counts SET n = n - 1 WHERE state = OLD.state;
            END IF;
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                INSERT INTO run_counts (state, n) VALUES (NEW.state, 1)
                    ON CONFLICT (state) DO UPDATE SET n = run_counts.n + 1;
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER runs_counted AFTER INSERT OR DELETE OR UPDATE OF state ON runs
            FOR EACH ROW EXECUTE FUNCTION count_runs();
        CREATE INDEX runs_newest ON runs (created_at DESC, run_id);
        """,
    ),
    (
        "0010_usage_totals",
        """
        -- SQLite's 0020: every run's reported usage, summed, kept by a trigger.
        CREATE TABLE usage_totals (
            fleet TEXT PRIMARY KEY,
            tokens_in DOUBLE PRECISION NOT NULL,
            tokens_out DOUBLE PRECISION NOT NULL,
            cost_usd DOUBLE PRECISION NOT NULL,
            cost_computed_rows BIGINT NOT NULL
        );
        INSERT INTO usage_totals (fleet, tokens_in, tokens_out, cost_usd, cost_computed_rows)
            SELECT 'all', COALESCE(SUM(CAST(tokens_in AS DOUBLE PRECISION)), 0),
                   COALESCE(SUM(CAST(tokens_out AS DOUBLE PRECISION)), 0),
                   COALESCE(SUM(cost_usd), 0), COALESCE(SUM(cost_computed), 0)
            FROM run_usage;
        CREATE FUNCTION sum_usage() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                UPDATE usage_totals SET tokens_in = tokens_in - OLD.tokens_in,
                    tokens_out = tokens_out - OLD.tokens_out, cost_usd = cost_usd - OLD.cost_usd,
                    cost_computed_rows = cost_computed_rows - OLD.cost_computed;
            END IF;
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                UPDATE usage_totals SET tokens_in = tokens_in + NEW.tokens_in,
                    tokens_out = tokens_out + NEW.tokens_out, cost_usd = cost_usd + NEW.cost_usd,
                    cost_computed_rows = cost_computed_rows + NEW.cost_computed;
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER run_usage_summed AFTER INSERT OR UPDATE OR DELETE ON run_usage
            FOR EACH ROW EXECUTE FUNCTION sum_usage();
        """,
    ),
    # SQLite's 0021, the same text.
    ("0011_window_indexes", WINDOW_INDEXES),
    (
        "0012_retention",
        # SQLite's 0022's tables; deleting journal entries below the horizon of finished runs
        # ('done') allowed, every other delete and every update refused, by the same trigger.
        retention_tables("BIGINT")
        + """
        CREATE OR REPLACE FUNCTION journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE'
                AND OLD.seq < (SELECT seq FROM retention_marks WHERE name = 'journal')
                AND EXISTS (SELECT 1 FROM runs WHERE run_id = OLD.run_id AND state = 'done')
            THEN
                RETURN OLD;
            END IF;
            RAISE EXCEPTION 'the journal is append-only';
        END $$;
        """,
    ),
    # SQLite's 0023, the same table.
    ("0013_notify_marks", notify_marks_table("BIGINT")),
    # SQLite's 0024, the same text.
    ("0014_lane_pauses", LANE_PAUSES),
)
